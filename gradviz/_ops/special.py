"""Pointwise and special functions: tan, the inverse and hyperbolic trigonometric functions,
erf, erfc, log1p, expm1, log2, log10, exp2, rsqrt, frac; the binary atan2, hypot, logaddexp,
logaddexp2, xlogy, fmod; lerp, addcmul, addcdiv; and the in-place forms of these and of clamp
and round.
"""

import math

import numpy as np

from .. import _dtype
from .._derivatives import DERIVATIVES as D
from .._fperr import quietly
from .._dmath import xlogy as _np_xlogy
from .._registry import export, method, records
from .._tensor import Tensor, _make
from ..autograd.formula import record
from ..autograd.grad_mode import _state
from ._common import (_F16, _TORCH_SCALAR, _broadcast_error, _coerce, _default_float, _needs,
                      _operand, _stored)
from ._iterator import iter_layout
from .inplace import _check_inplace, _commit, _write, inplace_unary
from .pointwise import (_C_NAMES, _clamp, _clamp_bound, _export_binary, _finish, _round, _unary,
                        invalid_arguments)


def _not_implemented_for(kernel, dt):
    """torch's error for a kernel without an implementation for a dtype."""
    return NotImplementedError(f'"{kernel}" not implemented for '
                               f"'{_TORCH_SCALAR.get(dt.name, dt.name)}'")


def _not_a_tensor(op, name, position, x):
    return TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not "
                     f"{type(x).__name__}")


# ----- erf ---------------------------------------------------------------------------------
# NumPy has no erf. These are the piecewise rational approximations of fdlibm's s_erf.c
# (Copyright (C) 1993 by Sun Microsystems, Inc.; "Permission to use, copy, modify, and
# distribute this software is freely granted, provided that this notice is preserved"),
# evaluated on whole arrays: within one ulp of the exact value in float64.

_ERX = 8.45062911510467529297e-01
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02,
       5.08130628187576562776e-03, 1.32494738004321644526e-04, -3.96022827877536812320e-06)
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01,
       7.18286544141962662868e-02, 1.26171219808761642112e-01, 1.36370839120290507362e-02,
       1.19844998467991074170e-02)
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _poly(z, coefs):
    """coefs[0] + coefs[1] z + coefs[2] z^2 + ... (Horner, in place: a loop over the
    coefficients, never over elements)."""
    r = z * coefs[-1]
    for c in coefs[-2:0:-1]:
        r += c
        r *= z
    r += coefs[0]
    return r


