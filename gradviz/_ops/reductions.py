"""Reductions: sum, mean, prod, max/min (whole and along a dim), argmax/argmin, softmax and
log_softmax.
"""

import numpy as np

from .. import _dtype, return_types
from .._derivatives import DERIVATIVES as D
from .._registry import export, records
from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.formula import record
from ._common import _TORCH_SCALAR, _dims, _needs
from .pointwise import maximum, minimum, to


# ----- Reductions --------------------------------------------------------------------------



@export()
@records("sum", "sum_dim")
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
    r = np.sum(a, axis=dims, keepdims=keepdim) if a.ndim else a
    if not r.flags.c_contiguous:
        # torch allocates the result contiguous; NumPy follows the input's layout, which would
        # make a later reshape of it a view where torch's is a _reshape_alias (or the reverse).
        r = np.ascontiguousarray(r)
    out = _make(r)
    if _needs(self):
        record(D["sum_dim"], out, (self,), (a.shape, dims, keepdim))
    return out


def _need_float(a, name):
    if a.dtype.kind != "f":
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: "
                           f"{_TORCH_SCALAR[a.dtype.name]}")




@export()
@records("mean", "mean_dim")
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


@export()
@records("prod", "prod_dim")
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


@export()
@records("max", "max_dim")
def max(self, dim=None, keepdim=False, *, other=None):
    return _extreme(self, dim, keepdim, True, other)


@export()
@records("min", "min_dim")
def min(self, dim=None, keepdim=False, *, other=None):
    return _extreme(self, dim, keepdim, False, other)


@export()
def argmax(self, dim=None, keepdim=False):
    a = self._data
    if dim is None:
        return _make(np.int64(np.argmax(a)))
    return _make(np.argmax(a, axis=_wrap_dim(dim, a.ndim), keepdims=keepdim).astype(np.int64))


@export()
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


@export()
@records("softmax")
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


@export()
@records("log_softmax")
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
