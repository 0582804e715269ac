"""Elementwise functions: exp, log, the trigonometric and activation functions, clamp,
maximum/minimum, where, clone, to, and the piecewise-constant ones.
"""

import warnings

import numpy as np

from .. import _dtype
from .._derivatives import DERIVATIVES as D
from .._fperr import quietly
from ..autograd.callsite import user_stacklevel
from .._registry import export, method, records
from .._tensor import Tensor, _make, _make_plain, device
from ..autograd.formula import record
from ..autograd.graph import _preserved_copy
from ..autograd.grad_mode import _state
from ._common import (_FLOAT_SCALARS, _TORCH_SCALAR, _broadcast_error, _coerce, _default_float,
                      _needs, _operand, _stored, _type_name)
from ._iterator import iter_layout, preserved
from .arithmetic import _binary, pow
from .. import _f32


# ----- Elementwise functions ---------------------------------------------------------------

def _unary(entry, ufunc, self, floating=True, quiet=False):
    """One elementwise function. torch never warns about inf/nan results, so NumPy's warnings
    are silenced, except for functions that cannot raise them (`quiet`): np.errstate costs
    about a microsecond, more than a small op itself."""
    a = self._data
    if floating and type(a) not in _FLOAT_SCALARS and a.dtype.kind != "f":
        a = a.astype(_default_float())
    if quiet:
        r = ufunc(a)
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = ufunc(a)
    # the result of an operand the binary ops marked plain (C-contiguous, no size of 0 or 1:
    # gradviz._ops._iterator._binary_out) is such an array too: marked, so that a binary op
    # on it (tanh(h) * c) skips the layout check
    out = _make_plain(r) if self._iter_plain is a else _make(r)
    if self._rg and _state.enabled:
        inputs = (self,)        # also what the node saves
        record(entry, out, inputs, inputs)
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
    if _f32.TORCH_BITS and a.dtype == np.float32:
        return _f32.sigmoid(a)              # torch's float32 kernel, bit for bit
    # 1 / (1 + exp(-x)) overflows to 0 for large negative x harmlessly; keep the dtype.
    with np.errstate(over="ignore"):
        return np.reciprocal(1 + np.exp(-a))


@export()
@records("sigmoid")
def sigmoid(self):
    return _unary(_E_SIG, _np_sigmoid, self)


def _np_relu(a):
    # torch keeps x unless x < 0, so relu(-0.0) is -0.0; NumPy's maximum returns its second
    # operand on a tie, so the input goes second (the same holds for the clamps below)
    return np.maximum(a.dtype.type(0), a)


@export()
@records("relu")
def relu(self):
    if self._data.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return _unary(_E_RELU, _np_relu, self, floating=False, quiet=True)


@export()
@method("__abs__")
@records("abs")
def abs(self):
    if self._data.dtype.kind == "b":
        raise _no_bool_kernel("abs_cpu")
    return _unary(D["abs"], np.abs, self, floating=False, quiet=True)


def _no_bool_kernel(kernel):
    return NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _np_sign(a):
    # torch's sign is 0 at nan (NumPy's is nan) and keeps a bool tensor as it is.
    if a.dtype.kind == "b":
        return a.copy()
    r = np.sign(a)
    if a.dtype.kind == "f":
        r = iter_layout(np.where(r != r, r.dtype.type(0), r), a)   # np.where's own layout
    return r


def _zero_grad_unary(entry, ufunc, self, args=()):
    """An op whose derivative is 0 almost everywhere: torch still records it (SignBackward0,
    FloorBackward0, ...), so that backward reaches the inputs with zeros."""
    out = _make(ufunc(self._data))
    if self._rg and _state.enabled:
        record(entry, out, (self,), args)
    return out


@export()
@records("sign")
def sign(self):
    return _zero_grad_unary(D["sign"], _np_sign, self)


@export()
@records("sgn")
def sgn(self):
    """The sign of each element, as sign() for real tensors (torch writes abs's derivative with
    it, so a second-order graph shows SgnBackward0).

    >>> import gradviz as torch
    >>> torch.sgn(torch.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    """
    return _zero_grad_unary(D["sgn"], _np_sign, self, (self,))


