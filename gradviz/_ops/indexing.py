"""Indexing: a[key] as torch's get_item, and a[key] = value as its set_item.
"""

import operator
import warnings

import numpy as np
from numpy.lib.array_utils import byte_bounds

from .._derivatives import DERIVATIVES as D, storage_memory
from .._registry import export, method, records
from .._tensor import _TYPE_NAMES, Tensor, _make
from ..autograd.callsite import user_stacklevel
from ..autograd.formula import record
from .._fperr import quietly
from ._common import _TORCH_SCALAR, _as_tensor, _needs, _stored
from .inplace import _check_inplace, _commit, _copy, _fill
from .strided import _positions, storage_offset
from .views import _select, _view_op, expand, unsqueeze, view


# ----- Indexing ----------------------------------------------------------------------------

def _is_advanced(k):
    return isinstance(k, (Tensor, np.ndarray, list, tuple, range)) or (isinstance(k, bool))


def _is_sequence(k):
    """CPython's PySequence_Check: a type with __getitem__ that is not a dict (NumPy scalars
    are not sequences)."""
    return hasattr(type(k), "__getitem__") and not isinstance(k, (dict, np.generic))


def _treat_sequence_as_tuple(key):
    """torch's treatSequenceAsTuple (NumPy's legacy rule): a non-tuple sequence shorter than
    32 items that holds a sequence, a Tensor, a slice, Ellipsis or None is a tuple of indices;
    any other list (of ints, of bools, or 32 items or more) is one index."""
    if isinstance(key, tuple):
        return True
    if isinstance(key, Tensor) or type(key) is np.ndarray or not _is_sequence(key):
        return False
    try:
        n = len(key)
    except Exception:           # noqa: BLE001 - torch clears the error and says no
        return False
    if n >= 32:
        return False
    for i in range(n):
        try:
            item = key[i]
        except Exception:       # noqa: BLE001
            return False
        if isinstance(item, (Tensor, slice)) or _is_sequence(item) or item is None \
                or item is Ellipsis:
            warnings.warn(_NON_TUPLE, UserWarning, stacklevel=user_stacklevel())
            return True
    return False


# torch 2.13's warning (TORCH_WARN: at every such index) for a list taken as a tuple of indices
_NON_TUPLE = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will "
              "be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 "
              "this will be interpreted as tensor index, x[torch.tensor(seq)], which will "
              "result either in an error or a different result")


def _index_array(t):
    """The NumPy index of an index tensor, as torch's index reads it: bool is a mask, uint8 is
    a (deprecated) mask too, int32 and int64 are positions; any other dtype is refused."""
    kind = t._data.dtype
    if kind == np.bool_:
        return t._data
    if kind == np.uint8:
        return t._data.astype(np.bool_)
    if kind in (np.int32, np.int64):
        return np.asarray(t._data, dtype=np.int64)
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _is_byte_mask(k):
    return isinstance(k, Tensor) and k._data.dtype == np.uint8


def _warn_byte_masks(sources):
    """torch's deprecation warning, once for each uint8 mask among the index tensors."""
    for k in sources:
        if _is_byte_mask(k):
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                          "dtype torch.bool instead.", UserWarning, stacklevel=user_stacklevel())


_EXPANDED = ("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor "
             "before performing this operation. This also applies to advanced indexing e.g. "
             "tensor[indices] = tensor")
_EXPANDED_MASK = ("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the "
                  "tensor before performing this operation. This also applies to advanced "
                  "indexing e.g. tensor[mask] = scalar")


def _check_put(self, key, sources, values, accumulate, inplace=True):
    """torch's _index_put_impl_ checks before it writes values into self at the NumPy key
    (sources: the index tensors or key items), in its order; True where torch writes with
    masked_fill_ (a one-element value through a lone mask, without accumulate). Out of place
    (index_put), torch writes into a clone, which neither is expanded nor overlaps anything."""
    a = self._array()
    shared = inplace and _internal_overlap(a)
    if shared:
        # torch warns and writes through to the elements the expanded dims share (_put_shared)
        warnings.warn(_EXPANDED, UserWarning, stacklevel=user_stacklevel())
    arrays = [k for k in key if not isinstance(k, slice)]
    if not accumulate and values._data.size == 1 and len(arrays) == 1 \
            and np.asarray(arrays[0]).dtype == np.bool_:
        if shared:
            warnings.warn(_EXPANDED_MASK, UserWarning, stacklevel=user_stacklevel())
        if _is_byte_mask(sources[0]):
            try:
                a[key]      # the mask's shape is checked first
            except IndexError as exc:
                raise _index_error(exc, a, key) from None
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with "
                               "dtype unsigned char")
        return True
    for t in (values, *sources) if inplace else ():
        if isinstance(t, Tensor) and _overlaps(a, t._data):
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               "the written-to tensor refer to a single memory location. "
                               "Please clone() the tensor before performing the operation.")
    return False


