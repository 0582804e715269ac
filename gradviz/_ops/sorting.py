"""Sorting and order statistics: sort, argsort, topk, median (whole and along a dim).

The sorted order is stable (equal values keep their order, as torch's stable sort), NaN sorts
above every number (last ascending, first descending), as in torch.
"""

import numpy as np

from .. import return_types
from .._derivatives import DERIVATIVES as D
from .._registry import export, records
from .._tensor import _make, _wrap_dim
from ..autograd.formula import keep_raw, negative, record
from .._creation import _dense_strides
from ..autograd.graph import _strided_copy
from ._common import _needs, _not_implemented


def _order(a, d, descending):
    """Stable argsort of a along d; descending keeps equal values in their original order."""
    if not descending:
        return np.argsort(a, axis=d, kind="stable")
    n = a.shape[d]
    rev = np.flip(a, d)
    return np.flip(n - 1 - np.argsort(rev, axis=d, kind="stable"), d)


# ----- Sorting -----------------------------------------------------------------------------

@export()
@records("sort", "sort_stable")
def sort(self, dim=-1, descending=False, *, stable=None, out=None):
    """(values, indices) sorted along dim.

    >>> import gradviz as torch
    >>> torch.tensor([3.0, 1.0, 2.0]).sort().values
    tensor([1., 2., 3.])
    """
    if out is not None:
        raise _not_implemented("sort", "out")
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        idx = np.int64(0)
        vals = a.copy()
    else:
        idx = _order(a, d, descending)
        vals = _laid_out_like(np.take_along_axis(a, idx, d), a)
        idx = _laid_out_like(idx.astype(np.int64, copy=False), a)
    values, indices = _make(vals), _make(np.asarray(idx, dtype=np.int64)[()])
    if _needs(self):
        # torch: sort(stable=...) is the sort.stable overload (SortBackward1).
        node = record(D["sort" if stable is None else "sort_stable"], values, (self,),
                      (d, a.shape, indices))
        if dim < 0:
            keep_raw(node, "dim", dim)          # torch saves the dim as given
    return return_types.sort(values, indices)


def _laid_out_like(r, a):
    """r, a result of a's shape, laid out as torch's sort lays out its outputs: dense in the
    order of a's strides (infer_dense_strides), so A.t().sort(0) is column-major."""
    if a.flags.c_contiguous:
        return r
    steps = tuple(s * r.itemsize for s in _dense_strides(a.shape, [s // a.itemsize
                                                                   for s in a.strides]))
    return r if steps == r.strides else _strided_copy(r, r.dtype, r.shape, steps)


@export()
def argsort(self, dim=-1, descending=False, *, stable=False):
    """The indices that sort self along dim (never recorded).

    >>> import gradviz as torch
    >>> torch.tensor([3.0, 1.0, 2.0]).argsort()
    tensor([1, 2, 0])
    """
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return _make(np.int64(0))
    return _make(_laid_out_like(_order(a, d, descending).astype(np.int64), a))


