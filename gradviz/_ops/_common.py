"""Operand coercion shared by the ops: torch's promotion of Python scalars and NumPy values, grad-
mode checks, torch's broadcast error.
"""

import numpy as np

from .. import _dtype
from .._dtype import _TORCH_SCALAR, _int_overflow  # noqa: F401 - the ops' import
from .._fperr import quietly
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import _state


_SCALAR_TYPES = (int, float, bool)
_ndarray = np.ndarray
# The NumPy scalars of a floating dtype: an op's 0-d result is one of these (reading a NumPy
# scalar's .dtype costs about as much as the op's arithmetic, checking its type a tenth).
_FLOAT_SCALARS = frozenset((np.float16, np.float32, np.float64))


# ----- Operand coercion --------------------------------------------------------------------

def _default_float():
    return _dtype._default[0].np


def _coerce(a, b):
    """Arrays (or Python scalars) a and b cast to torch's result dtype of the pair."""
    tb = type(b)
    if tb is float:
        if a.dtype.kind == "f":
            return a, b
        return a.astype(_default_float()), b
    if tb is int:
        kind = a.dtype.kind
        if kind == "f":
            if not -(1 << 63) <= b < (1 << 64):
                raise _int_overflow(b)      # torch's Scalar is 64 bits
            return a, b
        if kind != "i" and kind != "u":
            a = a.astype(np.int64)
        if 0 <= b <= 127:       # fits every integer dtype: the common case, without a call
            return a, b
        return a, _wrap_int(b, a.dtype)
    if tb is bool:
        return a, b
    if a.dtype is b.dtype:
        return a, b
    rt = _dtype.result_type((a, b))
    # a float64 0-d tensor's 1e300 into float32 is inf, silently
    return (a if a.dtype == rt else quietly(a.astype, rt)), \
        (b if b.dtype == rt else quietly(b.astype, rt))


_INT_RANGES = {}


def _int_range(dt):
    """(lowest, highest, bits) of the integer dtype dt."""
    r = _INT_RANGES.get(dt)
    if r is None:
        info = np.iinfo(dt)
        r = _INT_RANGES[dt] = (int(info.min), int(info.max), info.bits)
    return r


def _wrap_int(b, dt):
    """A Python int b as torch converts it to the integer dtype dt for arithmetic and
    comparisons: C's cast, modulo 2**bits (uint8 + -3 adds 253); NumPy raises instead."""
    lo, hi, bits = _int_range(dt)
    if lo <= b <= hi:
        return b
    if not -(1 << 63) <= b < (1 << 64):
        raise _int_overflow(b)
    b %= 1 << bits
    return b - (1 << bits) if b > hi else b


def _stored(v, dt, half=True):
    """A Python number v as torch's checked conversion stores it in a tensor of dtype dt
    (fill_, clamp's bounds, alpha, item assignment, where's number): an int through
    _checked_int, a finite number beyond the range of a float16 or float32 dt, or a non-finite
    or out-of-range float into an integer dt, refused with torch's error. half=False: torch
    stores any float into float16 unchecked (item assignment, where)."""
    tv = type(v)
    if tv is int:
        if dt.kind in "iu":
            return _checked_int(v, dt)
        if not -(1 << 63) <= v < (1 << 64):
            raise _int_overflow(v)
    elif tv is not float and not isinstance(v, float):      # np.float64 is a float
        return v
    kind = dt.kind
    if kind == "f":
        top = _FLOAT_MAX.get(dt) if half or dt is not _F16 else None
        if top is not None and abs(v) > top[0] and v - v == 0:     # finite and too large
            raise _overflow(top[1])
    elif kind in "iu" and not (v - v == 0 and _int_range(dt)[0] <= v <= _int_range(dt)[1]):
        raise _overflow("int" if dt == np.int32 else dt.name + "_t")
    return v


# The largest finite value and torch's C type name of the narrow float dtypes: torch refuses a
# finite number beyond it (65519. rounds to float16's 65504 but is refused all the same).
_FLOAT_MAX = {np.dtype(np.float16): (65504.0, "c10::Half"),
              np.dtype(np.float32): (float(np.finfo(np.float32).max), "float")}


def _overflow(type_name):
    return RuntimeError(f"value cannot be converted to type {type_name} without overflow")


def _checked_int(b, dt):
    """A Python int b as torch's checked conversion stores it in the integer dtype dt (fill_,
    clamp's bounds, item assignment): refused outside [lowest, highest] (an unsigned dtype
    also takes -highest..-1, wrapped), else wrapped."""
    lo, hi, _ = _int_range(dt)
    if lo <= b <= hi:
        return b
    if not -(1 << 63) <= b < (1 << 64):
        raise _int_overflow(b)
    if lo == 0 and -hi <= b < 0:
        return _wrap_int(b, dt)
    raise _overflow("int" if dt == np.int32 else dt.name + "_t")      # torch's C type names


def _operand(x):
    """(value, tensor or None) for an operand: Tensors give their data, a NumPy scalar the
    Python number torch reads it as."""
    if isinstance(x, Tensor):
        return x._data, x
    tx = type(x)
    if tx is float or tx is int or tx is bool:
        return x, None
    if isinstance(x, (complex, np.complexfloating)):
        raise NotImplementedError(_COMPLEX)     # torch computes in complex64; never a guess
    if isinstance(x, np.generic):
        # torch reads a NumPy scalar as a Python number (np.float64 is a float subclass, so
        # this comes before the isinstance below): a float32 tensor times np.float64(1.5)
        # stays float32. np.bool_ is read as a float, as torch 2.13 does.
        return (float(x) if tx is np.bool_ else x.item()), None
    if isinstance(x, _SCALAR_TYPES):
        return x, None
    # Neither a Tensor nor a number (a NumPy array, a str, None): torch's operators return
    # NotImplemented for it, so that Python and NumPy take over (`t + ndarray` is NumPy's sum
    # wrapped by Tensor.__array_wrap__, `ndarray + t` a TypeError); the operators here catch
    # this TypeError, and their torch.X forms refuse it (gradviz._registry.refusing).
    raise TypeError(f"argument 'other' must be Tensor, not {_type_name(x)}")


