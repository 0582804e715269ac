"""torch.linalg: norms (vector_norm, norm), inv, det, cross, svd, svdvals.

>>> import gradviz as torch
>>> torch.linalg.norm(torch.tensor([[3.0, 0.0], [0.0, 4.0]]))
tensor(5.)
>>> torch.linalg.det(torch.tensor([[2.0, 0.0], [0.0, 3.0]]))
tensor(6.)
"""

from ._keywords import with_keywords
from ._ops.decompositions import linalg_svd, linalg_svdvals
from ._ops.linalg import linalg_cross, linalg_det, linalg_inv
from ._ops.reductions import matrix_or_vector_norm, vector_norm as _vector_norm
from ._missing import module_getattr as _module_getattr

# As torch's parser takes them: parameters by torch's names (`A` for inv and det, `input` with
# NumPy's `x=` for the others), `out=`, and the error names torch's kernels give.
cross = with_keywords(linalg_cross, "linalg_cross")
det = with_keywords(linalg_det, "_linalg_det")
inv = with_keywords(linalg_inv, "linalg_inv_ex")
norm = with_keywords(matrix_or_vector_norm, "linalg_norm")
vector_norm = with_keywords(_vector_norm, "linalg_vector_norm")
svd = with_keywords(linalg_svd, "linalg_svd")
svdvals = with_keywords(linalg_svdvals, "linalg_svdvals")

__all__ = ["cross", "det", "inv", "norm", "svd", "svdvals", "vector_norm"]


# A name PyTorch has and gradviz lacks says so, with the --backend torch hint, instead of
# Python's bare "has no attribute".
__getattr__ = _module_getattr("linalg", __name__, globals())
