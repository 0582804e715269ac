"""Reductions: sum, mean, prod, max/min (whole and along a dim), argmax/argmin, softmax and
log_softmax.
"""

import warnings

import numpy as np

from .. import _dtype, return_types
from .._derivatives import DERIVATIVES as D
from .._fperr import quietly, quietly2
from .._keywords import ParserRefusal
from ..autograd.callsite import user_stacklevel
from .._registry import export, method, records
from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.formula import keep_raw, keep_raw_of, negative, record, record_outputs
from ..autograd.grad_mode import _state
from ._common import _TORCH_SCALAR, _dims, _needs, _not_implemented
from .. import _f32
from ._iterator import c_order
from .inplace import _check_inplace, _commit, _write
from .pointwise import maximum, minimum, to


# ----- Reductions --------------------------------------------------------------------------

_F16 = np.dtype(np.float16)


def _opmath(dt):
    """The dtype torch's CPU reductions and scans accumulate dt in: float32 for float16 (its
    opmath type), else dt. NumPy's float16 sum would round every partial sum to float16."""
    return np.float32 if dt == _F16 else dt


def _rounded(r, dt):
    """A result accumulated in _opmath(dt), as dt: float16 rounded once, at the end."""
    return r if r.dtype == dt else r.astype(dt)


@export()
@records("sum", "sum_dim")
def sum(self, dim=None, keepdim=False, dtype=None):
    a = _int64_sum_type(self._data, dtype, self)
    if dim is None or (type(dim) is tuple and not dim):     # `dim == ()` fails for np.int64
        out = _make(_rounded(quietly(np.sum, a, dtype=_opmath(a.dtype), keepdims=keepdim),
                             a.dtype))
        if _needs(self):
            if keepdim:
                record(D["sum_dim"], out, (self,), (a.shape, tuple(range(a.ndim)), True))
            else:
                record(D["sum"], out, (self,), (a.shape,))
        return out
    dims = _dims(dim, a.ndim) if a.ndim else ()    # a 0-d tensor accepts dim 0 or -1
    r = _rounded(quietly(np.sum, a, axis=dims, keepdims=keepdim, dtype=_opmath(a.dtype)),
                 a.dtype) if a.ndim else a
    if not r.flags.c_contiguous:
        # torch allocates the result contiguous; NumPy follows the input's layout, which would
        # make a later reshape of it a view where torch's is a _reshape_alias (or the reverse).
        r = np.ascontiguousarray(r)
    out = _make(r)
    if _needs(self):
        node = record(D["sum_dim"], out, (self,), (a.shape, dims, keepdim))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out


def _float_data(self, dtype, name):
    """self's array, as dtype when given; torch's error unless it is floating."""
    a = self._data if dtype is None else self._data.astype(_dtype.to_numpy_dtype(dtype))
    if a.dtype.kind != "f":
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(f"{name}(): could not infer output dtype. {which} dtype must be either "
                           f"a floating point or complex dtype. Got: "
                           f"{_TORCH_SCALAR[a.dtype.name]}")
    return a




@export()
@records("mean", "mean_dim")
def mean(self, dim=None, keepdim=False, dtype=None):
    a = _float_data(self, dtype, "mean")
    if dim is None:
        out = _make(_rounded(_np_mean(a, dtype=_opmath(a.dtype), keepdims=keepdim), a.dtype))
        if _needs(self):
            record(D["mean"], out, (self,), (a.shape, a.size))
        return out
    dims = _dims(dim, a.ndim) if a.ndim else ()
    out = _make(_rounded(_np_mean(a, axis=dims, keepdims=keepdim, dtype=_opmath(a.dtype)),
                         a.dtype) if a.ndim else a)
    if _needs(self):
        count = int(np.prod([a.shape[d] for d in dims])) if a.ndim else 1
        node = record(D["mean_dim"], out, (self,), (a.shape, dims, keepdim, count, a.size))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out


