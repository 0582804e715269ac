"""Gather, scatter and masks: gather, scatter, scatter_add, index_select, index_add,
index_copy, index_fill, masked_fill, masked_scatter, masked_select, take_along_dim, nonzero, and
the in-place forms (masked_fill_, masked_scatter_, scatter_, scatter_add_, index_add_,
index_copy_, index_fill_).

An out-of-place op writes into a copy of self; its in-place form writes into self's storage,
bumps the version and, through a view, rewrites the base's history (CopySlices), as in torch.
"""

import operator

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._dmath import along
from .._keywords import ParserRefusal
from .._registry import export, method, records
from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.formula import keep_raw, keep_raw_of, negative, record
from ._common import (_TORCH_SCALAR, _broadcast_error, _needs, _not_implemented, _operand,
                      _stored)
from ._iterator import c_order
from .inplace import _check_inplace, _commit, _write
from .views import expand, reshape


# torch's lower-case scalar type names (masked_fill's mask message).
_LOWER = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
          "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char"}


# ----- Checks shared by gather and the scatters --------------------------------------------

def _index_array(index, name, allow_int32):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' (position 3) must be Tensor, not "
                        f"{type(index).__name__}")
    idx = index._data
    if idx.dtype != np.int64 and not (allow_int32 and idx.dtype == np.int32):
        raise RuntimeError(f"{name}(): Expected dtype {'int32/' if allow_int32 else ''}int64 "
                           "for index")
    return idx


def _dim_arg(dim):
    """torch's parser takes dim as an int only: a bool, float, None, str or list is its TypeError
    ("argument 'dim' (position 1) must be int, not float"), worded by the keyword wrapper."""
    if type(dim) is int:
        return
    try:
        if isinstance(dim, bool):
            raise TypeError
        operator.index(dim)     # an int-like: a NumPy int, a 0-dim integer tensor
    except TypeError:
        raise ParserRefusal("dim") from None


def _check_bounds(idx, size, dim):
    if idx.size:
        bad = (idx < 0) | (idx >= size)
        if bad.any():
            raise RuntimeError(f"index {idx[bad].flat[0]} is out of bounds for dimension {dim} "
                               f"with size {size}")


def _shape_text(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _prepare(name, self, dim, index, src=None, allow_int32=True):
    """(self array as at least 1-D, wrapped dim, index array, src array sliced to the index's
    shape or None), after torch's checks of gather and scatter."""
    a = self._data
    idx = _index_array(index, name, allow_int32)
    d = _wrap_dim(dim, a.ndim)
    a1 = a.reshape(a.shape or (1,))
    # torch compares dims as ensure_nonempty_dim does: a 0-d index counts as 1-d, so
    # zeros(10).scatter_(0, tensor(3), value=1) (the tutorials' one-hot Lambda) is allowed
    idx1 = idx.reshape(idx.shape or (1,))
    if idx.size and idx1.ndim != a1.ndim:
        what = "input" if name == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} "
                           "tensor")
    s = None
    if src is not None:
        s = src.reshape(src.shape or (1,))
        if idx.size and s.ndim != a1.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
    if idx.size:
        for k in range(a1.ndim):
            over_self = k != d and idx1.shape[k] > a1.shape[k]
            over_src = s is not None and idx1.shape[k] > s.shape[k]
            if name == "gather" and over_self:
                raise RuntimeError(f"Size does not match at dimension {k} expected index "
                                   f"{_shape_text(idx.shape)} to be no larger than self "
                                   f"{_shape_text(a.shape)} apart from dimension {d}")
            if over_self or over_src:
                more = "" if s is None else (" and to be no larger size than src "
                                             f"{_shape_text(src.shape)}")
                raise RuntimeError(f"Expected index {_shape_text(idx.shape)} to be no larger "
                                   f"than self {_shape_text(a.shape)} apart from dimension "
                                   f"{d}{more}")
        _check_bounds(idx1, a1.shape[d], d)
    if s is not None:
        s = s[tuple(slice(0, n) for n in idx1.shape)]
    return a1, d, idx1, s


# ----- Gather and scatter ------------------------------------------------------------------

