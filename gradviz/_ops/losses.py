"""Losses recorded as one node each, as torch records them: mse_loss (MseLossBackward0) and
nll_loss (NllLossBackward0). gradviz.nn.functional composes the others from these and the
other ops exactly where torch composes them (cross_entropy is log_softmax then nll_loss).
"""

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._registry import records
from .._tensor import _make
from ..autograd.formula import record
from ..autograd.grad_mode import _state


@records("mse_loss")
def mse_loss(input, target, reduction="mean"):
    """Mean squared error (MseLossBackward0); `reduction` is "mean", "sum" or "none"."""
    a, b = np.broadcast_arrays(input._data, target._data)
    d = (a - b) ** 2
    if reduction == "mean":
        r = np.mean(d, dtype=d.dtype)
    elif reduction == "sum":
        r = np.sum(d)
    else:
        r = d
    out = _make(r)
    if _state.enabled and (input._rg or target._rg):
        record(D["mse_loss"], out, (input, target), (input, target, reduction))
    return out


@records("nll_loss")
def nll_loss(input, target, weight=None, reduction="mean", ignore_index=-100):
    """Negative log likelihood of class indices (NllLossBackward0)."""
    if weight is not None:
        raise NotImplementedError("gradviz: nll_loss with class weights is not supported")
    x = input._data
    t = target._data.astype(np.int64)
    if x.ndim == 1:
        picked = -x[t] if t != ignore_index else x.dtype.type(0)
        vals = np.asarray([picked])
        valid = np.asarray([t != ignore_index])
    else:
        valid = t != ignore_index
        safe = np.where(valid, t, 0)
        vals = np.where(valid, -x[np.arange(x.shape[0]), safe], 0).astype(x.dtype)
    if reduction == "mean":
        r = vals.sum(dtype=x.dtype) / x.dtype.type(max(int(valid.sum()), 1))
    elif reduction == "sum":
        r = vals.sum(dtype=x.dtype)
    else:
        r = vals if x.ndim > 1 else vals[0]
    out = _make(x.dtype.type(r) if np.ndim(r) == 0 else r)
    if _state.enabled and input._rg:
        record(D["nll_loss"], out, (input,), (input, target, reduction, ignore_index))
    return out