def _erfc_tail(ax):
    """erfc(x) for x in [1.25, 28): exp(-x^2 - 0.5625 + R(1/x^2) / S(1/x^2)) / x."""
    s = 1 / (ax * ax)
    r_s = np.empty_like(ax)
    low = ax < 1 / 0.35
    if low.all():
        r_s = _poly(s, _RA) / _poly(s, _SA)
    else:
        sl, sh = s[low], s[~low]
        r_s[low] = _poly(sl, _RA) / _poly(sl, _SA)
        r_s[~low] = _poly(sh, _RB) / _poly(sh, _SB)
    # exp(-x^2) as exp(-z^2) exp((z - x)(z + x)), z being x with its low 32 bits cleared, so
    # that z^2 is exact.
    z = (ax.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
    e = np.exp(-z * z - 0.5625)
    e *= np.exp((z - ax) * (z + ax) + r_s)
    e /= ax
    return e


def _float64_flat(a):
    x = np.asarray(a, dtype=np.float64)
    return x.shape, x.reshape(-1)


def _back(out, shape, a):
    """out reshaped, in a's float dtype (float64 for other inputs); laid out as a when a is a
    dense non-contiguous array (a transpose): torch's pointwise ops keep such a layout."""
    dt = a.dtype if a.dtype.kind == "f" else np.float64
    out = out.reshape(shape)
    if a.ndim > 1 and not a.flags.c_contiguous and a.size and 0 not in a.strides:
        kept = np.empty_like(a, dtype=dt)        # order "K": a's layout
        kept[...] = out
        return kept
    return out.astype(dt, copy=False)


def _np_erf(a):
    """erf of an array, computed in float64 and returned in a's float dtype."""
    if a.ndim == 0:
        return _back(np.array(math.erf(a)), (), a)     # one number: the C library's erf
    shape, x = _float64_flat(a)
    ax = np.abs(x)
    near = ax < 0.84375                             # erf(x) = x + x R(x^2)
    if near.all():
        z = x * x
        out = x + x * (_poly(z, _PP) / _poly(z, _QQ))
        return _back(out, shape, a)
    out = np.copysign(np.ones_like(x), x)           # |x| >= 6: erf is +-1 in float64
    out[np.isnan(x)] = np.nan
    if near.any():
        xs = x[near]
        z = xs * xs
        out[near] = xs + xs * (_poly(z, _PP) / _poly(z, _QQ))
    mid = (ax >= 0.84375) & (ax < 1.25)             # erf(1 + s) = erx + P(s) / Q(s)
    if mid.any():
        s = ax[mid] - 1
        out[mid] = np.copysign(_ERX + _poly(s, _PA) / _poly(s, _QA), x[mid])
    far = (ax >= 1.25) & (ax < 6)
    if far.any():
        out[far] = np.copysign(1 - _erfc_tail(ax[far]), x[far])
    return _back(out, shape, a)


def _np_erfc(a):
    """erfc = 1 - erf of an array, without the cancellation of computing 1 - erf(x)."""
    if a.ndim == 0:
        return _back(np.array(math.erfc(a)), (), a)
    shape, x = _float64_flat(a)
    ax = np.abs(x)
    out = np.where(x > 0, 0.0, 2.0)                 # |x| >= 28
    out[np.isnan(x)] = np.nan
    near = ax < 0.84375
    if near.any():
        xs = x[near]
        z = xs * xs
        r = xs * (_poly(z, _PP) / _poly(z, _QQ))
        # above 1/4, 0.5 - ((x - 0.5) + x R) keeps the bits that 1 - (x + x R) would lose
        out[near] = np.where(xs < 0.25, 1 - (xs + r), 0.5 - (r + (xs - 0.5)))
    mid = (ax >= 0.84375) & (ax < 1.25)
    if mid.any():
        s = ax[mid] - 1
        pq = _poly(s, _PA) / _poly(s, _QA)
        out[mid] = np.where(x[mid] > 0, (1 - _ERX) - pq, 1 + (_ERX + pq))
    far = (ax >= 1.25) & (ax < 28)
    if far.any():
        tail = _erfc_tail(ax[far])
        out[far] = np.where(x[far] > 0, tail, 2 - tail)
    return _back(out, shape, a)


# ----- Unary functions ---------------------------------------------------------------------

_E_TAN, _E_ATAN, _E_ASIN, _E_ACOS = D["tan"], D["atan"], D["asin"], D["acos"]
_E_SINH, _E_COSH, _E_ERF, _E_LOG1P = D["sinh"], D["cosh"], D["erf"], D["log1p"]
_E_EXPM1, _E_LOG2, _E_LOG10, _E_EXP2 = D["expm1"], D["log2"], D["log10"], D["exp2"]
_E_RSQRT, _E_FRAC = D["rsqrt"], D["frac"]


def _np_rsqrt(a):
    return 1 / np.sqrt(a)


def _np_frac(a):
    return a - np.trunc(a)


@export()
@records("tan")
def tan(self):
    return _unary(_E_TAN, np.tan, self)


@export("atan", "arctan")
@records("atan")
def atan(self):
    return _unary(_E_ATAN, np.arctan, self, quiet=True)


@export("asin", "arcsin")
@records("asin")
def asin(self):
    return _unary(_E_ASIN, np.arcsin, self)


@export("acos", "arccos")
@records("acos")
def acos(self):
    return _unary(_E_ACOS, np.arccos, self)


@export()
@records("sinh")
def sinh(self):
    return _unary(_E_SINH, np.sinh, self)


@export()
@records("cosh")
def cosh(self):
    return _unary(_E_COSH, np.cosh, self)


@export()
@records("erf")
def erf(self):
    """The error function.

    >>> import gradviz as torch
    >>> torch.erf(torch.tensor([0.0, 0.5, 1.0]))
    tensor([0.0000, 0.5205, 0.8427])
    """
    return _unary(_E_ERF, _np_erf, self)


@export()
@records("erfc")
def erfc(self):
    return _unary(D["erfc"], _np_erfc, self)


@export("asinh", "arcsinh")
@records("asinh")
def asinh(self):
    return _unary(D["asinh"], np.arcsinh, self, quiet=True)


@export("acosh", "arccosh")
@records("acosh")
def acosh(self):
    return _unary(D["acosh"], np.arccosh, self)


@export("atanh", "arctanh")
@records("atanh")
def atanh(self):
    return _unary(D["atanh"], np.arctanh, self)


@export()
@records("log1p")
def log1p(self):
    return _unary(_E_LOG1P, np.log1p, self)


@export("logit")
@records("logit")
def logit(self, eps=None):
    """log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given (LogitBackward0; an
    integer tensor gives the default float dtype, as in torch).

    >>> import gradviz as torch
    >>> torch.logit(torch.tensor([0.25, 0.5]))
    tensor([-1.0986,  0.0000])
    """
    out = _make(_np_logit(self._data, eps))
    if _state.enabled and self._rg:
        record(D["logit"], out, (self,), (self, eps))
    return out


@method("logit_")
def logit_(self, eps=None):
    """logit in place (LogitBackward0, saving self's old values)."""
    if self._data.dtype.kind != "f":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_TORCH_SCALAR[self._data.dtype.name]}")
    _check_inplace(self)
    orig = self.clone() if _state.enabled and self._rg else self
    _write(self, _np_logit(self._data, eps))
    _commit(self, D["logit"], (self,), (orig, eps), "logit_")
    return self