@export()
@records("gather")
def gather(self, dim, index, *, sparse_grad=False, out=None):
    """Values of self picked along dim by index: out[i][j] = self[i][index[i][j]] (dim 1).

    >>> import gradviz as torch
    >>> torch.tensor([[1.0, 2.0], [3.0, 4.0]]).gather(1, torch.tensor([[1], [0]]))
    tensor([[2.],
            [3.]])
    """
    _dim_arg(dim)
    if out is not None:
        raise _not_implemented("gather", "out")
    if sparse_grad:
        raise _not_implemented("gather", "sparse_grad")
    a1, d, idx, _ = _prepare("gather", self, dim, index, allow_int32=True)
    res = a1[along(idx, d)].reshape(index._data.shape)
    out = _make(res)
    if _needs(self):
        node = record(D["gather"], out, (self,), (d, index, self, False))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out


def _scatter_into(name, self, dim, index, src, value, reduce, target):
    """Write src (or value) into `target` (an array shaped like self) at index along dim."""
    if reduce is not None:
        raise _not_implemented(name, "reduce")
    a = self._data
    if src is not None:
        if src._data.dtype != a.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
        _, d, idx, s = _prepare(name, self, dim, index, src._data)
    else:
        _, d, idx, s = _prepare(name, self, dim, index)
    t1 = target.reshape(target.shape or (1,))
    if idx.size:
        key = along(idx, d)
        if name == "scatter_add":
            np.add.at(t1, key, s)
        else:
            t1[key] = s if src is not None else value
    return d


def _scatter_args(name, src, value):
    """(src Tensor or None, scalar value or None): scatter takes src as a Tensor or a number
    (positionally), or value= as a number."""
    if src is not None and value is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both src "
                        "and value")
    if src is None and value is None:
        raise TypeError(f"{name}() missing 1 required positional arguments: \"src\"")
    if src is not None and not isinstance(src, Tensor):
        src, value = None, _operand(src)[0]
    elif value is not None and isinstance(value, Tensor):
        value = _operand(value.item())[0]
    return src, value


