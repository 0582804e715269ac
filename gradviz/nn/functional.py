"""gradviz.nn.functional: relu, tanh, sigmoid, softmax, log_softmax, linear, mse_loss,
cross_entropy, nll_loss — with torch's grad_fn names (linear is AddmmBackward0)."""

import numpy as np

from .. import _ops
from .._derivatives import DERIVATIVES as D
from .._tensor import Tensor, _make
from ..autograd.graph import record
from ..autograd.grad_mode import _state

__all__ = ["relu", "tanh", "sigmoid", "softmax", "log_softmax", "linear", "mse_loss",
           "cross_entropy", "nll_loss"]


def relu(input, inplace=False):
    return _ops.relu_(input) if inplace else _ops.relu(input)


def tanh(input):
    return _ops.tanh(input)


def sigmoid(input):
    return _ops.sigmoid(input)


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, dtype=None):
    return _ops.softmax(input, _softmax_dim(input.dim()) if dim is None else dim)


def log_softmax(input, dim=None, dtype=None):
    return _ops.log_softmax(input, _softmax_dim(input.dim()) if dim is None else dim)


def linear(input, weight, bias=None):
    """input @ weight.T + bias: AddmmBackward0 for 2-D input with a bias, as in torch.

    >>> import gradviz as torch
    >>> x, w = torch.ones(2, 3), torch.ones(4, 3, requires_grad=True)
    >>> torch.nn.functional.linear(x, w, torch.zeros(4)).grad_fn
    <AddmmBackward0 ...>
    """
    wt = _ops.t(weight)
    if input.dim() == 2 and bias is not None:
        return _ops.addmm(bias, input, wt)
    if input.dim() == 1 and bias is not None:
        return _ops.view(_ops.addmm(bias, _ops.unsqueeze(input, 0), wt), weight.shape[0])
    out = _ops.matmul(input, wt)
    return out if bias is None else out + bias


def _reduce_name(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        if reduce is False:
            return "none"
        return "mean" if size_average in (None, True) else "sum"
    return reduction


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean squared error (MseLossBackward0)."""
    reduction = _reduce_name(size_average, reduce, reduction)
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


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of class indices (NllLossBackward0)."""
    if weight is not None:
        raise NotImplementedError("gradviz: nll_loss with class weights is not supported")
    reduction = _reduce_name(size_average, reduce, reduction)
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


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax followed by nll_loss (NllLossBackward0 over LogSoftmaxBackward0)."""
    if not isinstance(target, Tensor) or target.is_floating_point():
        raise NotImplementedError("gradviz: cross_entropy takes class indices as targets")
    dim = 0 if input.dim() == 1 else 1
    return nll_loss(_ops.log_softmax(input, dim), target, weight, size_average, ignore_index,
                    reduce, reduction)
