"""Tensor creation: tensor, ones, zeros, full, empty, empty_strided, *_like, rand, randn,
randint, randperm, arange, linspace, logspace, eye, from_numpy, Tensor.new_*, manual_seed.
Random draws come from gradviz._random, which gives torch's values for the same seed or
Generator. Only the CPU exists: another device is refused, never ignored.

Each is exported through the registry, so that torch's argument parser's spellings reach it
(gradviz._keywords: `torch.zeros(size=(2, 3))`, `torch.rand(2, out=t)`) and an argument torch
takes that gradviz lacks (`layout=`, `memory_format=`) is refused by name. Parameters carry
torch's names; `out=` is handled here, because out's dtype is the result's (a random draw of
out's dtype, not a draw cast to it)."""

import functools
import inspect
import itertools
import math
import os
import warnings
from fractions import Fraction

import numpy as np

from . import _dtype
from . import _random
from ._keywords import with_keywords
from ._registry import export, method
from ._tensor import _RG_DTYPE_CREATE, Tensor, _make, _set_requires_grad

__all__ = ["tensor", "as_tensor", "from_numpy", "ones", "zeros", "full", "empty", "ones_like",
           "zeros_like", "full_like", "empty_like", "rand", "randn", "randint", "rand_like",
           "randn_like", "randint_like", "randperm", "arange", "linspace", "logspace", "eye",
           "empty_strided", "new_tensor", "new_zeros", "new_ones", "new_full", "new_empty",
           "manual_seed",
           "seed", "initial_seed", "get_rng_state", "set_rng_state", "is_tensor"]

@export(tensor=False)
def manual_seed(seed):
    """Seed the default generator (rand, randn, randint, randperm, multinomial, normal_,
    uniform_, dropout, nn.init): the same numbers as torch after torch.manual_seed(seed)."""
    return _random.default_generator.manual_seed(seed)


@export(tensor=False)
def seed():
    return _random.default_generator.seed()


@export(tensor=False)
def initial_seed():
    return _random.default_generator.initial_seed()


@export(tensor=False)
def get_rng_state():
    return _random.default_generator.get_state()


@export(tensor=False)
def set_rng_state(new_state):
    _random.default_generator.set_state(new_state)


def _check_device(device):
    """Only the CPU: another device is refused with torch's words on a CPU-only build."""
    if device is None:
        return
    from ._tensor import device as _device
    kind = _device(device).type
    if kind == "cpu":
        return
    if kind in ("cuda", "xpu"):
        raise AssertionError(f"Torch not compiled with {kind.upper()} enabled")
    if kind == "mps":
        raise RuntimeError("PyTorch is not linked with support for mps devices")
    raise RuntimeError(f"gradviz: device {str(device)!r} is not available: gradviz's core runs "
                       "on the CPU only; run with --backend torch to use PyTorch")


@export(tensor=False)
def set_default_device(device):
    """The device new tensors go to: only the CPU exists, so "cpu" (or None) is accepted, as
    PyTorch's tutorials call it with the device they picked, and any other is refused."""
    _check_device(device)


@export(tensor=False)
def get_default_device():
    """device(type='cpu'): the only device gradviz's core has."""
    from ._tensor import device
    return device("cpu")


def _check_pin_memory(name, pin_memory):
    if pin_memory:
        raise NotImplementedError(f"gradviz: torch.{name}(pin_memory=...) is not implemented by "
                                  "gradviz's core; run with --backend torch to use PyTorch")


def _finish(data, requires_grad, out=None, name=None):
    """The new tensor: data as a leaf (requires_grad as asked), or written into out."""
    if out is not None:
        return _write_out(name, out, data, requires_grad)
    if data.ndim == 0:
        # A 0-d tensor keeps a NumPy scalar: arithmetic on it is several times faster than on
        # a 0-d array (it becomes an array the first time something views or edits it).
        data = data[()]
    t = _make(data)
    if requires_grad:
        _set_requires_grad(t, True, _RG_DTYPE_CREATE)
    return t


