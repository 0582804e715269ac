"""Tensor creation: tensor, ones, zeros, full, empty, *_like, rand, randn, randint, arange,
linspace, eye, from_numpy, manual_seed."""

import numpy as np

from . import _dtype
from ._tensor import _RG_DTYPE_CREATE, Tensor, _make, _set_requires_grad

__all__ = ["tensor", "as_tensor", "from_numpy", "ones", "zeros", "full", "empty", "ones_like",
           "zeros_like", "full_like", "empty_like", "rand", "randn", "randint", "rand_like",
           "randn_like", "arange", "linspace", "eye", "manual_seed", "seed", "initial_seed",
           "is_tensor", "numel"]

# torch's default initial seed, so an unseeded run is still reproducible.
_INITIAL_SEED = 67280421310721
_rng = [np.random.default_rng(_INITIAL_SEED), _INITIAL_SEED]


def manual_seed(seed):
    """Seed the random number generator (rand, randn, randint, nn.Linear init)."""
    _rng[0] = np.random.default_rng(int(seed))
    _rng[1] = int(seed)
    return _rng[0]


def seed():
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(s)
    return s


def initial_seed():
    return _rng[1]


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
    return _finish(np.ones(_size(size), dtype=_dt(dtype)), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _finish(np.zeros(_size(size), dtype=_dt(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return _finish(np.zeros(_size(size), dtype=_dt(dtype)), requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _infer(fill_value)
    return _finish(np.full(_size((size,)) if isinstance(size, int) else tuple(size),
                           fill_value, dtype=_dt(dtype)), requires_grad)


def _like(t, dtype):
    return t._data.shape, (t._data.dtype if dtype is None else _dtype.to_numpy_dtype(dtype))


def ones_like(input, dtype=None, device=None, requires_grad=False):
    shape, dt = _like(input, dtype)
    return _finish(np.ones(shape, dtype=dt), requires_grad)


def zeros_like(input, dtype=None, device=None, requires_grad=False):
    shape, dt = _like(input, dtype)
    return _finish(np.zeros(shape, dtype=dt), requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad=False):
    return zeros_like(input, dtype=dtype, requires_grad=requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    shape, dt = _like(input, dtype)
    return _finish(np.full(shape, fill_value, dtype=dt), requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """Uniform [0, 1) samples (gradviz's own generator: values differ from torch's)."""
    dt = _dt(dtype)
    return _finish(_rng[0].random(_size(size)).astype(dt), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """Standard normal samples (gradviz's own generator: values differ from torch's)."""
    dt = _dt(dtype)
    return _finish(_rng[0].standard_normal(_size(size)).astype(dt), requires_grad)


def rand_like(input, dtype=None, requires_grad=False):
    return rand(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input, dtype=None, requires_grad=False):
    return randn(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None, requires_grad=False):
    if size is None and isinstance(high, (tuple, list)):
        # randint(high, size): torch's two-argument form.
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    return _finish(_rng[0].integers(low, high, size=tuple(size)).astype(
        _dt(dtype, np.int64)), requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """Values from start to end (exclusive): int64 for integers, float32 otherwise."""
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
    return _finish(np.linspace(start, end, steps).astype(_dt(dtype)), requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    return _finish(np.eye(n, m, dtype=_dt(dtype)), requires_grad)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()