def _np_mean(a, **kwargs):
    """np.mean, quietly; over no elements nan without NumPy's "Mean of empty slice"
    RuntimeWarning, which torch does not give (torch.empty(3, 0).mean(1))."""
    if a.size:
        return quietly(np.mean, a, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return quietly(np.mean, a, **kwargs)


@export()
@records("prod", "prod_dim")
def prod(self, dim=None, keepdim=False, dtype=None):
    a = _int64_sum_type(self._data, dtype, self)
    if dim is None:
        out = _make(_half_prod(a.ravel(), 0, False) if a.dtype == _F16 else
                    np.prod(a, dtype=a.dtype))
        if _needs(self):
            record(D["prod"], out, (self,), (self,))
        return out
    d = _wrap_dim(dim, a.ndim)
    out = _make(a if not a.ndim else _half_prod(a, d, keepdim) if a.dtype == _F16 else
                np.prod(a, axis=d, keepdims=keepdim, dtype=a.dtype))
    if _needs(self):
        node = record(D["prod_dim"], out, (self,), (self, d, keepdim))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out


def _half_prod(a, d, keepdim):
    """The product of float16 `a` along d as torch's CPU kernel computes it: one factor after
    the other, rounding to float16 at each step (NumPy's float16 product keeps a float). The
    last running product of np.cumprod, which stores (so rounds) each step."""
    if a.shape[d] == 0:
        return np.ones(np.delete(a.shape, d) if not keepdim else
                       tuple(1 if i == d else n for i, n in enumerate(a.shape)), a.dtype)
    last = np.take(np.cumprod(a, axis=d, dtype=a.dtype), [-1], axis=d)
    return last if keepdim else np.squeeze(last, d)


class _NotGiven:
    """max and min's default of dim, keepdim and other: torch has no overload taking dim=None,
    other=None, nor keepdim without a dim, so "not given" is told apart from each."""

    def __repr__(self):
        return "<not given>"


_NO_DIM = _NotGiven()


def _extreme(self, dim, keepdim, is_max, other, out):
    name = "max" if is_max else "min"
    if out is not None:
        raise _not_implemented(name, "out")
    # torch's overloads take no dim=None, no other=None and no keepdim without a dim: its
    # parser refuses them (worded by the keyword wrapper from the arguments as given)
    if dim is None or other is None or keepdim is not _NO_DIM and dim is _NO_DIM:
        raise ParserRefusal("dim")
    if other is not _NO_DIM or isinstance(dim, Tensor):
        return (maximum if is_max else minimum)(self, dim if other is _NO_DIM else other)
    keepdim = keepdim is not _NO_DIM and keepdim
    a = self._data
    if dim is _NO_DIM:
        if a.size == 0:
            raise RuntimeError(f"{'max' if is_max else 'min'}(): Expected reduction dim to be "
                               "specified for input.numel() == 0. Specify the reduction dim "
                               "with the 'dim' argument.")
        out = _make(np.max(a) if is_max else np.min(a))
        if _needs(self):
            record(D["max" if is_max else "min"], out, (self,), (self,))
        return out
    d = _wrap_dim(dim, a.ndim)
    _nonempty_dim(a, d, "max" if is_max else "min")
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
        node = record(D["max_dim" if is_max else "min_dim"], values, (self,),
                      (a.shape, d, keepdim, indices))
        if dim < 0:
            keep_raw(node, "dim", dim)          # torch saves the dim as given
    return (return_types.max if is_max else return_types.min)(values, indices)


@export()
@records("max", "max_dim")
def max(self, dim=_NO_DIM, keepdim=_NO_DIM, *, other=_NO_DIM, out=None):
    return _extreme(self, dim, keepdim, True, other, out)


@export()
@records("min", "min_dim")
def min(self, dim=_NO_DIM, keepdim=_NO_DIM, *, other=_NO_DIM, out=None):
    return _extreme(self, dim, keepdim, False, other, out)


def _nonempty_dim(a, d, name):
    """torch's IndexError for a reduction that picks one element along an empty dim d."""
    if a.ndim and a.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _arg_extreme(ufunc, self, dim, keepdim):
    """argmax / argmin: ufunc's int64 index, of the flattened input when dim is None."""
    a = self._data
    name = ufunc.__name__
    if a.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if a.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        return _make(np.int64(ufunc(a)))
    d = _wrap_dim(dim, a.ndim)
    _nonempty_dim(a, d, name)
    return _make(ufunc(a, axis=d, keepdims=keepdim).astype(np.int64))


@export()
def argmax(self, dim=None, keepdim=False):
    return _arg_extreme(np.argmax, self, dim, keepdim)


@export()
def argmin(self, dim=None, keepdim=False):
    return _arg_extreme(np.argmin, self, dim, keepdim)


def _softmax_like(self, dim, dtype, row, zero_d, formula):
    """softmax / log_softmax over dim: zero_d(a) for a 0-d input, else formula(a, d); a
    non-floating input raises torch's kernel error."""
    if dtype is not None:
        self = to(self, dtype)
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    if a.dtype.kind != "f" and a.size:      # (an empty input reaches no kernel in torch)
        last = "lastdim_" if d == a.ndim - 1 or a.ndim == 0 else ""
        raise NotImplementedError(f'"{row}_{last}kernel_impl" not implemented for '
                                  f"'{_TORCH_SCALAR[a.dtype.name]}'")
    if a.ndim == 0:
        r = zero_d(a)
    elif a.size == 0:
        r = a.copy()            # an empty softmax is empty, as torch's (NumPy's max refuses)
    elif row == "softmax" and a.dtype == np.float16:
        # torch's CPU softmax computes half in float and rounds once (log_softmax does not).
        r = quietly(formula, a.astype(np.float32), d).astype(np.float16)
    else:
        r = quietly2(formula, a, d)
    out = _make(c_order(r))         # torch's softmax kernels write a contiguous result
    if self._rg and _state.enabled:
        node = record(D[row], out, (self,), (d,))
        if dim < 0:
            keep_raw(node, "dim", dim)          # torch saves the dim as given
    return out


def _softmax(a, d):
    if _f32.TORCH_BITS and a.dtype == np.float32 and d == a.ndim - 1:
        return _f32.softmax_lastdim(a)      # torch's float32 kernel, bit for bit
    # The ufuncs' own reduce (np.max and np.sum add a Python wrapper each) and in place on the
    # fresh temporaries: the same arithmetic, in fewer arrays.
    e = np.exp(a - np.maximum.reduce(a, axis=d, keepdims=True))
    return np.divide(e, np.add.reduce(e, axis=d, keepdims=True), out=e)


def _log_softmax(a, d):
    if _f32.TORCH_BITS and a.dtype == np.float32 and d == a.ndim - 1:
        return _f32.log_softmax_lastdim(a)  # torch's float32 kernel, bit for bit
    shifted = a - np.maximum.reduce(a, axis=d, keepdims=True)     # as _softmax above
    total = np.add.reduce(np.exp(shifted), axis=d, keepdims=True)
    return np.subtract(shifted, np.log(total), out=shifted)


@export()
@records("softmax")
def softmax(self, dim, dtype=None):
    return _softmax_like(self, dim, dtype, "softmax", np.ones_like, _softmax)


@export()
@records("log_softmax")
def log_softmax(self, dim, dtype=None):
    return _softmax_like(self, dim, dtype, "log_softmax", np.zeros_like, _log_softmax)


# ----- Spread: var, std, var_mean, std_mean ------------------------------------------------

def _spread_args(self, name, dim, unbiased, correction):
    """(array, dims or None, correction as saved, effective correction) for var and std.
    torch: var(x, False) means unbiased=False; unbiased and correction exclude each other."""
    a = self._data
    if a.dtype.kind != "f":
        # torch names var_mean and std_mean; var and std share one message
        what = name if name.endswith("_mean") else "std and var"
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    if isinstance(dim, bool) and unbiased is None:
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        "correction= and unbiased= together")
    if correction is None and unbiased is not None:
        correction = 1 if unbiased else 0
    dims = None if dim is None else (_dims(dim, a.ndim) if a.ndim else ())
    if dims is not None:
        _check_unique(dim, dims)
    if correction is None and dims is not None:
        correction = 1          # torch saves the overload's default (None for the whole tensor)
    return a, dims, correction, (1 if correction is None else correction)