@export()
@records("scatter", "scatter_value")
def scatter(self, dim, index, src=None, *, value=None, reduce=None, out=None):
    """A copy of self with src's values (or a number) written at index along dim.

    >>> import gradviz as torch
    >>> torch.zeros(2, 3).scatter(1, torch.tensor([[2], [0]]), 1.0)
    tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    _dim_arg(dim)
    if out is not None:
        raise _not_implemented("scatter", "out")
    src, value = _scatter_args("scatter", src, value)
    res = np.array(self._data, copy=True)
    d = _scatter_into("scatter", self, dim, index, src, value, reduce, res)
    out = _make(res)
    if src is not None:
        if _needs(self, src):
            node = record(D["scatter"], out, (self, src), (d, index, src.shape))
            if negative(dim):
                keep_raw(node, "dim", dim)    # torch saves the dim as given
    elif _needs(self):
        node = record(D["scatter_value"], out, (self,), (d, index))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out


@method("scatter_")
@records("scatter", "scatter_value")
def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    _dim_arg(dim)
    src, value = _scatter_args("scatter_", src, value)
    _check_inplace(self, src)
    res = np.array(self._data, copy=True)
    d = _scatter_into("scatter", self, dim, index, src, value, reduce, res)
    _write(self, res)
    if src is not None:
        _commit(self, D["scatter"], (self, src), (d, index, src.shape), "scatter_")
    else:
        _commit(self, D["scatter_value"], (self,), (d, index), "scatter_")
    return self


def _src_tensor(name, src):
    if not isinstance(src, Tensor):
        raise TypeError(f"{name}(): argument 'src' (position 3) must be Tensor, not "
                        f"{type(src).__name__}")
    return src


@export()
@records("scatter_add")
def scatter_add(self, dim, index, src, *, out=None):
    """A copy of self with src's values added at index along dim (repeated indices add up).

    >>> import gradviz as torch
    >>> torch.zeros(3).scatter_add(0, torch.tensor([0, 0, 2]), torch.ones(3))
    tensor([2., 0., 1.])
    """
    _dim_arg(dim)
    if out is not None:
        raise _not_implemented("scatter_add", "out")
    src = _src_tensor("scatter_add", src)
    res = np.array(self._data, copy=True)
    d = _scatter_into("scatter_add", self, dim, index, src, None, None, res)
    out = _make(res)
    if _needs(self, src):
        node = record(D["scatter_add"], out, (self, src), (d, index, src.shape))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out


@method("scatter_add_")
@records("scatter_add")
def scatter_add_(self, dim, index, src):
    _dim_arg(dim)
    src = _src_tensor("scatter_add_", src)
    _check_inplace(self, src)
    res = np.array(self._data, copy=True)
    d = _scatter_into("scatter_add", self, dim, index, src, None, None, res)
    _write(self, res)
    _commit(self, D["scatter_add"], (self, src), (d, index, src.shape), "scatter_add_")
    return self


@export()
def take_along_dim(input, indices, dim=None, *, out=None):
    """Values of input picked by indices along dim (over the flattened input when dim is
    None), broadcasting the other dims; composed of expand and gather, as torch records it.

    >>> import gradviz as torch
    >>> torch.take_along_dim(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[1], [0]]), 1)
    tensor([[2.],
            [3.]])
    """
    if out is not None:
        raise _not_implemented("take_along_dim", "out")
    if indices._data.dtype.kind not in "iu":
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_TORCH_SCALAR[indices._data.dtype.name]}")
    if dim is None:
        return gather(reshape(input, -1), 0, reshape(indices, -1))
    if input.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.dim()} dimensions for input, "
                           f"and {indices.dim()} dimensions for indices")
    d = _wrap_dim(dim, input.dim())
    if input.dim() == 0:
        # torch reads input.size(d) of the wrapped dim, which a 0-dim tensor refuses
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    sizes = list(input.shape)
    sizes[d] = indices.shape[d]
    try:
        shape = list(np.broadcast_shapes(tuple(sizes), tuple(indices.shape)))
    except ValueError as exc:
        raise _broadcast_error(np.empty(sizes), indices._data, exc) from None
    idx = expand(indices, tuple(shape))
    shape[d] = input.shape[d]
    return gather(expand(input, tuple(shape)), d, idx)


# ----- Index along a dim -------------------------------------------------------------------

def _vector_index(name, index, size, allow_scalar=True):
    idx = index._data
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32 or int64 for index")
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    idx = idx.reshape(-1)
    if idx.size and ((idx < 0) | (idx >= size)).any():
        bad = idx[(idx < 0) | (idx >= size)][0]
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    return idx


@export()
@records("index_select")
def index_select(self, dim, index, *, out=None):
    """The slices of self along dim at the positions in index (a vector).

    >>> import gradviz as torch
    >>> torch.tensor([[1.0, 2.0, 3.0]]).index_select(1, torch.tensor([2, 0]))
    tensor([[3., 1.]])
    """
    _dim_arg(dim)
    if out is not None:
        raise _not_implemented("index_select", "out")
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    size = a.shape[d] if a.ndim else 1
    ix = getattr(index, "_data", None)
    if not a.ndim and ix is not None and ix.ndim <= 1 and ix.size != 1 and ix.dtype.kind == "i":
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{ix.size} value(s)")
    if a.ndim and size == 0 and ix is not None and ix.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    try:
        idx = _vector_index("index_select", index, size)
    except RuntimeError as exc:
        # torch's CPU kernel words the range check so only along dim 1 (its dim-1 path)
        if d != 1 and str(exc).startswith("INDICES"):
            raise IndexError("index out of range in self") from None
        raise
    res = np.take(a, idx, axis=d) if a.ndim else a.copy()
    out = _make(res)
    if _needs(self):
        node = record(D["index_select"], out, (self,), (d, index, a.shape))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out


def _index_add_into(name, self, dim, index, source, alpha, target):
    a = self._data
    if not isinstance(source, Tensor):
        raise TypeError(f"{name}(): argument 'source' (position 3) must be Tensor, not "
                        f"{type(source).__name__}")
    s = source._data
    d = _wrap_dim(dim, a.ndim)
    idx = _vector_index("index_add_", index, a.shape[d] if a.ndim else 1)
    if s.dtype != a.dtype:
        raise RuntimeError(f"index_add_(): self ({_TORCH_SCALAR[a.dtype.name]}) and source "
                           f"({_TORCH_SCALAR[s.dtype.name]}) must have the same scalar type")
    n = s.shape[d] if s.ndim else 1
    if idx.size != n:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n}), for dim: {d}")
    if alpha != 1:
        s = s * alpha
    t1 = target.reshape(target.shape or (1,))
    s1 = s.reshape(s.shape or (1,))
    np.add.at(t1, (slice(None),) * d + (idx,), s1)
    return d


@export()
@records("index_add")
def index_add(self, dim, index, source, *, alpha=1, out=None):
    """A copy of self with alpha * source added at the positions in index along dim.

    >>> import gradviz as torch
    >>> torch.zeros(3).index_add(0, torch.tensor([0, 0]), torch.tensor([1.0, 2.0]))
    tensor([3., 0., 0.])
    """
    _dim_arg(dim)
    if out is not None:
        raise _not_implemented("index_add", "out")
    res = np.array(self._data, copy=True)
    d = _index_add_into("index_add", self, dim, index, source, alpha, res)
    out = _make(res)
    if _needs(self, source):
        record(D["index_add"], out, (self, source), (alpha, d, index, source, source.dim()))
    return out


@method("index_add_")
@records("index_add")
def index_add_(self, dim, index, source, *, alpha=1):
    _dim_arg(dim)
    _check_inplace(self, source)
    res = np.array(self._data, copy=True)
    d = _index_add_into("index_add_", self, dim, index, source, alpha, res)
    _write(self, res)
    _commit(self, D["index_add"], (self, source), (alpha, d, index, source, source.dim()),
            "index_add_")
    return self


def _index_copy_into(self, dim, index, source, target):
    """Write source's slices into `target` (an array shaped like self) at index along dim,
    after torch's index_copy_ checks, in torch's order; the wrapped dim."""
    a, s, idx = self._data, source._data, index._data
    d = _wrap_dim(dim, a.ndim)
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    if s.ndim == 0 and idx.size != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {idx.size})")
    if s.ndim != a.ndim and s.ndim and a.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({s.ndim}), "
                         f"destination dimensionality ({a.ndim})")
    if idx.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_TORCH_SCALAR[idx.dtype.name]}")
    if s.dtype != a.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_TORCH_SCALAR[a.dtype.name]} and (source) "
                           f"{_TORCH_SCALAR[s.dtype.name]}")
    # torch prints the sizes other than dim's (c10's vector printing: space-separated)
    sliced = [n for k, n in enumerate(a.shape) if k != d]
    s_sliced = [n for k, n in enumerate(s.shape) if k != d]
    if sliced != s_sliced:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {' '.join(map(str, sliced))} at "
                           f"dimension {d} and source slice shape: "
                           f"{' '.join(map(str, s_sliced))} at dimension 0.")
    if s.ndim and idx.size != s.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to "
                         f"source.size(dim) ({s.shape[d]})")
    size = a.shape[d] if a.ndim else 1
    idx = idx.reshape(-1)
    bad = (idx < 0) | (idx >= size)
    if bad.any():
        raise IndexError(f"index_copy_(): index {idx[bad][0]} is out of bounds for dimension "
                         f"{d} with size {size}")
    t1 = target.reshape(target.shape or (1,))
    # a repeated index keeps its last slice, as torch's CPU kernel (one slice after another)
    t1[(slice(None),) * d + (idx,)] = s.reshape(s.shape or (1,))
    return d


@export()
@records("index_copy")
def index_copy(self, dim, index, source):
    """A copy of self with source's slices written at the positions in index along dim
    (torch.index_copy's out= is gradviz._keywords' write_out).

    >>> import gradviz as torch
    >>> torch.zeros(3).index_copy(0, torch.tensor([2, 0]), torch.tensor([1.0, 2.0]))
    tensor([2., 0., 1.])
    """
    _dim_arg(dim)
    res = np.array(self._data, copy=True)
    d = _index_copy_into(self, dim, index, source, res)
    out = _make(res)
    if _needs(self, source):
        record(D["index_copy"], out, (self, source), (d, index, source, source.dim()))
    return out


@method("index_copy_")
@records("index_copy")
def index_copy_(self, dim, index, source):
    _dim_arg(dim)
    _check_inplace(self, source)
    res = np.array(self._data, copy=True)
    d = _index_copy_into(self, dim, index, source, res)
    _write(self, res)
    _commit(self, D["index_copy"], (self, source), (d, index, source, source.dim()),
            "index_copy_")
    return self


def _index_fill_into(self, dim, index, value, target):
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    idx = _vector_index("index_fill_", index, a.shape[d] if a.ndim else 1)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        v = value._data
    else:
        v = _operand(value)[0]
    t1 = target.reshape(target.shape or (1,))
    t1[(slice(None),) * d + (idx,)] = v
    return d


def _record_index_fill(self, out, d, index, value, commit):
    vt = value if isinstance(value, Tensor) else None
    if vt is not None:
        entry, inputs = D["index_fill_tensor"], (self, vt)
    else:
        entry, inputs = D["index_fill"], (self,)
    if commit:
        _commit(self, entry, inputs, (d, index), "index_fill_")
    elif _needs(*inputs):
        record(entry, out, inputs, (d, index))


@export()
@records("index_fill", "index_fill_tensor")
def index_fill(self, dim, index, value):
    """A copy of self with value written at the positions in index along dim.

    >>> import gradviz as torch
    >>> torch.zeros(3).index_fill(0, torch.tensor([1]), 5.0)
    tensor([0., 5., 0.])
    """
    _dim_arg(dim)
    res = np.array(self._data, copy=True)
    d = _index_fill_into(self, dim, index, value, res)
    out = _make(res)
    _record_index_fill(self, out, d, index, value, False)
    if dim < 0:     # torch saves the dim as given
        keep_raw_of(out, D["index_fill" if not isinstance(value, Tensor) else "index_fill_tensor"],
                    dim=dim)
    return out


@method("index_fill_")
@records("index_fill", "index_fill_tensor")
def index_fill_(self, dim, index, value):
    _dim_arg(dim)
    _check_inplace(self, value)
    res = np.array(self._data, copy=True)
    d = _index_fill_into(self, dim, index, value, res)
    _write(self, res)
    _record_index_fill(self, self, d, index, value, True)
    if dim < 0:     # torch saves the dim as given
        keep_raw_of(self, D["index_fill" if not isinstance(value, Tensor) else "index_fill_tensor"],
                    dim=dim)
    return self


# ----- Masks -------------------------------------------------------------------------------

def _bool_mask(mask, message):
    if not isinstance(mask, Tensor):
        raise TypeError(f"argument 'mask' must be Tensor, not {type(mask).__name__}")
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError(message.format(_LOWER.get(m.dtype.name, m.dtype.name)))
    return m


def _fill_value(value, dt):
    """(value, its tensor or None) of masked_fill into dtype dt: a number checked as torch
    converts it."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return value._data, value
    return _stored(_operand(value)[0], dt), None


