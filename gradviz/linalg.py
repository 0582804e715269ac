"""torch.linalg: norms (vector_norm, norm), inv, det, cross, svd, svdvals.

>>> import gradviz as torch
>>> torch.linalg.norm(torch.tensor([[3.0, 0.0], [0.0, 4.0]]))
tensor(5.)
>>> torch.linalg.det(torch.tensor([[2.0, 0.0], [0.0, 3.0]]))
tensor(6.)
"""

from . import _keywords
from ._ops import decompositions as _decompositions, linalg as _linalg, reductions as _reductions
from ._missing import module_getattr as _module_getattr

# As torch's parser takes them: parameters by torch's names (`A` for inv and det, `input` with
# NumPy's `x=` for the others), `out=`, and the error names torch's kernels give. (The forwards
# are reached through their modules: torch.linalg has no linalg_cross, with_keywords, ...)
cross = _keywords.with_keywords(_linalg.linalg_cross, "linalg_cross")
det = _keywords.with_keywords(_linalg.linalg_det, "_linalg_det")
inv = _keywords.with_keywords(_linalg.linalg_inv, "linalg_inv_ex")
norm = _keywords.with_keywords(_reductions.matrix_or_vector_norm, "linalg_norm")
vector_norm = _keywords.with_keywords(_reductions.vector_norm, "linalg_vector_norm")
svd = _keywords.with_keywords(_decompositions.linalg_svd, "linalg_svd")
svdvals = _keywords.with_keywords(_decompositions.linalg_svdvals, "linalg_svdvals")

__all__ = ["cross", "det", "inv", "norm", "svd", "svdvals", "vector_norm"]


# A name PyTorch has and gradviz lacks says so, with the --backend torch hint, instead of
# Python's bare "has no attribute".
__getattr__ = _module_getattr("linalg", __name__, globals())
