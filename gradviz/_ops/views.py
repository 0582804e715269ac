"""Views and shape: view, reshape, squeeze/unsqueeze, expand, transpose/permute, narrow, select,
unbind, cat and stack. Views share their base's storage and version counter.
"""

import math
import operator
import sys
import warnings
import weakref

import numpy as np

from .. import _dtype
from .._derivatives import DERIVATIVES as D
from ..autograd.callsite import user_stacklevel
from .._registry import export, method, records
from .._tensor import _TYPE_NAMES, Tensor, _InferenceVersion, _empty_strided, _make, _wrap_dim
from ..autograd.formula import keep_raw, keep_raw_of, negative, record, record_outputs
from ..autograd.grad_mode import _state
from ..autograd.graph import _through_base, overlaps, writable_view
from ._common import _dims, _needs, _type_name
from .pointwise import clone


# ----- Views -------------------------------------------------------------------------------

def _make_view(src, data, step, multi=False):
    """A tensor over `data`, a NumPy view of src's storage made by `step` = (func, args);
    `multi`: one of several views returned together (unbind, split, chunk).

    Views share their base's version counter; `_base` is the root tensor and `_view_fn` the
    steps from the root, so in-place edits through the view can rewrite the base's history.
    """
    base = src._base_
    if not data.flags.writeable:
        data = writable_view(data, (src if base is None else base)._array())
    t = _make(data)
    if base is None:
        src._array()
        t._base_ = src
        t._view_fn = (step,)
    else:
        t._base_ = base
        t._view_fn = src._view_fn + (step,)
    vc = src._vc
    if vc is None:
        vc = src._version_counter()
    t._vc = vc
    if type(vc) is not _InferenceVersion:       # (which tracks no version)
        t._fn_ver = vc.v    # the version it was made at (autograd.graph.is_stale)
    if base is None:
        vc.views = True
    creation = src._creation
    if multi or not _state.enabled or creation is not None:
        _set_creation(t, src, multi)
    return t


def _set_creation(t, src, multi):
    """torch's CreationMeta of the view t of src, for the views whose in-place edits torch
    refuses: "no_grad" or "inference" (made in that mode), "multi" (one of several views
    returned together). A view of such a view inherits it unless made in one of these modes
    itself; "inference" is never replaced (torch's propagate_creation_meta). A view of an
    inference tensor has none (torch makes it a plain tensor)."""
    if type(t._vc) is _InferenceVersion:
        return
    new = "multi" if multi else None
    if not _state.enabled:
        new = "inference" if _state.inference else "no_grad"
        if src._rg:
            # torch: such a view requires grad while its base does, with no grad_fn and no
            # AccumulateGrad (its own flag is off), so a view of it made in grad mode gets a
            # node whose edge to it is (None, 0)
            t._rg = True
            t._acc = _through_base
            _follows_base(t)
    creation = src._creation
    if new is not None and creation != "inference":
        creation = new
    t._creation = creation


def _follows_base(t):
    """Remember the view t, which requires grad only through its base: torch reads such a
    view's flag from its base at each call, so t follows the base's later requires_grad_()
    and detach_() (gradviz._tensor._flag_to_followers). Dead views are dropped as the list
    doubles."""
    base = t._base_
    refs = base.__dict__.get("_flag_followers")
    if refs is None:
        refs = base._flag_followers = []
    elif len(refs) >= 64 and not len(refs) & (len(refs) - 1):
        refs[:] = [r for r in refs if r() is not None]
    refs.append(weakref.ref(t))


def _reshape_view(a, shape):
    # The method, not np.reshape: the same call without np.reshape's Python wrapper.
    return a.reshape(shape, copy=False)