@export()
@records("masked_fill", "masked_fill_tensor")
def masked_fill(self, mask, value):
    """A copy of self with value where mask (a bool tensor, broadcast) is True.

    >>> import gradviz as torch
    >>> torch.zeros(3).masked_fill(torch.tensor([True, False, True]), 2.0)
    tensor([2., 0., 2.])
    """
    m = _bool_mask(mask, "masked_fill_ only supports boolean masks, but got mask with dtype {}")
    v, vt = _fill_value(value, self._data.dtype)
    a = self._data
    try:
        res = np.where(m, np.asarray(v).astype(a.dtype), a)
    except ValueError as exc:
        raise _broadcast_error(m, a, exc) from None
    out = _make(c_order(res))      # torch clones self contiguous, then fills it in place
    if vt is not None:
        if _needs(self, vt):
            record(D["masked_fill_tensor"], out, (self, vt), (mask,))
    elif _needs(self):
        record(D["masked_fill"], out, (self,), (mask,))
    return out


@method("masked_fill_")
@records("masked_fill", "masked_fill_tensor")
def masked_fill_(self, mask, value):
    m = _bool_mask(mask, "masked_fill_ only supports boolean masks, but got mask with dtype {}")
    v, vt = _fill_value(value, self._data.dtype)
    _check_inplace(self, value)
    a = self._data
    try:
        res = np.where(m, np.asarray(v).astype(a.dtype), a)
    except ValueError as exc:
        raise _broadcast_error(a, m, exc) from None
    if res.shape != a.shape:
        raise RuntimeError(f"output with shape {_shape_text(a.shape)} doesn't match the "
                           f"broadcast shape {_shape_text(res.shape)}")
    _write(self, res)
    if vt is not None:
        _commit(self, D["masked_fill_tensor"], (self, vt), (mask,), "masked_fill_")
    else:
        _commit(self, D["masked_fill"], (self,), (mask,), "masked_fill_")
    return self


