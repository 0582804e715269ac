"""Elementwise functions: exp, log, the trigonometric and activation functions, clamp,
maximum/minimum, where, clone, to, and the piecewise-constant ones.
"""

import numpy as np

from .. import _dtype
from .._derivatives import DERIVATIVES as D
from .._registry import export, method, records
from .._tensor import Tensor, _make, device
from ..autograd.formula import record
from ..autograd.grad_mode import _state
from ._common import _broadcast_error, _coerce, _default_float, _needs, _operand
from .arithmetic import _binary, pow


# ----- Elementwise functions ---------------------------------------------------------------

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


@export()
@records("exp")
def exp(self):
    return _unary(_E_EXP, np.exp, self)


@export()
@records("log")
def log(self):
    return _unary(_E_LOG, np.log, self)


@export()
@records("sqrt")
def sqrt(self):
    return _unary(_E_SQRT, np.sqrt, self)


@export()
@records("sin")
def sin(self):
    return _unary(_E_SIN, np.sin, self)


@export()
@records("cos")
def cos(self):
    return _unary(_E_COS, np.cos, self)


@export()
@records("tanh")
def tanh(self):
    return _unary(_E_TANH, np.tanh, self, quiet=True)


def _np_sigmoid(a):
    # 1 / (1 + exp(-x)) overflows to 0 for large negative x harmlessly; keep the dtype.
    with np.errstate(over="ignore"):
        return np.reciprocal(1 + np.exp(-a))


@export()
@records("sigmoid")
def sigmoid(self):
    return _unary(_E_SIG, _np_sigmoid, self)


def _np_relu(a):
    return np.maximum(a, a.dtype.type(0))


@export()
@records("relu")
def relu(self):
    return _unary(_E_RELU, _np_relu, self, floating=False, quiet=True)


@export()
@method("__abs__")
@records("abs")
def abs(self):
    return _unary(D["abs"], np.abs, self, floating=False, quiet=True)


def _zero_grad_unary(entry, ufunc, self, args=()):
    """An op whose derivative is 0 almost everywhere: torch still records it (SignBackward0,
    FloorBackward0, ...), so that backward reaches the inputs with zeros."""
    out = _make(ufunc(self._data))
    if _state.enabled and self._rg:
        record(entry, out, (self,), args)
    return out


@export()
@records("sign")
def sign(self):
    return _zero_grad_unary(D["sign"], np.sign, self)


@export()
def square(self):
    return pow(self, 2)


@export("clamp", "clip")
@records("clamp", "clamp_tensor")
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


@export()
def clamp_min(self, min):
    return clamp(self, min=min)


@export()
def clamp_max(self, max):
    return clamp(self, max=max)


@export()
@records("maximum")
def maximum(self, other):
    return _binary(D["maximum"], np.maximum, self, other, lambda st, ot, s, o: (st, ot))


@export()
@records("minimum")
def minimum(self, other):
    return _binary(D["minimum"], np.minimum, self, other, lambda st, ot, s, o: (st, ot))


@export("where", tensor=False)
@records("where")
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


@export()
@records("clone")
def clone(self, memory_format=None):
    out = _make(np.array(self._data, copy=True))
    if _needs(self):
        record(D["clone"], out, (self,), ())
    return out


@method("contiguous")
def contiguous(self, memory_format=None):
    if self.is_contiguous():
        return self
    return clone(self)


@method("to")
@records("to_copy")
def to(self, *args, **kwargs):
    """Change dtype (ToCopyBackward0). The CPU is the only device: another one is refused with
    torch's error on a CPU-only build, never ignored."""
    dt, copy = _to_args(args, kwargs)
    if dt is None:
        dt = self.dtype
    if not copy and dt.np == self._data.dtype:
        return self
    out = _make(np.array(self._data, dtype=dt.np, copy=True))
    if _needs(self) and dt.is_floating_point:
        record(D["to_copy"], out, (self,), ())
    return out


def _to_args(args, kwargs):
    """(dtype or None, copy) from torch's three forms of Tensor.to: (device, dtype, ...),
    (dtype, ...) and (tensor, ...), each followed by non_blocking and copy."""
    from .._creation import _check_device
    kw = dict(kwargs)
    dt, dev = kw.pop("dtype", None), kw.pop("device", None)
    kw.pop("non_blocking", None)
    copy = kw.pop("copy", False)
    if kw.pop("memory_format", None) is not None:
        raise NotImplementedError("gradviz: Tensor.to(memory_format=...) is not implemented by "
                                  "gradviz's core; run with --backend torch to use PyTorch")
    if kw:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kw))}'")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        dt = other.dtype
    elif rest and isinstance(rest[0], _dtype.dtype):
        dt = rest.pop(0)
    elif rest and (isinstance(rest[0], str) or hasattr(rest[0], "type")):
        dev = rest.pop(0)
        if rest and isinstance(rest[0], _dtype.dtype):
            dt = rest.pop(0)
    if rest:                                   # non_blocking
        rest.pop(0)
    if rest:
        copy = rest.pop(0)
    if rest:
        raise TypeError("to() received an invalid combination of arguments")
    _check_device(dev)
    if dev is not None and device(dev).index is not None:
        copy = True                            # torch copies for an indexed "cpu:0"
    return dt, copy


@method("cuda")
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """No CUDA in gradviz's core: torch's error on a CPU-only build."""
    raise AssertionError("Torch not compiled with CUDA enabled")


@export()
@records("floor")
def floor(self):
    return _zero_grad_unary(D["floor"], np.floor, self)


@export()
@records("ceil")
def ceil(self):
    return _zero_grad_unary(D["ceil"], np.ceil, self)


@export()
@records("trunc")
def trunc(self):
    return _zero_grad_unary(D["trunc"], np.trunc, self)


@export()
@records("round", "round_decimals")
def round(self, decimals=0):
    if decimals == 0:
        return _zero_grad_unary(D["round"], np.round, self)
    out = _make(np.round(self._data, decimals))
    if _state.enabled and self._rg:
        record(D["round_decimals"], out, (self,), (decimals,))
    return out
