"""gradviz.nn.functional: relu, tanh, sigmoid, softmax, log_softmax, linear, mse_loss,
cross_entropy, nll_loss, conv1d, conv2d, max_pool2d, avg_pool2d, adaptive_avg_pool2d, pad,
scaled_dot_product_attention — with torch's grad_fn names (linear is AddmmBackward0)."""

from .._ops import linalg, losses, pointwise, reductions, views
from .._ops.attention import scaled_dot_product_attention
from .._ops.bilinear import bilinear
from .._ops.convolution import conv1d, conv2d
from .._ops.padding import pad
from .._ops.pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from .._ops.inplace import add_, relu_
from .._tensor import Tensor

__all__ = ["relu", "tanh", "sigmoid", "softmax", "log_softmax", "linear", "bilinear",
           "mse_loss", "cross_entropy", "nll_loss", "conv1d", "conv2d", "max_pool2d",
           "avg_pool2d", "adaptive_avg_pool2d", "pad", "scaled_dot_product_attention"]


def relu(input, inplace=False):
    return relu_(input) if inplace else pointwise.relu(input)


def tanh(input):
    return pointwise.tanh(input)


def sigmoid(input):
    return pointwise.sigmoid(input)


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, dtype=None):
    return reductions.softmax(input, _softmax_dim(input.dim()) if dim is None else dim)


def log_softmax(input, dim=None, dtype=None):
    return reductions.log_softmax(input, _softmax_dim(input.dim()) if dim is None else dim)


def linear(input, weight, bias=None):
    """input @ weight.T + bias, composed as torch composes it: AddmmBackward0 for 2-D input
    with a bias, ViewBackward0 over AddmmBackward0 for other contiguous input (the leading
    dims folded into the rows), matmul then an in-place add otherwise.

    >>> import gradviz as torch
    >>> x, w = torch.ones(2, 3), torch.ones(4, 3, requires_grad=True)
    >>> torch.nn.functional.linear(x, w, torch.zeros(4)).grad_fn
    <AddmmBackward0 ...>
    """
    wt = views.t(weight)
    if bias is not None:
        if input.dim() == 2:
            return linalg.addmm(bias, input, wt)
        if input.is_contiguous():
            # torch's _flatten_nd_linear: fold every leading dim into the rows of one addmm
            lead = tuple(input.shape[:-1])
            folded = views.view(input, -1, input.shape[-1])
            return views.view(linalg.addmm(bias, folded, wt), *lead, weight.shape[0])
    out = linalg.matmul(input, wt)
    if bias is None:
        return out
    return add_(out, bias)      # torch adds the bias in place (version 1)


def _reduce_name(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        if reduce is False:
            return "none"
        return "mean" if size_average in (None, True) else "sum"
    return reduction


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean squared error (MseLossBackward0)."""
    return losses.mse_loss(input, target, _reduce_name(size_average, reduce, reduction))


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of class indices (NllLossBackward0)."""
    return losses.nll_loss(input, target, weight, _reduce_name(size_average, reduce, reduction),
                           ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax followed by nll_loss (NllLossBackward0 over LogSoftmaxBackward0)."""
    if not isinstance(target, Tensor) or target.is_floating_point():
        raise NotImplementedError("gradviz: cross_entropy takes class indices as targets")
    if label_smoothing:
        raise NotImplementedError("gradviz: cross_entropy(label_smoothing=...) is not implemented "
                                  "by gradviz's core; run with --backend torch to use PyTorch")
    dim = 0 if input.dim() == 1 else 1
    return nll_loss(reductions.log_softmax(input, dim), target, weight, size_average,
                    ignore_index, reduce, reduction)