def _check_unique(dim, dims):
    if len(set(dims)) != len(dims):
        d = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")


def _spread(a, dims, ddof, keepdim, sqrt, name):
    # torch accumulates var and std in double (WelfordOps<scalar_t, double>), then converts
    # to the input's dtype (float16 through float, as c10::Half(float) does)
    dt = a.dtype
    a = a.astype(np.float64, copy=False)
    axis = None if dims is None else dims
    n = a.size if axis is None else int(np.prod([a.shape[d] for d in axis]))
    if n - ddof <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=user_stacklevel())
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.mean(a, axis=axis, keepdims=True) if a.size else np.zeros((1,) * a.ndim, a.dtype)
        ss = np.sum((a - m) ** 2, axis=axis, keepdims=keepdim)
        r = ss / a.dtype.type(n - ddof if n > ddof else 0)     # torch clamps at 0
        if sqrt:
            r = np.sqrt(r)
        mean = np.mean(a, axis=axis, keepdims=keepdim) if a.size else \
            np.full(np.shape(r), np.nan, a.dtype)
    return _from_double(r, dt), _from_double(mean, dt)


def _from_double(r, dt):
    return np.asarray(r, dtype=dt if dt == np.float64 else np.float32).astype(dt, copy=False)


@export()
@records("var")
def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The variance over dim (all dims by default), with Bessel's correction unless
    `unbiased=False` or `correction=` says otherwise.

    >>> import gradviz as torch
    >>> torch.tensor([1.0, 2.0, 4.0]).var()
    tensor(2.3333)
    """
    return _spread_op(self, "var", dim, unbiased, correction, keepdim)


@export()
@records("std")
def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The standard deviation over dim (all dims by default); see var.

    >>> import gradviz as torch
    >>> torch.tensor([1.0, 3.0]).std()
    tensor(1.4142)
    """
    return _spread_op(self, "std", dim, unbiased, correction, keepdim)


