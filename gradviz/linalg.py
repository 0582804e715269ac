"""torch.linalg: norms (vector_norm, norm), inv, det, cross.

>>> import gradviz as torch
>>> torch.linalg.norm(torch.tensor([[3.0, 0.0], [0.0, 4.0]]))
tensor(5.)
>>> torch.linalg.det(torch.tensor([[2.0, 0.0], [0.0, 3.0]]))
tensor(6.)
"""

from ._ops.linalg import linalg_cross as cross
from ._ops.linalg import linalg_det as det
from ._ops.linalg import linalg_inv as inv
from ._ops.reductions import matrix_or_vector_norm as norm
from ._ops.reductions import vector_norm

__all__ = ["cross", "det", "inv", "norm", "vector_norm"]


def __getattr__(name):
    # Only for names not defined above: say whether PyTorch's torch.linalg has it.
    if name.startswith("_"):
        raise AttributeError(f"module 'gradviz.linalg' has no attribute '{name}'")
    from ._missing import missing
    raise missing("linalg", name, globals())
