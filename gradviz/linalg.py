"""torch.linalg: inv, det, cross.

>>> import gradviz as torch
>>> torch.linalg.det(torch.tensor([[2.0, 0.0], [0.0, 3.0]]))
tensor(6.)
"""

from ._ops.linalg import linalg_cross as cross
from ._ops.linalg import linalg_det as det
from ._ops.linalg import linalg_inv as inv

__all__ = ["cross", "det", "inv"]
