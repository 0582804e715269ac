"""Linear algebra: mm, mv, dot, bmm, addmm, outer, and matmul composed from them exactly where
torch composes it; baddbmm, addbmm, addmv, cross, cdist, inverse and det with their own nodes;
kron, tensordot and einsum composed from views, mul, mm and bmm as torch composes them.
"""

import warnings

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._fperr import quietly, quietly2
from ..autograd.callsite import user_stacklevel
from .. import _dmath, _dtype
from .._dmath import is_transposed
from .._registry import export, method, ops as _ops, records
from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.formula import keep_raw, negative, record
from ..autograd.grad_mode import _state
from ._common import _TORCH_SCALAR, _as_tensor, _broadcast_error, _needs
from .arithmetic import mul
from .inplace import bump_version
from .pointwise import contiguous
from .reductions import sum as sum_
from .views import (_unsafe_view, expand, permute, reshape, squeeze, t, transpose,
                    unsqueeze)


# ----- Linear algebra ----------------------------------------------------------------------

_MM_DTYPE_ERRORS = {
    "mm": "expected m1 and m2 to have the same dtype, but got: {a_c} != {b_c}",
    "mv": "addmv input tensors must have the same dtype, but got {b}, {a}, and {b}",
    "dot": "dot : expected both vectors to have same dtype, but found {a} and {b}",
    "bmm": "expected scalar type {a} but found {b}",
}
_C_TYPE = _dtype._CPP_NAMES


_E_MM = D["mm"]
_BOOL = np.dtype(bool)
# torch's CPU kernel of each product, named in its error for bool input
_MM_KERNELS = {"mm": "addmm_impl_cpu_", "mv": "addmv_impl_cpu", "dot": "dot", "bmm": "bmm"}


# torch's argument checks for a matrix product, in its order: the ranks it takes (with its
# message when self's, then when other's, is not that; {a}, {b}: the ranks), then its message
# when the contracted or batch sizes differ ({a}, {b}: the shapes).
_MM_RANKS = {"mm": (2, 2), "mv": (2, 1), "dot": (1, 1), "bmm": (3, 3)}
_MM_RANK_ERRORS = {
    "mm": ("self must be a matrix", "mat2 must be a matrix"),
    "mv": ("vector + matrix @ vector expected, got {b}, {a}, {b}",) * 2,
    "dot": ("1D tensors expected, but got {a}D and {b}D tensors",) * 2,
    "bmm": ("batch1 must be a 3D tensor", "batch2 must be a 3D tensor"),
}
_MM_SIZE_ERRORS = {
    "mm": "mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})",
    "mv": "size mismatch, got input ({a[0]}), mat ({a[0]}x{a[1]}), vec ({b[0]})",
    "dot": "inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the same "
           "number of elements, but got {a[0]} and {b[0]} elements respectively",
    "bmm": "Expected size for first two dimensions of batch2 tensor to be: [{a[0]}, {a[2]}] but "
           "got: [{b[0]}, {b[1]}].",
}


def _mm_like(entry, self, other):
    a, b = self._data, other._data
    sa, sb = a.shape, b.shape
    ra, rb = _MM_RANKS[entry.op]
    if len(sa) != ra or len(sb) != rb:
        message = _MM_RANK_ERRORS[entry.op][len(sa) == ra]
        raise RuntimeError(message.format(a=len(sa), b=len(sb)))
    # The contracted sizes (self's last, other's first matrix dim) and the batch sizes agree.
    if sa[-1] != sb[-min(2, rb)] or sa[:-2] != sb[:-2]:
        raise RuntimeError(_MM_SIZE_ERRORS[entry.op].format(a=sa, b=sb))
    if entry.op == "bmm" and a.dtype == _BOOL and a.size and b.size:
        _refuse_bool_product(entry)         # (bmm's kernel is chosen by self's dtype first)
    if a.dtype is not b.dtype and a.dtype != b.dtype:
        # torch never promotes in matrix products.
        x, y = a.dtype.name, b.dtype.name
        raise RuntimeError(_MM_DTYPE_ERRORS[entry.op].format(
            a=_TORCH_SCALAR[x], b=_TORCH_SCALAR[y], a_c=_C_TYPE[x], b_c=_C_TYPE[y]))
    if a.dtype == _BOOL and (a.size and b.size or entry.op == "dot"):   # (empty: no kernel)
        _refuse_bool_product(entry)
    out = _make(quietly2(np.matmul, a, b))
    if _needs(self, other):
        args = ((self, other, is_transposed(b), sa, a.strides, sb, b.strides, a.itemsize)
                if entry is _E_MM else (self, other))
        record(entry, out, (self, other), args)
    return out