@export(tensor=False)
@records("var_mean")
def var_mean(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) in one pass, one node with two outputs (VarMeanBackward0)."""
    return _spread_op(self, "var_mean", dim, unbiased, correction, keepdim)


@export(tensor=False)
@records("std_mean")
def std_mean(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) in one pass, one node with two outputs (StdMeanBackward0)."""
    return _spread_op(self, "std_mean", dim, unbiased, correction, keepdim)


def _spread_op(self, row, dim, unbiased, correction, keepdim):
    """var, std, var_mean and std_mean: the spread (and the mean, for the *_mean rows, which
    record one node with two outputs; std_mean also saves its std)."""
    a, dims, saved, ddof = _spread_args(self, row, dim, unbiased, correction)
    spread, mean = _spread(a, dims, ddof, keepdim, row.startswith("std"), row)
    args = (self, dims, saved, keepdim)
    if not row.endswith("_mean"):
        out = _make(spread)
        if _needs(self):
            node = record(D[row], out, (self,), args)
            if negative(dim):
                keep_raw(node, "dim", dim)    # torch saves the dims as given
        return out
    outs = (_make(spread), _make(mean))
    if _needs(self):
        node = record_outputs(D[row], outs, (self,),
                              args + ((outs[0],) if row == "std_mean" else ()))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dims as given
    return outs


# ----- Norms -------------------------------------------------------------------------------