def _np_logit(a, eps):
    if a.dtype.kind != "f":
        a = a.astype(_default_float())
    if eps is not None:
        lo = a.dtype.type(eps)
        a = np.clip(a, lo, 1 - lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(a / (1 - a))


@export()
@records("expm1")
def expm1(self):
    return _unary(_E_EXPM1, np.expm1, self)


@export()
@records("log2")
def log2(self):
    return _unary(_E_LOG2, np.log2, self)


@export()
@records("log10")
def log10(self):
    return _unary(_E_LOG10, np.log10, self)


@export()
@records("exp2")
def exp2(self):
    return _unary(_E_EXP2, np.exp2, self)


@export()
@records("rsqrt")
def rsqrt(self):
    return _unary(_E_RSQRT, _np_rsqrt, self)


@export()
@records("frac")
def frac(self):
    """x - trunc(x), for floating-point tensors only (as in torch)."""
    if self._data.dtype.kind != "f":
        raise _not_implemented_for("frac_cpu", self._data.dtype)
    return _unary(_E_FRAC, _np_frac, self, floating=False)


# ----- Binary functions --------------------------------------------------------------------

def _float_pair(op, self, other, position, kernel=None):
    """The values of two tensors promoted together, integer results going to the default
    float (or refused, when the op has no integer `kernel`, like hypot)."""
    if not isinstance(self, Tensor):
        raise _not_a_tensor(op, "input", 1, self)
    if not isinstance(other, Tensor):
        raise _not_a_tensor(op, "other", position, other)
    a, b = self._data, other._data
    rt = a.dtype if a.dtype is b.dtype else _dtype.result_type((a, b))
    if rt.kind != "f":
        if kernel is not None:
            raise _not_implemented_for(kernel, rt)
        rt = _default_float()
    return (a if a.dtype == rt else a.astype(rt)), (b if b.dtype == rt else b.astype(rt))


def _float_binary(row, ufunc, op, self, other, position, kernel=None):
    """A binary function on floating tensors: (result, row, inputs, saved) for _finish."""
    a, b = _float_pair(op, self, other, position, kernel)
    try:
        with np.errstate(invalid="ignore"):
            out = iter_layout(ufunc(a, b), a, b)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    return out, D[row], (self, other), (self, other)


def _atan2(self, other, op, position):
    return _float_binary("atan2", np.arctan2, op, self, other, position)


@export("atan2", tensor=False)
@records("atan2")
def atan2(self, other):
    """atan(self / other) in the quadrant of the point (other, self) (Atan2Backward0).

    >>> import gradviz as torch
    >>> torch.atan2(torch.tensor([1.0, -1.0]), torch.tensor([-1.0, -1.0]))
    tensor([ 2.3562, -2.3562])
    """
    return _finish(*_atan2(self, other, "atan2", 2))


@export("arctan2", tensor=False)
def arctan2(self, other):
    return _finish(*_atan2(self, other, "arctan2", 2))


@method("atan2")
def _atan2_method(self, other):
    return _finish(*_atan2(self, other, "atan2", 1))


@method("arctan2")
def _arctan2_method(self, other):
    return _finish(*_atan2(self, other, "arctan2", 1))


def _float_function(row, ufunc, self, other, position):
    """ufunc on floating tensors, recording row (torch's CPU kernel <row>_cpu refuses integer
    input)."""
    return _finish(*_float_binary(row, ufunc, row, self, other, position, row + "_cpu"))


hypot = _export_binary("hypot", np.hypot, _float_function, """\
sqrt(self ** 2 + other ** 2), without overflow (HypotBackward0).

    >>> import gradviz as torch
    >>> torch.hypot(torch.tensor([3.0]), torch.tensor([4.0]))
    tensor([5.])
    """)
logaddexp = _export_binary("logaddexp", np.logaddexp, _float_function, """\
log(exp(self) + exp(other)), without overflow (LogaddexpBackward0).

    >>> import gradviz as torch
    >>> torch.logaddexp(torch.tensor([1000.0]), torch.tensor([1000.0]))
    tensor([1000.6932])
    """)
logaddexp2 = _export_binary(
    "logaddexp2", np.logaddexp2, _float_function,
    "log2(2 ** self + 2 ** other), without overflow (Logaddexp2Backward0).")
# Their examples: the functions are made in pointwise, where doctest would not look for them.
__test__ = {"hypot": hypot.__doc__, "logaddexp": logaddexp.__doc__}


def _xlogy(self, other):
    st, ot = isinstance(self, Tensor), isinstance(other, Tensor)
    if not st and not ot:
        raise invalid_arguments("xlogy", (self, other))
    a, _ = _operand(self)
    b, _ = _operand(other)
    rt = _dtype.result_type((a, b))
    if rt.kind != "f":
        rt = _default_float()
    a = np.asarray(a, dtype=rt) if st else a
    b = np.asarray(b, dtype=rt) if ot else b
    try:
        out = iter_layout(np.asarray(_np_xlogy(a, b), dtype=rt), a, b)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    if st and ot:
        return out, D["xlogy"], (self, other), (self, other)
    if ot:      # a Python number self: xlogy.Scalar_Self
        return out, D["xlogy_scalar_self"], (other,), (self, other)
    return out, D["xlogy_scalar_other"], (self,), (self, other)


@export()
@records("xlogy", "xlogy_scalar_self", "xlogy_scalar_other")
def xlogy(self, other):
    """self * log(other), and 0 where self == 0 (unless other is nan): XlogyBackward0, or
    XlogyBackward1 / XlogyBackward2 when self / other is a Python number.

    >>> import gradviz as torch
    >>> torch.xlogy(torch.tensor([0.0, 2.0]), torch.tensor([0.0, 3.0]))
    tensor([0.0000, 2.1972])
    """
    return _finish(*_xlogy(self, other))


def _fmod(self, other):
    if not isinstance(self, Tensor):
        raise invalid_arguments("fmod", (self, other))
    b, ot = _operand(other)
    a, b = _coerce(self._data, b)
    kind = np.result_type(a, b).kind if ot is not None else a.dtype.kind
    if kind == "b":
        raise _not_implemented_for("fmod_cpu", np.dtype(np.bool_))
    if kind in "iu" and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = iter_layout(np.fmod(a, b), a, b)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    if ot is None:
        return out, D["fmod_scalar"], (self,), ()
    return out, D["fmod"], (self, ot), (self, ot)


@export()
@records("fmod_scalar", "fmod")
def fmod(self, other):
    """The remainder of self / other with the sign of self (C's fmod): FmodBackward0 for a
    Python number other, FmodBackward1 for a tensor.

    >>> import gradviz as torch
    >>> torch.fmod(torch.tensor([-5.0, 5.0]), 3)
    tensor([-2.,  2.])
    """
    return _finish(*_fmod(self, other))


# ----- lerp, addcmul, addcdiv --------------------------------------------------------------

def _lerp(input, end, weight, op="lerp"):
    if isinstance(weight, np.generic):
        weight = _operand(weight)[0]    # the Python number torch reads a NumPy scalar as
    if not isinstance(input, Tensor) or not isinstance(end, Tensor) or not isinstance(
            weight, (Tensor, int, float)):
        given = (end, weight) if op == "lerp_" else (input, end, weight)
        raise invalid_arguments(op, given)
    a, e = input._data, end._data
    dt = a.dtype
    if e.dtype != dt:
        raise RuntimeError(f"expected dtype {_C_NAMES[dt.name]} for `end` but got dtype "
                           f"{_C_NAMES[e.dtype.name]}")
    wt = weight if isinstance(weight, Tensor) else None
    if wt is None:
        if dt.kind != "f":
            raise _not_implemented_for("lerp_kernel_scalar", dt)
        w = _opmath_number(weight, dt)
    else:
        w = wt._data
        # A 0-d weight is promoted with the inputs; any other must have their dtype.
        if w.ndim and w.dtype != dt:
            raise RuntimeError(f"expected dtype {_C_NAMES[dt.name]} for `weight` but got dtype "
                               f"{_C_NAMES[w.dtype.name]}")
        if dt.kind != "f":
            raise _not_implemented_for("lerp_kernel_tensor", dt)
        w = w if w.dtype == dt else w.astype(dt)
    try:
        np.broadcast_shapes(a.shape, e.shape, np.shape(w))
    except ValueError as exc:
        raise _broadcast_error(e, w, exc, a) from None
    if wt is None and dt is _F16:
        a, e, w = a.astype(np.float32), e.astype(np.float32), np.float32(w)
    diff = quietly(np.subtract, e, a)
    if wt is None:
        out = quietly(_lerp_values, a, e, w, diff, abs(w) < 0.5, dt)
        return out, D["lerp"], (input, end), (weight,)
    out = quietly(_lerp_values, a, e, w, diff, np.abs(w) < 0.5, dt)
    return out, D["lerp_tensor"], (input, end, wt), (input, end, wt)


@export()
@records("lerp", "lerp_tensor")
def lerp(input, end, weight):
    """input + weight * (end - input): LerpBackward0 for a number weight, LerpBackward1 for a
    tensor weight.

    >>> import gradviz as torch
    >>> torch.lerp(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 6.0]), 0.25)
    tensor([1.5000, 3.0000])
    """
    return _finish(*_lerp(input, end, weight))


def _addc(op, input, tensor1, tensor2, value, divide):
    for name, pos, x in (("input", 1, input), ("tensor1", 2, tensor1), ("tensor2", 3, tensor2)):
        if not isinstance(x, Tensor):
            raise _not_a_tensor(op, name, pos, x)
    if isinstance(value, (Tensor, np.generic)):
        value = value.item()        # torch reads a Number out of a one-element tensor
    if type(value) is int and not -(1 << 63) <= value < (1 << 64):
        raise _dtype._int_overflow(value)       # torch's argument parser, before the dtypes
    a, t1, t2 = input._data, tensor1._data, tensor2._data
    if divide and t1.dtype.kind in "iub" and t2.dtype.kind in "iub":
        raise RuntimeError(_ADDCDIV_INTEGER)
    rt = _dtype.result_type((a, t1, t2))
    if rt.kind == "b":
        raise _not_implemented_for(f"{op}_cpu_out", rt)
    value = _opmath_number(value, rt)
    if rt.kind in "iu":
        value = int(value)          # torch converts value to the integer type (truncates)
    a, t1, t2 = (x if x.dtype == rt else x.astype(rt) for x in (a, t1, t2))
    try:
        np.broadcast_shapes(a.shape, t1.shape, t2.shape)
    except ValueError as exc:
        raise _broadcast_error(t1, t2, exc, a) from None
    out = quietly(_addc_values, a, t1, t2, value, divide, rt)
    return out, D[op], (input, tensor1, tensor2), (tensor1, tensor2, value)


def _lerp_values(a, e, w, diff, small, dt):
    # torch's kernel: from self for small weights, from end for the others (more exact);
    # rounded to dt here, in the quiet context (a float16 lerp computes in float32)
    if np.ndim(small) == 0:
        out = a + w * diff if small else e - diff * (1 - w)
    else:
        out = np.where(small, a + w * diff, e - diff * (1 - w))
    return out.astype(dt, copy=False)


def _addc_values(a, t1, t2, value, divide, rt):
    if rt is _F16:
        # torch computes float16 in float32: input + value * (tensor1 op tensor2), rounded once
        a, t1, t2 = a.astype(np.float32), t1.astype(np.float32), t2.astype(np.float32)
        out = a + np.float32(value) * (t1 / t2 if divide else t1 * t2)
    else:
        out = a + value * t1 / t2 if divide else a + value * t1 * t2
    return np.asarray(out, dtype=rt)


def _opmath_number(v, dt):
    """A Python number v as torch's float16 and float32 kernels read a lerp weight or an addcmul
    value: checked into float32, their "opmath" type (1e300 is refused, not inf); into dt
    itself for the other dtypes."""
    return _stored(v, _F32 if dt.kind == "f" and dt.itemsize <= 4 else dt)


_F32 = np.dtype(np.float32)


_ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


@export()
@records("addcmul")
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2 (AddcmulBackward0).

    >>> import gradviz as torch
    >>> torch.addcmul(torch.ones(2), torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]),
    ...               value=0.5)
    tensor([2.5000, 5.0000])
    """
    return _finish(*_addc("addcmul", input, tensor1, tensor2, value, False))


@export()
@records("addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2 (AddcdivBackward0).

    >>> import gradviz as torch
    >>> torch.addcdiv(torch.ones(2), torch.tensor([1.0, 2.0]), torch.tensor([4.0, 4.0]), value=2)
    tensor([1.5000, 2.0000])
    """
    return _finish(*_addc("addcdiv", input, tensor1, tensor2, value, True))