def _refuse_bool_product(entry):
    raise NotImplementedError(f"\"{_MM_KERNELS[entry.op]}\" not implemented for 'Bool'")


def _mm(self, other):
    """mm of two tensors (matmul's 2-D case too): _mm_like's checks and node in one call,
    the common case first; anything else goes to _mm_like, which raises torch's error."""
    a, b = self._data, other._data
    sa, sb = a.shape, b.shape
    if len(sa) != 2 or len(sb) != 2 or sa[1] != sb[0] or (a.dtype is not b.dtype and
                                                          a.dtype != b.dtype) or \
            a.dtype is _BOOL:
        return _mm_like(_E_MM, self, other)
    out = _make(quietly2(np.matmul, a, b))
    if (self._rg or other._rg) and _state.enabled:
        # the NumPy strides (bytes) and itemsize: torch's strides when read (mm_strides)
        record(_E_MM, out, (self, other),
               (self, other, is_transposed(b), sa, a.strides, sb, b.strides, a.itemsize))
    return out


@export()
@records("mm")
def mm(self, mat2):
    """Matrix product of two 2-D tensors.

    >>> import gradviz as torch
    >>> torch.mm(torch.ones(2, 3, requires_grad=True), torch.ones(3, 2))
    tensor([[3., 3.],
            [3., 3.]], grad_fn=<MmBackward0>)
    """
    return _mm(self, mat2)


@export()
@records("mv")
def mv(self, vec):
    """Matrix-vector product: `torch.mv(torch.ones(2, 3), torch.arange(3.))` is
    `tensor([3., 3.])`."""
    return _mm_like(D["mv"], self, vec)


@export()
@records("dot")
def dot(self, tensor):
    """Inner product of two 1-D tensors of one dtype (torch does not promote here).

    >>> import gradviz as torch
    >>> torch.dot(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
    tensor(11.)
    """
    return _mm_like(D["dot"], self, tensor)


@export()
@records("bmm")
def bmm(self, mat2):
    """Batched matrix product of two 3-D tensors with the same batch size, with no
    broadcasting (`matmul` broadcasts): [b, n, m] @ [b, m, p] -> [b, n, p]."""
    return _mm_like(D["bmm"], self, mat2)


@export()
@method("__matmul__")
def matmul(self, other):
    """torch.matmul, composed from mm / mv / dot / bmm exactly where torch composes it."""
    if not isinstance(other, Tensor):
        return NotImplemented       # torch.matmul refuses it (gradviz._registry.refusing)
    da, db = self._data.ndim, other._data.ndim
    if da == 2 and db == 2:
        return _mm(self, other)     # the common case first
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
    # as torch's: only a Tensor other (which Python never hands here); a number or a NumPy
    # array is Python's TypeError
    return matmul(other, self) if isinstance(other, Tensor) else NotImplemented


@export("addmm", tensor=False)
@records("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if mat1._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_TORCH_SCALAR[mat1._data.dtype.name]} and "
                           f"{_TORCH_SCALAR[mat2._data.dtype.name]}")
    a = quietly(np.matmul, mat1._data, mat2._data)
    b = input._data
    if alpha != 1 or beta != 1:
        r = b * beta + a * alpha
    elif b.dtype == a.dtype and b.shape == a.shape[a.ndim - b.ndim:]:
        r = np.add(a, b, out=a)         # the bias into the fresh product: no second array
    else:
        r = b + a
    out = _make(r)
    if _needs(input, mat1, mat2):
        a, b = mat1._data, mat2._data
        record(D["addmm"], out, (input, mat1, mat2),
               (mat1, mat2, alpha, beta, is_transposed(b), a.shape, a.strides, b.shape,
                b.strides, a.itemsize))
    return out