@export()
def square(self):
    if not isinstance(self, Tensor):    # pow returns NotImplemented, as an operator does
        raise TypeError(f"square() takes a Tensor, not {type(self).__name__}")
    return pow(self, 2)


@export("clamp", "clip")
@records("clamp", "clamp_tensor")
def clamp(self, min=None, max=None):
    """Clamp into [min, max]: ClampBackward1 for scalar bounds, ClampBackward0 for tensors."""
    out, entry, inputs, args = _clamp(self, min, max)
    out = _make(out)
    if _needs(*inputs):
        record(entry, out, inputs, args)
    return out


def _clamp(self, min, max, op="clamp"):
    """clamp's values, row, tensor inputs and saved args (shared with clamp_)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    a = self._data
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if not isinstance(min, (Tensor, type(None))) or not isinstance(max, (Tensor, type(None))):
            # torch has no overload for one tensor bound and one number bound
            given = tuple(b for b in (min, max) if b is not None)
            raise invalid_arguments(op, given if op.endswith("_") else (self,) + given)
        lo = None if min is None else _operand(min)[0]
        hi = None if max is None else _operand(max)[0]
        r = a
        try:
            if lo is not None:
                r = np.maximum(lo, r)
            if hi is not None:
                r = np.minimum(hi, r)
        except ValueError as exc:       # bounds not broadcasting: torch's RuntimeError
            raise (_broadcast_error(a, lo if hi is None else hi, exc) if lo is None or hi is None
                   else _broadcast_error(lo, hi, exc, c=a)) from None
        rt = _dtype.result_type([a] + [b for b in (lo, hi) if b is not None])
        out = np.asarray(r, dtype=rt) if np.ndim(r) else rt.type(r)
        mt = min if isinstance(min, Tensor) else None
        xt = max if isinstance(max, Tensor) else None
        return out, D["clamp_tensor"], (self, mt, xt), (self, min, max)
    # NumPy scalar bounds are read as the Python numbers torch reads them as.
    min = None if min is None else _operand(min)[0]
    max = None if max is None else _operand(max)[0]
    rt = _dtype.result_type([a] + [b for b in (min, max) if b is not None])
    if rt.kind == "b":
        _refuse_bool_clamp(min is not None, max is not None)
    a = a if a.dtype == rt else a.astype(rt)
    # maximum then minimum: torch's order (max wins when min > max), nan kept, and faster
    # than np.clip on small arrays.
    if min is not None:
        a = np.maximum(rt.type(_stored(min, rt)), a)
    if max is not None:
        a = np.minimum(rt.type(_stored(max, rt)), a)
    return a, D["clamp"], (self,), (self, min, max)


def _refuse_bool_clamp(has_min, has_max):
    """torch's clamp kernels for number bounds have no bool case."""
    kernel = ("clamp_scalar_cpu" if has_min and has_max else
              "clamp_min_scalar_cpu" if has_min else "clamp_max_scalar_cpu")
    raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _finish(out, entry, inputs, args):
    """The tensor of an op's values out, recording entry on it when an input needs grad."""
    out = _make(out)
    if _needs(*inputs):
        record(entry, out, inputs, args)
    return out


@export()
@records("clamp_min", "clamp_min_tensor")
def clamp_min(self, min):
    """max(self, min): ClampMinBackward0 for a number, ClampMinBackward1 for a tensor."""
    return _finish(*_clamp_bound(self, min, True))


@export()
@records("clamp_max", "clamp_max_tensor")
def clamp_max(self, max):
    """min(self, max): ClampMaxBackward0 for a number, ClampMaxBackward1 for a tensor."""
    return _finish(*_clamp_bound(self, max, False))


def _clamp_bound(self, bound, lower):
    """clamp_min's (lower) or clamp_max's values, row, inputs and saved args."""
    a = self._data
    b, bt = _operand(bound)
    rt = _dtype.result_type((a, b))
    if rt.kind == "b" and bt is None:
        _refuse_bool_clamp(lower, not lower)
    a = a if a.dtype == rt else a.astype(rt)
    b = np.asarray(b, dtype=rt) if bt is not None else rt.type(_stored(b, rt))
    try:
        out = np.maximum(b, a) if lower else np.minimum(b, a)
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
    name = "clamp_min" if lower else "clamp_max"
    if bt is None:
        return out, D[name], (self,), (self, bound)
    return out, D[name + "_tensor"], (self, bt), (self, bt)