# ----- In-place forms ----------------------------------------------------------------------

def _inplace(self, op, computed):
    """Write an op's result (values, row, inputs, saved args) into self and record the row
    over self's old history. When the row saves self, it saves self as it was before."""
    out, entry, inputs, args = computed
    if "self" in entry.args and _needs(*inputs) and any(x is self for x in args):
        orig = self.clone()
        args = tuple(orig if x is self else x for x in args)
    _write(self, out)
    _commit(self, entry, inputs, args, op)
    return self


def _no_inplace_derivative(self, op):
    """torch has no derivative for some in-place forms (asinh_, acosh_, atanh_): they fail
    when self requires grad."""
    _check_inplace(self)
    if _needs(self):
        raise NotImplementedError(f"the derivative for 'inplace version of {op}' is not "
                                  f"implemented.")


def _floating_only(self, op):
    if self._data.dtype.kind != "f":
        raise _not_implemented_for(f"{op}_cpu", self._data.dtype)


tan_ = inplace_unary("tan", np.tan)
atan_ = inplace_unary("atan", np.arctan, "arctan_", saves_self=True)
asin_ = inplace_unary("asin", np.arcsin, "arcsin_", saves_self=True)
acos_ = inplace_unary("acos", np.arccos, "arccos_", saves_self=True)
sinh_ = inplace_unary("sinh", np.sinh, saves_self=True)
cosh_ = inplace_unary("cosh", np.cosh, saves_self=True)
erf_ = inplace_unary("erf", _np_erf, saves_self=True)
erfc_ = inplace_unary("erfc", _np_erfc, saves_self=True)
asinh_ = inplace_unary("asinh", np.arcsinh, "arcsinh_", saves_self=True,
                       check=_no_inplace_derivative)