@records("linalg_vector_norm")
def vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.vector_norm: the ord-norm of the entries over dim (all dims by default).

    >>> import gradviz as torch
    >>> torch.linalg.vector_norm(torch.tensor([3.0, -4.0]))
    tensor(5.)
    """
    if out is not None:
        raise _not_implemented("linalg.vector_norm", "out")
    if isinstance(ord, str) or isinstance(ord, Tensor):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    a = self._data
    if a.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_TORCH_SCALAR[a.dtype.name]}")
    if dtype is not None:
        # torch computes in dtype without a copy node: the gradient is cast back to self's.
        want = np.dtype(_dtype.to_numpy_dtype(dtype))
        if want.kind != "f":
            raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex, "
                               f"but got {_TORCH_SCALAR[want.name]}")
        if want.itemsize < a.dtype.itemsize:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input "
                               f"({_TORCH_SCALAR[a.dtype.name]}) should be convertible without "
                               f"narrowing to the specified dtype ({_TORCH_SCALAR[want.name]})")
        a = a.astype(want)
    if isinstance(dim, int):
        dim = (dim,)
    dims = None if dim is None else (_dims(dim, a.ndim) if a.ndim else ())
    if dims is not None:
        _check_unique(dim, dims)
    axis = dims if dims else None
    if a.size == 0 and ord < 0 or (a.size == 0 and np.isinf(ord) and axis is None):
        raise RuntimeError("linalg.vector_norm cannot compute the "
                           f"{_ord_text(ord)} norm on an empty tensor because the operation "
                           "does not have an identity")
    x = np.abs(a).astype(_opmath(a.dtype), copy=False)     # float16 in float32, rounded once
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if ord == 2:
            r = np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdim))
        elif ord == 1:
            r = np.sum(x, axis=axis, keepdims=keepdim)
        elif ord == 0:
            r = np.sum(x != 0, axis=axis, keepdims=keepdim).astype(a.dtype)
        elif ord == np.inf:
            r = np.max(x, axis=axis, keepdims=keepdim)
        elif ord == -np.inf:
            r = np.min(x, axis=axis, keepdims=keepdim)
        else:
            r = np.sum(x ** ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)
    out = _make(np.asarray(r, dtype=a.dtype))
    if _needs(self):
        node = record(D["linalg_vector_norm"], out, (self,), (self, ord, dims, keepdim))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out


def _ord_text(ord):
    return "-inf" if ord == -np.inf else "inf" if ord == np.inf else f"{ord}"


@export()
def norm(self, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    """The p-norm (Frobenius by default) of the entries, over dim; torch.norm and
    Tensor.norm, recorded as torch 2.13 does: one LinalgVectorNormBackward0.

    >>> import gradviz as torch
    >>> torch.tensor([[3.0, 0.0], [0.0, -4.0]]).norm()
    tensor(5.)
    """
    if out is not None:
        raise _not_implemented("norm", "out")
    if p is None:
        p = "fro"
    if isinstance(p, str):
        if p == "fro":
            if dim is not None and not isinstance(dim, int) and len(dim) > 2:
                raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                                   + " ".join(str(d) for d in dim))
            return vector_norm(self, 2, dim, keepdim, dtype=dtype)
        if p == "nuc":
            raise _not_implemented("norm", "p='nuc'")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return vector_norm(self, p, dim, keepdim, dtype=dtype)


def matrix_or_vector_norm(self, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """torch.linalg.norm: a vector norm for 1-D input or an int dim, a matrix norm for 2-D
    input or a 2-tuple dim ('fro', and ord 1, -1, inf, -inf composed of vector_norm and
    amax/amin as torch composes them); the 2-norm and 'nuc' need an SVD and raise."""
    if out is not None:
        raise _not_implemented("linalg.norm", "out")
    nd = self.dim()
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        is_matrix = len(dim) == 2
    else:
        if ord is not None and nd not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {nd}D.")
        is_matrix = ord is not None and nd == 2
    if isinstance(ord, str) or is_matrix and ord is not None:
        if nd < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                               "dimensions.")
        return _matrix_norm(self, "fro" if ord is None else ord, dim or (-2, -1), keepdim,
                            dtype)
    # torch's linalg_norm: opt_ord.value_or(2.0), a float (LinalgVectorNormBackward0's ord)
    return vector_norm(self, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)


def _matrix_norm(self, ord, dim, keepdim, dtype):
    if ord == "fro":
        # torch's matrix_norm wraps the dims first (norm(x, 'fro')'s `_saved_dim` is (0, 1))
        return vector_norm(self, 2, tuple(_wrap_dim(d, self.dim()) for d in dim), keepdim,
                           dtype=dtype)
    if ord in ("nuc", 2, -2):
        raise _not_implemented("linalg.norm", f"ord={ord!r}")
    if isinstance(ord, str) or ord not in (1, -1, np.inf, -np.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # torch: the max (min) over one dim of the 1-norms along the other.
    d0, d1 = (_wrap_dim(d, self.dim()) for d in dim)
    if abs(ord) == np.inf:
        d0, d1 = d1, d0
    sums = vector_norm(self, 1.0, (d0,), keepdim, dtype=dtype)     # torch's ord: 1.0
    if not keepdim and d0 < d1:
        d1 -= 1
    return (amax if ord > 0 else amin)(sums, d1, keepdim)


# ----- Scans and extreme values ------------------------------------------------------------

def _int64_sum_type(a, dtype, self=None):
    """torch's accumulation dtype for sums, products and scans: dtype when given (the input
    cast first), else int64 for bool and integer input. An integer dtype= for a `self` that
    records a node is torch's autograd error (no integer tensor requires grad)."""
    if dtype is not None:
        a = a.astype(_dtype.to_numpy_dtype(dtype))
        if a.dtype.kind not in "fc" and self is not None and _needs(self):
            raise RuntimeError(f"Autograd not support dtype: {_TORCH_SCALAR[a.dtype.name]}")
        return a
    if a.dtype.kind in "bui" and a.dtype != np.int64:
        return a.astype(np.int64)
    return a


