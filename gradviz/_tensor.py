"""The Tensor: a NumPy array plus the autograd bookkeeping torch shows.

Storage is `_data`, a NumPy array (or a NumPy scalar for 0-d results, which is cheaper; it is
turned into a 0-d array the first time something needs to write to it or view it). The
autograd fields are `_rg` (requires_grad), `_fn` (grad_fn), `_nr` (output_nr), `_grad`,
`_vc` (the version counter, shared between a tensor and its views, created on first need),
`_base` and `_view_fn` (for views), `_acc` (a weak reference to the leaf's AccumulateGrad),
`_retains` and `_hooks` (leaf tensor hooks). Operations are attached to the class by
`gradviz._ops`.
"""

import sys as _sys
import warnings
import weakref

import numpy as np

from . import _dtype
from ._dtype import _CPP_NAMES, Size, from_numpy_dtype
from .autograd import callsite as _callsite, tracing as _tracing
from .autograd.grad_mode import _outside, _state

__all__ = ["Tensor"]


class _Version:
    """A version counter; views share their base's. `views` is True once a view of the root
    tensor was made (gradviz._ops.views._make_view), then the name of the op (`t_`, ...) that
    gave the root a new shape while it had views (their steps may no longer be replayed:
    gradviz._ops.inplace.view_steps)."""

    __slots__ = ("v", "views")

    def __init__(self, v=0):
        self.v = v


_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                 "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


class _InferenceVersion:
    """The version counter of an inference tensor (made in inference mode): torch tracks no
    version for it, so reading one (to save the tensor for backward) raises torch's error.
    `views` as _Version's."""

    __slots__ = ("views",)

    @property
    def v(self):
        if _state.inference:
            return 0
        raise RuntimeError(_INFERENCE_SAVED)

    @v.setter
    def v(self, value):
        pass                # in-place edits inside inference mode: nothing to count


_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")
_INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")


def check_inference_inplace(t):
    """torch's refusal of an in-place edit of an inference tensor outside inference mode."""
    if type(t._vc) is _InferenceVersion and not _state.inference:
        raise RuntimeError(_INFERENCE_INPLACE)