def _write_out(name, out, data, requires_grad):
    from ._keywords import write_out
    from .autograd.grad_mode import is_grad_enabled
    if out._rg and is_grad_enabled():
        raise RuntimeError(f"aten::{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    write_out(name, out, _make(data), (), {})
    if requires_grad:
        _set_requires_grad(out, True, _RG_DTYPE_CREATE)
    return out


def _out_dt(out, dtype, default=None):
    """The NumPy dtype of a creation's result: dtype, else out's (torch computes in out's
    dtype), else default (the default dtype when None)."""
    if out is not None:
        if dtype is not None and _dtype.to_numpy_dtype(dtype) != out._data.dtype:
            raise RuntimeError(f"dtype {_torch_scalar(_dtype.to_numpy_dtype(dtype))} does not "
                               f"match dtype of out parameter ({_torch_scalar(out._data.dtype)})")
        return out._data.dtype
    return _dt(dtype, default)


def _torch_scalar(npdt):
    return _dtype._TORCH_SCALAR[np.dtype(npdt).name]


def _infer(data, result=True):
    """The NumPy dtype torch infers for data (its infer_scalar_type): bool, int -> int64,
    float -> the default dtype, a tensor or NumPy value its own dtype, a sequence its items'
    dtypes promoted as torch.promote_types does (tensor([np.int32(1), 2]) is int64,
    tensor([tensor(1., dtype=float64), 2.]) float64), an empty one the default dtype.
    result=False: data about to be cast to a dtype given, from uint16 or complex NumPy data too."""
    if isinstance(data, (np.ndarray, np.generic)):         # before float: np.float64 is one
        known = _dtype.from_numpy_dtype(data.dtype, result)  # float128, ...: refused
        return data.dtype if known is None else known.np
    if isinstance(data, bool):
        return np.dtype(np.bool_)
    if isinstance(data, int):
        return np.dtype(np.int64)
    if isinstance(data, float):
        return _dtype.get_default_dtype().np
    if isinstance(data, Tensor):
        return data._data.dtype
    if isinstance(data, complex):
        raise TypeError("gradviz: complex tensors are not implemented by gradviz's core; run "
                        "with --backend torch to use PyTorch")
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not isinstance(data, _SEQUENCES):
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
    found = None
    for x in data:
        found = _dtype._promote(found, _infer(x, result))
    return _dtype.get_default_dtype().np if found is None else found


# what torch's tensor() walks into as a sequence (a tensor is an element, never walked into)
_SEQUENCES = (list, tuple, range, np.ndarray)


def _sizes(data):
    """torch's compute_sizes: the lengths down the first items."""
    sizes = []
    while isinstance(data, _SEQUENCES):
        sizes.append(len(data))               # a 0-d array: "len() of unsized object", as torch
        if not sizes[-1]:
            break
        data = data[0]
    return sizes


def _elements(data, sizes, npdt, dim=0):
    """data as nested lists of scalars, each sequence checked against sizes as torch's
    recursive_store does; a one-element tensor becomes its value."""
    if dim == len(sizes):
        if type(data) is not int and npdt.kind in "iub":
            _check_index(data, npdt)
        if isinstance(data, Tensor):
            if data._data.size != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            return data._data.reshape(-1)[0]
        return data
    if not isinstance(data, _SEQUENCES):
        raise TypeError("not a sequence")
    if len(data) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(data)})")
    return [_elements(x, sizes, npdt, dim + 1) for x in data]


def _check_index(x, npdt):
    """torch stores a tensor or NumPy scalar into an integer or bool dtype through __index__:
    tensor([np.float32(1.5)], dtype=int64) and tensor([np.bool_(True), 2]) are refused (a
    np.float64 is a Python float, and np.bool_ goes into bool)."""
    if isinstance(x, Tensor):
        if x._data.dtype.kind == "f":
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
    elif (isinstance(x, np.generic) and not isinstance(x, (np.integer, float))
          and not (npdt.kind == "b" and isinstance(x, np.bool_))):
        raise TypeError(f"'numpy.{type(x).__name__}' object cannot be interpreted as an integer")


def _stored(data, npdt):
    """Python data stored as npdt, refusing as torch's store_scalar a value an integer dtype
    cannot hold (a negative int wraps into uint8, as torch lets it)."""
    elements = _elements(data, _sizes(data), npdt)
    values = np.array(elements)
    if values.dtype == object or values.dtype == np.uint64:        # an int beyond int64
        if npdt.kind in "fb":
            values = np.array(elements, dtype=np.float64)   # torch reads it as a double
        elif values.dtype == object or values.max() > np.iinfo(np.int64).max:
            raise ValueError("Overflow when unpacking long long")
    if npdt.kind in "iu" and values.dtype.kind in "iuf" and not _fits(values, npdt):
        raise RuntimeError(f"value cannot be converted to type {npdt.name} without overflow")
    with np.errstate(over="ignore"):              # 1e40 as float32 is inf, as torch
        return values.astype(npdt)


def _array(ndarray, result=True):
    """An array torch takes as it is: a dtype it has (gradviz too, unless it is cast: result
    False), native byte order, no negative stride."""
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    _dtype.from_numpy_dtype(ndarray.dtype, result)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    return ndarray


_complex_warned = False     # whether _cast has warned (torch warns once per process)


def _cast(ndarray, npdt):
    """A copy of an array in npdt (its own dtype when None), warning as torch's copy_ does when
    an imaginary part is dropped: once per process (torch's TORCH_WARN_ONCE), whatever the
    warning filters say."""
    global _complex_warned
    if ndarray.dtype.kind == "c" and npdt is not None:
        if not _complex_warned:
            _complex_warned = True
            from .autograd.callsite import user_stacklevel
            warnings.warn("Casting complex values to real discards the imaginary part",
                          UserWarning, stacklevel=user_stacklevel())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return np.array(ndarray, dtype=npdt, copy=True)
    return np.array(ndarray, dtype=npdt, copy=True)