@export("outer", "ger")
def outer(self, vec2):
    # torch: self.reshape({n, 1}) * vec2 (ViewBackward0, then MulBackward0)
    return mul(reshape(self, self.shape[0], 1), vec2)


# ----- Linear algebra, continued -------------------------------------------------------------

def _scaled_sum(entry, input, prod, others, beta, alpha):
    """beta * input + alpha * prod, with torch's rule that beta = 0 ignores input (nan and
    inf included), recorded as `entry`."""
    a = input._data
    if beta == 0:
        r = np.broadcast_to(prod * alpha if alpha != 1 else prod, np.broadcast_shapes(
            a.shape, prod.shape)).copy()
    elif alpha != 1 or beta != 1:
        r = a * beta + prod * alpha
    else:
        r = a + prod
    out = _make(np.asarray(r, dtype=prod.dtype))
    if _needs(input, *others):
        record(entry, out, (input,) + others, (alpha, *others, beta) if entry is not D["addmv"]
               else (alpha, beta, *others))
    return out


def _check_broadcast(input, shape, name):
    try:
        if np.broadcast_shapes(input.shape, shape) != tuple(shape):
            raise ValueError
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({shape[-1]}) must match the "
                           f"existing size ({input.shape[-1]}) at non-singleton dimension "
                           f"{len(shape) - 1}.  Target sizes: [{', '.join(map(str, shape))}]."
                           f"  Tensor sizes: [{', '.join(map(str, input.shape))}]") from None


@export()
@records("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), per batch (BaddbmmBackward0):
    `torch.baddbmm(torch.zeros(2, 1, 1), torch.ones(2, 1, 3), torch.ones(2, 3, 1))`."""
    for batch in (batch1, batch2):
        n = max(batch.dim(), 1)
        if batch.dim() < 3:
            # torch reads the third size before checking the rank.
            raise IndexError(f"Dimension out of range (expected to be in range of [-{n}, "
                             f"{n - 1}], but got 2)")
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, n, m = batch1.shape
    if batch2.shape[0] != b or batch2.shape[1] != m:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {m}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    dts = (input._data.dtype, batch1._data.dtype, batch2._data.dtype)
    if not dts[0] == dts[1] == dts[2]:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_C_TYPE[dts[0].name]}, "
                           f"batch1: {_C_TYPE[dts[1].name]}, batch2: {_C_TYPE[dts[2].name]}")
    _check_broadcast(input, (b, n, batch2.shape[2]), "baddbmm")
    prod = np.matmul(batch1._data, batch2._data)
    return _scaled_sum(D["baddbmm"], input, prod, (batch1, batch2), beta, alpha)


@export()
@records("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * the sum over the batch of batch1 @ batch2 (AddbmmBackward0):
    `torch.addbmm(torch.zeros(1, 1), torch.ones(2, 1, 3), torch.ones(2, 3, 1))`."""
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    if not input._data.dtype == batch1._data.dtype == batch2._data.dtype:
        a, b1, b2 = (_TORCH_SCALAR[x._data.dtype.name] for x in (input, batch1, batch2))
        if b1 != b2:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {b1} and {b2}")
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {a} and {b2}")
    _check_broadcast(input, (batch1.shape[1], batch2.shape[2]), "addbmm")
    prod = np.matmul(batch1._data, batch2._data).sum(0)
    return _scaled_sum(D["addbmm"], input, prod, (batch1, batch2), beta, alpha)


@export()
@records("addmv")
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec) (AddmvBackward0):
    `torch.addmv(torch.zeros(2), torch.ones(2, 3), torch.ones(3))`."""
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, "
                           f"{vec.dim()}")
    if mat.shape[1] != vec.shape[0] or (input.dim() == 1 and input.shape[0] not in (
            1, mat.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.dim() else 1}), "
                           f"mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    if not input._data.dtype == mat._data.dtype == vec._data.dtype:
        names = [_TORCH_SCALAR[x._data.dtype.name] for x in (input, mat, vec)]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names[0]}, "
                           f"{names[1]}, and {names[2]}")
    prod = np.matmul(mat._data, vec._data)
    return _scaled_sum(D["addmv"], input, prod, (mat, vec), beta, alpha)


@export()
def kron(self, other):
    """The Kronecker product, composed as torch composes it (two _unsafe_views, a mul, an
    _unsafe_view): `torch.kron(torch.eye(2), torch.ones(2, 2))`."""
    n = max(self.dim(), other.dim())
    pa, pb = n - self.dim(), n - other.dim()
    a_shape, b_shape, r_shape = [], [], []
    for i in range(n):
        sa = self.shape[i - pa] if i >= pa else 1
        sb = other.shape[i - pb] if i >= pb else 1
        a_shape += [sa, 1]
        b_shape += [1, sb]
        r_shape.append(sa * sb)
    return _unsafe_view(mul(_unsafe_view(self, tuple(a_shape)), _unsafe_view(other,
                                                                             tuple(b_shape))),
                        tuple(r_shape))


@records("linalg_cross")
def _linalg_cross(input, other, dim):
    a, b = input._data, other._data
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise _broadcast_error(a, b, None) from None
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, len(shape))
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[d]} and {b.shape[d]}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_TORCH_SCALAR[a.dtype.name]} but found "
                           f"{_TORCH_SCALAR[b.dtype.name]}")
    out = _make(np.asarray(np.cross(a, b, axis=d), dtype=a.dtype))
    if _needs(input, other):
        node = record(D["linalg_cross"], out, (input, other), (d, other, input))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out


def linalg_cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along dim (LinalgCrossBackward0):
    `torch.linalg.cross(torch.eye(3), torch.ones(3))`."""
    return _linalg_cross(input, _as_tensor(other, like=input), dim)