class device:
    """A device name, as torch.device parses it. Tensors only ever live on the CPU: naming
    another device is allowed (`torch.device("cuda" if ... else "cpu")`), moving a tensor
    there is refused with torch's error on a CPU-only build.

    >>> import gradviz as torch
    >>> torch.device("cuda:1"), torch.device("cpu") == torch.device("cpu")
    (device(type='cuda', index=1), True)
    """

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, (type.index if index is None else index)
        elif isinstance(type, int) and not isinstance(type, bool):
            # torch.device(0) names the first accelerator; a CPU-only build has none
            raise RuntimeError("Cannot access accelerator device when none is available.")
        name = str(type)
        kind, colon, idx = name.partition(":")
        if kind not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start "
                               f"of device string: {name}")
        if colon:
            if not idx.isdigit() or (len(idx) > 1 and idx[0] == "0"):
                raise RuntimeError(f"Invalid device string: '{name}'")
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was "
                                   f"passed explicitly: {name}")
            index = int(idx)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = kind
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        # torch compares devices with devices only: t.device == "cpu" is False.
        return (isinstance(other, device) and other.type == self.type
                and other.index == self.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


_CPU = device()

def _type_arg(t):
    """Tensor.type's argument as a dtype: a dtype or a "torch.FloatTensor" name; torch refuses
    anything else (a Python type such as float too) with "invalid type"."""
    if isinstance(t, _dtype.dtype):
        return t
    if t is Tensor or t == "torch.Tensor":
        return _dtype.get_default_dtype()       # torch: the default tensor type
    if isinstance(t, str):
        for name, tensor_name in _TYPE_NAMES.items():
            if t == "torch." + tensor_name:
                return _dtype._by_name(name)
        raise ValueError(f"invalid type: '{t}'")
    if isinstance(getattr(t, "dtype", None), _dtype.dtype):
        return t.dtype      # torch.FloatTensor and its legacy siblings (gradviz/_legacy.py)
    module = getattr(t, "__module__", "builtins")
    qualified = t.__qualname__ if module == "builtins" else f"{module}.{t.__qualname__}"
    raise ValueError(f"invalid type: '{qualified}'")


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead.")


class _TorchClass(type):
    """The type of Tensor and its library subclasses: `type(t)` prints torch's class path
    (`<class 'torch.Tensor'>`), as tutorials print it. Only the repr changes; `__module__` stays
    gradviz's own, so pickle and import find the class where it lives."""

    def __repr__(cls):
        path = cls.__dict__.get("_torch_path")
        return type.__repr__(cls) if path is None else f"<class '{path}'>"


class Tensor(metaclass=_TorchClass):
    """A multi-dimensional array that records the operations made on it for backward.

    >>> import gradviz as torch
    >>> a = torch.tensor(2.0, requires_grad=True)
    >>> b = a.exp(); b
    tensor(7.3891, grad_fn=<ExpBackward0>)
    """

    _torch_path = "torch.Tensor"      # type(t)'s repr (see _TorchClass)

    # Every operation makes a Tensor, so only the hot fields are slots set each time; the rest
    # are class-level defaults that a tensor overrides in its own __dict__ when it needs to.
    # _gv_made: what made it, set by the inspector's tracer on every tensor (a slot, not a
    # __dict__ made per tensor). _iter_plain: _data when NumPy lays it out as torch does as an
    # operand of a binary op (gradviz._ops._iterator._binary_out), else None.
    __slots__ = ("_data", "_rg", "_fn", "_nr", "_vc", "_gv_made", "_iter_plain", "__weakref__",
                 "__dict__")
    _grad = None
    _base_ = None
    _view_fn = None
    _fn_ver = None      # a view's version when its grad_fn was set (autograd.graph.is_stale)
    _creation = None    # how a view was made, when torch refuses its in-place edits (see views)
    _acc = None
    _retains = False
    _hooks = None
    _post_hooks = None      # post-accumulate-grad hooks of a leaf
    # As torch's: NumPy defers to the Tensor's reflected operators, so np.float64(2) * t is
    # t.__rmul__ (a Tensor), not an ndarray made through __array__.
    __array_priority__ = 1000

    def __init__(self, *args, **kwargs):
        # torch.Tensor(data) / torch.Tensor(2, 3): float32 by default, as in torch.
        if len(args) == 1 and not isinstance(args[0], int):
            data = np.array(args[0], dtype=_dtype.get_default_dtype().np)
        else:
            data = np.zeros(tuple(args), dtype=_dtype.get_default_dtype().np)
        _init(self, data)

    # ----- storage and metadata ------------------------------------------------------------

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self):
        return from_numpy_dtype(self._data.dtype)

    @property
    def device(self):
        return _CPU

    @property
    def is_cuda(self):
        return False

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    def numel(self):
        return int(self._data.size)

    nelement = numel

    def element_size(self):
        return self._data.dtype.itemsize

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "torch." + _TYPE_NAMES[self._data.dtype.name]
        return self.to(_type_arg(dtype))

    def is_contiguous(self):
        d = self._data
        return not isinstance(d, np.ndarray) or d.flags.c_contiguous

    def stride(self, dim=None):
        d = _empty_strided(np.asarray(self._data))
        st = tuple(s // d.itemsize for s in d.strides)
        return st if dim is None else st[_wrap_dim(dim, d.ndim)]

    def data_ptr(self):
        return self._array().ctypes.data

    def storage(self):
        """The TypedStorage this tensor and its views share (torch warns it is deprecated)."""
        from ._storage import typed_storage
        return typed_storage(self)

    def untyped_storage(self):
        from ._storage import untyped_storage
        return untyped_storage(self)

    def cpu(self):
        return self

    def numpy(self, force=False):
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._array()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()        # torch's: refused for a tensor that requires grad
        return a if dtype is None else a.astype(dtype)

    def __array_wrap__(self, array):
        """NumPy's result of a ufunc on tensors (np.sin(t), and `t + ndarray`, which torch's
        operators leave to NumPy) as a tensor sharing its memory; a bool array becomes uint8.
        torch's method, with torch's one-argument signature (NumPy 2 warns about it)."""
        if array.dtype == bool:
            array = array.astype("uint8")
        from ._creation import from_numpy
        return from_numpy(array)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return self._data.item() if self._data.ndim == 0 else self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is "
                               "ambiguous")
        return bool(self._data.reshape(()))

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, proto):
        return (_rebuild, (np.array(self._data), self._rg))

    def _array(self):
        """The storage as an ndarray (a 0-d NumPy scalar is promoted once, in place)."""
        d = self._data
        if type(d) is not np.ndarray:
            d = self._data = np.array(d)
        return d

    # ----- autograd attributes -------------------------------------------------------------

    @property
    def requires_grad(self):
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag):
        # torch's attribute setter refuses any change on a non-leaf, even to True (which
        # requires_grad_ accepts), and words the dtype error its own way.
        if self._fn is not None:
            msg = "you can only change requires_grad flags of leaf variables."
            if not flag:
                msg += (" If you want to use a computed variable in a subgraph that doesn't "
                        "require differentiation use var_no_grad = var.detach().")
            raise RuntimeError(msg)
        _set_requires_grad(self, flag, _RG_DTYPE_ATTRIBUTE)

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad in place (leaves only) and return self."""
        if self._fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        _set_requires_grad(self, requires_grad, _RG_DTYPE_METHOD)
        return self

    @property
    def grad_fn(self):
        return _read_grad_fn(self)

    @property
    def is_leaf(self):
        return _read_grad_fn(self) is None     # torch's reads the getter (which may refuse)

    @property
    def output_nr(self):
        return self._nr

    @property
    def _version(self):
        vc = self._vc
        if type(vc) is _InferenceVersion:
            raise RuntimeError("Inference tensors do not track version counter.")
        return 0 if vc is None else vc.v

    def is_inference(self):
        """True for a tensor made inside `torch.inference_mode()` (or a view of one)."""
        return type(self._vc) is _InferenceVersion

    @property
    def _base(self):
        return self._base_

    @property
    def grad(self):
        if self._fn is not None and not self._retains:
            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            want, got = self._data.dtype, value._data.dtype
            if got != want:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_CPP_NAMES[got.name]}' to a "
                    f"tensor with grad_dtype '{_TYPE_NAMES[want.name][:-6]}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
                    "the tensor's grad_dtype attribute with a specific dtype, or None to allow "
                    "any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor "
                    "and its gradient may break downstream systems that assume they match.")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size")
        self._grad = value

    @property
    def retains_grad(self):
        return self._retains

    @property
    def data(self):
        # Shares storage but not the version counter: edits through .data are invisible to
        # autograd, exactly as in torch.
        t = _make(self._array())
        if type(self._vc) is _InferenceVersion:
            t._vc = _new(_InferenceVersion)
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError("data must be a Tensor")
        self._data = value._array()

    def detach(self):
        """A new leaf sharing storage and version counter, cut from the graph."""
        t = _make(self._array())
        t._vc = self._version_counter()
        return t

    def detach_(self):
        if self._base_ is not None and self._base_._rg:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        # the node that made it may have saved it: it must check the counter that later
        # in-place edits bump (a counter made after _fn is gone would reach no node)
        self._version_counter()
        self._fn = None
        self._nr = 0
        self._rg = False
        _flag_to_followers(self)
        return self

    def retain_grad(self):
        """Make backward populate .grad of this non-leaf tensor."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._fn is None or self._retains:
            return
        self._retains = True
        self._fn._add_retain(self._nr, weakref.ref(self))

    def register_hook(self, hook):
        """Call hook(grad) when this tensor's gradient is computed; it may return a new grad.

        >>> import gradviz as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> x.sum().backward(); x.grad
        tensor([2., 2.])
        """
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        from .autograd.graph import RemovableHandle
        if self._fn is None:
            if self._hooks is None:
                self._hooks = {}
            return RemovableHandle(self._hooks, hook)
        return self._fn._add_tensor_prehook(self._nr, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call hook(tensor) after backward has accumulated into this leaf's .grad.

        >>> import gradviz as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> h = x.register_post_accumulate_grad_hook(lambda t: print(t.grad))
        >>> (x * 3).sum().backward()
        tensor([3., 3.])
        """
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self._fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        from .autograd.graph import RemovableHandle
        if self._post_hooks is None:
            self._post_hooks = {}
        return RemovableHandle(self._post_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor w.r.t. the graph leaves (see autograd.backward)."""
        global _backward
        if _backward is None:       # imported once, not at every call
            from .autograd.engine import backward as _backward
        _backward((self,), None if gradient is None else (gradient,), retain_graph,
                  create_graph, inputs=inputs)

    def _version_counter(self):
        vc = self._vc
        if vc is None:
            vc = self._vc = _new(_Version)     # no __init__ call: this is on the hot path
            vc.v = 0
            fn = self._fn
            if fn is not None and not self._nr:
                # The node that made this tensor may have saved it as its result before it had
                # a counter: it checks this one from now on.
                fn._adopt_counter(vc)
        return vc

    # ----- printing ------------------------------------------------------------------------

    def __repr__(self):
        from ._tensor_str import tensor_repr
        try:
            fn = _read_grad_fn(self)
            # torch prints the class name: <CopySlices>, not name()'s
            # "torch::autograd::CopySlices"
            name = None if fn is None else type(fn).__name__
        except RuntimeError:
            name = "Invalid"        # torch's, for a view whose grad_fn getter refuses
        return tensor_repr(self._data, self._data.dtype.name, grad_fn_name=name,
                           requires_grad=self._rg)

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)