def _put_shared(self, key, values, accumulate, op):
    """index_put_ into a tensor whose elements share memory (an expanded one): torch writes
    element by element into the shared memory, so the last write to an element wins (or,
    with accumulate, every value adds into it); here through each element's position in its
    root's memory. Not recorded for autograd: refused when it would be."""
    if _needs(self, values):
        raise NotImplementedError(f"gradviz: {op} into an expanded tensor that requires grad "
                                  f"is not implemented (torch: {_EXPANDED}); clone() it first, "
                                  "or run with --backend torch to use PyTorch")
    root = self if self._base_ is None else self._base_
    r = root._array()
    memory = storage_memory(r)
    if memory is None or not memory.flags.writeable:
        raise NotImplementedError(f"gradviz: {op} into an expanded view of a tensor whose "
                                  "storage is not dense is not implemented; clone() it first, "
                                  "or run with --backend torch to use PyTorch")
    a = self._array()
    try:
        at = _positions(a, r, storage_offset(self))[key]
    except IndexError as exc:
        raise _index_error(exc, a, key) from None
    new = np.broadcast_to(values._data, at.shape).reshape(-1)
    if accumulate:
        np.add.at(memory, at.reshape(-1), new)
    else:
        memory[at.reshape(-1)] = new
    _commit(self, D["index_put"], (self, values), (key, accumulate, values.shape), op)
    return self


def _internal_overlap(a):
    """torch's has_internal_overlap is Yes: a dim of several elements with stride 0."""
    return any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape))


def _overlaps(a, b):
    """torch's get_overlap_status is Full or Partial: both dense without internal overlap
    (else torch finds it too hard to tell and allows it), and their bytes meet."""
    if not (isinstance(b, np.ndarray) and _dense(a) and _dense(b)):
        return False
    lo_a, hi_a = byte_bounds(a)
    lo_b, hi_b = byte_bounds(b)
    return lo_a < hi_b and lo_b < hi_a


def _dense(a):
    lo, hi = byte_bounds(a)
    return a.size > 0 and hi - lo == a.nbytes and not _internal_overlap(a)


def _np_key(k):
    if isinstance(k, Tensor):
        return _index_array(k)
    if isinstance(k, (list, tuple)):
        # torch's indexing_tensor_from_data: a sequence becomes a bool tensor or a long one
        # (an empty list, inferred as float, and floats included)
        if any(isinstance(x, Tensor) and x._data.size != 1 for x in k):
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        items = [x._data if isinstance(x, Tensor) else _np_key(x) for x in k]
        for x in items:
            if isinstance(x, str):
                raise TypeError("new(): invalid data type 'str'")
            if not isinstance(x, (int, float, np.generic, np.ndarray)):
                raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
        arr = np.asarray(items)
        return arr.astype(np.int64) if arr.dtype.kind in "fiu" else arr
    if isinstance(k, range):
        # a[range(n), y] (makemore's lectures): torch reads any sequence as a long tensor
        return np.arange(k.start, k.stop, k.step, dtype=np.int64)
    return k