@export(tensor=False)
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of data.

    >>> import gradviz as torch
    >>> torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    tensor([[1., 2.],
            [3., 4.]], requires_grad=True)
    """
    _check_device(device)
    _check_pin_memory("tensor", pin_memory)
    npdt = _dtype.to_numpy_dtype(dtype)
    if isinstance(data, Tensor):
        arr = np.array(data._data, dtype=npdt or data._data.dtype, copy=True)
    elif isinstance(data, np.ndarray):
        arr = _cast(_array(data, npdt is None), npdt)
    else:
        inferred = _infer(data, npdt is None)    # also refuses str, None, complex, uint16, ...
        arr = _stored(data, np.dtype(npdt or inferred))
    return _finish(arr, requires_grad)


@export(tensor=False)
def as_tensor(data, *, dtype=None, device=None):
    _check_device(device)
    if isinstance(data, Tensor):
        # torch's data.to(dtype): the graph kept (ToCopyBackward0), data itself when same
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None
                                         or _dtype.to_numpy_dtype(dtype) == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


@export(tensor=False)
def from_numpy(ndarray):
    """A tensor sharing memory with a NumPy array."""
    return _make(_array(ndarray))


def _size(size, name="size"):
    """torch's size argument, given as ints or as one tuple, list or Size of ints (a 0-d
    integer tensor counts as an int), with torch's errors for anything else."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    elif len(size) == 1 and not _is_int(size[0]):
        raise TypeError(f"argument '{name}' (position 1) must be tuple of ints, not "
                        f"{type(size[0]).__name__}")
    for k, s in enumerate(size):
        if type(s) is not int and not _is_int(s):
            raise TypeError(f"argument '{name}' (position 1) must be tuple of ints, but found "
                            f"element of type {type(s).__name__} at pos {k}")
    shape = tuple(map(int, size))
    if shape and min(shape) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"[{', '.join(map(str, shape))}]")
    return shape


def _is_int(s):
    if isinstance(s, Tensor):
        return s.ndim == 0 and s._data.dtype.kind in "iu"
    return isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_))


def _shape(name, size):
    """_size with the function's name in front of its TypeError, as torch's parser says it."""
    try:
        return _size(size)
    except TypeError as exc:
        raise TypeError(f"{name}(): {exc}") from None


def _dt(dtype, default=None):
    if dtype is None:
        return default if default is not None else _dtype.get_default_dtype().np
    return _dtype.to_numpy_dtype(dtype)


_NO_ARG = object()     # a parameter torch requires, left out (full's size and fill_value)


def _no_size(name, plain=False):
    """torch's TypeError for a factory called without a size (torch.zeros() is no 0-d tensor:
    that is torch.zeros(())); plain: rand()/randn() without any argument, which torch's parser
    words as a mismatch of all overloads."""
    if plain:
        raise TypeError(f"{name}() received an invalid combination of arguments - got (), but "
                        "expected one of:")
    raise TypeError(f'{name}() missing 1 required positional arguments: "size"')


def _filled(name, size, make, out, dtype, device, requires_grad, pin_memory):
    """zeros / ones / empty (empty's values are zeros: torch leaves them undefined)."""
    if not size:
        _no_size(name)
    _check_device(device)
    _check_pin_memory(name, pin_memory)
    shape = _shape(name, size)
    return _finish(make(shape, dtype=_out_dt(out, dtype)), requires_grad, out, name)


@export(tensor=False)
def ones(*size, out=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor of ones: `torch.ones(2, 3)`, `torch.ones((2, 3))` or `torch.ones(size=(2, 3))`.

    >>> import gradviz as torch
    >>> torch.ones(size=(2,))
    tensor([1., 1.])
    """
    return _filled("ones", size, np.ones, out, dtype, device, requires_grad, pin_memory)


@export(tensor=False)
def zeros(*size, out=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    return _filled("zeros", size, np.zeros, out, dtype, device, requires_grad, pin_memory)


@export(tensor=False)
def empty(*size, out=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    return _filled("empty", size, np.zeros, out, dtype, device, requires_grad, pin_memory)


@export(tensor=False)
def full(size=_NO_ARG, fill_value=_NO_ARG, *, out=None, dtype=None, device=None, requires_grad=False,
         pin_memory=False):
    if size is _NO_ARG:     # torch's words, "argument" and all
        raise TypeError('full() missing 2 required positional argument: "size", "fill_value"')
    if fill_value is _NO_ARG:
        raise TypeError('full() missing 1 required positional arguments: "fill_value"')
    _check_device(device)
    _check_pin_memory("full", pin_memory)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    shape = _shape("full", (size,))
    dt = _out_dt(out, dtype, None if dtype is not None else _infer(_number(fill_value)))
    # torch's checked Scalar conversion: full((2,), 1e40, dtype=float32) is refused
    value = _scalar_to(fill_value, np.dtype(dt))
    return _finish(np.full(shape, value, dtype=dt), requires_grad, out, "full")


def _number(v):
    """The Python number torch reads a NumPy scalar fill value as: np.float64(2.5) fills a
    float32 tensor, np.int32(3) an int64 one, np.bool_ a float32 one (as torch 2.13)."""
    if isinstance(v, np.bool_):
        return float(v)
    return v.item() if isinstance(v, np.generic) else v


@export(tensor=False)
def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A tensor of the given size and strides (in elements), filled with zeros (torch leaves
    the values undefined)."""
    _check_device(device)
    _check_pin_memory("empty_strided", pin_memory)
    shape, steps = _shape("empty_strided", (size,)), _shape("empty_strided", (stride,))
    if len(shape) != len(steps):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(steps)})")
    dt = np.dtype(_dt(dtype))
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, steps)) if all(shape) else 0
    storage = np.zeros(extent, dtype=dt)
    data = np.lib.stride_tricks.as_strided(storage, shape, [s * dt.itemsize for s in steps])
    return _finish(data, requires_grad)


# ----- *_like and Tensor.new_*: the input's shape (and dtype, unless given) -------------------

def _like(name, input, dtype, device, pin_memory):
    """The dtype of a tensor made like input: input's, unless given."""
    _check_device(device)
    _check_pin_memory(name, pin_memory)
    return input._data.dtype if dtype is None else np.dtype(_dtype.to_numpy_dtype(dtype))