# torch words the same refusal three ways: at creation (factory functions and nn.Parameter),
# by requires_grad_() and by the attribute setter.
_RG_DTYPE_CREATE = "Only Tensors of floating point and complex dtype can require gradients"
_RG_DTYPE_METHOD = "only Tensors of floating point dtype can require gradients"
_RG_DTYPE_ATTRIBUTE = "only Tensors of floating point and complex dtype can require gradients"


def _set_requires_grad(t, flag, dtype_message):
    """Set a leaf's requires_grad flag, refusing non-float dtypes with torch's message."""
    if flag and t._data.dtype.kind != "f":
        raise RuntimeError(dtype_message)
    if flag and type(t._vc) is _InferenceVersion and not _state.inference:
        raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                           "InferenceMode is not allowed.")
    if flag and not t._rg and _tracing.active is not None:
        _tracing.active.leaf(t)
    base = t._base_
    from .autograd.graph import _through_base
    if base is not None and base._rg and t._fn is None:
        # torch: a view requires grad while its base does (one made in no_grad mode, say);
        # its own flag only decides whether it has an AccumulateGrad (graph._through_base)
        if not flag:
            t._acc = _through_base
        elif t._acc is _through_base:
            t._acc = None
        flag = True
    elif flag and t._acc is _through_base:
        t._acc = None           # its own flag now, not only its base's (views._follows_base)
    t._rg = bool(flag)
    _flag_to_followers(t)