def _plain_size(shape, numel):
    """`_infer_shape(_shape_args(shape), numel)` for the common call, without its parsing: ints,
    or one tuple of them, that give `numel` elements, with at most one -1 and no other negative
    size. None for anything else: the general parse then gives the result or torch's error.
    (One pass over the sizes: math.prod, min, count and index cost twice as much.)"""
    if not shape:
        return None         # x.view(): torch's TypeError, from the parse
    if len(shape) == 1 and type(shape[0]) is tuple:
        shape = shape[0]
    known = 1               # the product of the sizes other than -1
    free = -1               # where the -1 is
    i = 0
    for s in shape:
        if type(s) is not int:
            return None     # (bool, NumPy ints, floats: the parse)
        if s < 0:
            if s != -1 or free >= 0:
                return None
            free = i
        else:
            known *= s
        i += 1
    if free < 0:
        return shape if known == numel else None
    if known == 0 or numel % known:
        return None
    return shape[:free] + (numel // known,) + shape[free + 1:]


def _infer_shape(shape, numel):
    if min(shape, default=0) < -1:
        # torch's infer_size, dim by dim: a second -1 is refused before a later negative size
        inferred = False
        for i, s in enumerate(shape):
            if s == -1 and inferred:
                break
            inferred = inferred or s == -1
            if s < -1:
                raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                                   f"[{', '.join(map(str, shape))}]")
    if -1 in shape:
        if shape.count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred")
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        i = shape.index(-1)
        shape = shape[:i] + (numel // known,) + shape[i + 1:]
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '[{', '.join(str(s) for s in shape)}]' is invalid for input "
                           f"of size {numel}")
    return shape


def _shape_args(shape, op="view", param="size"):
    """A size given as ints or as one tuple/list of them, as a tuple of ints, parsed as torch's
    argument parser does: the first element decides whether the call is a size at all (a bool,
    a float or nothing there is refused), a later bool counts as an int, and a later float
    (2.5, even 2.0) is refused, never truncated. No size at all (`x.view()`) is torch's
    TypeError; gradviz's own code passes a shape packed (`view(x, shape)`), never as `*shape`."""
    if not shape:
        if op == "view":
            raise TypeError(_refused_size(shape, False, op, param))
        raise TypeError(f'{op}() missing 1 required positional arguments: "{param}"')
    packed = len(shape) == 1 and isinstance(shape[0], (tuple, list))
    seq = shape[0] if packed else shape
    if not seq or _is_size(seq[0]):
        try:
            return tuple(map(operator.index, seq))
        except TypeError:
            pos, bad = next((i, s) for i, s in enumerate(seq) if not _is_index(s))
            raise TypeError(f"{op}(): argument '{param}' failed to unpack the object at pos "
                            f"{pos + 1} with error \"type must be tuple of ints,but got "
                            f"{type(bad).__name__}\"") from None
    raise TypeError(_refused_size(shape, packed, op, param))


def _is_size(s):
    """Whether s can begin a size: an int-like that is not a bool."""
    return not isinstance(s, bool) and _is_index(s)


def _refused_size(shape, packed, op, param):
    """torch's TypeError for a size whose first element is not one (or no size at all)."""
    if op == "view":
        got = ", ".join(type(s).__name__ for s in shape)
        lines = [f"view() received an invalid combination of arguments - got ({got}), but "
                 "expected one of:"]
        for signature in (" * (torch.dtype dtype)", " * (tuple of ints size)"):
            lines.append(signature)
            if len(shape) == 1:
                lines.append("      didn't match because some of the arguments have invalid "
                             f"types: (!{_typed(shape[0])}!)")
        return "\n".join(lines) + "\n"
    if len(shape) > 1:
        return f"{op}() takes 1 positional argument but {len(shape)} were given"
    if packed:
        return (f"{op}(): argument '{param}' (position 1) must be tuple of ints, but found "
                f"element of type {type(shape[0][0]).__name__} at pos 0")
    return (f"{op}(): argument '{param}' (position 1) must be tuple of ints, not "
            f"{type(shape[0]).__name__}")


def _typed(a):
    """An argument as torch's parser names it: `tuple of (bool, int)`, `float`."""
    if isinstance(a, (tuple, list)):
        inner = ", ".join(type(s).__name__ for s in a)
        return f"tuple of ({inner})" if isinstance(a, tuple) else f"list of [{inner}]"
    return type(a).__name__


def _is_index(s):
    try:
        operator.index(s)
    except TypeError:
        return False
    return True


def _view_op(self, entry, step, args):
    a = self._array()
    if a.size == 0:
        a = self._data = _empty_strided(a)     # so that the view gets torch's strides
    data = step[0](a, *step[1])
    out = _make_view(self, data, step)
    if self._rg and _state.enabled:
        record(entry, out, (self,), args)
    return out


_E_VIEW = D["view"]
_Size = _dtype.Size


@method("view")
@records("view")
def view(self, *shape):
    size = _plain_size(shape, self._data.size)
    if size is None:
        if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
            raise NotImplementedError("view(dtype) is not supported by gradviz")
        size = _infer_shape(_shape_args(shape), self.numel())
    try:
        return _view_op(self, _E_VIEW, (_reshape_view, (size,)), (_Size(self._data.shape),))
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.") from None


