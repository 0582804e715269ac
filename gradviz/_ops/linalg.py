"""Linear algebra: mm, mv, dot, bmm, addmm, outer, and matmul composed from them exactly where
torch composes it.
"""

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._dmath import is_transposed
from .._registry import export, method, records
from .._tensor import Tensor, _make
from ..autograd.formula import record
from ._common import _TORCH_SCALAR, _as_tensor, _broadcast_error, _needs
from .arithmetic import mul
from .inplace import bump_version
from .pointwise import contiguous
from .views import _unsafe_view, expand, reshape, squeeze, t, transpose, unsqueeze


# ----- Linear algebra ----------------------------------------------------------------------

_MM_DTYPE_ERRORS = {
    "mm": "expected m1 and m2 to have the same dtype, but got: {a_c} != {b_c}",
    "mv": "addmv input tensors must have the same dtype, but got {b}, {a}, and {b}",
    "dot": "dot : expected both vectors to have same dtype, but found {a} and {b}",
    "bmm": "expected scalar type {a} but found {b}",
}
_C_TYPE = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
           "uint8": "unsigned char", "bool": "bool", "float32": "float", "float64": "double",
           "float16": "c10::Half"}


_E_MM = D["mm"]


def _mm_like(entry, self, other):
    a, b = self._data, other._data
    if a.dtype != b.dtype:
        # torch never promotes in matrix products.
        x, y = a.dtype.name, b.dtype.name
        raise RuntimeError(_MM_DTYPE_ERRORS[entry.op].format(
            a=_TORCH_SCALAR[x], b=_TORCH_SCALAR[y], a_c=_C_TYPE[x], b_c=_C_TYPE[y]))
    out = _make(np.matmul(a, b))
    if _needs(self, other):
        args = (self, other, is_transposed(b)) if entry is _E_MM else (self, other)
        record(entry, out, (self, other), args)
    return out


@export()
@records("mm")
def mm(self, mat2):
    if self.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x"
                           f"{self.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    return _mm_like(D["mm"], self, mat2)


@export()
@records("mv")
def mv(self, vec):
    if self.dim() != 2 or vec.dim() != 1:
        raise RuntimeError("vector + matrix @ vector expected, got "
                           f"{vec.dim()}, {self.dim()}, {vec.dim()}")
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self.shape[0]}), mat "
                           f"({self.shape[0]}x{self.shape[1]}), vec ({vec.shape[0]})")
    return _mm_like(D["mv"], self, vec)


@export()
@records("dot")
def dot(self, tensor):
    if self.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {tensor.dim()}D "
                           "tensors")
    if self.shape[0] != tensor.shape[0]:
        raise RuntimeError("inconsistent tensor size, expected tensor [{}] and src [{}] to have "
                           "the same number of elements, but got {} and {} elements "
                           "respectively".format(self.shape[0], tensor.shape[0], self.shape[0],
                                                 tensor.shape[0]))
    return _mm_like(D["dot"], self, tensor)


@export()
@records("bmm")
def bmm(self, mat2):
    if self.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if mat2.shape[0] != self.shape[0] or mat2.shape[1] != self.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, "
                           f"{mat2.shape[1]}].")
    return _mm_like(D["bmm"], self, mat2)


