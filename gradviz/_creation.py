"""Tensor creation: tensor, ones, zeros, full, empty, *_like, rand, randn, randint, randperm,
arange, linspace, eye, from_numpy, manual_seed. Random draws come from gradviz._random, which
gives torch's values for the same seed or Generator. Only the CPU exists: another device is
refused, never ignored."""

import numpy as np

from . import _dtype
from . import _random
from ._tensor import _RG_DTYPE_CREATE, Tensor, _make, _set_requires_grad

__all__ = ["tensor", "as_tensor", "from_numpy", "ones", "zeros", "full", "empty", "ones_like",
           "zeros_like", "full_like", "empty_like", "rand", "randn", "randint", "rand_like",
           "randn_like", "randint_like", "randperm", "arange", "linspace", "eye", "manual_seed",
           "seed", "initial_seed", "get_rng_state", "set_rng_state", "is_tensor", "numel"]

def manual_seed(seed):
    """Seed the default generator (rand, randn, randint, randperm, multinomial, normal_,
    uniform_, dropout, nn.init): the same numbers as torch after torch.manual_seed(seed)."""
    return _random.default_generator.manual_seed(seed)


def seed():
    return _random.default_generator.seed()


def initial_seed():
    return _random.default_generator.initial_seed()


def get_rng_state():
    return _random.default_generator.get_state()


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


def _finish(data, requires_grad):
    if data.ndim == 0:
        # A 0-d tensor keeps a NumPy scalar: arithmetic on it is several times faster than on
        # a 0-d array (it becomes an array the first time something views or edits it).
        data = data[()]
    t = _make(data)
    if requires_grad:
        _set_requires_grad(t, True, _RG_DTYPE_CREATE)
    return t


def _infer(data):
    """The NumPy dtype torch infers for Python data: float -> default, int -> int64."""
    if isinstance(data, bool):
        return np.bool_
    if isinstance(data, int):
        return np.int64
    if isinstance(data, float):
        return _dtype.get_default_dtype().np
    if isinstance(data, (list, tuple)):
        kinds = set()
        _kinds(data, kinds)
        if "f" in kinds:
            return _dtype.get_default_dtype().np
        if "i" in kinds:
            return np.int64
        if "b" in kinds:
            return np.bool_
        return _dtype.get_default_dtype().np
    return None


def _kinds(data, kinds):
    for x in data:
        if isinstance(x, (list, tuple)):
            _kinds(x, kinds)
        elif isinstance(x, Tensor):
            kinds.add(x._data.dtype.kind)
        elif isinstance(x, bool):
            kinds.add("b")
        elif isinstance(x, int):
            kinds.add("i")
        else:
            kinds.add("f")