@export()
@records("view", "reshape_alias")
def reshape(self, *shape):
    size = _plain_size(shape, self._data.size)
    if size is None:
        size = _infer_shape(_shape_args(shape, "reshape", "shape"), self.numel())
    shape = size
    a = self._array()
    try:
        _reshape_view(a, shape)
    except ValueError:
        # Not viewable: torch copies (CloneBackward0) and then _unsafe_view.
        return _unsafe_view(clone(self), shape)
    # torch: a view for a contiguous tensor, _reshape_alias for a viewable non-contiguous one.
    entry = D["view"] if a.flags.c_contiguous else D["reshape_alias"]
    return _view_op(self, entry, (_reshape_view, (shape,)), (self.shape,))


@records("unsafe_view")
def _unsafe_view(self, shape):
    out = _make(np.reshape(self._data, shape))
    if _needs(self):
        record(D["unsafe_view"], out, (self,), (self.shape,))
    return out


@export()
def flatten(self, start_dim=0, end_dim=-1):
    if self.dim() == 0:
        return reshape(self, 1)
    s = _wrap_dim(start_dim, self.dim())
    e = _wrap_dim(end_dim, self.dim())
    if s == e:
        return self
    shape = tuple(self.shape[:s]) + (-1,) + tuple(self.shape[e + 1:])
    return reshape(self, *shape)


@export()
@records("squeeze", "squeeze_dim", "squeeze_dims")
def squeeze(self, dim=None):
    shape = self._data.shape
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
        return _view_op(self, D["squeeze"], (_squeeze_view, (axes,)), (self.shape,))
    if isinstance(dim, (tuple, list)):
        dims = _dims(dim, len(shape)) if shape else ()
        axes = tuple(i for i in sorted(dims) if shape[i] == 1)
        out = _view_op(self, D["squeeze_dims"], (_squeeze_view, (axes,)), (self.shape, dims))
        # torch saves a dim as given (negative: read unsigned), as in the rows below
        return keep_raw_of(out, D["squeeze_dims"], dim=dim) if negative(dim) else out
    d = _wrap_dim(dim, len(shape)) if shape else 0
    axes = (d,) if shape and shape[d] == 1 else ()
    out = _view_op(self, D["squeeze_dim"], (_squeeze_view, (axes,)), (self.shape, d))
    return keep_raw_of(out, D["squeeze_dim"], dim=dim) if dim < 0 else out


def _squeeze_view(a, axes):
    """a without its size-1 dims `axes`; the other dims keep their strides, as torch's (a
    reshape may choose others for an empty tensor)."""
    return a.squeeze(axes) if axes else a.view()


@export()
@records("unsqueeze")
def unsqueeze(self, dim):
    shape = self._data.shape
    d = _wrap_dim(dim, len(shape) + 1)
    out = _view_op(self, D["unsqueeze"], (_unsqueeze_view, (d,)), (d, self.shape))
    return keep_raw_of(out, D["unsqueeze"], dim=dim) if dim < 0 else out


def _unsqueeze_view(a, d):
    """a with a new dim of size 1 at d, whose stride is torch's: the size times the stride of
    the dim after it (1 at the end), where NumPy's reshape may choose another."""
    shape, steps = a.shape, a.strides
    new = a.reshape(shape[:d] + (1,) + shape[d:], copy=False)
    step = shape[d] * steps[d] if d < len(shape) else a.itemsize
    want = steps[:d] + (step,) + steps[d:]
    if new.strides != want:
        new = np.lib.stride_tricks.as_strided(new, new.shape, want)
    return new


def _broadcast_view(a, shape):
    """np.broadcast_to, with torch's strides (inferExpandGeometry) where NumPy's differ: a dim
    of size 1 that stays 1 keeps its stride, a new one of size 1 gets the size times the
    stride of the dim after it. Read-only exactly where torch refuses writes, when it has
    internal overlap (at::has_internal_overlap: a stride 0 over a size above 1, so that a write
    would reach one element twice); otherwise as writable as `a` (x.expand(x.shape))."""
    out = np.broadcast_to(a, shape)
    steps = out.strides
    if 1 in shape and a.ndim:       # torch: every stride of an expanded 0-d tensor is 0
        steps = [0] * len(shape)
        lead = len(shape) - a.ndim
        for i in range(len(shape) - 1, -1, -1):
            k = i - lead
            if k >= 0:
                steps[i] = a.strides[k] if a.shape[k] == shape[i] else 0
            elif shape[i] == 1:
                steps[i] = shape[i + 1] * steps[i + 1] if i + 1 < len(shape) else a.itemsize
        steps = tuple(steps)
    if not overlaps(shape, steps):
        return np.lib.stride_tricks.as_strided(a, shape, steps)
    if steps != out.strides:
        out = np.lib.stride_tricks.as_strided(out, shape, steps, writeable=False)
    return out