def _laid_like(input, flat):
    """flat (the values in memory order) with input's shape, laid out as torch's
    preserve_format lays out a tensor like input: with input's strides when input is dense
    and non-overlapping (zeros_like(x.t()) has x.t()'s strides), else dense in the order of
    input's strides."""
    data = input._data
    laid = flat.reshape(np.shape(data))
    if not isinstance(data, np.ndarray) or laid.strides == data.strides:
        return laid
    shape, strides = data.shape, input.stride()
    if not _dense(shape, strides):
        strides = _dense_strides(shape, strides)
    steps = tuple(s * flat.itemsize for s in strides)
    return laid if laid.strides == steps else np.lib.stride_tricks.as_strided(flat, shape, steps)


def _dense(shape, strides):
    """torch's is_non_overlapping_and_dense: the dims ordered by stride step through memory
    one element after another (dims of size 0 or 1 aside)."""
    need = 1
    for d in sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d])):
        if shape[d] < 2:
            return True
        if strides[d] != need:
            return False
        need *= shape[d]
    return True


def _dense_strides(shape, strides):
    """torch's infer_dense_strides: dense strides keeping the order of the given ones (a
    stable insertion sort, as TensorIterator's; a 0 stride leaves its dim where it is, equal
    strides put the smaller dim first)."""
    def order(a, b):            # 1: a goes after b, -1: before, 0: ambiguous (look further)
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] != strides[b]:
            return 1 if strides[a] > strides[b] else -1
        return 1 if shape[a] > shape[b] else 0

    perm = list(range(len(shape)))[::-1]
    for i in range(1, len(shape)):
        right = i
        for left in range(i - 1, -1, -1):
            seen = order(perm[left], perm[right])
            if seen > 0:
                perm[left], perm[right] = perm[right], perm[left]
                right = left
            elif seen < 0:
                break
    out, step = [0] * len(shape), 1
    for d in perm:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def _numel(input):
    return int(np.size(input._data))


def _c_ordered(data):
    """Whether a new C-ordered array has data's strides: the common case, no layout work."""
    return not isinstance(data, np.ndarray) or (data.flags.c_contiguous and 1 not in data.shape
                                                and 0 not in data.shape)


def _filled_like(input, make, dt):
    """make(shape, dtype=dt) (np.zeros, np.ones, ...) laid out like input (_laid_like)."""
    data = input._data
    if _c_ordered(data):
        return make(np.shape(data), dtype=dt)
    return _laid_like(input, make(data.size, dtype=dt))


@export(tensor=False)
def ones_like(input, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    dt = _like("ones_like", input, dtype, device, pin_memory)
    return _finish(_filled_like(input, np.ones, dt), requires_grad)


@export(tensor=False)
def zeros_like(input, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    dt = _like("zeros_like", input, dtype, device, pin_memory)
    return _finish(_filled_like(input, np.zeros, dt), requires_grad)


@export(tensor=False)
def empty_like(input, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    dt = _like("empty_like", input, dtype, device, pin_memory)
    return _finish(_filled_like(input, np.zeros, dt), requires_grad)


@export(tensor=False)
def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              pin_memory=False):
    dt = _like("full_like", input, dtype, device, pin_memory)
    value = _scalar_to(fill_value, dt)
    return _finish(_filled_like(input, functools.partial(np.full, fill_value=value), dt),
                   requires_grad)


@method()
def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor of zeros of the given size, with self's dtype unless dtype is given."""
    dt = _like("new_zeros", self, dtype, device, pin_memory)
    return _finish(np.zeros(_shape("new_zeros", size), dtype=dt), requires_grad)


@method()
def new_ones(self, *size, dtype=None, device=None, requires_grad=False, pin_memory=False):
    dt = _like("new_ones", self, dtype, device, pin_memory)
    return _finish(np.ones(_shape("new_ones", size), dtype=dt), requires_grad)


@method()
def new_empty(self, *size, dtype=None, device=None, requires_grad=False, pin_memory=False):
    dt = _like("new_empty", self, dtype, device, pin_memory)
    return _finish(np.zeros(_shape("new_empty", size), dtype=dt), requires_grad)


@method()
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             pin_memory=False):
    dt = _like("new_full", self, dtype, device, pin_memory)
    value = _scalar_to(fill_value, np.dtype(dt))
    return _finish(np.full(_shape("new_full", (size,)), value, dtype=dt), requires_grad)


@method()
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False,
               pin_memory=False):
    """A new leaf tensor holding a copy of data, with self's dtype unless dtype is given."""
    _check_pin_memory("new_tensor", pin_memory)
    return tensor(data, dtype=self.dtype if dtype is None else dtype, device=device,
                  requires_grad=requires_grad)


# ----- random draws ---------------------------------------------------------------------------

# draw(shape, dtype, generator=...): each refuses a dtype that is not floating, as torch
_DRAWS = {"rand": _random.uniform, "randn": _random.normal}


def _draw(kind, shape, dt, generator, requires_grad, out=None):
    values = _DRAWS[kind](shape, dt, generator=generator)
    return _finish(values, requires_grad, out, kind)


def _draw_like(kind, input, dt, generator, requires_grad):
    """A draw like input: the values fill its layout in memory order, as torch's kernels
    write them; normal's blocks of 16 are for a contiguous result only."""
    if _c_ordered(input._data):
        return _draw(kind, np.shape(input._data), dt, generator, requires_grad)
    flat = np.zeros(_numel(input), dtype=dt)
    laid = _laid_like(input, flat)
    contiguous = {} if kind == "rand" else {"contiguous": laid.flags.c_contiguous}
    flat[...] = _DRAWS[kind]((flat.size,), dt, generator=generator, **contiguous)
    return _finish(laid, requires_grad)


