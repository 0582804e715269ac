"""Forward implementations of every operation, recording a node from the derivative table.

Each op computes its result with NumPy and, when grad mode is on and an input requires grad,
calls `record` with its table entry, its tensor inputs (in next_functions order) and the values
its formulas may save. Python scalars never upcast a float32 tensor (torch's promotion, see
gradviz._dtype). The functions are installed as Tensor methods at the end of the module.
"""

import operator

import numpy as np

from . import _dtype, return_types
from ._derivatives import DERIVATIVES as D
from ._derivatives import is_transposed
from ._tensor import Tensor, _make, _wrap_dim
from .autograd.graph import CopySlices, edge_of, record, record_outputs
from .autograd.grad_mode import _state

_SCALAR_TYPES = (int, float, bool)


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
        if a.dtype.kind in "iuf":
            return a, b
        return a.astype(np.int64), b
    if tb is bool:
        return a, b
    if a.dtype is b.dtype:
        return a, b
    rt = _dtype.result_type((a, b))
    return (a if a.dtype == rt else a.astype(rt)), (b if b.dtype == rt else b.astype(rt))


def _operand(x):
    """(value, tensor or None) for an operand: Tensors give their data."""
    if isinstance(x, Tensor):
        return x._data, x
    if isinstance(x, _SCALAR_TYPES):
        return x, None
    if isinstance(x, np.generic):
        return x.item(), None
    if isinstance(x, np.ndarray):
        return x, None
    raise TypeError(f"unsupported operand type: '{type(x).__name__}'")


def _needs(*tensors):
    if not _state.enabled:
        return False
    for t in tensors:
        if t is not None and t._rg:
            return True
    return False


def _broadcast_error(a, b, exc, c=None):
    """torch's RuntimeError for operands that do not broadcast (NumPy raises ValueError), or
    `exc` itself when the shapes were not the problem. `c` is where()'s condition."""
    shapes = (np.shape(a), np.shape(b)) if c is None else (np.shape(c), np.shape(a), np.shape(b))
    # torch's infer_size, operand by operand: "a" is the shape so far, "b" the next operand.
    sa = shapes[0]
    for sb in shapes[1:]:
        n = len(sa) if len(sa) > len(sb) else len(sb)     # (this module defines max)
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
    from ._creation import tensor
    dt = None if like is None else like.dtype
    return tensor(x, dtype=dt)


# ----- Arithmetic --------------------------------------------------------------------------

def _binary(entry, ufunc, self, other, args):
    a, st = _operand(self)
    b, ot = _operand(other)
    if st is None:
        raise TypeError("expected a Tensor")
    a, b = _coerce(a, b)
    try:
        out = _make(ufunc(a, b))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    if _needs(st, ot):
        record(entry, out, (st, ot), args(st, ot, self, other))
    return out


_E_ADD, _E_SUB, _E_MUL, _E_DIV = D["add"], D["sub"], D["mul"], D["div"]


def add(self, other, alpha=1):
    """self + alpha * other (AddBackward0)."""
    a, st = self._data, self
    b, ot = _operand(other)
    a, b = _coerce(a, b)
    if alpha != 1:
        # Scale the value only: the node's formula applies alpha to other's gradient.
        b = _scaled(a, b, alpha)
    try:
        out = _make(a + b)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    if _state.enabled and (st._rg or (ot is not None and ot._rg)):
        record(_E_ADD, out, (st, ot), (alpha,))
    return out


def sub(self, other, alpha=1):
    """self - alpha * other (SubBackward0)."""
    b, ot = _operand(other)
    if self._data.dtype.kind == "b" or type(b) is bool or (
            ot is not None and ot._data.dtype.kind == "b"):
        _bool_sub_error(self, other)     # torch refuses what NumPy would compute
    a, b = _coerce(self._data, b)
    if alpha != 1:
        b = _scaled(a, b, alpha)
    try:
        out = _make(a - b)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    if _state.enabled and (self._rg or (ot is not None and ot._rg)):
        record(_E_SUB, out, (self, ot), (alpha,))
    return out


def _scaled(a, b, alpha):
    if type(alpha) is float and a.dtype.kind in "iub":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    return b * alpha


def _bool_sub_error(self, other):
    if self._data.dtype.kind == "b" and isinstance(other, Tensor) and \
            other._data.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If "
                       "you are trying to invert a mask, use the `~` or `logical_not()` "
                       "operator instead.")


def rsub(self, other, alpha=1):
    """other - alpha * self (RsubBackward1), for `2 - a`."""
    if self._data.dtype.kind == "b" or type(other) is bool:
        _bool_sub_error(self, other)
    b, _ = _operand(other)
    a, b = _coerce(self._data, b)
    try:
        out = _make(b - a * alpha if alpha != 1 else b - a)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    if _state.enabled and self._rg:
        record(D["rsub"], out, (self,), (alpha,))
    return out


def mul(self, other):
    """self * other (MulBackward0)."""
    b, ot = _operand(other)
    a, b = _coerce(self._data, b)
    try:
        out = _make(a * b)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    if _state.enabled and (self._rg or (ot is not None and ot._rg)):
        record(_E_MUL, out, (self, ot), (self, other))
    return out


def mul_scalar(self, other):
    """self * a Python number, recorded as torch's mul(Tensor, Scalar) (MulBackward1): only
    derivative formulas call it (a user's `t * 2` is MulBackward0, as in torch)."""
    out = _make(self._data * other)
    if _state.enabled and self._rg:
        record(D["mul_scalar"], out, (self,), (other,))
    return out


def sub_scalar(self, other):
    """self - a Python number as torch's sub(Tensor, Scalar) (SubBackward1), for formulas."""
    out = _make(self._data - other)
    if _state.enabled and self._rg:
        record(D["sub_scalar"], out, (self,), ())
    return out