@method("expand")
@records("expand")
def expand(self, *sizes):
    sizes = _shape_args(sizes, "expand")
    shape = self._data.shape
    if len(sizes) < len(shape):
        # torch names the tensor's type as c10 does: torch.LongTensor, but CPUBoolType
        kind = ("CPUBoolType" if self._data.dtype == np.bool_ else
                f"torch.{_TYPE_NAMES[self._data.dtype.name]}")
        raise RuntimeError(f"expand({kind}{{[{', '.join(map(str, shape))}]}}, "
                           f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    new = tuple(shape[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(sizes))
    for i, s in enumerate(shape):
        if s != 1 and s != new[i + lead]:
            raise RuntimeError(f"The expanded size of the tensor ({new[i + lead]}) must match "
                               f"the existing size ({s}) at non-singleton dimension {i + lead}."
                               f"  Target sizes: [{', '.join(map(str, sizes))}].  Tensor sizes:"
                               f" [{', '.join(map(str, shape))}]")
    return _view_op(self, D["expand"], (_broadcast_view, (new,)), (self.shape,))


@method("expand_as")
def expand_as(self, other):
    return expand(self, tuple(other.shape))


def _transpose_view(a, d0, d1):
    return np.swapaxes(a, d0, d1) if a.ndim else a.view()      # torch's 0-d transpose(0, -1)


def _permute_view(a, dims):
    return np.transpose(a, dims)


@export()
@records("t")
def t(self):
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    if self.dim() < 2:
        return _view_op(self, D["t"], (_permute_view, (tuple(range(self.dim())),)), ())
    return _view_op(self, D["t"], (_transpose_view, (0, 1)), ())


@export()
@records("transpose")
def transpose(self, dim0, dim1):
    n = self.dim()
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    out = _view_op(self, D["transpose"], (_transpose_view, (d0, d1)), (d0, d1))
    if dim0 < 0 or dim1 < 0:
        keep_raw_of(out, D["transpose"], dim0=dim0, dim1=dim1)
    return out


@export()
@records("permute")
def permute(self, *dims):
    dims = _shape_args(dims, "permute", "dims")
    if len(dims) != self.dim():
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {self.dim()} is not equal to len(dims) = {len(dims)}")
    given = dims
    dims = tuple(_wrap_dim(d, self.dim()) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    out = _view_op(self, D["permute"], (_permute_view, (dims,)), (dims,))
    return keep_raw_of(out, D["permute"], dims=given) if negative(given) else out


_WARNED = set()


def _T(self):
    n = self.dim()
    if n != 2:
        if n == 0:
            msg = ("Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                   "these cases.")
        else:
            msg = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape "
                   "is deprecated and it will throw an error in a future release. Consider "
                   "`x.mT` to transpose batches of matrices or `x.permute(*torch.arange(x.ndim "
                   "- 1, -1, -1))` to reverse the dimensions of a tensor.")
        if msg not in _WARNED:
            # torch's TORCH_WARN_ONCE: once per process, whatever the warnings filters say.
            _WARNED.add(msg)
            warnings.warn(msg, UserWarning, stacklevel=user_stacklevel())
    return permute(self, tuple(reversed(range(n))))


def _mT(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return transpose(self, -2, -1)


@export()
@records("slice")
def narrow(self, dim, start, length):
    if not self._data.ndim:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, self.dim())
    size = self._data.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    start = start + size if start < 0 else start
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    out = _view_op(self, D["slice"], (operator.getitem, (key,)),
                   (self.shape, d, start, start + length, 1, key, None))
    return keep_raw_of(out, D["slice"], dim=dim) if dim < 0 else out


@export()
@records("select")
def select(self, dim, index):
    """The view at `index` along `dim` (SelectBackward0)."""
    return _select(self, dim, index, "select")


def _select(self, dim, index, how):
    if not self._data.ndim and how == "select":
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    if not self._data.ndim and index != 0:
        # torch: only index 0 is "invalid", any other is out of bounds of a size-0 dim
        raise IndexError(f"index {index} is out of bounds for dimension 0 with size 0")
    if not self._data.ndim:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    d = _wrap_dim(dim, self.dim())
    size = self._data.shape[d]
    if not -size <= index < size:
        if how == "select":
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"[{', '.join(map(str, self._data.shape))}] at dimension {d}")
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    key = (slice(None),) * d + (index,)
    a = self._array()
    layout = None
    if not a.flags.c_contiguous:
        st = a.strides
        layout = tuple(sorted(range(a.ndim), key=lambda i: -st[i]))
    out = _view_op(self, D["select"], (_getitem_view, (key,)),
                   (self.shape, d, index, key, layout))
    return keep_raw_of(out, D["select"], dim=dim) if dim < 0 else out


def _select_into(node, grad, buffers):
    """SelectBackward0 on the engine's plain path when no user code sees a gradient of the
    pass (engine._layout_private: no hooks, tracer or custom Function): write grad at [key]
    into the gradient waiting for self at the next node, in place, when no one else can see
    that array; or, when none is waiting yet, into fresh zeros laid out as self is in memory.
    True when done (the node then sends nothing). torch's select_backward makes C-ordered zeros of self's size for each select and
    the input buffer adds them: for `q, k, v = qkv[0], qkv[1], qkv[2]`, three zero-fills and
    two additions over the whole of qkv, and for a permuted qkv a copy in the backward of the
    view before it. The sums are the same."""
    nxt = node._next
    meta = node._meta
    # (a freed node goes to _apply, which raises torch's error)
    if nxt is None or not nxt._plain or meta is None or meta[0] is None or node._released:
        return False
    sizes, dtype = meta[0]
    _, d, _, key, layout = node._saved
    if (type(grad) is not np.ndarray or grad.dtype != dtype
            or grad.shape != sizes[:d] + sizes[d + 1:]):
        return False
    buf = buffers.get(nxt)
    if buf is None:
        buf = buffers[nxt] = [None] * nxt._n_out
    nr = 0 if node._nrs is None else node._nrs[0]
    old = buf[nr]
    if old is None:
        order = range(len(sizes)) if layout is None else layout
        zeros = np.zeros([sizes[i] for i in order], dtype=dtype)
        old = buf[nr] = zeros if layout is None else zeros.transpose(np.argsort(layout))
    elif (type(old) is not np.ndarray or old.dtype != dtype or old.shape != sizes
            or not old.flags.writeable or not _unshared(old)):
        return False
    target = old[key + (Ellipsis,)]        # a view even where old[key] is a 0-d scalar
    np.add(target, grad, out=target)
    return True


def _unshared(a):
    """No one but the engine's input buffer and our callers holds the array a or, for a view,
    its base (views of views share the base)."""
    # a's references: the buffer, _select_into's `old`, ours, getrefcount's argument
    if sys.getrefcount(a) > 4:
        return False
    if a.flags.owndata:
        return True
    base = a.base
    # base's: a.base, `base`, getrefcount's argument
    return type(base) is np.ndarray and base.flags.owndata and sys.getrefcount(base) <= 3


D["select"].cls._into = _select_into


def _getitem_view(a, key):
    r = a[key]
    # a[int] on a 1-D array gives a NumPy scalar copy; index with Ellipsis to keep a view.
    return r if isinstance(r, np.ndarray) else a[key + (Ellipsis,)]


@export()
@records("unbind")
def unbind(self, dim=0):
    if not self._data.ndim:
        raise IndexError(f"Dimension specified as {_wrap_dim(dim, 0)} but tensor has no "
                         "dimensions")
    d = _wrap_dim(dim, self.dim())
    a = self._array()
    outs = []
    for i in range(a.shape[d]):
        key = (slice(None),) * d + (i,)
        outs.append(_make_view(self, _getitem_view(a, key), (_getitem_view, (key,)), True))
    if _needs(self) and outs:
        part = a.shape[:d] + a.shape[d + 1:]
        node = record_outputs(D["unbind"], outs, (self,), (d, self.shape, part, a.dtype))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return tuple(outs)


@method("__iter__")
def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(unbind(self, 0))


@export("cat", "concat", "concatenate", tensor=False)
@records("cat")
def cat(tensors, dim=0):
    tensors = _tensor_list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    _check_cat(tensors, dim)
    d = _wrap_dim(dim, tensors[0].dim())
    rt = _dtype.result_type([x._data if x._data.ndim else x._data.reshape(1) for x in tensors])
    out = np.concatenate([x._data for x in tensors], axis=d).astype(rt, copy=False)
    out = _make(_cat_layout(out, tensors))
    if _needs(*tensors):
        node = record(D["cat"], out, tuple(tensors), (d, [x._data.shape[d] for x in tensors]))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out



def _tensor_list(tensors):
    """tensors as a list, refused with torch's parser error when one is not a tensor (a
    number, a list, an array or None: torch converts none of them)."""
    tensors = list(tensors)
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{_type_name(x)}")
    return tensors


def _cat_layout(out, tensors):
    """out in torch's memory format for cat (compute_output_memory_format): channels-last
    when every input is (4-D or 5-D tensors whose strides suggest it), else C-ordered; NumPy
    keeps the inputs' order of dims, whatever it is."""
    if out.ndim in (4, 5) and all(_channels_last(x._data) for x in tensors):
        return _to_channels_last(out)
    return np.ascontiguousarray(out)


def channels_last_as(out, *inputs):
    """The array out, or a channels-last copy of it when one of inputs' arrays is laid out
    channels-last: the memory format torch gives the result of conv2d (input or weight),
    max_pool2d's indices and adaptive_avg_pool2d (their input)."""
    if out.ndim in (4, 5) and any(_channels_last(a) for a in inputs):
        return _to_channels_last(out)
    return out


def _to_channels_last(out):
    """A copy of out with torch's channels-last strides, size-1 dims included: C 1, then W, H,
    (D,) N."""
    shape, steps, step = out.shape, [0] * out.ndim, out.itemsize
    for d in (1,) + tuple(range(out.ndim - 1, 1, -1)) + (0,):
        steps[d] = step
        step *= shape[d]
    res = np.lib.stride_tricks.as_strided(np.empty(out.size, out.dtype), shape, steps)
    res[...] = out
    return res


def _channels_last(a):
    """torch's suggest_memory_format is ChannelsLast(3d) for a (is_channels_last_strides_2d
    and _3d): strides growing over C, then the spatial dims from the last, then N, with the
    ambiguous layouts (a size-0 dim, a C of stride 0, N with C's stride) left C-ordered."""
    if type(a) is not np.ndarray or a.ndim not in (4, 5) or a.strides[1] == 0:
        return False
    low = 0
    for d in (1,) + tuple(range(a.ndim - 1, 1, -1)) + (0,):
        size, stride = a.shape[d], a.strides[d] // a.itemsize
        if size == 0 or stride < low or (d == 0 and low == a.strides[1] // a.itemsize):
            return False
        low = stride * size if size > 1 else stride
    return True


def _check_cat(tensors, dim):
    """torch's cat errors (NumPy's would name arrays and axes)."""
    first = tensors[0]._data.shape
    for i, x in enumerate(tensors):
        if not x._data.ndim:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    d = _wrap_dim(dim, len(first))
    for i, x in enumerate(tensors):
        shape = x._data.shape
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} "
                               f"and {len(shape)}")
        for k, (s0, s1) in enumerate(zip(first, shape)):
            if k != d and s0 != s1:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {s0} but got size {s1} for tensor number "
                                   f"{i} in the list.")


@export("stack", tensor=False)
@records("stack")
def stack(tensors, dim=0):
    tensors = _tensor_list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = _wrap_dim(dim, tensors[0].dim() + 1)
    first = tensors[0]._data.shape
    for i, x in enumerate(tensors):
        if x._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"[{', '.join(map(str, first))}] at entry 0 and "
                               f"[{', '.join(map(str, x._data.shape))}] at entry {i}")
    # torch's promotion of the tensors as cat sees them (each unsqueezed, so none is 0-d):
    # NumPy's would take int32 with float32 to float64
    rt = _dtype.result_type([x._data.reshape(1) if not x._data.ndim else x._data
                             for x in tensors])
    out = _make(np.stack([x._data for x in tensors], axis=d).astype(rt, copy=False))
    if _needs(*tensors):
        node = record(D["stack"], out, tuple(tensors), (d, len(tensors)))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out