@export()
@records("masked_select")
def masked_select(self, mask, *, out=None):
    """The elements of self where mask (broadcast with self) is True, as a 1-D tensor.

    >>> import gradviz as torch
    >>> torch.tensor([1.0, 2.0, 3.0]).masked_select(torch.tensor([True, False, True]))
    tensor([1., 3.])
    """
    if out is not None:
        raise _not_implemented("masked_select", "out")
    m = _bool_mask(mask, "masked_select: expected BoolTensor for mask")
    a = self._data
    try:
        ab, mb = np.broadcast_arrays(a, m)
    except ValueError as exc:
        raise _broadcast_error(a, m, exc) from None
    out = _make(ab[mb])
    if _needs(self):
        record(D["masked_select"], out, (self,), (mask, self))
    return out


def _masked_scatter_into(mask, source, a):
    """Write source's first elements into the array a where mask, expanded to a's shape,
    holds, in order, after torch's masked_scatter_ checks, in its order."""
    src = source._data
    if src.dtype != a.dtype:
        # (no space after "got": torch's words)
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_TORCH_SCALAR[a.dtype.name]} and {_TORCH_SCALAR[src.dtype.name]}")
    m = expand(mask, tuple(a.shape))._data
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_TORCH_SCALAR[m.dtype.name]}")
    n = np.count_nonzero(m)
    if n > src.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    a[m] = src.reshape(-1)[:n]