@export(tensor=False)
def rand(*size, generator=None, out=None, dtype=None, device=None, requires_grad=False,
         pin_memory=False):
    """Samples of U[0, 1): torch's values for the same seed or generator.

    >>> import gradviz as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.rand(2)
    tensor([0.4963, 0.7682])
    """
    if not size:
        _no_size("rand", generator is out is dtype is device is None and not requires_grad
                 and not pin_memory)
    _check_device(device)
    _check_pin_memory("rand", pin_memory)
    return _draw("rand", _shape("rand", size), _out_dt(out, dtype), generator, requires_grad,
                 out)


@export(tensor=False)
def randn(*size, generator=None, out=None, dtype=None, device=None, requires_grad=False,
          pin_memory=False):
    """Samples of N(0, 1): torch's values for the same seed or generator."""
    if not size:
        _no_size("randn", generator is out is dtype is device is None and not requires_grad
                 and not pin_memory)
    _check_device(device)
    _check_pin_memory("randn", pin_memory)
    return _draw("randn", _shape("randn", size), _out_dt(out, dtype), generator, requires_grad,
                 out)


@export(tensor=False)
def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
              pin_memory=False):
    dt = _like("rand_like", input, dtype, device, pin_memory)
    return _draw_like("rand", input, dt, generator, requires_grad)


@export(tensor=False)
def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
               pin_memory=False):
    dt = _like("randn_like", input, dtype, device, pin_memory)
    return _draw_like("randn", input, dt, generator, requires_grad)


@export(tensor=False)
def randint(low=None, high=None, size=None, *, generator=None, out=None, dtype=None,
            device=None, requires_grad=False, pin_memory=False):
    """Integers in [low, high): torch's values for the same seed or generator. As torch:
    randint(high, size) or randint(low, high, size), positionally or by name."""
    _check_device(device)
    _check_pin_memory("randint", pin_memory)
    if size is None and high is not None:
        low, high, size = None, low, high         # randint(high, size)
    elif high is None:
        low, high = None, low                     # randint(high, size=...)
    if high is None or size is None:
        got = "int" if size is None else f"size={type(size).__name__}, "
        raise TypeError(f"randint() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:")
    if _is_int(size):
        raise TypeError(f"randint(): argument 'size' (position {2 if low is None else 3}) must "
                        f"be tuple of ints, not {type(size).__name__}")
    if low is None:
        if not _is_int(high):
            raise TypeError(f"randint(): argument 'high' (position 1) must be int, not "
                            f"{type(high).__name__}")
        low = 0
    low, high = _int_bounds("randint", (low, high), (low, high, size))
    shape = _shape("randint", (size,))
    dt = np.dtype(_out_dt(out, dtype, np.int64))
    vals = _random.randint(low, high, shape, generator=generator, dtype=dt)
    return _finish(vals, requires_grad, out, "randint")


def _int_bounds(name, bounds, args):
    """randint's bounds as ints: anything else (a float, a bool, a float tensor) gets torch's
    invalid-combination error naming the types of args, an int beyond int64 its overflow."""
    if not all(_is_int(v) for v in bounds):
        given = ", ".join(type(v).__name__ for v in args)
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({given}), "
                        "but expected one of:")
    bounds = [int(v) for v in bounds]
    if any(not -1 << 63 <= v < 1 << 63 for v in bounds):
        raise ValueError("Overflow when unpacking long long")
    return bounds


@export(tensor=False)
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False, pin_memory=False):
    dt = _like("randint_like", input, dtype, device, pin_memory)
    given = (input, low) if high is None else (input, low, high)
    low, high = _int_bounds("randint_like", (0, low) if high is None else (low, high), given)
    vals = _random.randint(low, high, (_numel(input),), generator=generator, dtype=dt)
    return _finish(_laid_like(input, vals), requires_grad)