def div(self, other, rounding_mode=None):
    """self / other (DivBackward0); integer inputs give a float result, as in torch."""
    b, ot = _operand(other)
    a, b = _coerce(self._data, b)
    if rounding_mode is not None:
        return _div_rounded(self, ot, a, b, rounding_mode)
    if a.dtype.kind != "f":
        # Integer true division gives the default float dtype, as in torch (not float64).
        a = a.astype(_default_float())
        if type(b) is not float and np.result_type(b).kind != "f":
            b = np.asarray(b, dtype=a.dtype) if type(b) is np.ndarray else a.dtype.type(b)
    try:
        out = _make(np.true_divide(a, b))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    if _state.enabled and (self._rg or (ot is not None and ot._rg)):
        record(_E_DIV, out, (self, ot), (self, other))
    return out


def _div_rounded(self, ot, a, b, rounding_mode):
    """div with rounding_mode "floor" or "trunc" (DivBackward2: zero gradients, as torch)."""
    if rounding_mode not in ("floor", "trunc"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    integral = a.dtype.kind in "iub" and np.result_type(b).kind in "iub"
    if integral and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            if rounding_mode == "floor":
                r = np.floor_divide(a, b)
            else:
                r = np.trunc(np.true_divide(a, b))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    rt = _dtype.result_type((a, b))
    out = _make(np.asarray(r, dtype=rt) if np.ndim(r) else rt.type(r))
    if _state.enabled and (self._rg or (ot is not None and ot._rg)):
        record(D["div_mode"], out, (self, ot), (rounding_mode,))
    return out


def floor_divide(self, other):
    """self // other: torch records a node without a derivative (NotImplemented)."""
    if not isinstance(self, Tensor):
        return _rfloordiv(other, self)
    b, ot = _operand(other)
    a, b = _coerce(self._data, b)
    out = _div_rounded(self, None, a, b, "floor")
    if _needs(self, ot):
        # A Python number other is floor_divide.Scalar in torch: one edge only.
        record(D["floor_divide"], out, (self, ot) if ot is not None else (self,), ())
    return out


def _rfloordiv(self, other):
    """other // self for a Python number other."""
    b, _ = _operand(other)
    a, b = _coerce(self._data, b)
    if a.dtype.kind in "iub" and np.any(a == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _make(np.floor_divide(b, a))
    if _needs(self):
        record(D["floor_divide"], out, (self,), ())
    return out


def remainder(self, other):
    """self % other, with the sign of other (RemainderBackward0 / RemainderBackward1)."""
    if not isinstance(self, Tensor):
        return _rmod(other, self)
    b, ot = _operand(other)
    a, b = _coerce(self._data, b)
    if a.dtype.kind in "iub" and np.result_type(b).kind in "iub" and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = _make(np.remainder(a, b))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    if _needs(self, ot):
        if ot is None:
            record(D["remainder_scalar"], out, (self,), ())
        else:
            record(D["remainder"], out, (self, ot), (self, ot))
    return out


def _rmod(self, other):
    """other % self for a Python number other: torch has no derivative for it."""
    b, _ = _operand(other)
    a, b = _coerce(self._data, b)
    if a.dtype.kind in "iub" and np.any(a == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _make(np.remainder(b, a))
    if _needs(self):
        record(D["rremainder"], out, (self,), ())
    return out


def rdiv(self, other):
    """other / self: torch computes reciprocal(self) * other."""
    return mul(reciprocal(self), other)


def reciprocal(self):
    a = _floatify(self._data)
    with np.errstate(divide="ignore"):
        out = _make(np.reciprocal(a))
    if _needs(self):
        record(D["reciprocal"], out, (self,), ())
    return out


def pow(self, exponent):
    """self ** exponent: PowBackward0 (scalar exponent) or PowBackward1 (tensor exponent)."""
    if not isinstance(self, Tensor):
        return _rpow(exponent, self)
    e, et = _operand(exponent)
    a, e = _coerce(self._data, e)
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = _make(_power(a, e))
    except ValueError as exc:
        raise _broadcast_error(a, e, exc) from None
    if _needs(self, et):
        if et is None:
            record(D["pow"], out, (self,), (self, exponent))
        else:
            record(D["pow_tensor"], out, (self, et), (self, et))
    return out


def _power(a, e):
    """np.power, with torch's integer rule for negative exponents held in a tensor: 1 and -1
    keep their value (by parity), every other base gives 0 (NumPy refuses them all)."""
    if np.ndim(e) and e.dtype.kind in "iu" and np.result_type(a).kind in "iu" and (e < 0).any():
        neg = e < 0
        r = np.power(a, np.where(neg, 0, e))
        odd = (e % 2) != 0
        low = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
        return np.where(neg, low, r).astype(r.dtype, copy=False)
    if type(e) is int and e < 0 and np.result_type(a).kind in "iu":
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return np.power(a, e)


def _rpow(self, base):
    """base ** self for a Python scalar base (PowBackward2)."""
    b, _ = _operand(base)
    a, b = _coerce(self._data, b)
    if type(b) is int and a.dtype.kind in "iu":
        b = np.int64(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _make(_power(np.asarray(b, dtype=a.dtype) if np.ndim(a) else a.dtype.type(b), a))
    if _needs(self):
        record(D["pow_scalar"], out, (self,), (base, self))
    return out


def neg(self):
    if self._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    out = _make(np.negative(self._data))
    if _state.enabled and self._rg:
        record(D["neg"], out, (self,), ())
    return out


def _floatify(a):
    return a if a.dtype.kind == "f" else a.astype(_default_float())


def _unary(entry, ufunc, self, floating=True, quiet=False):
    """One elementwise function. torch never warns about inf/nan results, so NumPy's warnings
    are silenced, except for functions that cannot raise them (`quiet`): np.errstate costs
    about a microsecond, more than a small op itself."""
    a = self._data
    if floating and a.dtype.kind != "f":
        a = a.astype(_default_float())
    if quiet:
        out = _make(ufunc(a))
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = _make(ufunc(a))
    if _state.enabled and self._rg:
        record(entry, out, (self,), (self,))
    return out


_E_EXP, _E_LOG, _E_SQRT = D["exp"], D["log"], D["sqrt"]
_E_SIN, _E_COS, _E_TANH, _E_SIG, _E_RELU = D["sin"], D["cos"], D["tanh"], D["sigmoid"], D["relu"]


def exp(self):
    return _unary(_E_EXP, np.exp, self)


def log(self):
    return _unary(_E_LOG, np.log, self)


def sqrt(self):
    return _unary(_E_SQRT, np.sqrt, self)


def sin(self):
    return _unary(_E_SIN, np.sin, self)


def cos(self):
    return _unary(_E_COS, np.cos, self)


def tanh(self):
    return _unary(_E_TANH, np.tanh, self, quiet=True)


def _np_sigmoid(a):
    # 1 / (1 + exp(-x)) overflows to 0 for large negative x harmlessly; keep the dtype.
    with np.errstate(over="ignore"):
        return np.reciprocal(1 + np.exp(-a))


def sigmoid(self):
    return _unary(_E_SIG, _np_sigmoid, self)


def _np_relu(a):
    return np.maximum(a, a.dtype.type(0))


def relu(self):
    return _unary(_E_RELU, _np_relu, self, floating=False, quiet=True)


def abs(self):
    return _unary(D["abs"], np.abs, self, floating=False, quiet=True)


def _zero_grad_unary(entry, ufunc, self, args=()):
    """An op whose derivative is 0 almost everywhere: torch still records it (SignBackward0,
    FloorBackward0, ...), so that backward reaches the inputs with zeros."""
    out = _make(ufunc(self._data))
    if _state.enabled and self._rg:
        record(entry, out, (self,), args)
    return out


def sign(self):
    return _zero_grad_unary(D["sign"], np.sign, self)


def square(self):
    return pow(self, 2)


def clamp(self, min=None, max=None):
    """Clamp into [min, max]: ClampBackward1 for scalar bounds, ClampBackward0 for tensors."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    a = self._data
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = None if min is None else _operand(min)[0]
        hi = None if max is None else _operand(max)[0]
        r = a
        if lo is not None:
            r = np.maximum(r, lo)
        if hi is not None:
            r = np.minimum(r, hi)
        rt = _dtype.result_type([a] + [b for b in (lo, hi) if b is not None])
        out = _make(np.asarray(r, dtype=rt) if np.ndim(r) else rt.type(r))
        mt = min if isinstance(min, Tensor) else None
        xt = max if isinstance(max, Tensor) else None
        if _needs(self, mt, xt):
            record(D["clamp_tensor"], out, (self, mt, xt), (self, min, max))
        return out
    rt = _dtype.result_type([a] + [b for b in (min, max) if b is not None])
    a = a if a.dtype == rt else a.astype(rt)
    out = _make(np.clip(a, min, max).astype(rt, copy=False))
    if _needs(self):
        record(D["clamp"], out, (self,), (self, min, max))
    return out


def clamp_min(self, min):
    return clamp(self, min=min)


def clamp_max(self, max):
    return clamp(self, max=max)


def maximum(self, other):
    return _binary(D["maximum"], np.maximum, self, other, lambda st, ot, s, o: (st, ot))


def minimum(self, other):
    return _binary(D["minimum"], np.minimum, self, other, lambda st, ot, s, o: (st, ot))


def where(condition, input, other):
    """input where condition else other (WhereBackward0)."""
    c = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # Two Python numbers: torch's result dtype for them (int64, or the default float).
        rt = _dtype.result_type((input, other))
        return _make(np.where(c, rt.type(input), rt.type(other)))
    a, it = _operand(input)
    b, ot = _operand(other)
    if it is None:
        b2, a2 = _coerce(b, a)
        a, b = a2, b2
    else:
        a, b = _coerce(a, b)
    try:
        out = _make(np.where(c, a, b))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc, c) from None
    if _needs(it, ot):
        record(D["where"], out, (it, ot), (c,))
    return out


def clone(self, memory_format=None):
    out = _make(np.array(self._data, copy=True))
    if _needs(self):
        record(D["clone"], out, (self,), ())
    return out


def contiguous(self, memory_format=None):
    if self.is_contiguous():
        return self
    return clone(self)


def to(self, *args, **kwargs):
    """Change dtype (ToCopyBackward0); devices other than the CPU are not available."""
    dt = kwargs.get("dtype")
    for a in args:
        if isinstance(a, _dtype.dtype):
            dt = a
        elif isinstance(a, Tensor):
            dt = a.dtype
    if dt is None or dt.np == self._data.dtype:
        return self
    out = _make(np.asarray(self._data).astype(dt.np))
    if _needs(self) and dt.is_floating_point:
        record(D["to_copy"], out, (self,), ())
    return out


# ----- Comparisons (never recorded) --------------------------------------------------------

def _compare(ufunc):
    def op(self, other):
        b, _ = _operand(other)
        a, b = _coerce(self._data, b)
        try:
            return _make(ufunc(a, b))
        except ValueError as exc:
            raise _broadcast_error(a, b, exc) from None
    op.__name__ = ufunc.__name__
    return op


eq, ne, lt, le, gt, ge = (_compare(f) for f in (np.equal, np.not_equal, np.less, np.less_equal,
                                                np.greater, np.greater_equal))


def logical_not(self):
    return _make(np.logical_not(self._data))


def _bitwise(ufunc):
    def op(self, other):
        b, _ = _operand(other)
        return _make(ufunc(self._data, b))
    return op


and_, or_, xor = _bitwise(np.bitwise_and), _bitwise(np.bitwise_or), _bitwise(np.bitwise_xor)


def isnan(self):
    return _make(np.isnan(self._data))


def isinf(self):
    return _make(np.isinf(self._data))


def isfinite(self):
    return _make(np.isfinite(self._data))


def equal(self, other):
    return self._data.shape == other._data.shape and bool(np.all(self._data == other._data))


def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(self._data, _operand(other)[0], rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


def floor(self):
    return _zero_grad_unary(D["floor"], np.floor, self)


def ceil(self):
    return _zero_grad_unary(D["ceil"], np.ceil, self)


def trunc(self):
    return _zero_grad_unary(D["trunc"], np.trunc, self)


def round(self, decimals=0):
    if decimals == 0:
        return _zero_grad_unary(D["round"], np.round, self)
    out = _make(np.round(self._data, decimals))
    if _state.enabled and self._rg:
        record(D["round_decimals"], out, (self,), (decimals,))
    return out


# ----- Reductions --------------------------------------------------------------------------

def _dims(dim, ndim):
    if isinstance(dim, (list, tuple)):
        return tuple(sorted(_wrap_dim(d, ndim) for d in dim))
    return (_wrap_dim(dim, ndim),)


def sum(self, dim=None, keepdim=False, dtype=None):
    a = self._data
    if dtype is not None:
        a = a.astype(_dtype.to_numpy_dtype(dtype))
    elif a.dtype.kind in "bi" and a.dtype != np.int64:
        a = a.astype(np.int64)
    if dim is None or dim == ():
        out = _make(np.sum(a) if not keepdim else np.sum(a, keepdims=True))
        if _needs(self):
            if keepdim:
                record(D["sum_dim"], out, (self,), (a.shape, tuple(range(a.ndim)), True))
            else:
                record(D["sum"], out, (self,), (a.shape,))
        return out
    dims = _dims(dim, a.ndim) if a.ndim else ()    # a 0-d tensor accepts dim 0 or -1
    out = _make(np.sum(a, axis=dims, keepdims=keepdim) if a.ndim else a)
    if _needs(self):
        record(D["sum_dim"], out, (self,), (a.shape, dims, keepdim))
    return out


def _need_float(a, name):
    if a.dtype.kind != "f":
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: "
                           f"{_TORCH_SCALAR[a.dtype.name]}")


_TORCH_SCALAR = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                 "uint8": "Byte", "bool": "Bool", "float32": "Float", "float64": "Double",
                 "float16": "Half"}


def mean(self, dim=None, keepdim=False, dtype=None):
    a = self._data
    if dtype is not None:
        a = a.astype(_dtype.to_numpy_dtype(dtype))
    _need_float(a, "mean")
    if dim is None:
        out = _make(np.mean(a, dtype=a.dtype) if not keepdim else np.mean(a, keepdims=True))
        if _needs(self):
            record(D["mean"], out, (self,), (a.shape, a.size))
        return out
    dims = _dims(dim, a.ndim) if a.ndim else ()
    out = _make(np.mean(a, axis=dims, keepdims=keepdim, dtype=a.dtype) if a.ndim else a)
    if _needs(self):
        count = int(np.prod([a.shape[d] for d in dims])) if a.ndim else 1
        record(D["mean_dim"], out, (self,), (a.shape, dims, keepdim, count))
    return out


def prod(self, dim=None, keepdim=False, dtype=None):
    a = self._data
    if a.dtype.kind in "bi" and a.dtype != np.int64:
        a = a.astype(np.int64)
    if dim is None:
        out = _make(np.prod(a))
        if _needs(self):
            record(D["prod"], out, (self,), (self,))
        return out
    d = _wrap_dim(dim, a.ndim)
    out = _make(np.prod(a, axis=d, keepdims=keepdim) if a.ndim else a)
    if _needs(self):
        record(D["prod_dim"], out, (self,), (self, d, keepdim))
    return out


def _extreme(self, dim, keepdim, is_max, other):
    if other is not None or isinstance(dim, Tensor):
        return (maximum if is_max else minimum)(self, dim if other is None else other)
    a = self._data
    if dim is None:
        if a.size == 0:
            raise RuntimeError(f"{'max' if is_max else 'min'}(): Expected reduction dim to be "
                               "specified for input.numel() == 0. Specify the reduction dim "
                               "with the 'dim' argument.")
        out = _make(np.max(a) if is_max else np.min(a))
        if _needs(self):
            record(D["max" if is_max else "min"], out, (self,), (self,))
        return out
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        idx = np.int64(0)
        vals = a
    else:
        idx = np.argmax(a, axis=d) if is_max else np.argmin(a, axis=d)
        vals = np.take_along_axis(a, np.expand_dims(idx, d), d)
        if not keepdim:
            vals = np.squeeze(vals, d)
        else:
            idx = np.expand_dims(idx, d)
    values = _make(vals)
    indices = _make(np.asarray(idx, dtype=np.int64) if np.ndim(idx) else np.int64(idx))
    if _needs(self):
        record(D["max_dim" if is_max else "min_dim"], values, (self,),
               (a.shape, d, keepdim, indices))
    return (return_types.max if is_max else return_types.min)(values, indices)


def max(self, dim=None, keepdim=False, *, other=None):
    return _extreme(self, dim, keepdim, True, other)


def min(self, dim=None, keepdim=False, *, other=None):
    return _extreme(self, dim, keepdim, False, other)


def argmax(self, dim=None, keepdim=False):
    a = self._data
    if dim is None:
        return _make(np.int64(np.argmax(a)))
    return _make(np.argmax(a, axis=_wrap_dim(dim, a.ndim), keepdims=keepdim).astype(np.int64))


def argmin(self, dim=None, keepdim=False):
    a = self._data
    if dim is None:
        return _make(np.int64(np.argmin(a)))
    return _make(np.argmin(a, axis=_wrap_dim(dim, a.ndim), keepdims=keepdim).astype(np.int64))


def _softmax_input(self, dim, dtype, kernel):
    if dtype is not None:
        self = to(self, dtype)
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    if a.dtype.kind != "f":
        last = "lastdim_" if d == a.ndim - 1 or a.ndim == 0 else ""
        raise NotImplementedError(f'"{kernel}_{last}kernel_impl" not implemented for '
                                  f"'{_TORCH_SCALAR[a.dtype.name]}'")
    return self, a, d


def softmax(self, dim, dtype=None):
    self, a, d = _softmax_input(self, dim, dtype, "softmax")
    if a.ndim == 0:
        r = np.ones_like(a)
    else:
        e = np.exp(a - np.max(a, axis=d, keepdims=True))
        r = e / np.sum(e, axis=d, keepdims=True)
    out = _make(r)
    if _needs(self):
        record(D["softmax"], out, (self,), (d,))
    return out


def log_softmax(self, dim, dtype=None):
    self, a, d = _softmax_input(self, dim, dtype, "log_softmax")
    if a.ndim == 0:
        r = np.zeros_like(a)
    else:
        m = np.max(a, axis=d, keepdims=True)
        r = a - m - np.log(np.sum(np.exp(a - m), axis=d, keepdims=True))
    out = _make(r)
    if _needs(self):
        record(D["log_softmax"], out, (self,), (d,))
    return out


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


def mm(self, mat2):
    if self.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x"
                           f"{self.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    return _mm_like(D["mm"], self, mat2)


def mv(self, vec):
    if self.dim() != 2 or vec.dim() != 1:
        raise RuntimeError("vector + matrix @ vector expected, got "
                           f"{vec.dim()}, {self.dim()}, {vec.dim()}")
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self.shape[0]}), mat "
                           f"({self.shape[0]}x{self.shape[1]}), vec ({vec.shape[0]})")
    return _mm_like(D["mv"], self, vec)


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


def _squeeze0_(self):
    """self.squeeze_(0) on a fresh (non-view) result: an in-place edit that rewrites its
    history as SqueezeBackward4 (torch's squeeze_.dim)."""
    old = self.shape
    self._data = np.reshape(self._array(), old[1:]) if old[0] == 1 else self._data
    bump_version(self, "squeeze_")
    if _needs(self):
        record(D["squeeze_dim_"], self, (self,), (old, 0))
    return self


def rmatmul(self, other):
    return matmul(_as_tensor(other), self)


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


def outer(self, vec2):
    # torch: self.reshape({n, 1}) * vec2 (ViewBackward0, then MulBackward0)
    return mul(reshape(self, self.shape[0], 1), vec2)


# ----- Views -------------------------------------------------------------------------------

def make_view(src, data, step):
    """A tensor over `data`, a NumPy view of src's storage made by `step` = (func, args).

    Views share their base's version counter; `_base` is the root tensor and `_view_fn` the
    steps from the root, so in-place edits through the view can rewrite the base's history.
    """
    t = _make(data)
    base = src._base_
    if base is None:
        src._array()
        t._base_ = src
        t._view_fn = (step,)
    else:
        t._base_ = base
        t._view_fn = src._view_fn + (step,)
    t._vc = src._version_counter()
    return t


def _reshape_view(a, shape):
    return np.reshape(a, shape, copy=False)


def _infer_shape(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    n = 1
    for s in shape:
        n *= s
    if n != numel:
        raise RuntimeError(f"shape '[{', '.join(str(s) for s in shape)}]' is invalid for input "
                           f"of size {numel}")
    return tuple(int(s) for s in shape)


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(int(s) for s in shape)


def _view_op(self, entry, step, args):
    a = self._array()
    data = step[0](a, *step[1])
    out = make_view(self, data, step)
    if _needs(self):
        record(entry, out, (self,), args)
    return out


def view(self, *shape):
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        raise NotImplementedError("view(dtype) is not supported by gradviz")
    shape = _infer_shape(_shape_args(shape), self.numel())
    try:
        return _view_op(self, D["view"], (_reshape_view, (shape,)), (self.shape,))
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.") from None


def reshape(self, *shape):
    shape = _infer_shape(_shape_args(shape), self.numel())
    a = self._array()
    try:
        np.reshape(a, shape, copy=False)
    except ValueError:
        # Not viewable: torch copies (CloneBackward0) and then _unsafe_view.
        return _unsafe_view(clone(self), shape)
    # torch: a view for a contiguous tensor, _reshape_alias for a viewable non-contiguous one.
    entry = D["view"] if a.flags.c_contiguous else D["reshape_alias"]
    return _view_op(self, entry, (_reshape_view, (shape,)), (self.shape,))


def _unsafe_view(self, shape):
    out = _make(np.reshape(self._data, shape))
    if _needs(self):
        record(D["unsafe_view"], out, (self,), (self.shape,))
    return out


def flatten(self, start_dim=0, end_dim=-1):
    if self.dim() == 0:
        return reshape(self, 1)
    s = _wrap_dim(start_dim, self.dim())
    e = _wrap_dim(end_dim, self.dim())
    if s == e:
        return self
    shape = tuple(self.shape[:s]) + (-1,) + tuple(self.shape[e + 1:])
    return reshape(self, *shape)


def squeeze(self, dim=None):
    shape = self._data.shape
    if dim is None:
        new = tuple(s for s in shape if s != 1)
        return _view_op(self, D["squeeze"], (_reshape_view, (new,)), (self.shape,))
    if isinstance(dim, (tuple, list)):
        dims = _dims(dim, len(shape)) if shape else ()
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
        return _view_op(self, D["squeeze_dims"], (_reshape_view, (new,)), (self.shape, dims))
    d = _wrap_dim(dim, len(shape)) if shape else 0
    new = tuple(s for i, s in enumerate(shape) if not (i == d and s == 1))
    return _view_op(self, D["squeeze_dim"], (_reshape_view, (new,)), (self.shape, d))


def unsqueeze(self, dim):
    shape = self._data.shape
    d = _wrap_dim(dim, len(shape) + 1)
    new = shape[:d] + (1,) + shape[d:]
    return _view_op(self, D["unsqueeze"], (_reshape_view, (new,)), (d, self.shape))


def _broadcast_view(a, shape):
    return np.broadcast_to(a, shape)


def expand(self, *sizes):
    sizes = _shape_args(sizes)
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand(torch.FloatTensor{{[{', '.join(map(str, shape))}]}}, "
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


def expand_as(self, other):
    return expand(self, *other.shape)


def _transpose_view(a, d0, d1):
    return np.swapaxes(a, d0, d1)


def _permute_view(a, dims):
    return np.transpose(a, dims)


def t(self):
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    if self.dim() < 2:
        return _view_op(self, D["t"], (_permute_view, (tuple(range(self.dim())),)), ())
    return _view_op(self, D["t"], (_transpose_view, (0, 1)), ())


def transpose(self, dim0, dim1):
    n = self.dim()
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    return _view_op(self, D["transpose"], (_transpose_view, (d0, d1)), (d0, d1))


def permute(self, *dims):
    dims = _shape_args(dims)
    if len(dims) != self.dim():
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {self.dim()} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, self.dim()) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view_op(self, D["permute"], (_permute_view, (dims,)), (dims,))


_WARNED = set()


def _T(self):
    n = self.dim()
    if n != 2:
        import warnings
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
            warnings.warn(msg, UserWarning, stacklevel=2)
    return permute(self, *reversed(range(n)))


def _mT(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return transpose(self, -2, -1)


def narrow(self, dim, start, length):
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
    return _view_op(self, D["slice"], (operator.getitem, (key,)),
                    (self.shape, d, start, start + length, 1, key))


def select(self, dim, index):
    """The view at `index` along `dim` (SelectBackward0)."""
    return _select(self, dim, index, "select")


def _select(self, dim, index, how):
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
    return _view_op(self, D["select"], (_getitem_view, (key,)), (self.shape, d, index, key))


def _getitem_view(a, key):
    r = a[key]
    # a[int] on a 1-D array gives a NumPy scalar copy; index with Ellipsis to keep a view.
    return r if isinstance(r, np.ndarray) else a[key + (Ellipsis,)]


def unbind(self, dim=0):
    d = _wrap_dim(dim, self.dim())
    a = self._array()
    outs = []
    for i in range(a.shape[d]):
        key = (slice(None),) * d + (i,)
        outs.append(make_view(self, _getitem_view(a, key), (_getitem_view, (key,))))
    if _needs(self) and outs:
        part = a.shape[:d] + a.shape[d + 1:]
        record_outputs(D["unbind"], outs, (self,), (d, self.shape, part, a.dtype))
    return tuple(outs)


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(unbind(self, 0))


def cat(tensors, dim=0):
    tensors = [_as_tensor(x) for x in tensors]
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    _check_cat(tensors, dim)
    d = _wrap_dim(dim, tensors[0].dim())
    rt = _dtype.result_type([x._data if x._data.ndim else x._data.reshape(1) for x in tensors])
    out = _make(np.concatenate([x._data for x in tensors], axis=d).astype(rt, copy=False))
    if _needs(*tensors):
        record(D["cat"], out, tuple(tensors), (d, [x._data.shape[d] for x in tensors]))
    return out


concat = concatenate = cat


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


def stack(tensors, dim=0):
    tensors = [_as_tensor(x) for x in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = _wrap_dim(dim, tensors[0].dim() + 1)
    first = tensors[0]._data.shape
    for i, x in enumerate(tensors):
        if x._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"[{', '.join(map(str, first))}] at entry 0 and "
                               f"[{', '.join(map(str, x._data.shape))}] at entry {i}")
    out = _make(np.stack([x._data for x in tensors], axis=d))
    if _needs(*tensors):
        record(D["stack"], out, tuple(tensors), (d, len(tensors)))
    return out


# ----- Indexing ----------------------------------------------------------------------------

def _is_advanced(k):
    return isinstance(k, (Tensor, np.ndarray, list)) or (isinstance(k, bool))


def _np_key(k):
    if isinstance(k, Tensor):
        return k._data if k._data.dtype.kind == "b" else np.asarray(k._data, dtype=np.int64)
    if isinstance(k, list):
        return np.asarray([_np_key(x) for x in k])
    return k


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
    out, adv = _apply_slicing(self, key)
    if adv is None:
        if out is self:
            return _view_op(self, D["alias"], (_alias_view, ()), ())
        return out
    a = out._array()
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
    return IndexError(str(exc).replace(" axis ", " dimension "))


def _apply_slicing(self, key):
    """(tensor after the basic parts of key, NumPy key of its remaining advanced indices or
    None), as torch's applySlicing: ints (and 0-d integer tensors) select, slices slice (a
    full slice is skipped), None and bools unsqueeze; tensors, lists and masks are kept."""
    if not isinstance(key, tuple):
        key = (key,)
    n_real = 0
    for k in key:
        if isinstance(k, Tensor) and k._data.dtype.kind == "b":
            n_real += k._data.ndim
        elif not (k is None or k is Ellipsis or isinstance(k, bool)):
            n_real += 1
    if n_real > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    out = self
    dim = 0
    adv = None
    for k in key:
        if k is Ellipsis:
            dim += self.dim() - n_real
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            out = _slice(out, dim, k, optimize=True)
            dim += 1
        elif isinstance(k, bool) or (isinstance(k, Tensor) and k._data.ndim == 0
                                     and k._data.dtype.kind == "b"):
            # torch: unsqueeze, then index the new dim with [0] (True) or [] (False).
            out = unsqueeze(out, dim)
            adv = (adv or []) + [(dim, np.zeros(1 if bool(k) else 0, dtype=np.int64))]
            dim += 1
        elif isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu":
            out = _select(out, dim, int(k._data), "index")
        elif _is_advanced(k):
            nk = _np_key(k)
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
        return out, None
    npkey = []
    for d, nk in adv:
        npkey.extend([slice(None)] * (d - len(npkey)))
        npkey.append(nk)
        if nk.dtype == np.bool_:
            npkey.extend([None] * (nk.ndim - 1))    # placeholders for the mask's other dims
    return out, tuple(k for k in npkey if k is not None)


def _slice(t, dim, k, optimize):
    """t sliced along dim by the Python slice k (SliceBackward0); with optimize, a slice that
    keeps everything returns t itself, as torch's applySlice does inside tuples and for
    assignment. torch decides on the slice as written: `0:` and `:5` are skipped, `-2:` is
    still a view even when it covers every row."""
    size = t._data.shape[dim]
    start, stop, step = k.indices(size)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    if optimize and (k.start is None or k.start == 0) and (k.step is None or k.step == 1) \
            and (k.stop is None or k.stop >= size):
        return t
    stop = start if stop < start else stop
    sl = (slice(None),) * dim + (slice(start, stop, step),)
    return _view_op(t, D["slice"], (operator.getitem, (sl,)), (t.shape, dim, start, stop, step, sl))


def _alias_view(a):
    return a.view()


def index_put_zeros(grad, shape, key, accumulate):
    """zeros(shape) with grad put at key: the differentiable backward of indexing."""
    from ._derivatives import put
    out = _make(put(grad._data, shape, key, accumulate))
    if _needs(grad):
        record(D["index_put_zeros"], out, (grad,), (key,))
    return out


# ----- In-place ----------------------------------------------------------------------------

def _check_inplace(self):
    if _state.enabled:
        msg = None
        if self._fn is not None and type(self._fn) is D["unbind"].cls:
            # torch refuses first to edit one of several views returned together (unbind).
            msg = (f"Output {self._nr} of Unbind is a view and is being modified inplace. This "
                   "view is the output of a function that returns multiple views. Such "
                   "functions do not allow the output views to be modified inplace. You should "
                   "replace the inplace operation by an out-of-place one.")
        elif self._rg and self._fn is None:
            msg = "a leaf Variable that requires grad is being used in an in-place operation."
        else:
            base = self._base_
            if base is not None and base._rg and base._fn is None:
                msg = ("a view of a leaf Variable that requires grad is being used in an "
                       "in-place operation.")
        if msg is not None:
            if _state.trace is not None:
                _state.trace.refused(self, msg)
            raise RuntimeError(msg)


def _write(self, new):
    """Store new values into self's storage (visible through every view)."""
    d = self._data
    if type(d) is np.ndarray:
        if not d.flags.writeable:
            raise RuntimeError("unsupported operation: more than one element of the written-to "
                               "tensor refers to a single memory location. Please clone() the "
                               "tensor before performing the operation.")
        if np.result_type(new).kind == "f" and d.dtype.kind in "iub":
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{_TORCH_SCALAR[d.dtype.name]}")
        try:
            np.copyto(d, new, casting="unsafe")
        except ValueError as exc:
            raise _write_error(d, new, exc) from None
    else:
        self._data = np.asarray(new, dtype=d.dtype).reshape(np.shape(d))[()]


def _write_error(d, new, exc):
    """torch's message when `new` cannot be written into an output of d's shape."""
    err = _broadcast_error(d, new, exc)
    if err is not exc:
        return err
    try:
        full = np.broadcast_shapes(d.shape, np.shape(new))
    except ValueError:
        return exc
    return RuntimeError(f"output with shape [{', '.join(map(str, d.shape))}] doesn't match the "
                        f"broadcast shape [{', '.join(map(str, full))}]")


def bump_version(self, op):
    """Count an in-place edit (shared with views) and tell the inspector, if one listens."""
    self._version_counter().v += 1
    trace = _state.trace
    if trace is not None:
        trace.inplace(self, op)


def _commit(self, entry, inputs, args, op):
    """After writing into self: bump the version and, if needed, rewrite self's history."""
    bump_version(self, op)
    if not _needs(*inputs):
        return
    base = self._base_
    if base is None:
        record(entry, self, inputs, args)
        return
    # In-place through a view: the base's grad_fn becomes CopySlices over the op's node, and
    # the view reads its gradient from the base again (AsStridedBackward0), as in torch.
    base_edge = edge_of(base)
    fn = record(entry, self, inputs, args)
    cs = CopySlices(base_edge, self._view_fn, fn)
    base._rg, base._fn, base._nr = True, cs, 0
    record(D["as_strided"], self, (base,), (base.shape, self._view_fn))


def _inplace_binary(self, other, entry, ufunc, op, saves_self=False, alpha=1):
    _check_inplace(self)
    b, ot = _operand(other)
    if alpha != 1:
        b = b * alpha
    orig = self.detach().clone() if (saves_self and ot is not None and ot._rg) else self
    d = self._data
    done = False
    if type(d) is np.ndarray and d.flags.writeable:
        # Straight into the storage (one pass, no temporary): what `p -= lr * g` costs in NumPy.
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                ufunc(d, b, out=d, casting="same_kind")
            done = True
        except (TypeError, ValueError):
            pass        # a promotion or shape torch refuses: the path below says why
    if not done:
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                new = ufunc(self._data, b)
        except ValueError as exc:
            raise _broadcast_error(self._data, b, exc) from None
        _write(self, new)
    if entry is _E_MUL or entry is _E_DIV:
        args = (orig, other)
    else:
        args = (alpha,)
    _commit(self, entry, (self, ot), args, op)
    return self


def add_(self, other, alpha=1):
    return _inplace_binary(self, other, _E_ADD, np.add, "add_", alpha=alpha)


def sub_(self, other, alpha=1):
    return _inplace_binary(self, other, _E_SUB, np.subtract, "sub_", alpha=alpha)


def mul_(self, other):
    return _inplace_binary(self, other, _E_MUL, np.multiply, "mul_", saves_self=True)


def div_(self, other):
    return _inplace_binary(self, other, _E_DIV, np.true_divide, "div_", saves_self=True)


def pow_(self, exponent):
    _check_inplace(self)
    if isinstance(exponent, Tensor):
        raise NotImplementedError("gradviz: pow_ with a tensor exponent is not supported")
    orig = self.detach().clone() if _needs(self) else self
    with np.errstate(divide="ignore", invalid="ignore"):
        _write(self, np.power(self._data, exponent))
    _commit(self, D["pow"], (self,), (orig, exponent), "pow_")
    return self


def _inplace_unary(self, entry, ufunc, op, saves_self=False):
    _check_inplace(self)
    orig = self.detach().clone() if (saves_self and _needs(self)) else self
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        _write(self, ufunc(self._data))
    _commit(self, entry, (self,), (orig,), op)
    return self


def exp_(self):
    return _inplace_unary(self, _E_EXP, np.exp, "exp_")


def log_(self):
    return _inplace_unary(self, _E_LOG, np.log, "log_", saves_self=True)


def sqrt_(self):
    return _inplace_unary(self, _E_SQRT, np.sqrt, "sqrt_")


def tanh_(self):
    return _inplace_unary(self, _E_TANH, np.tanh, "tanh_")


def sigmoid_(self):
    return _inplace_unary(self, _E_SIG, _np_sigmoid, "sigmoid_")


def relu_(self):
    return _inplace_unary(self, _E_RELU, _np_relu, "relu_")


def neg_(self):
    return _inplace_unary(self, D["neg"], np.negative, "neg_")


def clamp_(self, min=None, max=None):
    _check_inplace(self)
    orig = self.detach().clone() if _needs(self) else self
    _write(self, np.clip(self._data, min, max))
    _commit(self, D["clamp"], (self,), (orig, min, max), "clamp_")
    return self


def zero_(self):
    _check_inplace(self)
    _write(self, np.zeros_like(self._data))
    _commit(self, D["zero_"], (self,), (), "zero_")
    return self


def fill_(self, value):
    return _fill(self, value, "fill_")


def _fill(self, value, op):
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._data.ndim} dimensions.")
    _check_inplace(self)
    v, vt = _operand(value)
    _write(self, np.full_like(self._data, v))
    if vt is not None:
        _commit(self, D["fill_tensor_"], (self, vt), (), op)
    else:
        _commit(self, D["fill_"], (self,), (), op)
    return self


def copy_(self, src, non_blocking=False):
    return _copy(self, src, "copy_")


def _copy(self, src, op):
    _check_inplace(self)
    s = _as_tensor(src, self)
    _write(self, s._data)
    _commit(self, D["copy_"], (self, s), (s.shape,), op)
    return self


def setitem(self, key, value):
    """a[key] = value as torch's set_item: basic indexing picks the destination (a itself when
    the key selects everything, else a view, so the edit becomes CopySlices on a), then fill_
    for a 0-d value, copy_ otherwise, or index_put_ for tensor, list and mask indices."""
    if key is False:
        return
    v = value if isinstance(value, Tensor) else _scalar_to_tensor(value, self)
    dst, adv = _setitem_target(self, key)
    if adv is None:
        _copy_to(dst, v)
        return
    _check_inplace(dst)
    a = dst._array()
    try:
        a[adv] = v._data
    except IndexError as exc:
        raise _index_error(exc, a, adv) from None
    except ValueError:
        got, want = v._data.shape, a[adv].shape
        raise RuntimeError(f"shape mismatch: value tensor of shape [{', '.join(map(str, got))}] "
                           f"cannot be broadcast to indexing result of shape "
                           f"[{', '.join(map(str, want))}]") from None
    _commit(dst, D["index_put"], (dst, v), (adv, v.shape), "setitem")


def _scalar_to_tensor(value, like):
    if isinstance(value, (bool, int, float)):
        return _make(np.array(value, dtype=like._data.dtype))
    return _as_tensor(value, like)


def _setitem_target(self, key):
    """(destination tensor, NumPy key of the remaining advanced indices or None), following
    torch's set_item: a full slice or Ellipsis gives self itself (no view)."""
    if not isinstance(key, tuple):
        if key is Ellipsis:
            return self, None
        if key is None or key is True:
            return unsqueeze(self, 0), None
        if isinstance(key, slice):
            return _slice(self, 0, key, optimize=True), None
        if type(key) is int:
            return _select(self, 0, key, "index"), None
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
        _copy(dst, expand(view(src, *shape[i:]), *dst.shape), "setitem")


# ----- Installing the methods --------------------------------------------------------------

def _radd(self, other):
    return add(self, other)


def _rmul(self, other):
    return mul(self, other)


def _iadd(self, other):
    return add_(self, other)


def _isub(self, other):
    return sub_(self, other)


def _imul(self, other):
    return mul_(self, other)


def _idiv(self, other):
    return div_(self, other)


def _install():
    T = Tensor
    methods = {
        "__add__": add, "__radd__": _radd, "__sub__": sub, "__rsub__": rsub,
        "__mul__": mul, "__rmul__": _rmul, "__truediv__": div, "__rtruediv__": rdiv,
        "__pow__": pow, "__rpow__": _rpow, "__neg__": neg, "__abs__": abs,
        "__floordiv__": floor_divide, "__rfloordiv__": _rfloordiv, "__mod__": remainder,
        "__rmod__": _rmod, "floor_divide": floor_divide, "remainder": remainder,
        "__matmul__": matmul, "__rmatmul__": rmatmul,
        "__iadd__": _iadd, "__isub__": _isub, "__imul__": _imul, "__itruediv__": _idiv,
        "__eq__": eq, "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
        "__invert__": logical_not, "__and__": and_, "__or__": or_, "__xor__": xor,
        "__getitem__": getitem, "__setitem__": setitem, "__iter__": _iter,
        "add": add, "sub": sub, "mul": mul, "div": div, "true_divide": div, "pow": pow,
        "neg": neg, "negative": neg, "abs": abs, "reciprocal": reciprocal, "sign": sign,
        "square": square, "exp": exp, "log": log, "sqrt": sqrt, "sin": sin, "cos": cos,
        "tanh": tanh, "sigmoid": sigmoid, "relu": relu, "clamp": clamp, "clip": clamp,
        "clamp_min": clamp_min, "clamp_max": clamp_max, "maximum": maximum, "minimum": minimum,
        "clone": clone, "contiguous": contiguous, "to": to,
        "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "isnan": isnan,
        "isinf": isinf, "isfinite": isfinite, "equal": equal, "allclose": allclose,
        "logical_not": logical_not, "floor": floor, "ceil": ceil, "trunc": trunc,
        "round": round,
        "sum": sum, "mean": mean, "prod": prod, "max": max, "min": min, "argmax": argmax,
        "argmin": argmin, "softmax": softmax, "log_softmax": log_softmax,
        "mm": mm, "mv": mv, "dot": dot, "bmm": bmm, "matmul": matmul, "outer": outer,
        "view": view, "reshape": reshape, "flatten": flatten, "squeeze": squeeze,
        "unsqueeze": unsqueeze, "expand": expand, "expand_as": expand_as, "t": t,
        "transpose": transpose, "permute": permute, "narrow": narrow, "select": select,
        "unbind": unbind, "view_as": lambda self, other: view(self, *other.shape),
        "reshape_as": lambda self, other: reshape(self, *other.shape),
        "add_": add_, "sub_": sub_, "mul_": mul_, "div_": div_, "pow_": pow_, "exp_": exp_,
        "log_": log_, "sqrt_": sqrt_, "tanh_": tanh_, "sigmoid_": sigmoid_, "relu_": relu_,
        "neg_": neg_, "clamp_": clamp_, "clip_": clamp_, "zero_": zero_, "fill_": fill_,
        "copy_": copy_,
        "float": lambda self: to(self, _dtype.float32),
        "double": lambda self: to(self, _dtype.float64),
        "long": lambda self: to(self, _dtype.int64),
        "int": lambda self: to(self, _dtype.int32),
        "bool": lambda self: to(self, _dtype.bool_),
        "half": lambda self: to(self, _dtype.float16),
    }
    for name, fn in methods.items():
        setattr(T, name, fn)
    T.T = property(_T)
    T.mT = property(_mT)


_install()
