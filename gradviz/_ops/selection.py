"""Order statistics and running extremes: kthvalue, cummax, cummin.

Each returns (values, indices) and records its node on values; the gradient goes back to the
position each value was taken from, as torch's value_selecting_reduction_backward (kthvalue)
and cummaxmin_backward (cummax, cummin).
"""

import numpy as np

from .. import return_types
from .._derivatives import DERIVATIVES as D
from .._registry import export, records
from .._tensor import _make, _wrap_dim
from ..autograd.formula import keep_raw, negative, record
from ._common import _needs, _not_implemented
from ._iterator import c_order


# ----- kthvalue ----------------------------------------------------------------------------

@export()
@records("kthvalue")
def kthvalue(self, k, dim=-1, keepdim=False, *, out=None):
    """The k-th smallest value along dim (1-based; NaN counts as the largest) and its index;
    among equal values the one torch's CPU kernel (a quickselect) reports.

    >>> import gradviz as torch
    >>> torch.tensor([3.0, 1.0, 2.0]).kthvalue(2)
    torch.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(2))
    """
    if out is not None:
        raise _not_implemented("kthvalue", "out")
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    size = a.shape[d] if a.ndim else 1
    if a.ndim and size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if a.ndim == 0:
        vals, idx = a.copy(), np.int64(0)
    else:
        idx = _kth_index(a, k, d)
        vals = np.take_along_axis(a, idx, d)
        if not keepdim:
            idx, vals = np.squeeze(idx, d), np.squeeze(vals, d)
    values, indices = _make(vals), _make(np.asarray(idx, dtype=np.int64)[()])
    if _needs(self):
        node = record(D["kthvalue"], values, (self,), (d, indices, keepdim, a.shape))
        if negative(dim):
            keep_raw(node, "dim", dim)    # torch saves the dim as given
    return return_types.kthvalue(values, indices)


def _kth_index(a, k, d):
    """The index of each slice's k-th smallest value along d (kept as a size-1 dim). Where
    that value is unique in its slice the index is the sort's; where it is tied, torch's
    quickselect decides which of the equal values is reported, so it is replayed there."""
    idx = np.take(np.argsort(a, axis=d, kind="stable"), [k - 1], axis=d)      # NaN last
    kth = np.take_along_axis(a, idx, d)
    same = (a == kth) | (np.isnan(a) & np.isnan(kth)) if a.dtype.kind == "f" else a == kth
    tied = np.moveaxis(same.sum(axis=d, keepdims=True) > 1, d, -1)[..., 0]
    if tied.any():
        rows = np.moveaxis(a, d, -1)
        out = np.moveaxis(idx, d, -1)[..., 0].copy()
        for pos in map(tuple, np.argwhere(tied)):     # () for a 1-D a (np.nonzero refuses 0-d)
            out[pos] = _quick_select(rows[pos].tolist(), k - 1)
        idx = np.expand_dims(out, d)
    return idx


def _quick_select(values, k):
    """torch's quick_select_template (ATen's SortingUtils.h) on a list: the original index of
    the value that lands at position k (NaN compares above every number)."""
    arr, idx = values, list(range(len(values)))

    def gt(x, y):
        return (x != x and y == y) or x > y     # x != x: x is NaN

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        idx[i], idx[j] = idx[j], idx[i]

    lo, hi = 0, len(arr) - 1
    while hi > lo + 1:
        mid = lo + (hi - lo) // 2               # median of three as the pivot
        swap(mid, lo + 1)
        if gt(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while gt(pivot, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    if hi == lo + 1 and gt(arr[lo], arr[hi]):
        swap(lo, hi)
    return idx[k]


# ----- Running maximum and minimum ---------------------------------------------------------

def _running(self, dim, name, accumulate, beats):
    """(values, indices) of the running extreme along dim: an element that `beats` the extreme
    so far (or equals it, or is NaN) takes its place and its index, as torch's kernel does."""
    a = self._data
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0 or a.size == 0:
        vals, idx = a.copy(), np.zeros(a.shape, np.int64)
    else:
        vals = accumulate(a, axis=d)
        before = np.delete(np.concatenate([np.take(vals, [0], axis=d), vals], axis=d), -1, d)
        taken = beats(a, before) | (a == before)
        if a.dtype.kind == "f":
            taken |= np.isnan(a)
        shape = [1] * a.ndim
        shape[d] = a.shape[d]
        pos = np.arange(a.shape[d]).reshape(shape)
        idx = np.maximum.accumulate(np.where(taken, pos, 0), axis=d)
    # torch's kernel writes contiguous results
    values, indices = _make(c_order(vals)), _make(c_order(np.asarray(idx, dtype=np.int64)[()]))
    if _needs(self):
        node = record(D[name], values, (self,), (d, indices, self))
        if dim < 0:
            keep_raw(node, "dim", dim)          # torch saves the dim as given
    return getattr(return_types, name)(values, indices)


@export()
@records("cummax")
def cummax(self, dim, *, out=None):
    """The running maximum along dim and where each was reached (the latest of equal values).

    >>> import gradviz as torch
    >>> torch.tensor([1.0, 3.0, 2.0]).cummax(0).values
    tensor([1., 3., 3.])
    """
    if out is not None:
        raise _not_implemented("cummax", "out")
    return _running(self, dim, "cummax", np.maximum.accumulate, np.greater)


@export()
@records("cummin")
def cummin(self, dim, *, out=None):
    """The running minimum along dim and where each was reached (the latest of equal values).

    >>> import gradviz as torch
    >>> torch.tensor([2.0, 1.0, 3.0]).cummin(0).values
    tensor([2., 1., 1.])
    """
    if out is not None:
        raise _not_implemented("cummin", "out")
    return _running(self, dim, "cummin", np.minimum.accumulate, np.less)
