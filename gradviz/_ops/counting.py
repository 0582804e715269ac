"""Counting: unique, histc, histogram.

unique records a node torch cannot differentiate (Unique2Backward0 / UniqueDimBackward0: its
backward raises torch's NotImplementedError); histc and histogram are never recorded, as in torch.
"""

import math

import numpy as np

from .. import return_types
from .._creation import linspace
from .._derivatives import DERIVATIVES as D
from .._dtype import _CPP_NAMES, from_numpy_dtype
from .._registry import export, records
from .._tensor import _make, _wrap_dim
from ..autograd.formula import record
from ._common import _TORCH_SCALAR, _needs, _not_implemented


# ----- unique -------------------------------------------------------------------------------

@export()
@records("unique", "unique_dim")
def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values of self in ascending order (torch's CPU kernel sorts even when
    sorted=False), with the index of each element's value and each value's count on request;
    with dim, the distinct slices along dim. NaNs are never equal to each other, as in torch.

    >>> import gradviz as torch
    >>> torch.unique(torch.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    a = self._data
    if dim is None:
        values, inverse, counts = np.unique(a.ravel(), return_inverse=True, return_counts=True,
                                            equal_nan=False)
        inverse = inverse.reshape(a.shape)
    else:
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = _wrap_dim(dim, a.ndim)
        if a.shape[d] == 0:     # np.unique refuses an empty axis
            values, inverse, counts = a, np.zeros(0, np.intp), np.zeros(0, np.intp)
        else:
            values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True,
                                                axis=d, equal_nan=False)
        inverse = inverse.reshape(-1)
    out = _make(np.ascontiguousarray(values))
    if _needs(self):
        record(D["unique" if dim is None else "unique_dim"], out, (self,))
    if not (return_inverse or return_counts):
        return out
    extra = (inverse,) * return_inverse + (counts,) * return_counts
    return (out,) + tuple(_make(x.astype(np.int64)) for x in extra)


# ----- Histograms (never recorded) ---------------------------------------------------------

def _floating(a, kernel):
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_TORCH_SCALAR[a.dtype.name]}'")


def _check_bins(bins):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


def _edges(lo, hi, bins, dtype):
    """bins + 1 edges from lo to hi in dtype, as torch.linspace computes them."""
    return linspace(lo, hi, bins + 1, dtype=from_numpy_dtype(dtype))._data


def _count(a, edges, weight, exact):
    """Per-bin totals of a's elements (their weights) inside [edges[0], edges[-1]]: the bin by
    torch's linear interpolation ((x - lo) * bins / (hi - lo), in the dtype; histc), or by the
    edges themselves (histogram); the last edge falls in the last bin."""
    flat = a.ravel()
    lo, hi = edges[0], edges[-1]
    inside = (flat >= lo) & (flat <= hi)
    x = flat[inside]
    nbins = len(edges) - 1
    if exact:
        pos = np.searchsorted(edges, x, side="right") - 1
    else:
        pos = ((x - lo) * a.dtype.type(nbins) / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, nbins - 1)
    if weight is None:
        return np.bincount(pos, minlength=nbins).astype(a.dtype)
    hist = np.zeros(nbins, a.dtype)
    np.add.at(hist, pos, weight.ravel()[inside])
    return hist


def _bound(v, computed):
    """A bound of histc's range as torch's message prints it: a NaN its min/max reduction
    found in the data is x86's default NaN, whose sign bit is set ("-nan")."""
    if v != v and (computed or math.copysign(1.0, v) < 0):
        return "-nan"
    return f"{v:g}"