@export()
@method("__matmul__")
def matmul(self, other):
    """torch.matmul, composed from mm / mv / dot / bmm exactly where torch composes it."""
    if not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' must be Tensor, not {type(other).__name__}")
    da, db = self.dim(), other.dim()
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return dot(self, other)
    if da == 2 and db == 1:
        return mv(self, other)
    if da == 1 and db == 2:
        # torch: unsqueeze(0).mm(other).squeeze_(0), an in-place squeeze (so _version is 1).
        return _squeeze0_(mm(unsqueeze(self, 0), other))
    if da == 2 and db == 2:
        return mm(self, other)
    if _should_fold(self, other):
        # Fold the batch into the rows of the larger tensor (transposed when it is the second):
        # reshape -> mm / mv -> _unsafe_view, as torch's _matmul_impl does.
        swap = db > da
        t1 = transpose(other, -2, -1) if swap else self
        t2 = (t(self) if da == 2 else self) if swap else other
        lead = tuple(t1.shape[:-1])
        folded = reshape(t1, int(np.prod(lead)), t1.shape[-1])
        if t2.dim() == 2:
            r = _unsafe_view(mm(folded, t2), lead + (t2.shape[1],))
            return contiguous(transpose(r, -2, -1)) if swap else r
        return _unsafe_view(mv(folded, t2), lead)
    # Batched: expand both to the broadcast batch (always, as torch does, so the graph shows
    # ExpandBackward0 even when nothing broadcasts), reshape, bmm, then _unsafe_view.
    if da == 3 and db == 3 and self.shape[0] != other.shape[0]:
        # torch squeezes a batch of one that requires grad rather than expanding it.
        if self.shape[0] == 1 and self._rg:
            return matmul(squeeze(self, 0), other)
        if other.shape[0] == 1 and other._rg:
            return matmul(self, squeeze(other, 0))
    n = self.shape[-2] if da > 1 else 1
    k1 = self.shape[-1]
    k2 = other.shape[-2] if db > 1 else other.shape[0]
    m = other.shape[-1] if db > 1 else 1
    ba, bb = tuple(self.shape[:-2]), tuple(other.shape[:-2])
    try:
        batch = np.broadcast_shapes(ba, bb)
    except ValueError:
        raise _broadcast_error(np.empty(ba), np.empty(bb), None) from None
    nb = int(np.prod(batch)) if batch else 1
    ae = reshape(expand(self, *(batch + (n, k1))), nb, n, k1)
    if db == 1:
        be = unsqueeze(reshape(expand(other, *(batch + (k2,))), nb, k2), 2)
    else:
        be = reshape(expand(other, *(batch + (k2, m))), nb, k2, m)
    r = bmm(ae, be)
    if db == 1:
        r = squeeze(r, -1)
    shape = batch + ((n,) if da > 1 else ()) + ((m,) if db > 1 else ())
    return _unsafe_view(r, shape)


def _should_fold(a, b):
    """torch's should_fold: fold a >= 3-D operand into a matrix (mm / mv instead of bmm) when
    the other one is 1-D or 2-D and either requires grad or the fold needs no copy."""
    larger_first = a.dim() >= b.dim()
    big, small = (a, b) if larger_first else (b, a)
    if not (big.dim() >= 3 and small.dim() <= 2):
        return False
    if small._rg:        # torch reads requires_grad only, not grad mode
        return True
    if a.dim() == 2:
        return False
    d = big._array()
    if not larger_first:
        d = np.swapaxes(d, -2, -1)
    if d.size == 0:
        return True
    st = d.strides
    return all(st[i] == st[i + 1] * d.shape[i + 1] for i in range(d.ndim - 2))


@records("squeeze_dim_")
def _squeeze0_(self):
    """self.squeeze_(0) on a fresh (non-view) result: an in-place edit that rewrites its
    history as SqueezeBackward4 (torch's squeeze_.dim)."""
    old = self.shape
    self._data = np.reshape(self._array(), old[1:]) if old[0] == 1 else self._data
    bump_version(self, "squeeze_")
    if _needs(self):
        record(D["squeeze_dim_"], self, (self,), (old, 0))
    return self


@method("__rmatmul__")
def rmatmul(self, other):
    return matmul(_as_tensor(other), self)


@export("addmm", tensor=False)
@records("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if mat1._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_TORCH_SCALAR[mat1._data.dtype.name]} and "
                           f"{_TORCH_SCALAR[mat2._data.dtype.name]}")
    a = np.matmul(mat1._data, mat2._data)
    out = _make(input._data * beta + a * alpha if (alpha != 1 or beta != 1)
                else input._data + a)
    if _needs(input, mat1, mat2):
        record(D["addmm"], out, (input, mat1, mat2),
               (mat1, mat2, alpha, beta, is_transposed(mat2._data)))
    return out


@export()
def outer(self, vec2):
    # torch: self.reshape({n, 1}) * vec2 (ViewBackward0, then MulBackward0)
    return mul(reshape(self, self.shape[0], 1), vec2)