def _export_binary(name, ufunc, forward, doc=None):
    """torch.<name>(input, other) and Tensor.<name>(other), both forward(name, ufunc, self,
    other, position) recording the <name> row; position is where torch's errors put `other`
    (2 in torch.<name>, 1 in the method)."""
    def function(self, other):
        return forward(name, ufunc, self, other, 2)

    def tensor_method(self, other):
        return forward(name, ufunc, self, other, 1)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    tensor_method.__name__ = tensor_method.__qualname__ = f"_{name}_method"
    method(name)(tensor_method)
    return records(name)(export(name, tensor=False)(function))


def _extreme(row, ufunc, self, other, position):
    """maximum / minimum of two tensors (position: where torch's error puts `other`)."""
    if not isinstance(other, Tensor) or not isinstance(self, Tensor):
        raise _not_a_tensor(row, self, other, position)
    return _binary(D[row], ufunc, self, other, _both)


maximum = _export_binary("maximum", np.maximum, _extreme)
minimum = _export_binary("minimum", np.minimum, _extreme)


def _both(st, ot, s, o):
    return (st, ot)


def _not_a_tensor(op, self, other, position):
    """torch's TypeError for a binary op whose operands must both be tensors."""
    name, pos, x = ("input", 1, self) if not isinstance(self, Tensor) else \
        ("other", position, other)
    return TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not "
                     f"{type(x).__name__}")


_UINT8_WARNED = []


def _warn_uint8_condition():
    """torch warns once per process (TORCH_WARN_ONCE) about a uint8 condition."""
    if not _UINT8_WARNED:
        _UINT8_WARNED.append(True)
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and "
                      "will be removed in a future version of PyTorch. Use a boolean condition "
                      "instead.", UserWarning, stacklevel=user_stacklevel())


@export("where", tensor=False)
@records("where")
def where(condition, input, other):
    """input where condition else other (WhereBackward0)."""
    c = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if c.dtype == np.uint8:
        _warn_uint8_condition()
        c = c.astype(np.bool_)
    elif c.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_TORCH_SCALAR.get(c.dtype.name, c.dtype.name)}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # Two Python numbers: torch's result dtype for them (int64, or the default float).
        rt = _dtype.result_type((input, other))
        return _make(np.where(c, rt.type(input), rt.type(other)))
    a, it = _operand(input)
    b, ot = _operand(other)
    if it is None or ot is None:
        # torch's checked conversion of the number into the result dtype (unchecked into
        # float16)
        _stored(a if it is None else b, _dtype.result_type((a, b)), half=False)
    if it is None:
        b2, a2 = _coerce(b, a)
        a, b = a2, b2
    else:
        a, b = _coerce(a, b)
    try:
        out = _make(iter_layout(quietly(np.where, c, a, b), c, a, b))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc, c) from None
    if _needs(it, ot):
        record(D["where"], out, (it, ot), (c,))
    return out


@export()
@records("clone")
def clone(self, memory_format=None):
    if memory_format is not None:
        raise _not_implemented("clone", "memory_format")
    out = _make(_preserved_copy(self._data))
    if _needs(self):
        record(D["clone"], out, (self,), ())
    return out


@method("contiguous")
def contiguous(self, memory_format=None):
    if memory_format is not None:
        raise _not_implemented("Tensor.contiguous", "memory_format")
    if self.is_contiguous():
        return self
    out = clone(self)
    out._data = np.ascontiguousarray(out._data)     # clone keeps self's layout, as torch's
    return out


def invalid_arguments(op, args, kwargs=None, method=False):
    """torch's TypeError for arguments that match none of an op's overloads (its first line)."""
    names = [_type_name(a) for a in args]
    names += [f"{k}={_type_name(v)}" for k, v in (kwargs or {}).items()]
    tail = ", " if method and kwargs else ""
    return TypeError(f"{op}() received an invalid combination of arguments - got "
                     f"({', '.join(names)}{tail}), but expected one of:")


# torch's C++ names of dtypes, for some of its dtype errors.
_C_NAMES = _dtype._CPP_NAMES


def _not_implemented(op, arg):
    return NotImplementedError(f"gradviz: {op}({arg}=...) is not implemented by gradviz's core; "
                               f"run with --backend torch to use PyTorch")


