"""Arithmetic: add, sub, mul, div, remainder, floor_divide, pow, neg, reciprocal.
"""

import operator

import numpy as np

from .. import _dtype
from .._derivatives import DERIVATIVES as D
from .._fperr import quietly, quietly2
from .._registry import export, method, records
from .._tensor import Tensor, _make, _make_plain
from ..autograd.formula import record
from ..autograd.grad_mode import _state
from ._iterator import _binary_out, iter_layout
from ._common import (_F16, _broadcast_error, _coerce, _default_float,
                      _half_opmath, _needs, _one_number, _operand, _operands, _stored,
                      _wrap_int)


_ndarray = np.ndarray


# ----- Arithmetic --------------------------------------------------------------------------

def _binary(entry, ufunc, self, other, args):
    a, st = _operand(self)
    b, ot = _operand(other)
    if st is None:
        raise TypeError("expected a Tensor")
    a, b = _coerce(a, b)
    try:
        r = quietly2(ufunc, a, b)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    out = _binary_out(r, a, b, st, ot)
    if _needs(st, ot):
        record(entry, out, (st, ot), args(st, ot, self, other))
    return out


_E_ADD, _E_SUB, _E_MUL, _E_DIV = D["add"], D["sub"], D["mul"], D["div"]


@export()
@method("__add__")
@records("add")
def add(self, other, alpha=1):
    """self + alpha * other (AddBackward0)."""
    try:
        a, b, ot = _operands(self, other)
    except TypeError:
        return NotImplemented       # as torch's operators: Python and NumPy take over
    if alpha != 1:
        # Scale the value only: the node's formula applies alpha to other's gradient.
        b = _scaled(a, b, alpha)
    try:
        r = quietly2(operator.add, a, b)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    # operands NumPy lays out as torch does (_binary_out): the result is such an array too
    if self._iter_plain is a and (
            ot._iter_plain is b if ot is not None else type(b) is not _ndarray):
        out = _make_plain(r)
    else:
        out = _binary_out(r, a, b, self, ot)
    if (self._rg or (ot is not None and ot._rg)) and _state.enabled:
        # the default alpha saved as one shared tuple: no new object per node to collect
        args = _ALPHA_ONE if alpha == 1 and type(alpha) is int else (alpha,)
        record(_E_ADD, out, (self, ot), args)
    return out


@export()
@export("subtract", tensor=False)
@method("__sub__")
@records("sub")
def sub(self, other, alpha=1):
    """self - alpha * other (SubBackward0)."""
    try:
        b, ot = _operand(other)
    except TypeError:
        return NotImplemented
    if self._data.dtype.kind == "b" or type(b) is bool or (
            ot is not None and ot._data.dtype.kind == "b"):
        _bool_sub_error(self, other)     # torch refuses what NumPy would compute
    a, b = _coerce(self._data, b)
    if alpha != 1:
        b = _scaled(a, b, alpha)
    try:
        r = quietly2(operator.sub, a, b)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    # operands NumPy lays out as torch does (_binary_out): the result is such an array too
    if self._iter_plain is a and (
            ot._iter_plain is b if ot is not None else type(b) is not _ndarray):
        out = _make_plain(r)
    else:
        out = _binary_out(r, a, b, self, ot)
    if (self._rg or (ot is not None and ot._rg)) and _state.enabled:
        # the default alpha saved as one shared tuple: no new object per node to collect
        args = _ALPHA_ONE if alpha == 1 and type(alpha) is int else (alpha,)
        record(_E_SUB, out, (self, ot), args)
    return out


_ALPHA_ONE = (1,)      # the args add and sub save for the default alpha


def _scaled(a, b, alpha):
    if isinstance(alpha, np.generic):
        alpha = alpha.item()        # torch reads a NumPy number as the Python number
    if type(alpha) is float and a.dtype.kind in "iub":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    _stored(alpha, a.dtype)         # torch converts alpha to the tensor's dtype, checked
    if a.dtype.kind == "b":
        alpha = bool(alpha)         # and a bool tensor's alpha to a bool: the sum stays bool
    elif type(alpha) is int and type(b) is _ndarray and b.dtype.kind in "iu":
        alpha = _wrap_int(alpha, b.dtype)   # C's cast, as torch: uint8's alpha -1 is 255
    b = quietly(operator.mul, b, alpha) if type(b) is not int else b * alpha
    return _wrap_int(b, a.dtype) if type(b) is int and a.dtype.kind in "iu" else b


def _bool_sub_error(self, other):
    # a Python bool counts as a bool tensor (torch wraps it): `mask - True` is two bools
    if self._data.dtype.kind == "b" and (type(other) is bool or isinstance(other, Tensor) and
                                         other._data.dtype.kind == "b"):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If "
                       "you are trying to invert a mask, use the `~` or `logical_not()` "
                       "operator instead.")