@method("__getitem__")
@records("index", "alias")
def getitem(self, key):
    """Indexing as torch records it: select / slice / unsqueeze views for the basic parts of
    the key, then one IndexBackward0 for tensor, list and mask indices (torch's get_item)."""
    if type(key) is int:
        return _select(self, 0, key, "index")
    if type(key) is slice:
        # A lone slice is always a view, even a full one (torch disables its slice shortcut).
        return _slice(self, 0, key, optimize=False)
    if key is None:
        return unsqueeze(self, 0)
    if key is Ellipsis:
        return _view_op(self, D["alias"], (_alias_view, ()), ())
    out, adv, sources = _apply_slicing(self, key)
    if adv is None:
        if out is self:
            return _view_op(self, D["alias"], (_alias_view, ()), ())
        return out
    a = out._array()
    _warn_byte_masks(sources)
    try:
        res = _make(np.array(a[adv], copy=True))
    except IndexError as exc:
        raise _index_error(exc, a, adv) from None
    if _needs(out):
        record(D["index"], res, (out,), (out.shape, adv))
    return res


def _index_error(exc, a, adv):
    """torch's wording for an advanced index NumPy refused."""
    for i, k in enumerate(adv):
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            if k.shape != a.shape[i:i + k.ndim]:
                return IndexError(f"The shape of the mask [{', '.join(map(str, k.shape))}] at "
                                  f"index {i} does not match the shape of the indexed tensor "
                                  f"[{', '.join(map(str, a.shape))}] at index {i}")
        elif isinstance(k, np.ndarray) and k.dtype.kind not in "iub":
            return IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if "could not be broadcast" in str(exc):
        shapes = ", ".join(str(list(k.shape)) for k in adv if isinstance(k, np.ndarray))
        return IndexError("shape mismatch: indexing tensors could not be broadcast together "
                          f"with shapes {shapes}")
    return IndexError(str(exc).replace(" axis ", " dimension "))


def _apply_slicing(self, key):
    """(tensor after the basic parts of key, NumPy key of its remaining advanced indices or
    None, the key items of the advanced indices), as torch's applySlicing: ints (and
    0-d integer tensors) select, slices slice (a full slice is skipped), None, bools and 0-d
    bool or uint8 tensors unsqueeze; tensors, lists and masks are kept."""
    key = tuple(key) if _treat_sequence_as_tuple(key) else (key,)
    n_real = 0
    for k in key:
        if _is_mask(k):
            n_real += k._data.ndim
        elif not (k is None or k is Ellipsis or isinstance(k, bool)):
            n_real += 1
    if n_real > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    out = self
    dim = 0
    adv = None
    sources = []
    for k in key:
        if k is Ellipsis:
            dim += self.dim() - n_real
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            out = _slice(out, dim, k, optimize=True)
            dim += 1
        elif isinstance(k, bool) or (_is_mask(k) and k._data.ndim == 0):
            # torch: unsqueeze, then index the new dim with [0] (True) or [] (False).
            out = unsqueeze(out, dim)
            sources.append(bool(k))     # torch indexes with a long tensor, not the mask
            adv = (adv or []) + [(dim, np.zeros(1 if bool(k) else 0, dtype=np.int64))]
            dim += 1
        elif _is_0d_integer(k):
            # a 0-d integer tensor (or 0-d array, which torch makes one) selects
            out = _select(out, dim, int(k._data if isinstance(k, Tensor) else k), "index")
        elif isinstance(k, str):
            raise TypeError("new(): invalid data type 'str'")
        elif _is_advanced(k):
            nk = _np_key(k)
            sources.append(k)
            adv = (adv or []) + [(dim, nk)]
            dim += nk.ndim if nk.dtype == np.bool_ else 1
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long "
                                 "or byte Variables are valid indices (got "
                                 f"{type(k).__name__})") from None
            out = _select(out, dim, i, "index")
    if adv is None:
        return out, None, ()
    npkey = []
    for d, nk in adv:
        npkey.extend([slice(None)] * (d - len(npkey)))
        npkey.append(nk)
        if nk.dtype == np.bool_:
            npkey.extend([None] * (nk.ndim - 1))    # placeholders for the mask's other dims
    return out, tuple(k for k in npkey if k is not None), sources


def _is_mask(k):
    """A bool or uint8 tensor: torch counts its dims as indexed and reads it as a mask."""
    return isinstance(k, Tensor) and k._data.dtype in (np.bool_, np.uint8)


def _is_0d_integer(k):
    a = k._data if isinstance(k, Tensor) else k
    return isinstance(a, (np.ndarray, np.generic)) and a.ndim == 0 and a.dtype.kind in "iu"