acosh_ = inplace_unary("acosh", np.arccosh, "arccosh_", saves_self=True,
                       check=_no_inplace_derivative)
atanh_ = inplace_unary("atanh", np.arctanh, "arctanh_", saves_self=True,
                       check=_no_inplace_derivative)
log1p_ = inplace_unary("log1p", np.log1p, saves_self=True)
expm1_ = inplace_unary("expm1", np.expm1)
log2_ = inplace_unary("log2", np.log2, saves_self=True)
log10_ = inplace_unary("log10", np.log10, saves_self=True)
exp2_ = inplace_unary("exp2", np.exp2)
rsqrt_ = inplace_unary("rsqrt", _np_rsqrt)
frac_ = inplace_unary("frac", _np_frac, check=_floating_only)


@method("atan2_")
@records("atan2")
def atan2_(self, other):
    _check_inplace(self, other)
    return _inplace(self, "atan2_", _atan2(self, other, "atan2_", 1))


@method("arctan2_")
def arctan2_(self, other):
    _check_inplace(self, other)
    return _inplace(self, "arctan2_", _atan2(self, other, "arctan2_", 1))


@method("hypot_")
@records("hypot")
def hypot_(self, other):
    _check_inplace(self, other)
    return _inplace(self, "hypot_", _float_binary("hypot", np.hypot, "hypot_", self, other, 1,
                                                  "hypot_cpu"))