@export(tensor=False)
def randperm(n, *, generator=None, out=None, dtype=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of 0..n-1: torch's for the same seed or generator."""
    _check_device(device)
    _check_pin_memory("randperm", pin_memory)
    if not _is_int(n):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = np.dtype(_out_dt(out, dtype, np.int64))
    _check_randperm(n, dt)
    vals = _random.randperm(n, generator=generator)
    return _finish(vals.astype(dt), requires_grad, out, "randperm")


# the largest n whose permutation a float dtype holds exactly, as torch's randperm words it
_RANDPERM_LIMITS = {"float16": (2049, "2049", "Half"), "float32": (2 ** 24 + 1, "2^24+1", "Float"),
                    "float64": (2 ** 53 + 1, "2^53+1", "Double")}


def _check_randperm(n, dt):
    """torch's randperm checks: bool refused, n - 1 held by an integer dtype (checked as a
    Scalar conversion), n at most the float dtype's limit."""
    if dt.kind == "b":
        raise NotImplementedError('"randperm" not implemented for \'Bool\'')
    if dt.kind == "f":
        limit, text, name = _RANDPERM_LIMITS[dt.name]
        if n > limit:
            raise RuntimeError(f"n cannot be greater than {text} for {name} type.")
    elif n:
        _scalar_to(n - 1, dt)


# ----- ranges -------------------------------------------------------------------------------

@export(tensor=False)
def arange(*args, **kwargs):
    """Values from start to end (exclusive): int64 for integers, the default dtype otherwise.
    As torch: arange(end), arange(start, end) or arange(start, end, step), positionally or by
    name.

    >>> import gradviz as torch
    >>> torch.arange(1, 4)
    tensor([1, 2, 3])
    """
    if not args and "end" not in kwargs and kwargs.keys() & {"start", "step"}:
        # torch's parser takes a lone bound only as end: arange(start=5) is refused
        if len(kwargs) == 1:
            raise TypeError('arange() missing 1 required positional arguments: "end"')
        from ._ops._common import _invalid_combination
        raise _invalid_combination("arange", (), kwargs)
    return _arange(*args, **kwargs)


def _arange_bounds(start=None, end=None, step=None, *, out=None, dtype=None, device=None,
                   requires_grad=False, pin_memory=False):
    _check_device(device)
    _check_pin_memory("arange", pin_memory)
    if (start is None and end is None) or (step is not None and (start is None or end is None)):
        # `is None`, never `None in (...)`: that compares a Tensor bound with ==
        # torch's overloads: (end), (start, end), (start, end, step)
        keywords = [f"{k}={type(v).__name__}" for k, v in (("step", step), ("end", end))
                    if v is not None]
        given = (", ".join([type(start).__name__] + keywords) if start is not None
                 else "".join(k + ", " for k in keywords))
        raise TypeError(f"arange() received an invalid combination of arguments - got "
                        f"({given}), but expected one of:")
    if end is None:
        start, end = 0, start
    elif start is None:
        start = 0                                 # arange(end=...)
    start, end, step = [v.item() if isinstance(v, Tensor) else v
                        for v in (start, end, 1 if step is None else step)]
    _arange_check(start, end, step)
    ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dt = np.dtype(_out_dt(out, dtype, np.int64 if ints else None))
    if dt.kind == "b":
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')
    if dt == np.int64:
        # torch converts the bounds to int64, checked (2**63 is refused, never wrapped),
        # truncating a float: arange(-2.25, 7, dtype=int64) has 9 elements
        start, end, step = (int(_scalar_to(v, dt)) for v in (start, end, step))
        if step == 0:
            raise ValueError("step must be nonzero")
        size = _int64_size(start, end, step)
    else:
        size = math.ceil((end - start) / step)
    if size * dt.itemsize >= 1 << 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{size}]")
    try:
        if dt.kind == "f":
            if dt == np.float16:        # its bounds are read as float32, checked
                start, step = (_scalar_to(v, np.dtype(np.float32)) for v in (start, step))
            data = _float_range(float(start), float(step), size, dt)
        else:
            # the other integer dtypes on start and step truncated to int64
            start, step = int(start), int(step)
            data = start + np.arange(size, dtype=np.int64) * step
    except MemoryError:
        raise _allocation_error(size * dt.itemsize) from None
    return _finish(data.astype(dt), requires_grad, out, "arange")


def _int64_size(start, end, step):
    """The length of an int64 arange as torch counts it: (end - start + step - sign(step)) /
    step in int64 arithmetic (wrapping, dividing toward zero: arange(-2**62, 2**62, 2**61)
    is refused and arange(5, 0, -2**63) is empty), then as a double within int64."""
    num = (end - start + step - (1 if step > 0 else -1) + (1 << 63)) % (1 << 64) - (1 << 63)
    quotient = abs(num) // abs(step) * (1 if (num < 0) == (step < 0) else -1)
    size = float(quotient)
    if not 0 <= size <= 2.0 ** 63:
        raise RuntimeError("invalid size, possible overflow?")
    if size == 2.0 ** 63:       # torch's cast of it to int64 gives its lowest value
        raise RuntimeError("IntArrayRef contains an int that cannot be represented as a "
                           f"SymInt: {-(1 << 63)}")
    return int(size)


def _allocation_error(nbytes):
    """torch's error for storage the allocator cannot give (NumPy raises MemoryError)."""
    return RuntimeError(f"[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: "
                        f"can't allocate memory: you tried to allocate {nbytes} bytes. Error "
                        "code 12 (Cannot allocate memory)")


