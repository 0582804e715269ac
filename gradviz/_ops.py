"""Forward implementations of every operation, recording a node from the derivative table.

Each op computes its result with NumPy and, when grad mode is on and an input requires grad,
calls `record` with its table entry, its tensor inputs (in next_functions order) and the values
its formulas may save. Python scalars never upcast a float32 tensor (torch's promotion, see
gradviz._dtype). The functions are installed as Tensor methods at the end of the module.
"""

import operator

import numpy as np

from . import _dtype
from ._derivatives import DERIVATIVES as D
from ._tensor import Tensor, _make, _wrap_dim
from .autograd.graph import (CopySlices, apply_view, edge_of, record, record_outputs)
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
    out = _make(ufunc(a, b))
    if _needs(st, ot):
        record(entry, out, (st, ot), args(st, ot, self, other))
    return out


_E_ADD, _E_SUB, _E_MUL, _E_DIV = D["add"], D["sub"], D["mul"], D["div"]


def add(self, other, alpha=1):
    """self + alpha * other (AddBackward0)."""
    if alpha != 1:
        other = other * alpha
    a, st = self._data, self
    b, ot = _operand(other)
    a, b = _coerce(a, b)
    out = _make(a + b)
    if _state.enabled and (st._rg or (ot is not None and ot._rg)):
        record(_E_ADD, out, (st, ot), (alpha,))
    return out


def sub(self, other, alpha=1):
    """self - alpha * other (SubBackward0)."""
    if alpha != 1:
        other = other * alpha
    b, ot = _operand(other)
    a, b = _coerce(self._data, b)
    out = _make(a - b)
    if _state.enabled and (self._rg or (ot is not None and ot._rg)):
        record(_E_SUB, out, (self, ot), (alpha,))
    return out


def rsub(self, other, alpha=1):
    """other - alpha * self (RsubBackward1), for `2 - a`."""
    b, _ = _operand(other)
    a, b = _coerce(self._data, b)
    out = _make(b - a * alpha if alpha != 1 else b - a)
    if _state.enabled and self._rg:
        record(D["rsub"], out, (self,), (alpha,))
    return out


def mul(self, other):
    """self * other (MulBackward0)."""
    b, ot = _operand(other)
    a, b = _coerce(self._data, b)
    out = _make(a * b)
    if _state.enabled and (self._rg or (ot is not None and ot._rg)):
        record(_E_MUL, out, (self, ot), (self, other))
    return out


def div(self, other, rounding_mode=None):
    """self / other (DivBackward0); integer inputs give a float result, as in torch."""
    b, ot = _operand(other)
    a, b = _coerce(self._data, b)
    if rounding_mode is not None:
        r = np.floor_divide(a, b) if rounding_mode == "floor" else np.trunc(np.true_divide(a, b))
        return _make(np.asarray(r).astype(np.result_type(a, b)) if a.dtype.kind != "f" else r)
    if a.dtype.kind != "f" and np.result_type(b).kind != "f":
        a = a.astype(_default_float())
    out = _make(np.true_divide(a, b))
    if _state.enabled and (self._rg or (ot is not None and ot._rg)):
        record(_E_DIV, out, (self, ot), (self, other))
    return out


def rdiv(self, other):
    """other / self: torch computes reciprocal(self) * other."""
    return mul(reciprocal(self), other)


def reciprocal(self):
    a = _floatify(self._data)
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
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _make(np.power(a, e))
    if _needs(self, et):
        if et is None:
            record(D["pow"], out, (self,), (self, exponent))
        else:
            record(D["pow_tensor"], out, (self, et), (self, et))
    return out