_CROSS_WARNED = []


@export()
def cross(input, other, dim=None):
    """linalg.cross; with dim None, the first dim of size 3 (deprecated in torch, which warns
    once per process, Tensor.cross too): `torch.cross(torch.eye(3), torch.ones(3, 3), dim=1)`."""
    if dim is None:
        if not _CROSS_WARNED:
            _CROSS_WARNED.append(True)
            warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                          "Please either pass the dim explicitly or simply use "
                          "torch.linalg.cross.\nThe default value of dim will change to agree "
                          "with that of linalg.cross in a future release.", UserWarning,
                          stacklevel=user_stacklevel())
        sizes = np.broadcast_shapes(input.shape, other.shape)
        dim = next((i for i, s in enumerate(sizes) if s == 3), -1)
    return _linalg_cross(input, other, dim)


# torch switches p = 2 to the matrix-product formula above 25 rows ("if necessary").
_CDIST_MODES = {None: 25, "use_mm_for_euclid_dist_if_necessary": 25,
                "use_mm_for_euclid_dist": 0, "donot_use_mm_for_euclid_dist": None}


@export(tensor=False)
@records("cdist", "euclidean_dist")
def cdist(x1, x2, p=2.0, compute_mode=None):
    """The p-norm distance between each pair of rows of x1 and x2 (CdistBackward0; for p = 2
    over more than 25 rows, torch's matrix-product formula, EuclideanDistBackward0):
    `torch.cdist(torch.zeros(1, 2), torch.ones(1, 2))`."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for label, x in (("X1", x1), ("X2", x2)):     # torch checks both ranks, then columns
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {label} got: "
                               f"{x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for label, x in (("X1", x1), ("X2", x2)):
        if x._data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {label} got: "
                               f"{_TORCH_SCALAR[x._data.dtype.name]}")
    if x1._data.dtype != x2._data.dtype:
        raise RuntimeError(f"expected scalar type {_TORCH_SCALAR[x1._data.dtype.name]} but found "
                           f"{_TORCH_SCALAR[x2._data.dtype.name]}")
    p = float(p)
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    a, b = x1._data, x2._data
    limit = _CDIST_MODES[compute_mode]
    r1, r2 = a.shape[-2], b.shape[-2]
    if p == 2 and limit is not None and (r1 > limit or r2 > limit):
        # torch's _euclidean_dist: |a|^2 + |b|^2 - 2 a.b through a matrix product, clamped at
        # 0 before the square root (so its values differ from the direct formula's by
        # rounding, as torch's do).
        ones_a = np.ones(a.shape[:-1] + (1,), dtype=a.dtype)
        ones_b = np.ones(b.shape[:-1] + (1,), dtype=b.dtype)
        na = np.sum(a * a, -1, keepdims=True)
        nb = np.sum(b * b, -1, keepdims=True)
        a_ = np.concatenate([-2 * a, na, ones_a], -1)
        b_ = np.concatenate([b, ones_b, nb], -1)
        d2 = np.matmul(a_, np.swapaxes(b_, -1, -2))
        dist = _make(np.sqrt(np.maximum(d2, 0)).astype(a.dtype, copy=False))
        if _needs(x1, x2):
            record(D["euclidean_dist"], dist, (x1, x2), (x1, x2))
        return reshape(dist, tuple(dist.shape))
    diff = a[..., :, None, :] - b[..., None, :, :]
    if p == 0:
        r = np.count_nonzero(diff, axis=-1).astype(a.dtype)
    elif p == 1:
        r = np.abs(diff).sum(-1)
    elif p == 2:
        r = np.sqrt((diff * diff).sum(-1))
    elif p == np.inf:
        r = np.abs(diff).max(-1) if diff.shape[-1] else np.zeros(diff.shape[:-1], a.dtype)
    else:
        r = (np.abs(diff) ** p).sum(-1) ** (1 / p)
    out = _make(np.asarray(r, dtype=np.result_type(a, b)))
    if _needs(x1, x2):
        record(D["cdist"], out, (x1, x2), (p, x1, x2))
    return out


@records("cdist_backward")
def cdist_backward(grad, x1, x2, p, cdist):
    """cdist's gradient w.r.t. x1 as an op (CdistBackwardBackward0), recorded under
    create_graph=True as torch does; it has no derivative itself."""
    out = _make(np.asarray(_dmath.cdist_backward(grad._data, x1._data, x2._data, p, cdist._data)))
    if _needs(grad, x1, x2, cdist):
        record(D["cdist_backward"], out, (grad, x1, x2, cdist), ())
    return out


def _square_check(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as "
                           f"input. Got {_TORCH_SCALAR[A._data.dtype.name]}")


def _singular_error(a):
    """torch's error for a singular matrix: the first zero pivot of LAPACK's LU factorization
    (1-based), and the batch element when A is a batch."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for k, m in enumerate(flat):
        pivot = _first_zero_pivot(m.astype(np.float64))
        if pivot:
            where = f"(Batch element {k}): " if a.ndim > 2 else ""
            return np.linalg.LinAlgError(
                f"linalg.inv: {where}The diagonal element {pivot} is zero, the inversion could "
                "not be completed because the input matrix is singular.")
    return None