@export("rsub", tensor=False)
@method("__rsub__")
@records("rsub", "rsub_tensor")
def rsub(self, other, alpha=1):
    """other - alpha * self: RsubBackward1 for a number (`2 - a`), RsubBackward0 for a Tensor
    other (`torch.rsub(a, b)`), whose gradient flows to both, as torch's rsub.Tensor."""
    try:
        b, ot = _operand(other)
    except TypeError:
        return NotImplemented
    if self._data.dtype.kind == "b" or type(other) is bool or (
            ot is not None and ot._data.dtype.kind == "b"):
        _bool_sub_error(self, other)
    a, b = _coerce(self._data, b)
    if alpha != 1:
        a = _scaled(b if ot is not None else a, a, alpha)
    try:
        out = _make(iter_layout(quietly(operator.sub, b, a), b, a))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    if ot is not None:
        if (self._rg or ot._rg) and _state.enabled:
            record(D["rsub_tensor"], out, (self, ot), (alpha,))
    elif self._rg and _state.enabled:
        record(D["rsub"], out, (self,), (alpha,))
    return out


@export()
@export("multiply", tensor=False)
@method("__mul__")
@records("mul")
def mul(self, other):
    """self * other (MulBackward0)."""
    try:
        a, b, ot = _operands(self, other)
    except TypeError:
        return NotImplemented
    try:
        # _one_number inline: two identity tests for two tensors of one dtype, the hot path
        r = (_half_opmath(np.multiply, a, b, ot)
             if (ot is None or b is not ot._data) and a.dtype is _F16 else
             quietly2(operator.mul, a, b))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    # operands NumPy lays out as torch does (_binary_out): the result is such an array too
    if self._iter_plain is a and (
            ot._iter_plain is b if ot is not None else type(b) is not _ndarray):
        out = _make_plain(r)
    else:
        out = _binary_out(r, a, b, self, ot)
    if (self._rg or (ot is not None and ot._rg)) and _state.enabled:
        inputs = (self, ot)     # also what the node saves when other is a Tensor
        record(_E_MUL, out, inputs, inputs if ot is not None else (self, other))
    return out


@records("mul_scalar")
def mul_scalar(self, other):
    """self * a Python number, recorded as torch's mul(Tensor, Scalar) (MulBackward1): only
    derivative formulas call it (a user's `t * 2` is MulBackward0, as in torch)."""
    out = _make(self._data * other)
    if self._rg and _state.enabled:
        record(D["mul_scalar"], out, (self,), (other,))
    return out


@records("sub_scalar")
def sub_scalar(self, other):
    """self - a Python number as torch's sub(Tensor, Scalar) (SubBackward1), for formulas."""
    out = _make(self._data - other)
    if self._rg and _state.enabled:
        record(D["sub_scalar"], out, (self,), ())
    return out


@records("add_scalar")
def add_scalar(self, other):
    """self + a Python number as torch's add(Tensor, Scalar) (AddBackward1), for formulas."""
    out = _make(self._data + other)
    if self._rg and _state.enabled:
        record(D["add_scalar"], out, (self,), ())
    return out


@export("div", "true_divide")
@export("divide", tensor=False)
@method("__truediv__")
@records("div", "div_mode")
def div(self, other, rounding_mode=None):
    """self / other (DivBackward0); integer inputs give a float result, as in torch."""
    try:
        a, b, ot = _operands(self, other)
    except TypeError:
        return NotImplemented
    if rounding_mode is not None:
        return _div_rounded(self, ot, a, b, rounding_mode, other)
    if a.dtype.kind != "f":
        # Integer true division gives the default float dtype, as in torch (not float64), and
        # torch casts each operand to it as it is: uint8 / -4 divides by -4.0, not by the -4
        # wrapped into uint8 (252) that the common integer dtype would hold.
        a = self._data.astype(_default_float())
        if ot is not None:
            b = ot._data
        elif type(other) is not float and type(other) is not bool and \
                isinstance(other, (int, np.integer)):
            b = int(other)
        if type(b) is not float and np.result_type(b).kind != "f":
            b = np.asarray(b, dtype=a.dtype) if type(b) is np.ndarray else a.dtype.type(b)
    try:
        r = (_half_opmath(np.true_divide, a, b, ot) if _one_number(a, b, ot) else
             quietly2(np.true_divide, a, b))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    # operands NumPy lays out as torch does (_binary_out): the result is such an array too
    if self._iter_plain is a and (
            ot._iter_plain is b if ot is not None else type(b) is not _ndarray):
        out = _make_plain(r)
    else:
        out = _binary_out(r, a, b, self, ot)
    if (self._rg or (ot is not None and ot._rg)) and _state.enabled:
        record(_E_DIV, out, (self, ot), (self, other))
    return out