# the lanes of torch's vectorized arange kernel (the AVX2 build torch's CPU wheels dispatch)
_LANES = {"float16": 16, "float32": 8, "float64": 4}
# at::parallel_for's grain, and the threads it splits a larger range between (torch's default
# intra-op thread count: the CPUs this process may use)
_GRAIN = 32768
_THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _float_range(start, step, n, dt):
    """torch's arange kernel for a float dtype: start + step * i in its accumulation type
    (float32 for float16, float64 otherwise) with one rounding (a fused multiply-add), except
    that whole pairs of vectors (counted from the start of each thread's part of the range)
    take a vector's first value rounded to dt as their base and add k * step to it (k its
    lane)."""
    acc = np.dtype(np.float32 if dt == np.float16 else np.float64)
    start, step = acc.type(start), acc.type(step)
    i = np.arange(n)
    with np.errstate(over="ignore"):        # float16's 70000 is inf, as torch
        data = _fused(start, step, i, acc).astype(dt)
    lanes = _LANES[dt.name]
    parts = min(_THREADS or 1, -(-n // _GRAIN)) if n >= _GRAIN else 1
    size = max(-(-n // parts), 1)
    for begin in range(0, n, size):
        part = i[begin:begin + size]
        vectors = part[:part.size - part.size % (2 * lanes)]
        lane = (vectors - begin) % lanes
        bases = data[vectors - lane].astype(acc)
        with np.errstate(over="ignore"):
            data[vectors] = _fused(bases, step, lane, acc).astype(dt)
    return data


# torch's spellings (out=, layout= refused by name, ...) for the bounds given as arange's
_arange = with_keywords(_arange_bounds, "arange")
arange.__signature__ = inspect.signature(_arange_bounds)        # what help() and audits show


def _arange_check(start, end, step):
    """torch's arange_check_bounds, on the bounds as doubles (after its parser's check that an
    int fits 64 bits)."""
    for v in (start, end, step):
        if isinstance(v, int) and not -(1 << 63) <= v < 1 << 64:
            raise _dtype._int_overflow(v)
    start, end, step = float(start), float(end), float(step)
    if not (step > 0 or step < 0):      # a nan step too
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if not (end - start) / step <= 2.0 ** 63:        # torch's size, a double, within int64
        raise RuntimeError("invalid size, possible overflow?")


def _spaced(name, start, end, steps, out, dtype, device, pin_memory):
    """linspace's and logspace's checks, as torch's: (steps, the result's NumPy dtype)."""
    _check_device(device)
    _check_pin_memory(name, pin_memory)
    steps = _steps(name, start, end, steps, dtype)
    dt = np.dtype(_out_dt(out, dtype))
    if dt.kind == "b":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')
    return steps, dt


def _steps(name, start, end, steps, dtype):
    if not _is_int(steps):
        given = ", ".join([type(v).__name__ for v in (start, end, steps)]
                          + (["dtype=torch.dtype"] if dtype is not None else []))
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({given}), but expected one of:")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return int(steps)


# torch's C++ names of the dtypes, as its checked conversions name them
_C_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double", "int32": "int",
            "bool": "bool"}


def _fits(values, npdt):
    """Whether torch's checked conversion (c10::overflows) takes every value of the array into
    npdt: a float dtype any value up to its largest (and inf, nan); an integer dtype a finite
    float within its range, an integer within its range or, for uint8, down to -255 (wrapped)."""
    if not values.size:
        return True
    if npdt.kind == "f":
        finite = values[np.isfinite(values)]
        return not finite.size or np.abs(finite).max() <= np.finfo(npdt).max
    if npdt.kind == "b":
        return True
    info = np.iinfo(npdt)
    integral = values.dtype.kind in "iub"
    low = -info.max if npdt.kind == "u" and integral else info.min
    return ((integral or np.isfinite(values).all())
            and low <= values.min() and values.max() <= info.max)


def _scalar_to(v, npdt):
    """v as torch's Scalar.to<T>() gives it: checked by _fits, a float truncated into an
    integer dtype, a negative int wrapped into uint8."""
    if isinstance(v, np.complexfloating):
        v = float(v)                # as torch: NumPy's ComplexWarning, the imaginary part dropped
    v = v.item() if isinstance(v, (Tensor, np.generic)) else v     # np.float32 has no __trunc__
    if isinstance(v, int) and not -(1 << 63) <= v < 1 << 64:
        raise _dtype._int_overflow(v)
    if isinstance(v, complex):
        v = v.real if v.imag == 0 else None         # an imaginary part overflows, to torch
    if v is None or not _fits(np.array(v), npdt):
        name = _C_NAMES.get(npdt.name, npdt.name + "_t")
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    if npdt.kind in "iu" and not isinstance(v, (int, np.integer)):
        v = math.trunc(v)
    return np.array(v).astype(npdt)[()]


def _fused(a, b, k, npdt):
    """a + b * k (k an integer array, a a number or an array like k) rounded once into npdt,
    as the fused multiply-add of torch's range kernels (their AVX2 and AVX-512 builds fuse
    it). Computed in a wider type, where the product is exact while k is small; the sum's
    exact error (Knuth's TwoSum) then settles a sum that rounded onto a halfway point between
    two npdt values. Larger k (or no wider type): values near a halfway point are computed
    exactly."""
    wide = np.float64 if npdt == np.float32 else np.longdouble
    extra = np.finfo(wide).nmant - np.finfo(npdt).nmant       # long double may be double
    a = np.broadcast_to(np.asarray(a, dtype=wide), k.shape)
    with np.errstate(invalid="ignore", over="ignore"):  # inf and nan: never a tie, never redone
        product = wide(b) * k.astype(wide)
        approx = a + product
        out = approx.astype(npdt)
        twice = approx - a
        error = (a - (approx - twice)) + (product - twice)
    small = np.abs(k) < (1 << extra) if extra > 1 else np.zeros(k.shape, bool)
    tie = np.nonzero(small & (error != 0) & (approx != out.astype(wide)))[0]
    if tie.size:
        toward = np.where(error[tie] > 0, np.inf, -np.inf).astype(npdt)
        back = out[tie].astype(wide)
        step = np.nextafter(out[tie], toward).astype(wide)
        at_half = approx[tie] - back == (step - back) / 2
        out[tie[at_half]] = np.nextafter(out[tie[at_half]], toward[at_half])
    big = np.nonzero(~small)[0]
    if big.size:
        back = out[big].astype(wide)
        with np.errstate(invalid="ignore"):
            near = np.min([np.abs(approx[big] - (back + np.nextafter(out[big], npdt.type(x))
                                                 .astype(wide)) / 2) for x in (np.inf, -np.inf)],
                          axis=0)
            rounding = 2 * (np.abs(np.spacing(product[big])) + np.abs(np.spacing(approx[big])))
        for i in big[near <= rounding]:
            out[i] = _rounded(Fraction(float(a[i])) + Fraction(float(b)) * int(k[i]), npdt)
    return out


def _rounded(exact, npdt):
    """An exact rational rounded to the nearest npdt value, ties to even."""
    first = npdt.type(float(exact))
    near = [first, np.nextafter(first, npdt.type(np.inf)), np.nextafter(first, npdt.type(-np.inf))]
    near = [x for x in near if np.isfinite(x)] or [first]
    return min(near, key=lambda x: (abs(Fraction(float(x)) - exact),
                                    int(np.array(x).view(f"u{npdt.itemsize}")) & 1))


def _halves(start, end, steps, step, fused):
    """torch's range kernels: the first half of the values from start, the second from end
    (so that both ends are exact)."""
    i = np.arange(steps)
    first = i[:steps // 2]
    second = steps - 1 - i[steps // 2:]
    return np.concatenate([fused(start, step, first), fused(end, -step, second)])


@export(tensor=False)
def linspace(start, end, steps, *, out=None, dtype=None, device=None, requires_grad=False,
             pin_memory=False):
    """steps values evenly spaced from start to end, computed as torch's CPU kernel does:
    start and end converted to the dtype first (an integer dtype truncates them), the step in
    float64 for an integer dtype, in the dtype otherwise.

    >>> import gradviz as torch
    >>> torch.linspace(0.9, 10.2, 7, dtype=torch.int64)
    tensor([ 0,  1,  3,  5,  6,  8, 10])
    """
    steps, dt = _spaced("linspace", start, end, steps, out, dtype, device, pin_memory)
    if steps <= 1:                # torch's fill_(start): end is not looked at
        data = np.full(steps, _scalar_to(start, dt) if steps else 0, dtype=dt)
        return _finish(data, requires_grad, out, "linspace")
    first, last = _scalar_to(start, dt), _scalar_to(end, dt)
    if dt == np.float16:
        # c10::Half rounds after each operation
        step = (last - first) / np.float16(steps - 1)
        data = _halves(first, last, steps, step,
                       lambda a, b, k: (a + b * k.astype(dt)).astype(dt))
    elif dt.kind == "f":
        step = (last - first) / dt.type(steps - 1)
        data = _halves(first, last, steps, step, lambda a, b, k: _fused(a, b, k, dt))
    else:
        step = (float(last) - float(first)) / (steps - 1)
        data = _halves(int(first), int(last), steps, step,
                       lambda a, b, k: np.trunc(_fused(a, b, k, np.dtype(np.float64))))
    with np.errstate(invalid="ignore"):
        return _finish(data.astype(dt), requires_grad, out, "linspace")


@export(tensor=False)
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, device=None,
             requires_grad=False, pin_memory=False):
    """base ** linspace(start, end, steps), computed as torch's CPU code does: exponents in
    float64 from start and end converted to the dtype, powers by the C library's pow.

    >>> import gradviz as torch
    >>> torch.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    steps, dt = _spaced("logspace", start, end, steps, out, dtype, device, pin_memory)
    base = float(base.item() if isinstance(base, Tensor) else base)
    if steps == 0:
        powers = []
    elif steps == 1:
        # torch's fill_: checked, except that float16 takes it through float32 (1e5 is inf)
        start = start.item() if isinstance(start, Tensor) else start
        power = _pow(base, float(start))
        powers = [_scalar_to(power, np.dtype(np.float32) if dt == np.float16 else dt)]
    else:
        first, last = _scalar_to(start, dt), _scalar_to(end, dt)
        # end - start in the dtype (C++ promotes small integers to int: no wrapping)
        step = float(last - first if dt.kind == "f" else int(last) - int(first)) / (steps - 1)
        # not fused here: this part of torch is built without FMA
        exponents = _halves(float(first), float(last), steps, step, lambda a, b, k: a + b * k)
        powers = _powers(base, exponents.tolist())
    data = np.array(powers, dtype=np.float64)
    if dt.kind in "iu":
        data = np.trunc(data)
    elif dt == np.float16:
        data = data.astype(np.float32)          # c10::Half is made from a float
    with np.errstate(invalid="ignore", over="ignore"):
        return _finish(data.astype(dt), requires_grad, out, "logspace")


def _powers(base, exponents):
    """base ** x for each float x, by the C library's pow, as torch's std::pow: math.pow
    (NumPy's vectorized pow differs from it by an ulp on about one value in twenty). Mapped
    from C, without a Python frame per value, unless some value overflows or is not real."""
    try:
        return np.fromiter(map(math.pow, itertools.repeat(base), exponents), np.float64,
                           len(exponents))
    except (OverflowError, ValueError):
        return [_pow(base, x) for x in exponents]


def _pow(base, x):
    try:
        return math.pow(base, x)
    except OverflowError:
        return math.inf
    except ValueError:            # a negative base to a fractional power
        return math.nan


@export(tensor=False)
def eye(n, m=None, *, out=None, dtype=None, device=None, requires_grad=False,
        pin_memory=False):
    _check_device(device)
    _check_pin_memory("eye", pin_memory)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    return _finish(np.eye(n, m, dtype=_out_dt(out, dtype)), requires_grad, out, "eye")


@export(tensor=False)
def is_tensor(obj, /):
    return isinstance(obj, Tensor)