@export()
def histc(self, bins=100, min=0, max=0, *, out=None):   # noqa: A002  (torch's names)
    """A histogram of self's values in `bins` equal bins from min to max (both 0: the data's
    own range); values outside are not counted.

    >>> import gradviz as torch
    >>> torch.histc(torch.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if out is not None:
        raise _not_implemented("histc", "out")
    a = self._data
    _floating(a, "histogram_cpu")
    _check_bins(bins)
    lo, hi = float(min), float(max)
    computed = lo == hi and a.size
    if computed:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_bound(lo, computed)}, "
                           f"{_bound(hi, computed)}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return _make(_count(a, _edges(lo, hi, bins, a.dtype), None, exact=False))


@export()
def histogram(self, bins=100, *, range=None, weight=None, density=False,  # noqa: A002
              out=None):
    """(hist, bin_edges): self's values counted (or their weights summed) in `bins` equal bins
    over `range` (the data's own range when None), or in the bins whose edges a 1-D tensor
    `bins` gives; density divides by the total and by each bin's width.

    >>> import gradviz as torch
    >>> torch.histogram(torch.tensor([1.0, 2.0, 1.0]), bins=3).hist
    tensor([2., 0., 1.])
    """
    if out is not None:
        raise _not_implemented("histogram", "out")
    a = self._data
    _floating(a, "histogramdd")
    if isinstance(bins, int):
        _check_bins(bins)
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif a.size:
            lo, hi = float(a.min()), float(a.max())
        else:
            lo, hi = 0.0, 1.0   # torch's range for no values
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is "
                               "not finite")
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{lo:g} max {hi:g} for dimension 0")
        if lo == hi:    # torch widens an empty range as NumPy does
            lo, hi = lo - 0.5, hi + 0.5
        edges = _edges(lo, hi, bins, a.dtype)
    else:
        edges = bins._data
        if edges.dtype != a.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {_CPP_NAMES[a.dtype.name]} and bins for dimension 0 "
                f"with dtype {_CPP_NAMES[edges.dtype.name]}")
        edges = edges.copy()
    w = None if weight is None else weight._data
    if w is not None and w.shape != (a.size,) and w.shape != a.shape:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            f"the input tensor excluding its innermost dimension, but got input with shape "
            f"[{a.size}, 1] and weight with shape [{', '.join(map(str, w.shape))}]")
    if w is not None and w.dtype != a.dtype:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
            f"should have the same dtype, but got input({_CPP_NAMES[a.dtype.name]}), and "
            f"weight({_CPP_NAMES[w.dtype.name]})")
    hist = _count(a, edges, w, exact=True)
    if density:
        hist = hist / hist.sum(dtype=a.dtype)
        hist /= np.diff(edges)
    return return_types.histogram(_make(hist), _make(edges.copy()))


# ----- Runs of equal values ------------------------------------------------------------------

@export()
@records("unique_consecutive")
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """self with each run of equal consecutive values (or slices along dim) kept once; the run
    each element belongs to and each run's length on request. NaNs are never equal, as in
    torch. Recorded as UniqueConsecutiveBackward0, which torch cannot differentiate.

    >>> import gradviz as torch
    >>> torch.unique_consecutive(torch.tensor([1, 1, 2, 1]), return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 1, 1]))
    """
    a = self._data
    if dim is None:
        runs = a.reshape(-1)
        d = 0
    else:
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = _wrap_dim(dim, a.ndim)
        runs = np.moveaxis(a, d, 0).reshape(a.shape[d], -1)
    n = runs.shape[0]
    changed = np.ones(n, bool)
    if n > 1:
        differ = runs[1:] != runs[:-1]
        changed[1:] = differ if differ.ndim == 1 else differ.any(axis=1)
    starts = np.flatnonzero(changed)
    values = np.take(a.reshape(-1) if dim is None else a, starts, axis=d)
    out = _make(np.ascontiguousarray(values))
    if _needs(self):
        record(D["unique_consecutive"], out, (self,))
    if not (return_inverse or return_counts):
        return out
    inverse = np.cumsum(changed) - 1
    if dim is None:
        inverse = inverse.reshape(a.shape)
    counts = np.diff(np.append(starts, n))
    extra = (inverse,) * return_inverse + (counts,) * return_counts
    return (out,) + tuple(_make(np.asarray(x, dtype=np.int64)[()]) for x in extra)


# ----- bincount ----------------------------------------------------------------------------

@export()
@records("bincount")
def bincount(self, weights=None, minlength=0):
    """How many times each value 0, 1, ..., max occurs in a 1-D tensor of non-negative
    integers (the sum of their weights, when given); at least minlength bins.

    >>> import gradviz as torch
    >>> torch.bincount(torch.tensor([0, 1, 1, 3]))
    tensor([1, 2, 0, 1])
    """
    a = self._data
    if a.dtype.kind not in "iu":
        raise NotImplementedError(f'"bincount_cpu" not implemented for '
                                  f"'{_TORCH_SCALAR[a.dtype.name]}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _make(np.bincount(a, minlength=minlength).astype(np.int64))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # torch: float32 weights give float32 counts, any other dtype float64
    dt = np.float32 if w.dtype == np.float32 else np.float64
    out = _make(np.bincount(a, weights=w.astype(np.float64),
                            minlength=minlength).astype(dt))
    if _needs(weights):
        record(D["bincount"], out, (weights,))
    return out