def _first_zero_pivot(m):
    """LU with partial pivoting (LAPACK's getrf): the 1-based index of the first exactly zero
    pivot, 0 when there is none."""
    m = m.copy()
    n = m.shape[0]
    first = 0
    for j in range(n):
        p = j + int(np.argmax(np.abs(m[j:, j])))
        if m[p, j] == 0:
            first = first or j + 1
            continue
        if p != j:
            m[[j, p]] = m[[p, j]]
        m[j + 1:, j] /= m[j, j]
        m[j + 1:, j + 1:] -= np.outer(m[j + 1:, j], m[j, j + 1:])
    return first


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (a RuntimeError subclass)."""


_LinAlgError.__name__ = "_LinAlgError"


def column_major(a):
    """a laid out as LAPACK's results are in torch (linalg.inv, svd's U and Vh): each matrix
    column-major, the batch outermost, e.g. strides (9, 1, 3) for 2 x 3 x 3; as_strided reads
    this layout."""
    return np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)


@records("linalg_inv_ex")
def linalg_inv(A):
    """The inverse of a square matrix or a batch of them (LinalgInvExBackward0):
    `torch.linalg.inv(2 * torch.eye(2))`, `torch.inverse(...)`."""
    _square_check(A, "inv")
    a = A._data
    err = _singular_error(a) if a.size else None
    if err is not None:
        raise _LinAlgError(str(err))
    out = _make(column_major(np.linalg.inv(a).astype(a.dtype, copy=False)))
    if _needs(A):
        record(D["linalg_inv_ex"], out, (A,))
    return out


@export()
def inverse(self):
    """torch.inverse and Tensor.inverse: torch.linalg.inv under torch's other parameter name
    (`input`, where torch.linalg.inv takes `A`); the same node, LinalgInvExBackward0."""
    return linalg_inv(self)


@records("linalg_det")
def linalg_det(A):
    """The determinant of a square matrix or a batch of them (LinalgDetBackward0):
    `torch.linalg.det(2 * torch.eye(2))`, `torch.det(...)`."""
    _square_check(A, "det")
    a = A._data
    out = _make(np.asarray(np.linalg.det(a), dtype=a.dtype))
    if _needs(A):
        record(D["linalg_det"], out, (A,), (A,))
    return out


@records("linalg_solve_ex")
def linalg_solve_ex(A, B):
    """X with A X = B, for a square A and a matrix (or batch of them) B
    (LinalgSolveExBackward0): torch's solver, which det's gradient uses under
    create_graph=True. Not public: torch.linalg.solve's vector and `left=False` cases are not
    implemented."""
    try:
        out = _make(np.linalg.solve(A._data, B._data))
    except np.linalg.LinAlgError:
        raise _LinAlgError("torch.linalg.solve: The solver failed because the input matrix is "
                           "singular.") from None
    if _needs(A, B):
        record(D["linalg_solve_ex"], out, (A, B), (A, True))     # torch saves left=True
    return out


@export()
def det(self):
    """torch.det and Tensor.det: torch.linalg.det under torch's other parameter name (`input`,
    where torch.linalg.det takes `A`); the same node, LinalgDetBackward0."""
    return linalg_det(self)


@export(tensor=False)
def tensordot(a, b, dims=2, out=None):
    """Contraction of a's and b's `dims` (a count: a's last and b's first; or two lists),
    composed as torch composes it: permute, reshape, mm, reshape.
    `torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), dims=1).shape`."""
    if out is not None:
        raise NotImplementedError("gradviz: torch.tensordot(out=...) is not implemented by "
                                  "gradviz's core; run with --backend torch to use PyTorch")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da = list(range(a.dim() - dims, a.dim()))
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    da = [_wrap_dim(d, a.dim()) for d in da]
    db = [_wrap_dim(d, b.dim()) for d in db]
    t1, t2 = a, b
    csize = 1
    for x, y in zip(da, db):
        s1, s2 = a.shape[x], b.shape[y]
        if s2 == 1:     # a broadcast dim is summed right away, as torch does
            t1 = sum_(t1, x, keepdim=True)
        elif s1 == 1:
            t2 = sum_(t2, y, keepdim=True)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} "
                               f"in dim {x} and second has size {s2} in dim {y}")
        else:
            csize *= s1
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    size1 = int(np.prod([t1.shape[d] for d in fa])) if fa else 1
    size2 = int(np.prod([t2.shape[d] for d in fb])) if fb else 1
    rsizes = [t1.shape[d] for d in fa] + [t2.shape[d] for d in fb]
    t1 = permute(t1, fa + da)
    t2 = permute(t2, db + fb)
    if size1 == 1 and size2 == 1:
        # torch 2.13 contracts to one number with dot when both permuted operands are
        # contiguous, else as (squeeze(a) * squeeze(b)).sum().
        if t1._data.flags.c_contiguous and t2._data.flags.c_contiguous:
            v1 = t1 if t1.dim() == 1 else reshape(t1, csize)
            v2 = t2 if t2.dim() == 1 else reshape(t2, csize)
            return reshape(dot(v1, v2), tuple(rsizes))
        return reshape(sum_(mul(squeeze(t1), squeeze(t2))), tuple(rsizes))
    return reshape(mm(reshape(t1, size1, csize), reshape(t2, csize, size2)), tuple(rsizes))


# ----- einsum --------------------------------------------------------------------------------
# Composed exactly as torch 2.13's einsum composes it (aten/src/ATen/native/Linear.cpp): each
# operand is diagonalised for repeated labels, unsqueezed for missing ones and permuted to
# (output labels, contracted labels); the operands are then contracted left to right, each
# pair by sumproduct_pair (permute, reshape, bmm, view, permute), so the graph shows the same
# nodes as torch's.

_ELLIPSIS = 52


def _label(c):
    """A label's subscript: A-Z are 0-25 and a-z 26-51, torch's order for implicit outputs."""
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def _char(s):
    """The letter of subscript s (the inverse of _label)."""
    return chr(s + ord("A")) if s < 26 else chr(s - 26 + ord("a"))


def _sumproduct_pair(left, right, sum_dims):
    """(left * right).sum(sum_dims, keepdim=True) through one bmm (operands of equal ndim)."""
    if not sum_dims:
        return mul(left, right)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.dim()):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = sum_(left, i, keepdim=True)
            elif sr:
                right = sum_(right, i, keepdim=True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right.shape[d] for d in ro])
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [0] * len(lperm)
    for k, d in enumerate(lperm):
        operm[d] = k
    left = reshape(permute(left, tuple(lperm)), lro_size, lo_size, sum_size)
    right = reshape(permute(right, tuple(rperm)), lro_size, sum_size, ro_size)
    return permute(reshape(bmm(left, right), tuple(out_size)), tuple(operm))


# torch's two messages for a stray '.', on the left side (per operand) and on the output.
_DOT_ERRORS = {
    False: ("einsum(): found '.' for operand {} for which an ellipsis was already found",
            "einsum(): found '.' for operand {} that is not part of any ellipsis"),
    True: ("einsum(): found '.' for output but an ellipsis (...) was already found",
           "einsum(): found '.' for output that is not part of any ellipsis (...)"),
}


def _subscripts(text, offset, output):
    """Each label of one side of an equation as it is read: a subscript, _ELLIPSIS for '...',
    or (left side only) None for the comma between operands. A generator, so that each error
    is raised at the character where torch's scan raises it; offset is text's index in the
    equation, for torch's "invalid subscript given at index" message."""
    already, stray = _DOT_ERRORS[output]
    operand = 0
    seen_ellipsis = False
    i = 0
    while i < len(text):
        c = text[i]
        if c == " ":
            pass
        elif c == ".":
            if seen_ellipsis:
                raise RuntimeError(already.format(operand))
            if text[i:i + 3] != "...":
                raise RuntimeError(stray.format(operand))
            seen_ellipsis = True
            i += 2
            yield _ELLIPSIS
        elif c == "," and not output:
            operand += 1
            seen_ellipsis = False
            yield None
        elif c.isascii() and c.isalpha():
            yield _label(c)
        else:
            raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in the "
                               "equation string, subscripts must be in [a-zA-Z]")
        i += 1


