"""The singular value decomposition: torch.linalg.svd, torch.linalg.svdvals and torch.svd,
one LinalgSvdBackward0 node over (U, S, Vh) as torch records it.

S is torch's up to float rounding. U and Vh come from NumPy's LAPACK: a singular vector is
unique only up to its sign (torch's documentation says so), and those signs can differ from
PyTorch's (LAPACK builds choose differently), so the first call that returns them warns.
The gradient through S (svdvals, or any use of S alone) is torch's svd_backward; a gradient
through U or Vh is refused clearly.

>>> import gradviz as torch
>>> torch.linalg.svdvals(torch.tensor([[3.0, 0.0], [0.0, -4.0]]))
tensor([4., 3.])
"""

import warnings

import numpy as np

from .. import return_types
from .._derivatives import DERIVATIVES as D
from .._registry import export, records
from .._tensor import _make
from ..autograd.callsite import user_stacklevel
from ..autograd.formula import record_outputs
from ._common import _TORCH_SCALAR, _needs, _not_implemented
from .linalg import column_major

_WARNED = []


def _svd_arrays(A, full_matrices, name):
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.dtype.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_TORCH_SCALAR[a.dtype.name]}")
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return column_major(u.astype(a.dtype)), s.astype(a.dtype), column_major(vh.astype(a.dtype))


def _decompose(A, full_matrices, name):
    """(U, S, Vh) as tensors, recorded as one LinalgSvdBackward0 node."""
    u, s, vh = _svd_arrays(A, full_matrices, name)
    outs = (_make(u), _make(s), _make(vh))
    if _needs(A):
        record_outputs(D["linalg_svd"], outs, (A,),
                       (outs[0], outs[1], outs[2], full_matrices, s.shape[-1]))
    return outs


def _warn_signs():
    if not _WARNED:
        _WARNED.append(True)
        warnings.warn("gradviz: the singular vectors (U, V) come from NumPy's LAPACK and may "
                      "differ in sign from PyTorch's (each is unique only up to sign); S is "
                      "the same", stacklevel=user_stacklevel())


def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending (torch.linalg.svd)."""
    if driver is not None:
        raise _not_implemented("linalg.svd", "driver")
    if out is not None:
        raise _not_implemented("linalg.svd", "out")
    _warn_signs()
    return return_types.linalg_svd(*_decompose(A, full_matrices, "linalg.svd"))


@records("linalg_svd")
def linalg_svdvals(A, *, driver=None, out=None):
    """The singular values of A, descending (torch.linalg.svdvals)."""
    if driver is not None:
        raise _not_implemented("linalg.svdvals", "driver")
    if out is not None:
        raise _not_implemented("linalg.svdvals", "out")
    if not _needs(A):
        return _make(_svd_arrays(A, False, "linalg.svd")[1])
    return _decompose(A, False, "linalg.svd")[1]


@export()
def svd(self, some=True, compute_uv=True, *, out=None):
    """(U, S, V) with self = U diag(S) V^T (torch.svd; V is linalg.svd's Vh transposed). With
    compute_uv=False, U and V are zeros, as torch's."""
    if out is not None:
        raise _not_implemented("svd", "out")
    if not compute_uv:
        s = linalg_svdvals(self)
        m, n = self.shape[-2:]
        lead = tuple(self.shape[:-2])
        dt = self._data.dtype
        return return_types.svd(_make(np.zeros(lead + (m, m), dt)), s,
                                _make(np.zeros(lead + (n, n), dt)))
    _warn_signs()
    u, s, vh = _decompose(self, not some, "linalg.svd")
    return return_types.svd(u, s, vh.transpose(-2, -1))