def _type_name(x):
    """The name torch's argument parser prints for x's type (CPython's tp_name): a class
    written in Python by its name, one written in C by its dotted path ('numpy.ndarray'), a
    dtype as torch's ('torch.dtype')."""
    tp = type(x)
    if tp is _dtype.dtype:
        return "torch.dtype"
    if tp.__flags__ & _HEAPTYPE or tp.__module__ == "builtins":
        return tp.__name__
    return f"{tp.__module__}.{tp.__qualname__}"


_HEAPTYPE = 1 << 9      # CPython's Py_TPFLAGS_HEAPTYPE: a class made by a class statement


def _invalid_combination(name, args, kwargs):
    """torch's parser error for arguments no signature of `name` takes: the types of the
    positional arguments, then the keywords last to first, each followed by ", " when no
    positional argument came (torch's own punctuation: `got (to=int, from_=float, )`)."""
    given = [_type_name(a) for a in args]
    named = [f"{k}={_type_name(v)}" for k, v in reversed(kwargs.items())]
    got = ", ".join(given + named) if given else "".join(k + ", " for k in named)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     "but expected one of:")


_COMPLEX = ("gradviz: complex numbers are not implemented by gradviz's core; run with "
            "--backend torch to use PyTorch")


def _operands(self, other):
    """(self's array, other's value, other's tensor or None), cast to torch's result dtype of
    the pair: _operand and _coerce in one call, for the binary ops (one call fewer per op)."""
    a = self._data
    if isinstance(other, Tensor):
        b = other._data
        ta = type(a)
        if ta is type(b) and ta is not _ndarray:
            return a, b, other      # NumPy scalars of one type (a scalar's .dtype is slow)
        if a.dtype is b.dtype:
            return a, b, other
        a, b = _coerce(a, b)
        return a, b, other
    if type(other) is float and a.dtype.kind == "f":
        return a, other, None       # a float tensor and a Python float: _coerce's first case
    b, ot = _operand(other)
    a, b = _coerce(a, b)
    return a, b, ot


_F16 = np.dtype(np.float16)


def _one_number(a, b, ot):
    """Whether a float16 a meets one number torch's mul and div kernels read in float32: a
    Python or NumPy number, or a 0-d tensor of another dtype (cast by _coerce, so b is no longer
    its data). Cheap for two tensors of one dtype, the common case: no dtype is read."""
    return (ot is None or b is not ot._data) and a.dtype is _F16


def _half_opmath(ufunc, a, b, ot):
    """ufunc(a, b) for a float16 array a as torch's CPU mul and div kernels compute it: when the
    second operand is one number (a Python or NumPy number b, or a 0-d tensor ot), in float32
    with that number read as a float32, rounded to float16 once (float16 1e-3 * 1e5 is 100.06,
    where NumPy rounds 1e5 to float16's inf first). Otherwise elementwise in float16."""
    if ot is not None:
        if ot._data.ndim:
            return quietly(ufunc, a, b)
        b = ot._data
    elif type(b) is np.ndarray:
        return quietly(ufunc, a, b)
    return quietly(_in_float32, ufunc, a, b)


def _in_float32(ufunc, a, b):
    return ufunc(a.astype(np.float32), np.float32(b)).astype(np.float16)


def _needs(*tensors):
    # grad mode read last: inside no_grad it is the calling thread's (grad_mode._PerThread)
    for t in tensors:
        if t is not None and t._rg:
            return _state.enabled
    return False


def _broadcast_error(a, b, exc, c=None):
    """torch's RuntimeError for operands that do not broadcast (NumPy raises ValueError), or
    `exc` itself when the shapes were not the problem. `c` is where()'s condition."""
    shapes = (np.shape(a), np.shape(b)) if c is None else (np.shape(c), np.shape(a), np.shape(b))
    # torch's infer_size, operand by operand: "a" is the shape so far, "b" the next operand.
    sa = shapes[0]
    for sb in shapes[1:]:
        n = max(len(sa), len(sb))
        merged = [0] * n
        for i in range(n - 1, -1, -1):
            x = sa[i - n + len(sa)] if i - n + len(sa) >= 0 else 1
            y = sb[i - n + len(sb)] if i - n + len(sb) >= 0 else 1
            if x != y and x != 1 and y != 1:
                return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor "
                                    f"b ({y}) at non-singleton dimension {i}")
            merged[i] = x if y == 1 else y
        sa = tuple(merged)
    return exc


def _as_tensor(x, like=None):
    if isinstance(x, Tensor):
        return x
    from .._creation import tensor
    dt = None if like is None else like.dtype
    return tensor(x, dtype=dt)


def _dims(dim, ndim):
    if isinstance(dim, (list, tuple)):
        return tuple(sorted(_wrap_dim(d, ndim) for d in dim))
    return (_wrap_dim(dim, ndim),)


def _not_implemented(op, arg):
    """The error for an argument gradviz's core does not implement (never ignored)."""
    return NotImplementedError(f"gradviz: torch.{op}({arg}=...) is not implemented by gradviz's "
                               "core; run with --backend torch to use PyTorch")