def _parse_einsum(equation, operands):
    """(labels per operand, the output side or None, the left side's length), with torch's
    checks and errors for the left side."""
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    labels = [[]]
    for s in _subscripts(lhs, 0, output=False):
        if s is not None:
            labels[-1].append(s)
        elif len(labels) == len(operands):
            raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                               "equation")
        else:
            labels.append([])
    if len(labels) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    return labels, (None if arrow < 0 else equation[arrow + 2:]), len(lhs)


@export(tensor=False)
def einsum(*args):
    """Einstein summation, composed as torch composes it (permute, reshape, bmm, view, sum):
    `torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(3, 4)).shape`."""
    if not args or not isinstance(args[0], str):
        raise NotImplementedError("gradviz: torch.einsum(operand, sublist, ...) is not "
                                  "implemented by gradviz's core; run with --backend torch to "
                                  "use PyTorch")
    equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    operands = [_as_tensor(op) for op in operands]
    op_labels, rhs, lhs_len = _parse_einsum(equation, operands)
    count = [0] * 52
    ell_num_dim = 0
    for i, (op, labels) in enumerate(zip(operands, op_labels)):
        n = len(labels)
        has_ell = _ELLIPSIS in labels
        if has_ell:
            n -= 1
            ell_num_dim = max(ell_num_dim, op.dim() - n)
        for s in labels:
            if s != _ELLIPSIS:
                count[s] += 1
        if (n > op.dim()) if has_ell else (n != op.dim()):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n}) "
                + ("is more than the number of dimensions (" if has_ell
                   else "does not match the number of dimensions (")
                + f"{op.dim()}) for operand {i}" + ("" if has_ell else
                                                    " and no ellipsis was given"))
    perm_index_of = [-1] * 52
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if rhs is None:
        perm_index = ell_num_dim
        ell_in_output = True
        for s in range(52):
            if count[s] == 1:
                perm_index_of[s] = perm_index
                perm_index += 1
    else:
        for s in _subscripts(rhs, lhs_len + 2, output=True):
            if s == _ELLIPSIS:
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            elif count[s] > 0 and perm_index_of[s] == -1:
                perm_index_of[s] = perm_index
                perm_index += 1
            else:
                raise RuntimeError(
                    f"einsum(): output subscript {_char(s)}"
                    + (" appears more than once in the output" if perm_index_of[s] > -1
                       else " does not appear in the equation for any input operand"))
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(52):
        if count[s] > 0 and perm_index_of[s] == -1:
            perm_index_of[s] = perm_index
            perm_index += 1
    label_size = [1] * 52
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops_ = []
    for i, (op, labels) in enumerate(zip(operands, op_labels)):
        perm = [-1] * perm_index
        dim = 0
        for s in labels:
            if s == _ELLIPSIS:
                ndim = op.dim() - (len(labels) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = op.shape[dim]
                    if size != 1:
                        if ell_sizes[j] != 1 and ell_sizes[j] != size:
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}"
                                f"has size {size} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    perm[ell_index + j] = dim
                    dim += 1
            elif perm[perm_index_of[s]] == -1:
                size = op.shape[dim]
                if size != 1:
                    if label_size[s] != 1 and label_size[s] != size:
                        raise RuntimeError(f"einsum(): subscript {_char(s)} has size {size} for operand "
                                           f"{i} which does not broadcast with previously seen "
                                           f"size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[perm_index_of[s]] += 1
                perm[perm_index_of[s]] = dim
                dim += 1
            else:
                prev = perm[perm_index_of[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(f"einsum(): subscript {_char(s)} is repeated for operand {i} but "
                                       f"the sizes don't match, {op.shape[dim]} != "
                                       f"{op.shape[prev]}")
                op = _ops.movedim(_ops.diagonal(op, 0, prev, dim), -1, prev)
        for k in range(perm_index):
            if perm[k] == -1:
                op = unsqueeze(op, dim)
                perm[k] = dim
                dim += 1
        ops_.append(permute(op, tuple(perm)))
    while len(ops_) > 1:
        a, b = ops_[0], ops_[1]
        del ops_[:2]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = sum_(a, a_sum, keepdim=True)
        if b_sum:
            b = sum_(b, b_sum, keepdim=True)
        ops_.insert(0, _sumproduct_pair(a, b, sum_dims))
    result = ops_[0]
    if perm_index - out_num_dim > 0:
        if len(operands) > 1:
            return _drop_summed(result, tuple(result.shape[:out_num_dim]))
        return sum_(result, list(range(out_num_dim, perm_index)))
    return result


def _drop_summed(x, shape):
    # torch's einsum uses view (not reshape) to drop the summed dims of size 1.
    return _ops.view(x, tuple(shape))