def _rpow(self, base):
    """base ** self for a Python scalar base (PowBackward2)."""
    b, _ = _operand(base)
    a, b = _coerce(self._data, b)
    if type(b) is int and a.dtype.kind in "iu":
        b = np.int64(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _make(np.power(np.asarray(b, dtype=a.dtype) if np.ndim(a) else a.dtype.type(b), a))
    if _needs(self):
        record(D["pow_scalar"], out, (self,), (base,))
    return out


def neg(self):
    out = _make(np.negative(self._data))
    if _state.enabled and self._rg:
        record(D["neg"], out, (self,), ())
    return out


def _floatify(a):
    return a if a.dtype.kind == "f" else a.astype(_default_float())


def _unary(entry, ufunc, self, floating=True):
    a = self._data
    if floating and a.dtype.kind != "f":
        a = a.astype(_default_float())
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
    return _unary(_E_TANH, np.tanh, self)


def _np_sigmoid(a):
    # 1 / (1 + exp(-x)) overflows to 0 for large negative x harmlessly; keep the dtype.
    with np.errstate(over="ignore"):
        return np.reciprocal(1 + np.exp(-a))


def sigmoid(self):
    return _unary(_E_SIG, _np_sigmoid, self)


def _np_relu(a):
    return np.maximum(a, a.dtype.type(0))


def relu(self):
    return _unary(_E_RELU, _np_relu, self, floating=False)


def abs(self):
    return _unary(D["abs"], np.abs, self, floating=False)


def sign(self):
    return _make(np.sign(self._data))


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
        out = _make(np.asarray(r, dtype=a.dtype) if np.ndim(r) else a.dtype.type(r))
        mt = min if isinstance(min, Tensor) else None
        xt = max if isinstance(max, Tensor) else None
        if _needs(self, mt, xt):
            record(D["clamp_tensor"], out, (self, mt, xt), (self, min, max))
        return out
    out = _make(np.clip(a, min, max).astype(a.dtype, copy=False))
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
        raise TypeError("where(): expected a Tensor")
    a, it = _operand(input)
    b, ot = _operand(other)
    if it is None:
        b2, a2 = _coerce(b, a)
        a, b = a2, b2
    else:
        a, b = _coerce(a, b)
    out = _make(np.where(c, a, b))
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
        return _make(ufunc(a, b))
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
    return _make(np.floor(self._data))


def round(self, decimals=0):
    return _make(np.round(self._data, decimals))


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
    dims = _dims(dim, a.ndim)
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
    dims = _dims(dim, a.ndim)
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


class _ReturnTypes(tuple):
    """(values, indices) as torch.return_types.max / min."""

    _name = "max"

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


class _MaxResult(_ReturnTypes):
    _name = "max"


class _MinResult(_ReturnTypes):
    _name = "min"


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
    return (_MaxResult if is_max else _MinResult)(values, indices)


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


def softmax(self, dim, dtype=None):
    a = _floatify(self._data)
    d = _wrap_dim(dim, a.ndim)
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
    a = _floatify(self._data)
    d = _wrap_dim(dim, a.ndim)
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

def _mm_like(entry, self, other):
    a, b = _coerce(self._data, other._data)
    out = _make(np.matmul(a, b))
    if _needs(self, other):
        record(entry, out, (self, other), (self, other))
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
        return squeeze(mm(unsqueeze(self, 0), other), (0,))
    if da == 2 and db == 2:
        return mm(self, other)
    if da >= 3 and db <= 2:
        # Fold the batch into the rows: reshape -> mm / mv -> _unsafe_view, as torch does.
        lead = self.shape[:-1]
        folded = reshape(self, -1, self.shape[-1])
        r = mm(folded, other) if db == 2 else mv(folded, other)
        shape = tuple(lead) + ((other.shape[-1],) if db == 2 else ())
        return _unsafe_view(r, shape)
    # Batched: broadcast the batch dims, bmm, then _unsafe_view to the result shape.
    a, b = self, other
    if da == 1:
        a = unsqueeze(a, 0)
    if db == 1:
        b = unsqueeze(b, -1)
    batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
    ae = a if tuple(a.shape[:-2]) == batch else expand(a, *(batch + (n, k)))
    be = b if tuple(b.shape[:-2]) == batch else expand(b, *(batch + (k, m)))
    nb = int(np.prod(batch)) if batch else 1
    r = bmm(reshape(ae, nb, n, k), reshape(be, nb, k, m))
    shape = batch + ((n,) if da > 1 else ()) + ((m,) if db > 1 else ())
    return _unsafe_view(r, shape)


def rmatmul(self, other):
    return matmul(_as_tensor(other), self)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    a = np.matmul(mat1._data, mat2._data)
    out = _make(input._data * beta + a * alpha if (alpha != 1 or beta != 1)
                else input._data + a)
    if _needs(input, mat1, mat2):
        record(D["addmm"], out, (input, mat1, mat2), (mat1, mat2))
    return out


def outer(self, vec2):
    return mul(unsqueeze(self, 1), vec2)


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
    return _view_op(self, D["view"], (_reshape_view, (shape,)), (self.shape,))


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
    dims = tuple(_wrap_dim(d, self.dim()) for d in _shape_args(dims))
    return _view_op(self, D["permute"], (_permute_view, (dims,)), (dims,))


def _T(self):
    return permute(self, *reversed(range(self.dim())))


def narrow(self, dim, start, length):
    d = _wrap_dim(dim, self.dim())
    key = (slice(None),) * d + (slice(start, start + length),)
    return _view_op(self, D["slice"], (operator.getitem, (key,)),
                    (self.shape, d, start, start + length, 1, key))


def select(self, dim, index):
    d = _wrap_dim(dim, self.dim())
    size = self._data.shape[d]
    if not -size <= index < size:
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
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    d = _wrap_dim(dim, tensors[0].dim())
    rt = _dtype.result_type([x._data if x._data.ndim else x._data.reshape(1) for x in tensors])
    out = _make(np.concatenate([x._data for x in tensors], axis=d).astype(rt, copy=False))
    if _needs(*tensors):
        record(D["cat"], out, tuple(tensors), (d, [x._data.shape[d] for x in tensors]))
    return out


concat = concatenate = cat


def stack(tensors, dim=0):
    tensors = [_as_tensor(x) for x in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = _wrap_dim(dim, tensors[0].dim() + 1)
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
    """Indexing as torch records it: select / slice / unsqueeze views for basic keys, one
    IndexBackward0 for keys with tensors, lists or masks."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(_is_advanced(k) for k in key):
        npkey = tuple(_np_key(k) for k in key)
        npkey = npkey[0] if len(npkey) == 1 else npkey
        a = self._array()
        out = _make(np.array(a[npkey], copy=True))
        if _needs(self):
            record(D["index"], out, (self,), (self.shape, npkey))
        return out
    # Basic indexing: walk the key, one view op per item, as torch's applySlicing does.
    n_real = len([k for k in key if k is not None and k is not Ellipsis])
    if n_real > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    out = self
    dim = 0
    for k in key:
        if k is Ellipsis:
            dim += self.dim() - n_real
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            size = out._data.shape[dim]
            start, stop, step = k.indices(size)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if (start, stop, step) != (0, size, 1):
                sl = (slice(None),) * dim + (slice(start, stop, step),)
                out = _view_op(out, D["slice"], (operator.getitem, (sl,)),
                               (out.shape, dim, start, stop, step, sl))
            dim += 1
        else:
            idx = operator.index(k)
            out = select(out, dim, idx)
    if out is self:
        return _view_op(self, D["alias"], (_alias_view, ()), ())
    return out


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
        if self._rg and self._fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        base = self._base_
        if base is not None and base._rg and base._fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")


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
        np.copyto(d, new, casting="unsafe")
    else:
        self._data = np.asarray(new, dtype=d.dtype).reshape(np.shape(d))[()]


def bump_version(self, op):
    """Count an in-place edit (shared with views) and tell the inspector, if one listens."""
    self._version_counter().v += 1
    hook = _state.trace
    if hook is not None and hasattr(hook, "inplace"):
        hook.inplace(self, op)


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
    record(D["as_strided"], self, (base,), (base.shape, _view_key(self._view_fn)))


def _view_key(steps):
    return steps


def _inplace_binary(self, other, entry, ufunc, op, saves_self=False, alpha=1):
    _check_inplace(self)
    b, ot = _operand(other)
    if alpha != 1:
        b = b * alpha
    orig = self.detach().clone() if (saves_self and ot is not None and ot._rg) else self
    with np.errstate(divide="ignore", invalid="ignore"):
        new = ufunc(self._data, b)
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
    _check_inplace(self)
    v, vt = _operand(value)
    _write(self, np.full_like(self._data, v))
    if vt is not None:
        _commit(self, D["fill_tensor_"], (self, vt), (), "fill_")
    else:
        _commit(self, D["fill_"], (self,), (), "fill_")
    return self


def copy_(self, src, non_blocking=False):
    _check_inplace(self)
    s = _as_tensor(src, self)
    _write(self, np.broadcast_to(s._data, self._data.shape))
    _commit(self, D["copy_"], (self, s), (s.shape,), "copy_")
    return self


def setitem(self, key, value):
    """a[key] = value: copy_ into a view (CopySlices) or index_put_ for advanced keys."""
    _check_inplace(self)
    keys = key if isinstance(key, tuple) else (key,)
    if any(_is_advanced(k) for k in keys):
        npkey = tuple(_np_key(k) for k in keys)
        npkey = npkey[0] if len(npkey) == 1 else npkey
        v = _as_tensor(value, self)
        a = self._array()
        a[npkey] = v._data
        _commit(self, D["index_put"], (self, v), (npkey, v.shape), "index_put_")
        return
    # torch does self[key].copy_(value): the view's node is replaced by CopySlices on self.
    view = getitem(self, key)
    v = _as_tensor(value, self)
    _write(view, np.broadcast_to(v._data, view._data.shape))
    _commit(view, D["copy_"], (view, v), (v.shape,), "setitem")


def requires_grad_inplace_ops():
    return ("add_", "sub_", "mul_", "div_", "pow_", "exp_", "log_", "sqrt_", "tanh_",
            "sigmoid_", "relu_", "neg_", "clamp_", "zero_", "fill_", "copy_")


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
        "logical_not": logical_not, "floor": floor, "round": round,
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
    T.mT = property(lambda self: transpose(self, -2, -1))


_install()