@export()
@records("masked_scatter")
def masked_scatter(self, mask, source):
    """self (broadcast with mask) with source's first elements written where mask holds, in
    order (MaskedScatterBackward0; also the gradient of masked_select under create_graph=True).

    >>> import gradviz as torch
    >>> torch.zeros(3).masked_scatter(torch.tensor([True, False, True]), torch.tensor([1.0, 2.0]))
    tensor([1., 0., 2.])
    """
    # torch: self and mask expanded to their broadcast shape first (expand_outplace), then
    # a contiguous clone of self is edited by masked_scatter_
    try:
        shape = np.broadcast_shapes(self._data.shape, mask._data.shape)
    except ValueError as exc:
        raise _broadcast_error(mask._data, self._data, exc) from None
    res = np.array(np.broadcast_to(self._data, shape), copy=True, order="C")
    _masked_scatter_into(mask, source, res)
    out = _make(res)
    if _needs(self, source):
        record(D["masked_scatter"], out, (self, source), (mask, source.shape))
    return out


@method("masked_scatter_")
@records("masked_scatter")
def masked_scatter_(self, mask, source):
    _check_inplace(self, source)
    res = np.array(self._data, copy=True)
    _masked_scatter_into(mask, source, res)
    _write(self, res)
    _commit(self, D["masked_scatter"], (self, source), (mask, source.shape), "masked_scatter_")
    return self


@export()
def nonzero(self, *, out=None, as_tuple=False):
    """The indices of the non-zero elements: an (n, ndim) int64 tensor, or with as_tuple one
    1-D tensor per dim.

    >>> import gradviz as torch
    >>> torch.tensor([0.0, 1.5, 0.0, 2.0]).nonzero()
    tensor([[1],
            [3]])
    """
    if out is not None:
        raise _not_implemented("nonzero", "out")
    a = self._data
    if as_tuple:
        if a.ndim == 0:
            return (_make(np.zeros(1 if a != 0 else 0, dtype=np.int64)),)
        return tuple(_make(k.astype(np.int64)) for k in np.nonzero(a))
    if a.ndim == 0:
        return _make(np.zeros((1 if a != 0 else 0, 0), dtype=np.int64))
    return _make(np.argwhere(a).astype(np.int64))


@export()
def argwhere(self):
    """The indices of the non-zero elements, as an (n, ndim) int64 tensor (nonzero()).

    >>> import gradviz as torch
    >>> torch.argwhere(torch.tensor([0.0, 2.0]))
    tensor([[1]])
    """
    return nonzero(self)