def _refuse_bool_scan(name, dt):
    """torch's scans have no bool kernel (a bool input without dtype= is summed as int64)."""
    if dt.kind == "b":
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")


def _export_scan(name, ufunc, saves_self, doc):
    """torch.<name>(input, dim, *, dtype=None) and Tensor.<name>: ufunc's running values along
    dim, recording the <name> row (saving self when saves_self, dim always)."""
    def scan(self, dim, *, dtype=None):
        a = _int64_sum_type(self._data, dtype, self)
        _refuse_bool_scan(name, a.dtype)
        d = _wrap_dim(dim, a.ndim)
        out = _make(c_order(_rounded(ufunc(a, axis=d, dtype=_opmath(a.dtype)), a.dtype))
                    if a.ndim else a.copy())   # torch's scans write a contiguous result
        if _needs(self):
            node = record(D[name], out, (self,), (self, d) if saves_self else (d,))
            if dim < 0:
                keep_raw(node, "dim", dim)      # torch saves the dim as given
        return out

    scan.__name__ = scan.__qualname__ = name
    scan.__doc__ = doc
    return records(name)(export()(scan))


cumsum = _export_scan("cumsum", np.cumsum, False, """\
Running sums along dim (`out=` as torch.X's keyword, gradviz._keywords).

    >>> import gradviz as torch
    >>> torch.tensor([1.0, 2.0, 3.0]).cumsum(0)
    tensor([1., 3., 6.])
    """)
cumprod = _export_scan("cumprod", np.cumprod, True, """\
Running products along dim.

    >>> import gradviz as torch
    >>> torch.tensor([1.0, 2.0, 3.0]).cumprod(0)
    tensor([1., 2., 6.])
    """)




def _same_dtype(self, dtype):
    """An in-place scan keeps self's dtype: torch refuses any other dtype=."""
    if dtype is None:
        return
    want = np.dtype(_dtype.to_numpy_dtype(dtype))
    have = self._data.dtype
    if want != have:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_dtype._CPP_NAMES[have.name]} and "
                           f"output tensor dtype {_dtype._CPP_NAMES[want.name]} should match")


@method("cumsum_")
@records("cumsum")
def cumsum_(self, dim, *, dtype=None):
    _same_dtype(self, dtype)
    _refuse_bool_scan("cumsum", self._data.dtype)
    _check_inplace(self)
    d = _wrap_dim(dim, self._data.ndim)
    a = self._data
    _write(self, np.cumsum(a, axis=d, dtype=_opmath(a.dtype)) if a.ndim else a)
    _commit(self, D["cumsum"], (self,), (d,), "cumsum_")
    return keep_raw_of(self, D["cumsum"], dim=dim) if dim < 0 else self  # torch: dim as given