def _div_rounded(self, ot, a, b, rounding_mode, other=None):
    """div with rounding_mode "floor" or "trunc" (DivBackward2: zero gradients, as torch)."""
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    _refuse_bool(a, b, f"div_{rounding_mode}_cpu")
    integral = a.dtype.kind in "iub" and np.result_type(b).kind in "iub"
    if integral and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")
    try:
        ufunc = np.floor_divide if rounding_mode == "floor" else _trunc_divide
        r = _half_opmath(ufunc, a, b, ot) if _one_number(a, b, ot) else quietly2(ufunc, a, b)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    rt = _dtype.result_type((a, b))
    out = _make(iter_layout(np.asarray(r, dtype=rt), a, b) if np.ndim(r) else rt.type(r))
    if (self._rg or (ot is not None and ot._rg)) and _state.enabled:
        record(D["div_mode"], out, (self, ot), (self, other, rounding_mode))
    return out


def _trunc_divide(a, b):
    return np.trunc(np.true_divide(a, b))


def _record_overload(out, self, ot, row, args):
    """A Python number other is torch's .Scalar overload (`<row>_scalar`, one edge only); a
    tensor other is `row`, saving args."""
    if _needs(self, ot):
        if ot is None:
            record(D[row + "_scalar"], out, (self,), ())
        elif row == "floor_divide" and not (self._rg and ot._rg):
            # torch's NotImplemented node has an edge only for the tensor that requires grad
            record(D["floor_divide_scalar"], out, (self if self._rg else ot,), ())
        else:
            record(D[row], out, (self, ot), args)


@method("__rfloordiv__")
@records("floor_divide_scalar")
def _rfloordiv(self, other):
    """other // self for a Python number other."""
    return _reflected(self, other, np.floor_divide, "floor_divide_scalar")


@method("__rmod__")
@records("rremainder")
def _rmod(self, other):
    """other % self for a Python number other: torch has no derivative for it."""
    return _reflected(self, other, _remainder, "rremainder")


def _remainder(a, b):
    """torch's remainder: for floats, fmod's result moved into b's sign when both are non-zero
    (a + b), so that a zero keeps a's sign: remainder(-0.0, 1.0) is -0.0 where NumPy's
    remainder gives 0.0, the sign of b."""
    r = np.fmod(a, b)
    if r.dtype.kind != "f":
        return np.remainder(a, b)
    return np.where((r != 0) & ((r < 0) != (np.asarray(b) < 0)), r + b, r)