@export()
@records("topk")
def topk(self, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The k largest (or smallest) values along dim and their indices, in sorted order.

    >>> import gradviz as torch
    >>> torch.tensor([3.0, 1.0, 2.0]).topk(2).values
    tensor([3., 2.])
    """
    if out is not None:
        raise _not_implemented("topk", "out")
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    size = a.shape[d] if a.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if a.ndim == 0:
        vals, idx = a.copy(), np.int64(0)
    else:
        idx = np.take(_order(a, d, largest), np.arange(k), axis=d)
        vals = np.take_along_axis(a, idx, d)
    values, indices = _make(vals), _make(np.asarray(idx, dtype=np.int64)[()])
    if _needs(self):
        node = record(D["topk"], values, (self,), (d, a.shape, indices))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return return_types.topk(values, indices)


# ----- Median ------------------------------------------------------------------------------

@export()
@records("median", "median_dim")
def median(self, dim=None, keepdim=False, *, out=None):
    """The lower median (of all elements, or along dim with its indices); NaN if a NaN is
    present, as torch.

    >>> import gradviz as torch
    >>> torch.tensor([4.0, 1.0, 3.0, 2.0]).median()
    tensor(2.)
    """
    if out is not None:
        raise _not_implemented("median", "out")
    return _lower_median(self, dim, keepdim, "median", _median_of_all, _median_index)


def _median_of_all(flat):
    if flat.size == 0:
        if flat.dtype.kind != "f":
            # torch returns NaN cast to the integer dtype (-2**63 for int64): platform-defined
            raise NotImplementedError(
                "gradviz: median() / nanmedian() of an empty integer tensor (torch returns NaN "
                "cast to the integer dtype) is not implemented by gradviz's core; run with "
                "--backend torch to use PyTorch")
        return np.nan
    if flat.dtype.kind == "f" and np.isnan(flat).any():
        return np.nan
    return np.sort(flat, kind="stable")[(flat.size - 1) // 2]


def _median_index(a, d):
    """Each slice's lower median's index along d (the first NaN's where it has one)."""
    n = a.shape[d]
    idx = np.take(np.argsort(a, axis=d, kind="stable"), [(n - 1) // 2], axis=d)
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        has_nan = nan.any(axis=d, keepdims=True)
        idx = np.where(has_nan, np.argmax(nan, axis=d, keepdims=True), idx)
    return idx


def _lower_median(self, dim, keepdim, name, of_all, index_along):
    """What median and nanmedian share: the whole-tensor value (of_all of the flat data), or
    values and indices along dim (index_along gives the chosen index, keeping dim), and the
    rows `<name>` / `<name>_dim` recorded."""
    a = self._data
    if a.dtype.kind == "b":     # torch's median kernels have no bool case
        kernel = "median_cpu" if dim is None else "median_out"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if dim is None:
        out = _make(np.asarray(of_all(a.reshape(-1)), dtype=a.dtype)[()])
        if _needs(self):
            record(D[name], out, (self,), (self,))
        return out
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        vals, idx = a.copy(), np.int64(0)
    else:
        if a.shape[d] == 0:
            # (torch's nanmedian shares median's check and its name)
            raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
        idx = index_along(a, d)
        vals = np.take_along_axis(a, idx, d)
        if not keepdim:
            idx, vals = np.squeeze(idx, d), np.squeeze(vals, d)
    values, indices = _make(vals), _make(np.asarray(idx, dtype=np.int64)[()])
    if _needs(self):
        node = record(D[name + "_dim"], values, (self,), (d, keepdim, a.shape, indices))
        if dim < 0:
            keep_raw(node, "dim", dim)          # torch saves the dim as given
    return getattr(return_types, name)(values, indices)


@export()
def msort(self):
    """self sorted along its first dim (sort(dim=0).values, as torch records it).

    >>> import gradviz as torch
    >>> torch.msort(torch.tensor([3.0, 1.0, 2.0]))
    tensor([1., 2., 3.])
    """
    return sort(self, 0).values


@export()
@records("nanmedian", "nanmedian_dim")
def nanmedian(self, dim=None, keepdim=False, *, out=None):
    """The lower median ignoring NaNs (NaN only where every value is NaN).

    >>> import gradviz as torch
    >>> torch.tensor([4.0, float("nan"), 1.0]).nanmedian()
    tensor(1.)
    """
    if out is not None:
        raise _not_implemented("nanmedian", "out")
    if self._data.dtype.kind != "f":
        return _renamed(median(self, dim, keepdim), "nanmedian")
    return _lower_median(self, dim, keepdim, "nanmedian", _nanmedian_of_all, _nanmedian_index)


def _nanmedian_of_all(flat):
    flat = flat[~np.isnan(flat)]
    return np.nan if flat.size == 0 else np.sort(flat, kind="stable")[(flat.size - 1) // 2]


def _nanmedian_index(a, d):
    order = np.argsort(a, axis=d, kind="stable")            # NaNs sort last
    count = np.sum(~np.isnan(a), axis=d, keepdims=True)
    return np.take_along_axis(order, np.maximum(count - 1, 0) // 2, d)


def _renamed(r, name):
    """median's result of an integer tensor, as nanmedian's (same values)."""
    if isinstance(r, tuple):
        return getattr(return_types, name)(r[0], r[1])
    return r