@method("cumprod_")
@records("cumprod")
def cumprod_(self, dim, *, dtype=None):
    _same_dtype(self, dtype)
    _refuse_bool_scan("cumprod", self._data.dtype)
    _check_inplace(self)
    orig = self.clone() if _needs(self) else self     # saved before the write
    d = _wrap_dim(dim, self._data.ndim)
    a = self._data
    _write(self, np.cumprod(a, axis=d, dtype=_opmath(a.dtype)) if a.ndim else a)
    _commit(self, D["cumprod"], (self,), (orig, d), "cumprod_")
    return keep_raw_of(self, D["cumprod"], dim=dim) if dim < 0 else self  # torch: dim as given


def _reduce_dims(a, dim, name):
    if isinstance(dim, int):
        dim = (dim,)
    dims = _dims(dim, a.ndim) if a.ndim else ()
    _check_unique(dim, dims)
    return dims


@export()
@records("logsumexp")
def logsumexp(self, dim, keepdim=False, *, out=None):
    """log(sum(exp(x))) over dim, computed without overflow.

    >>> import gradviz as torch
    >>> torch.tensor([0.0, 0.0]).logsumexp(0)
    tensor(0.6931)
    """
    if out is not None:
        raise _not_implemented("logsumexp", "out")
    a = self._data
    if a.dtype.kind != "f":
        a = a.astype(_dtype._default[0].np)
    dims = _reduce_dims(a, dim, "logsumexp")
    axis = dims if dims else None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if a.size:
            m = np.max(a, axis=axis, keepdims=True)
            m = np.where(np.isinf(m), 0, m)     # torch: an infinite max is not subtracted
            r = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
        else:
            r = np.log(np.sum(np.exp(a), axis=axis, keepdims=True))
        if not keepdim:
            r = np.squeeze(r, axis=tuple(range(a.ndim)) if axis is None else axis)
    out = _make(np.asarray(r, dtype=a.dtype))
    if _needs(self):
        node = record(D["logsumexp"], out, (self,), (self, dims, keepdim))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return out


def _export_amax_amin(name, ufunc, doc):
    """torch.<name>(input, dim=(), keepdim=False, *, out=None) and Tensor.<name>: ufunc (np.max
    or np.min) over dim, recording the <name> row."""
    def extreme(self, dim=(), keepdim=False, *, out=None):
        if out is not None:
            raise _not_implemented(name, "out")
        a = self._data
        dims = _reduce_dims(a, dim, name)
        axis = dims if dims else None
        if a.size == 0 and (axis is None or 0 in [a.shape[d] for d in axis]):
            if axis is None:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0. Specify the reduction dim with the "
                                   "'dim' argument.")
            # torch names the dim as given (-1, not 1)
            given = dim if isinstance(dim, (tuple, list)) else (dim,)
            d = next(g for g in given if a.shape[_wrap_dim(g, a.ndim)] == 0)
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        r = ufunc(a, axis=axis, keepdims=keepdim) if a.ndim else a.copy()
        res = _make(np.asarray(r, dtype=a.dtype))
        if _needs(self):
            node = record(D[name], res, (self,), (self, dims, keepdim))
            if negative(dim):                   # torch saves the dims as given
                keep_raw(node, "dim", dim)
        return res

    extreme.__name__ = extreme.__qualname__ = name
    extreme.__doc__ = doc
    return export()(records(name)(extreme))


amax = _export_amax_amin("amax", np.max, """\
The maximum over dim (all dims by default); ties share the gradient evenly.

    >>> import gradviz as torch
    >>> torch.tensor([[1.0, 5.0], [7.0, 2.0]]).amax(1)
    tensor([5., 7.])
    """)
amin = _export_amax_amin("amin", np.min, """\
The minimum over dim (all dims by default); ties share the gradient evenly.

    >>> import gradviz as torch
    >>> torch.tensor([[1.0, 5.0], [7.0, 2.0]]).amin(1)
    tensor([1., 2.])
    """)