def _reflected(self, other, ufunc, row):
    """ufunc(other, self) for a Python number other (the reflected // and %): one edge."""
    try:
        b, _ = _operand(other)
    except TypeError:
        return NotImplemented
    a, b = _coerce(self._data, b)
    _refuse_bool(a, b, "div_floor_cpu" if ufunc is np.floor_divide else "remainder_cpu")
    if a.dtype.kind in "iub" and np.any(a == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _make(iter_layout(ufunc(b, a), b, a))
    if _needs(self):
        record(D[row], out, (self,), ())
    return out


def _export_rounding(name, dunder, rows, reflected, values, saves_operands, doc):
    """torch.<name>, Tensor.<name> and Tensor.<dunder>: values(self, a, b) on the coerced
    operands, recorded by _record_overload as the row <name> (saving self and other when
    saves_operands); a number self is reflected(other, self)."""
    def op(self, other):
        if not isinstance(self, Tensor):
            return reflected(other, self)
        try:
            b, ot = _operand(other)
        except TypeError:
            return NotImplemented
        a, b = _coerce(self._data, b)
        out = values(self, a, b)
        _record_overload(out, self, ot, name, (self, ot) if saves_operands else ())
        return out

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return export()(method(dunder)(records(*rows)(op)))


def _refuse_bool(a, b, kernel):
    """torch's `kernel` has no bool implementation: refuse a bool result as torch does."""
    if _dtype.result_type((a, b)).kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _broadcast_size(a, b):
    """The number of elements of a and b broadcast; 0 when they do not broadcast (the
    operation then raises torch's broadcast error, which comes first)."""
    try:
        return np.broadcast(a, b).size
    except ValueError:
        return 0


def _remainder_values(self, a, b):
    _refuse_bool(a, b, "remainder_cpu")
    if a.dtype.kind in "iub" and np.result_type(b).kind in "iub" and np.any(
            np.asarray(b) == 0) and _broadcast_size(a, b):   # (an empty result: no check)
        raise RuntimeError("ZeroDivisionError")
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            return _make(iter_layout(_remainder(a, b), a, b))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None


floor_divide = _export_rounding(
    "floor_divide", "__floordiv__", ("floor_divide", "floor_divide_scalar"), _rfloordiv,
    lambda self, a, b: _div_rounded(self, None, a, b, "floor"), False,
    "self // other: torch records a node without a derivative (NotImplemented).")
remainder = _export_rounding(
    "remainder", "__mod__", ("remainder_scalar", "remainder"), _rmod, _remainder_values, True,
    "self % other, with the sign of other (RemainderBackward0 / RemainderBackward1).")


@method("__rtruediv__")
def rdiv(self, other):
    """other / self: torch computes reciprocal(self) * other (with Python's operator: an
    ndarray other makes NumPy's product)."""
    return reciprocal(self) * other


@export()
@records("reciprocal")
def reciprocal(self):
    a = _floatify(self._data)
    out = _make(quietly(np.reciprocal, a))
    if _needs(self):
        record(D["reciprocal"], out, (self,), ())
    return out


@export()
@method("__pow__")
@records("pow", "pow_tensor")
def pow(self, exponent):
    """self ** exponent: PowBackward0 (scalar exponent) or PowBackward1 (tensor exponent)."""
    if not isinstance(self, Tensor):
        return _rpow(exponent, self)
    try:
        e, et = _operand(exponent)
    except TypeError:
        return NotImplemented
    dt = self._data.dtype
    if type(e) is int and not -(1 << 63) <= e < (1 << 64):
        _stored(e, dt)          # torch's OverflowError for an int beyond 64 bits, first
    if type(e) is int and e < 0 and dt.kind in "iu":
        raise RuntimeError(_NEGATIVE_INT_POWER)     # before _coerce wraps e into the dtype
    if et is None and (dt is _F16 or (dt.kind in "iu" and type(e) is int)):
        _stored(e, dt)          # torch reads the exponent into the tensor's dtype, checked
    a, e = _coerce(self._data, e)
    try:
        # pow(Tensor, Scalar) is a unary kernel in torch: its layout is self's alone
        out = _make(iter_layout(quietly(_power, a, e), *((a,) if et is None else (a, e))))
    except ValueError as exc:
        raise _broadcast_error(a, e, exc) from None
    if _needs(self, et):
        if et is None:
            record(D["pow"], out, (self,), (self, exponent))
        else:
            record(D["pow_tensor"], out, (self, et), (self, et))
    return out


_NEGATIVE_INT_POWER = "Integers to negative integer powers are not allowed."


def _power(a, e):
    """np.power, with torch's integer rule for negative exponents held in a tensor: 1 and -1
    keep their value (by parity), every other base gives 0 (NumPy refuses them all)."""
    # (a 0-d exponent tensor too: its array may be a NumPy scalar)
    if isinstance(e, (_ndarray, np.generic)) and e.dtype.kind in "iu" and \
            np.result_type(a).kind in "iu" and (e < 0).any():
        neg = e < 0
        r = np.power(a, np.where(neg, 0, e))
        odd = (e % 2) != 0
        low = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
        return np.where(neg, low, r).astype(r.dtype, copy=False)
    if a.dtype.kind == "b" and np.result_type(e).kind == "b":
        # torch: a bool tensor exponent has no kernel; a Python bool keeps the bool dtype.
        if type(e) is not bool:
            raise NotImplementedError("\"pow\" not implemented for 'Bool'")
        return a.copy() if e else np.ones_like(a)
    if type(e) is int and e < 0 and np.result_type(a).kind in "iu":
        raise RuntimeError(_NEGATIVE_INT_POWER)
    return np.power(a, e)


def _rpow_values(a, b):
    return _power(np.asarray(b, dtype=a.dtype) if np.ndim(a) else a.dtype.type(b), a)


@method("__rpow__")
@records("pow_scalar")
def _rpow(exponent, self):
    """self ** exponent for a Python number self (`2 ** t`): torch's pow.Scalar(Scalar self,
    Tensor exponent), PowBackward2."""
    try:
        b, _ = _operand(self)
    except TypeError:
        return NotImplemented
    a, b = _coerce(exponent._data, b)
    if type(b) is int and a.dtype.kind in "iu":
        b = np.int64(b)
    out = _make(iter_layout(quietly(_rpow_values, a, b), b, a))
    if _needs(exponent):
        record(D["pow_scalar"], out, (exponent,), (self, exponent))
    return out


@export("neg", "negative")
@method("__neg__")
@records("neg")
def neg(self):
    if self._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    out = _make(np.negative(self._data))
    if self._rg and _state.enabled:
        record(D["neg"], out, (self,), ())
    return out


def _floatify(a):
    return a if a.dtype.kind == "f" else a.astype(_default_float())