@records("slice")
def _slice(self, dim, k, optimize):
    """self sliced along dim by the Python slice k (SliceBackward0); with optimize, a slice
    that keeps everything returns self itself, as torch's applySlice does inside tuples and for
    assignment. torch decides on the slice as written: `0:` and `:5` are skipped, `-2:` is
    still a view even when it covers every row."""
    if not self._data.ndim:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    size = self._data.shape[dim]
    start, stop, step = k.indices(size)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    if optimize and (k.start is None or k.start == 0) and (k.step is None or k.step == 1) \
            and (k.stop is None or k.stop >= size):
        return self
    stop = start if stop < start else stop
    sl = (slice(None),) * dim + (slice(start, stop, step),)
    return _view_op(self, D["slice"], (operator.getitem, (sl,)),
                    (self.shape, dim, start, stop, step, sl, k))


def _alias_view(a):
    return a.view()


def _written_copy(self, indices, values, accumulate):
    out = _make(np.array(self._data, copy=True))
    if accumulate:
        np.add.at(out._data, indices, values._data)
    else:
        out._data[indices] = values._data
    return out


@records("index_put_impl")
def index_put_impl(self, indices, values, accumulate):
    """self with values written (or added) at indices, out of place (torch's _index_put_impl_
    on a copy, IndexPutImplBackward0): the backward of indexing under create_graph=True."""
    out = _written_copy(self, indices, values, accumulate)
    if _needs(self, values):
        record(D["index_put_impl"], out, (self, values), (indices, accumulate, values.shape))
    return out


@records("index_put")
def index_put(self, indices, values, accumulate=False):
    """self with values written (or added) at the NumPy key `indices`, out of place (torch's
    index_put, IndexPutBackward0): also the gradient of index_put_ under create_graph=True."""
    out = _written_copy(self, indices, values, accumulate)
    if _needs(self, values):
        record(D["index_put"], out, (self, values), (indices, accumulate, values.shape))
    return out


# ----- Assignment through indexing ----------------------------------------------------------

@method("__setitem__")
def setitem(self, key, value):
    """a[key] = value as torch's set_item: basic indexing picks the destination (a itself when
    the key selects everything, else a view, so the edit becomes CopySlices on a), then fill_
    for a 0-d value, copy_ otherwise, or index_put_ for tensor, list and mask indices."""
    if key is False:
        return
    v = value if isinstance(value, Tensor) else _scalar_to_tensor(value, self)
    dst, adv, sources = _setitem_target(self, key)
    if adv is None:
        _copy_to(dst, v)
        return
    _check_put(dst, adv, sources, v, False)
    _warn_byte_masks(sources)
    _index_put_(dst, adv, v)


@records("index_put")
def _index_put_(self, indices, values):
    """self[indices] = values for the advanced (tensor, list, mask) part of a key: torch's
    index_put_ (IndexPutBackward0)."""
    _check_inplace(self, values)
    a = self._array()
    if _internal_overlap(a):
        return _put_shared(self, indices, values, False, "setitem")
    try:
        a[indices] = values._data
    except IndexError as exc:
        raise _index_error(exc, a, indices) from None
    except ValueError:
        if not a.flags.writeable:
            raise
        got, want = values._data.shape, a[indices].shape
        raise RuntimeError(f"shape mismatch: value tensor of shape [{', '.join(map(str, got))}] "
                           f"cannot be broadcast to indexing result of shape "
                           f"[{', '.join(map(str, want))}]") from None
    _commit(self, D["index_put"], (self, values), (indices, False, values.shape), "setitem")


def _scalar_to_tensor(value, like):
    if isinstance(value, np.generic) and not isinstance(value, (float, complex, np.integer)):
        # torch takes the NumPy numbers that are Python numbers (np.float64) or integers, and
        # refuses np.float32, np.float16, np.bool_ and np.complex64
        raise TypeError(f"can't assign a numpy.{type(value).__name__} to a "
                        f"torch.{_TYPE_NAMES[like._data.dtype.name]}")
    if isinstance(value, (bool, int, float)):
        dt = like._data.dtype
        return _make(quietly(np.array, _stored(value, dt, half=False), dtype=dt))
    return _as_tensor(value, like)


