"""torch.linalg: norms (vector_norm, norm).

>>> import gradviz as torch
>>> torch.linalg.norm(torch.tensor([[3.0, 0.0], [0.0, 4.0]]))
tensor(5.)
"""

from ._ops.reductions import matrix_or_vector_norm as norm
from ._ops.reductions import vector_norm

__all__ = ["norm", "vector_norm"]


def __getattr__(name):
    # Only for names not defined above: say whether PyTorch's torch.linalg has it.
    if name.startswith("_"):
        raise AttributeError(f"module 'gradviz.linalg' has no attribute '{name}'")
    from ._missing import missing
    raise missing("linalg", name, globals())