def _plain(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_plain(x) for x in data]
    return data


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of data.

    >>> import gradviz as torch
    >>> torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    tensor([[1., 2.],
            [3., 4.]], requires_grad=True)
    """
    _check_device(device)
    npdt = _dtype.to_numpy_dtype(dtype)
    if isinstance(data, Tensor):
        arr = np.array(data._data, dtype=npdt or data._data.dtype, copy=True)
    elif isinstance(data, np.ndarray):
        arr = np.array(data, dtype=npdt, copy=True)
    elif isinstance(data, np.generic):
        arr = np.array(data, dtype=npdt)
    else:
        arr = np.array(_plain(data), dtype=npdt or _infer(data))
    if arr.dtype not in _dtype._FROM_NP:
        if arr.dtype.kind == "f":
            arr = arr.astype(np.float64)
        elif arr.dtype.kind in "iu":
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    return _finish(arr, requires_grad)


def as_tensor(data, dtype=None, device=None):
    _check_device(device)
    if isinstance(data, Tensor) and (dtype is None or data.dtype == dtype):
        return data
    if isinstance(data, np.ndarray) and dtype is None:
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def from_numpy(arr):
    """A tensor sharing memory with a NumPy array."""
    if arr.dtype not in _dtype._FROM_NP:
        _dtype.from_numpy_dtype(arr.dtype)
    return _make(arr)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _dt(dtype, default=None):
    if dtype is None:
        return default if default is not None else _dtype.get_default_dtype().np
    return _dtype.to_numpy_dtype(dtype)


def ones(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of ones: `torch.ones(2, 3)` or `torch.ones((2, 3))`."""
    _check_device(device)
    return _finish(np.ones(_size(size), dtype=_dt(dtype)), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    return _finish(np.zeros(_size(size), dtype=_dt(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    return _finish(np.zeros(_size(size), dtype=_dt(dtype)), requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _infer(fill_value)
    return _finish(np.full(_size((size,)) if isinstance(size, int) else tuple(size),
                           fill_value, dtype=_dt(dtype)), requires_grad)


def _like(t, dtype):
    return t._data.shape, (t._data.dtype if dtype is None else _dtype.to_numpy_dtype(dtype))


def ones_like(input, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    shape, dt = _like(input, dtype)
    return _finish(np.ones(shape, dtype=dt), requires_grad)


def zeros_like(input, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    shape, dt = _like(input, dtype)
    return _finish(np.zeros(shape, dtype=dt), requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    return zeros_like(input, dtype=dtype, requires_grad=requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    shape, dt = _like(input, dtype)
    return _finish(np.full(shape, fill_value, dtype=dt), requires_grad)


_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                 "uint8": "Byte", "bool": "Bool"}


def _float_dt(dtype, kernel):
    """The dtype of a floating-point draw; an integer dtype gets torch's kernel error."""
    dt = _dt(dtype)
    if dt.kind != "f":
        raise RuntimeError(f'"{kernel}" not implemented for \'{_SCALAR_NAMES[dt.name]}\'')
    return dt


def _sized(size, kw_size):
    if kw_size is not None:
        if size:
            raise TypeError("size given both as positional and keyword arguments")
        size = (kw_size,)
    return _size(size)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, **kw):
    """Samples of U[0, 1): torch's values for the same seed or generator.

    >>> import gradviz as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.rand(2)
    tensor([0.4963, 0.7682])
    """
    _check_device(device)
    shape = _sized(size, kw.pop("size", None))
    _no_extra("rand", kw)
    dt = _float_dt(dtype, "check_uniform_bounds")
    return _finish(_random.uniform(shape, dt, generator=generator), requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, **kw):
    """Samples of N(0, 1): torch's values for the same seed or generator."""
    _check_device(device)
    shape = _sized(size, kw.pop("size", None))
    _no_extra("randn", kw)
    dt = _float_dt(dtype, "normal_kernel_cpu")
    return _finish(_random.normal(shape, dt, generator=generator), requires_grad)


def _no_extra(name, kw):
    if kw:
        arg = next(iter(kw))
        raise NotImplementedError(f"gradviz: torch.{name}({arg}=...) is not implemented by "
                                  "gradviz's core; run with --backend torch to use PyTorch")


def rand_like(input, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    return rand(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    return randn(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Integers in [low, high): torch's values for the same seed or generator."""
    _check_device(device)
    if size is None and isinstance(high, (tuple, list)):
        # randint(high, size): torch's two-argument form.
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    dt = _dt(dtype, np.int64)
    vals = _random.randint(int(low), int(high), _size((size,)) if isinstance(size, int)
                           else tuple(size), generator=generator)
    return _finish(vals.astype(dt), requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                   requires_grad=requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0..n-1: torch's for the same seed or generator."""
    _check_device(device)
    return _finish(_random.randperm(int(n), generator=generator).astype(_dt(dtype, np.int64)),
                   requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """Values from start to end (exclusive): int64 for integers, float32 otherwise."""
    _check_device(device)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if dtype is None:
        dt = np.int64 if all(isinstance(v, int) for v in vals) else _dt(None)
    else:
        dt = _dt(dtype)
    n = int(np.ceil((vals[1] - vals[0]) / vals[2]))
    data = (vals[0] + np.arange(max(n, 0), dtype=np.float64) * vals[2]).astype(dt)
    return _finish(data, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    return _finish(np.linspace(start, end, steps).astype(_dt(dtype)), requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    _check_device(device)
    return _finish(np.eye(n, m, dtype=_dt(dtype)), requires_grad)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()