def _setitem_target(self, key):
    """(destination tensor, NumPy key of the remaining advanced indices or None, the key items
    of the advanced indices), following
    torch's set_item: a full slice or Ellipsis gives self itself (no view)."""
    if not isinstance(key, tuple):
        if key is Ellipsis:
            return self, None, ()
        if key is None or key is True:
            return unsqueeze(self, 0), None, ()
        if isinstance(key, slice):
            return _slice(self, 0, key, optimize=True), None, ()
        if type(key) is int:
            return _select(self, 0, key, "index"), None, ()
    return _apply_slicing(self, key)


def _copy_to(dst, src):
    """torch's copy_to: copy_ for equal shapes, fill_ for a 0-d source, else view the source
    without leading ones, expand it to the destination and copy_."""
    if dst._data.shape == src._data.shape:
        _copy(dst, src, "setitem")
    elif src._data.ndim == 0:
        _fill(dst, src, "setitem")
    else:
        shape = src._data.shape
        i = 0
        while i < len(shape) and shape[i] == 1:
            i += 1
        _copy(dst, expand(view(src, shape[i:]), tuple(dst.shape)), "setitem")


# ----- index_put_ / index_put with a tuple of index tensors ----------------------------------

def _put_key(op, self, indices, values, accumulate):
    """The NumPy key of index_put's tuple of index tensors, after torch's argument checks."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' (position 1) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{op}(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    for n, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {n} in argument 0, but got "
                            f"{type(i).__name__}")
    if not indices:
        raise NotImplementedError(f"gradviz: {op} with an empty tuple of indices is not "
                                  "implemented (torch fails an internal assert); run with "
                                  "--backend torch to use PyTorch")
    if values._data.dtype != self._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_TORCH_SCALAR[self._data.dtype.name]} for the destination and "
                           f"{_TORCH_SCALAR[values._data.dtype.name]} for the source.")
    if len(indices) > self._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self._data.ndim} (got "
                         f"{len(indices)})")
    key = tuple(_index_array(i) for i in indices)
    masked_fill = _check_put(self, key, indices, values, accumulate, op == "index_put_")
    if not masked_fill and any(_is_mask(i) and i._data.ndim == 0 for i in indices):
        raise NotImplementedError(f"gradviz: {op} with a 0-d bool or uint8 index tensor is not "
                                  "implemented (torch fails an internal assert) except a "
                                  "one-element value written through it alone; run with "
                                  "--backend torch to use PyTorch")
    _warn_byte_masks(indices)
    try:
        target = self._data[key]
    except IndexError as exc:
        raise _index_error(exc, self._data, key) from None
    if not _broadcasts_to(values._data.shape, target.shape):
        got = ", ".join(map(str, values._data.shape))
        raise RuntimeError(f"shape mismatch: value tensor of shape [{got}] cannot be broadcast "
                           f"to indexing result of shape [{', '.join(map(str, target.shape))}]")
    return key


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


@method("index_put_")
@records("index_put")
def index_put_(self, indices, values, accumulate=False):
    """Write values into self at a tuple of index tensors (add them, summing repeated
    indices, with accumulate=True), in place (IndexPutBackward0).

    >>> import gradviz as torch
    >>> torch.zeros(3).index_put_((torch.tensor([0, 0]),), torch.tensor(1.0), accumulate=True)
    tensor([2., 0., 0.])
    """
    key = _put_key("index_put_", self, indices, values, accumulate)
    if not accumulate:
        _index_put_(self, key, values)
        return self
    _check_inplace(self, values)
    if _internal_overlap(self._array()):
        return _put_shared(self, key, values, True, "index_put_")
    np.add.at(self._array(), key, values._data)
    _commit(self, D["index_put"], (self, values), (key, True, values.shape), "index_put_")
    return self


@export("index_put")
def index_put_copy(self, indices, values, accumulate=False):
    """self with values written (or added, with accumulate=True) at a tuple of index tensors,
    out of place (IndexPutBackward0).

    >>> import gradviz as torch
    >>> torch.zeros(3).index_put((torch.tensor([2]),), torch.tensor(5.0))
    tensor([0., 0., 5.])
    """
    return index_put(self, _put_key("index_put", self, indices, values, accumulate), values,
                       accumulate)