def _flag_to_followers(t):
    """The views of t made in no_grad mode require grad while t does (views._follows_base)."""
    refs = t.__dict__.get("_flag_followers")
    if refs:
        from .autograd.graph import _through_base
        for ref in refs:
            v = ref()
            if v is not None and v._acc is _through_base:
                v._rg = t._rg


def _read_grad_fn(t):
    """t.grad_fn as torch's getter gives it: a view whose base, or another view of it, was
    edited in place since its grad_fn was set gets a new one (AsStridedBackward0 over the
    base's history), or torch's error for a view made in no_grad mode (autograd.graph.is_stale,
    refresh). Only for a read by the user's code (the frame above the getter): the inspector
    shows the graph as it was made, as its tracer of torch records it."""
    vc = t._vc
    if (t._base_ is not None and type(vc) is _Version and vc.v != t._fn_ver
            and _callsite.called_by_user(3)):
        from .autograd.graph import refresh
        refresh(t)
    return t._fn


def _init(t, data):
    t._data = data
    t._rg = False
    t._fn = None
    t._nr = 0
    t._vc = _new(_InferenceVersion) if _state.inference else None
    t._iter_plain = None


_new = object.__new__
_backward = None        # gradviz.autograd.engine.backward, once Tensor.backward first ran


def _make(data, cls=Tensor):
    """A new leaf tensor over `data` (no copy). The hot path of every operation."""
    t = _new(cls)
    t._data = data
    t._rg = False
    t._fn = None
    t._nr = 0
    t._vc = None
    t._iter_plain = None
    if _outside.inference and _state.inference:
        t._vc = _new(_InferenceVersion)     # an inference tensor (see inference_mode)
    if _tracing.active is not None:
        _tracing.active.created(t)
    return t


def _make_plain(data):
    """_make for a result the binary ops know NumPy laid out as torch does: marked so
    (`_iter_plain`, see gradviz._ops._iterator._binary_out) as it is made, which costs their
    hot path one attribute store fewer than marking it after _make."""
    t = _new(Tensor)
    t._data = data
    t._rg = False
    t._fn = None
    t._nr = 0
    t._vc = None
    t._iter_plain = data
    if _outside.inference and _state.inference:
        t._vc = _new(_InferenceVersion)     # an inference tensor (see inference_mode)
    if _tracing.active is not None:
        _tracing.active.created(t)
    return t


def _rebuild(data, rg):
    # pickle imports this module alone: the core gives Tensor its ops when it loads
    _sys.modules[__package__]._load()
    t = _make(data)
    t._rg = rg
    return t


def _empty_strided(d):
    """An empty array d with torch's strides: NumPy gives a new empty array 0 strides, torch
    its contiguous ones, a dim of size 0 counted as 1 (torch.zeros(0, 3).stride() is (3, 1)).
    Views of the result (a transpose, say) then get torch's strides too."""
    if d.size or any(d.strides):
        return d
    steps, step = [], d.itemsize
    for n in reversed(d.shape):
        steps.append(step)
        step *= max(n, 1)
    return np.lib.stride_tricks.as_strided(d, d.shape, tuple(reversed(steps)))


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def type_name(data):
    """torch's legacy type string for error messages: `torch.FloatTensor [2, 2]`."""
    shape = ", ".join(str(s) for s in np.shape(data))
    return f"torch.{_TYPE_NAMES[data.dtype.name]} [{shape}]"