@method("xlogy_")
@records("xlogy", "xlogy_scalar_other")
def xlogy_(self, other):
    _check_inplace(self, other)
    return _inplace(self, "xlogy_", _xlogy(self, other))


@method("fmod_")
@records("fmod_scalar", "fmod")
def fmod_(self, other):
    _check_inplace(self, other)
    return _inplace(self, "fmod_", _fmod(self, other))


@method("lerp_")
def lerp_(self, end, weight):
    _check_inplace(self, end, weight)
    return _inplace(self, "lerp_", _lerp(self, end, weight, "lerp_"))


@method("addcmul_")
def addcmul_(self, tensor1, tensor2, *, value=1):
    _check_inplace(self, tensor1, tensor2)
    return _inplace(self, "addcmul_", _addc("addcmul", self, tensor1, tensor2, value, False))


@method("addcdiv_")
def addcdiv_(self, tensor1, tensor2, *, value=1):
    _check_inplace(self, tensor1, tensor2)
    return _inplace(self, "addcdiv_", _addc("addcdiv", self, tensor1, tensor2, value, True))


@method("clamp_", "clip_")
@records("clamp", "clamp_tensor")
def clamp_(self, min=None, max=None):
    """In-place clamp: ClampBackward1 for number bounds, ClampBackward0 for tensor bounds."""
    _check_inplace(self, min, max)
    computed = _clamp(self, min, max, "clamp_")
    dt = self._data.dtype
    _clamp_cast_check(dt, [b for b in (min, max) if b is not None])
    return _inplace(self, "clamp_", computed)


def _clamp_cast_check(dt, bounds):
    """torch's cast check of clamp_'s number bounds into self's dtype, which names self's C
    type (a float bound into an integer or bool tensor, an int bound into a bool one)."""
    kinds = {type(_operand(b)[0]) for b in bounds if not isinstance(b, Tensor)}
    if dt.kind in "iub" and float in kinds:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_C_NAMES[dt.name]}")
    if dt.kind == "b" and int in kinds:
        raise RuntimeError("result type Long can't be cast to the desired output type bool")


@method("clamp_min_")
@records("clamp_min", "clamp_min_tensor")
def clamp_min_(self, min):
    _check_inplace(self, min)
    _clamp_cast_check(self._data.dtype, [min])
    return _inplace(self, "clamp_min_", _clamp_bound(self, min, True))


@method("clamp_max_")
@records("clamp_max", "clamp_max_tensor")
def clamp_max_(self, max):
    _check_inplace(self, max)
    _clamp_cast_check(self._data.dtype, [max])
    return _inplace(self, "clamp_max_", _clamp_bound(self, max, False))


@method("round_")
@records("round", "round_decimals")
def round_(self, *, decimals=None):
    _check_inplace(self)
    return _inplace(self, "round_", _round(self, decimals))