# ----- Predicates over dims (never recorded) -----------------------------------------------

def _export_predicate(name, fn, doc):
    """torch.<name>(input, dim=None, keepdim=False, *, out=None) and Tensor.<name>: fn's truth
    over dim (uint8 for uint8 input, else bool)."""
    def predicate(self, dim=None, keepdim=False, *, out=None):
        if out is not None:
            raise _not_implemented(name, "out")
        a = self._data
        kind = np.uint8 if a.dtype == np.uint8 else np.bool_     # torch keeps uint8 for uint8
        if dim is None:
            return _make(np.asarray(fn(a), dtype=kind))
        dims = _reduce_dims(a, dim, name)
        if not a.ndim:
            return _make(np.asarray(a != 0, dtype=kind))
        return _make(np.asarray(fn(a, axis=dims, keepdims=keepdim), dtype=kind))

    predicate.__name__ = predicate.__qualname__ = name
    predicate.__doc__ = doc
    return export()(predicate)


all = _export_predicate("all", np.all, """\
True where every element (over dim) is non-zero.

    >>> import gradviz as torch
    >>> torch.tensor([1.0, 0.0]).all()
    tensor(False)
    """)
any = _export_predicate("any", np.any, """\
True where some element (over dim) is non-zero.

    >>> import gradviz as torch
    >>> torch.tensor([1.0, 0.0]).any()
    tensor(True)
    """)


@export()
def count_nonzero(self, dim=None):
    """The number of non-zero elements (over dim), as int64.

    >>> import gradviz as torch
    >>> torch.count_nonzero(torch.tensor([1.0, 0.0, 3.0]))
    tensor(2)
    """
    a = self._data
    if dim is None:
        return _make(np.int64(np.count_nonzero(a)))
    dims = _reduce_dims(a, dim, "count_nonzero")
    if not a.ndim:
        return _make(np.int64(a != 0))
    return _make(np.asarray(np.count_nonzero(a, axis=dims), dtype=np.int64))


# ----- Sums and means that skip NaN --------------------------------------------------------

@export()
@records("nansum")
def nansum(self, dim=None, keepdim=False, *, dtype=None, out=None):
    """The sum with NaNs counted as zero (NansumBackward0: no gradient reaches a NaN).

    >>> import gradviz as torch
    >>> torch.tensor([1.0, float("nan"), 2.0]).nansum()
    tensor(3.)
    """
    if out is not None:
        raise _not_implemented("nansum", "out")
    a = _int64_sum_type(self._data, dtype, self)
    dims = _nan_axis(dim, a.ndim)
    axis = tuple(range(a.ndim)) if dims is None else dims
    r = quietly(np.nansum, a, axis=axis, keepdims=keepdim, dtype=_opmath(a.dtype))
    out = _make(np.array(_rounded(np.asarray(r), a.dtype), order="C")[()])
    if _needs(self):
        record(D["nansum"], out, (self,), (dims, keepdim, self))
    return out


@export()
def nanmean(self, dim=None, keepdim=False, *, dtype=None, out=None):
    """The mean of the values that are not NaN: nansum over their count, as torch composes it
    (DivBackward0 over NansumBackward0).

    >>> import gradviz as torch
    >>> torch.tensor([1.0, float("nan"), 2.0]).nanmean()
    tensor(1.5000)
    """
    if out is not None:
        raise _not_implemented("nanmean", "out")
    if self._data.dtype.kind != "f":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_TORCH_SCALAR[self._data.dtype.name]}")
    if dtype is not None:
        _float_data(self, dtype, "nanmean")     # torch's dtype= check, before any sum
    count = _make(np.asarray(np.sum(~np.isnan(self._data), axis=_nan_axis(dim, self.dim()),
                                    keepdims=keepdim), dtype=np.int64)[()])
    return nansum(self, dim, keepdim, dtype=dtype).div(count)


def _nan_axis(dim, ndim):
    """The dims nansum and nanmean reduce (None: every one), as torch saves them."""
    if dim is None or (type(dim) is tuple and not dim):
        return None
    return _dims(dim, ndim) if ndim else ()
