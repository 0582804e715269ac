"""torch.linalg: norms (vector_norm, norm).

>>> import gradviz as torch
>>> torch.linalg.norm(torch.tensor([[3.0, 0.0], [0.0, 4.0]]))
tensor(5.)
"""

from ._ops.reductions import matrix_or_vector_norm as norm
from ._ops.reductions import vector_norm

__all__ = ["norm", "vector_norm"]