_PYTHON_TYPES = {float: _dtype.float64, int: _dtype.int64, bool: _dtype.bool_}
_TO_KEYWORDS = ("dtype", "device", "non_blocking", "copy", "memory_format")


@method("to")
@records("to_copy")
def to(self, *args, **kwargs):
    """Change dtype (ToCopyBackward0); copy=True copies even to the same dtype. The only device
    is the CPU: another one is refused with torch's error on a CPU-only build, never ignored.
    non_blocking changes nothing on the CPU, in torch as here: a CPU copy is synchronous."""
    dt, copy = _to_args(args, kwargs)
    if dt is None or dt.np == self._data.dtype:
        if not copy:
            return self
        dt = self.dtype
    a = self._data
    # inf into float16: silent; laid out as torch's _to_copy (preserve_format) lays it out
    out = _make(preserved(quietly(np.asarray(a).astype, dt.np), a))
    if _needs(self) and dt.is_floating_point:
        record(D["to_copy"], out, (self,), ())
    return out


def _to_args(args, kwargs):
    """(dtype or None, copy) from torch's forms of Tensor.to: (device, dtype, ...), (dtype, ...)
    and (tensor, ...), each followed by non_blocking and copy; also Module.to's."""
    from .._creation import _check_device
    dt = dev = None
    flags = []
    for a in args:
        if isinstance(a, _dtype.dtype):
            dt = a
        elif isinstance(a, Tensor):
            dt = a.dtype
        elif a is float or a is int or a is bool:
            dt = _PYTHON_TYPES[a]           # torch reads Python's types as dtypes
        elif isinstance(a, bool):
            flags.append(a)         # non_blocking, then copy
        elif isinstance(a, (str, device)):
            dev = a
        elif isinstance(a, int):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        else:
            raise invalid_arguments("to", args, kwargs, method=True)
    if kwargs:
        if any(k not in _TO_KEYWORDS for k in kwargs):
            raise invalid_arguments("to", args, kwargs, method=True)
        dt = kwargs.get("dtype", dt)
        if dt is float or dt is int or dt is bool:
            dt = _PYTHON_TYPES[dt]
        dev = kwargs.get("device", dev)
        if kwargs.get("memory_format") is not None:
            raise _not_implemented("Tensor.to", "memory_format")
    _check_device(dev)
    copy = flags[1] if len(flags) > 1 else kwargs.get("copy", False)
    if dev is not None and device(dev).index is not None:
        copy = True                            # torch copies for an indexed "cpu:0"
    return dt, copy


@method("cuda")
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """No CUDA in gradviz's core: torch's error on a CPU-only build."""
    raise AssertionError("Torch not compiled with CUDA enabled")


def _rounding(row, ufunc):
    """torch.<row> / Tensor.<row>: piecewise constant (zero gradient), refused on bool
    tensors with torch's kernel error."""
    entry = D[row]

    def op(self):
        if self._data.dtype.kind == "b":
            raise _no_bool_kernel(f"{row}_vml_cpu")
        return _zero_grad_unary(entry, ufunc, self)

    op.__name__ = op.__qualname__ = row
    return export()(records(row)(op))


floor = _rounding("floor", np.floor)
ceil = _rounding("ceil", np.ceil)
trunc = _rounding("trunc", np.trunc)


@export()
@records("round", "round_decimals")
def round(self, *, decimals=None):
    """Round half to even; with decimals (even 0), torch's round.decimals (RoundBackward1)."""
    out, entry, inputs, args = _round(self, decimals)
    out = _make(out)
    if self._rg and _state.enabled:
        record(entry, out, inputs, args)
    return out


def _round(self, decimals):
    """round's values, row, inputs and saved args (shared with round_)."""
    kind = self._data.dtype.kind
    if kind == "b":
        raise _no_bool_kernel("round_vml_cpu" if decimals is None else "round_cpu")
    if decimals is not None and kind in "iu":
        raise NotImplementedError(f'"round_cpu" not implemented for '
                                  f"'{_TORCH_SCALAR[self._data.dtype.name]}'")
    if decimals is None:
        return np.round(self._data), D["round"], (self,), ()
    return np.round(self._data, decimals), D["round_decimals"], (self,), (decimals,)
