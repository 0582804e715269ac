"""gradviz.nn.functional: relu, tanh, sigmoid, softmax, log_softmax, linear, mse_loss,
cross_entropy, nll_loss, conv1d, conv2d, max_pool2d, avg_pool2d, adaptive_avg_pool2d, pad,
scaled_dot_product_attention — with torch's grad_fn names (linear is AddmmBackward0)."""

import functools as _functools
import math
import warnings

import numpy as np

# gradviz's own modules and helpers under private names: torch.nn.functional has no `ops`,
# `views`, `add_`, `no_grad`, ... (a file reaching them would run on gradviz only)
from .._ops import (activation as _activation, dropout as _dropout, embedding as _embedding,
                    linalg as _linalg, losses as _losses, normalization as _normalization,
                    pointwise as _pointwise, reductions as _reductions, views as _views)
from .._ops import attention as _attention
from .._ops import activation_extra as _more
from .._ops import upsample as _upsample
from .._ops.inplace import add_ as _add_, relu_ as _relu_
from .._ops import im2col as _im2col, padding as _padding, pooling as _pooling
from .._registry import TORCH as _TORCH, ops as _ops
from .._tensor import Tensor, _make  # noqa: F401  (Tensor: torch.nn.functional.Tensor)
from ..autograd.callsite import (call_keywords as _call_keywords,
                                 user_stacklevel as _user_stacklevel)
from ..autograd.grad_mode import no_grad as _no_grad
from .._keywords import argument_error as _argument_error
from .._missing import module_getattr as _module_getattr


# ----- A non-tensor where a tensor is taken ----------------------------------------------------
# torch 2.13 refuses None, a str, a list or a NumPy array given for a tensor: its C functions in
# their argument parser ("relu(): argument 'input' (position 1) must be Tensor, not NoneType"),
# its Python ones on the first method they call on it ("'NoneType' object has no attribute
# 'tanh'"). gradviz's ops fail deeper ("no attribute '_data'"), so the functions below catch
# the failure and say what torch says: checked only once the op has failed, the common call
# pays nothing (a try block costs no instruction in Python 3.11).

def _parsed(name, *params, keywords=()):
    """Raise torch's parser error for the first (parameter, value) of params, in the parser's
    order, whose value is not a tensor (a parameter ending in "?" also takes None; None for a
    parameter that takes no tensor); return when there is none. `keywords`: the names the
    user passed by keyword to a function that is a builtin in torch (its parser sees the call
    and gives no position for them); torch's Python functions pass their tensors on by
    position."""
    for position, (param, value) in enumerate(params, 1):
        if param is None or isinstance(value, Tensor) or (param[-1] == "?" and value is None):
            continue
        param = param.rstrip("?")
        raise _argument_error(name, param, None if param in keywords else position, "Tensor",
                              value) from None


def _keywords():
    """The names passed by keyword in the call of the function calling this one."""
    return _call_keywords(2)


def _refusing(name, *params, builtin=False):
    """Decorator for a function whose torch counterpart goes through the parser of `name`
    with the tensor parameters `params` (in its order: None for another parameter, "?" for one
    that also takes None); `builtin`: torch's function is that builtin itself. A non-tensor
    there gets the parser's error, checked once the call has failed (one more Python call on
    the ordinary path)."""
    def wrap(fn):
        code = fn.__code__
        names = code.co_varnames[:code.co_argcount]

        @_functools.wraps(fn)
        def call(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception:
                given = dict(zip(names, args), **kwargs)
                # (a parameter not given is left to Python's or the op's own error)
                _parsed(name, *[(p if p is not None and p.rstrip("?") in given else None,
                                 given.get(p.rstrip("?")) if p is not None else None)
                                for p in params], keywords=kwargs if builtin else ())
                raise
        return call
    return wrap


def _called(method, *values):
    """Raise the error torch's Python code meets when it calls `method` on the first of values
    that is not a tensor (AttributeError for None; a NumPy array's `size` is an int, not
    callable); return when there is none."""
    for value in values:
        if not isinstance(value, Tensor):
            try:
                getattr(value, method)()
            except Exception as exc:
                raise exc.with_traceback(None) from None


# ----- Convolution, pooling, padding -----------------------------------------------------------
# torch.nn.functional's convolutions and bilinear are torch's own builtins (torch.conv2d, ...):
# the same functions here, with torch's parser's errors and keywords (gradviz._keywords)
conv1d, conv2d, conv_transpose1d, conv_transpose2d, bilinear = (_TORCH[name] for name in (
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "bilinear"))
pad = _refusing("pad", "input")(_padding.pad)
unfold = _refusing("im2col", "input")(_im2col.im2col)
fold = _refusing("col2im", "input")(_im2col.col2im)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The largest value of each window (MaxPool2DWithIndicesBackward0), and its index with
    return_indices."""
    try:
        return _pooling.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode,
                                   return_indices)
    except Exception:
        _parsed("max_pool2d_with_indices" if return_indices else "max_pool2d", ("input", input))
        raise


@_refusing("avg_pool2d", "input", builtin=True)
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each window (AvgPool2DBackward0)."""
    return _pooling.avg_pool2d(input, kernel_size, stride, padding, ceil_mode,
                               count_include_pad, divisor_override)


scaled_dot_product_attention = _refusing(
    "scaled_dot_product_attention", "query", "key", "value", "attn_mask?", builtin=True)(
    _attention.scaled_dot_product_attention)


def adaptive_avg_pool2d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool2d under torch's parameter names (`input=`)."""
    try:
        return _ops.adaptive_avg_pool2d(input, output_size)
    except Exception:
        _called("size", input)
        raise


__all__ = ["relu", "tanh", "sigmoid", "softmax", "log_softmax", "linear", "mse_loss",
           "cross_entropy", "nll_loss",
           "gelu", "silu", "softplus", "leaky_relu", "elu", "hardtanh", "relu6", "logsigmoid",
           "glu", "leaky_relu_", "elu_", "hardtanh_", "l1_loss", "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div", "embedding", "one_hot", "dropout",
           "layer_norm", "batch_norm", "group_norm", "normalize", "cosine_similarity", "bilinear",
           "conv1d", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "pad",
           "scaled_dot_product_attention", "dropout1d", "dropout2d", "unfold", "fold",
           "selu", "selu_", "celu", "celu_", "prelu", "mish", "hardswish", "hardsigmoid",
           "softsign", "tanhshrink", "softshrink", "hardshrink", "threshold", "threshold_",
           "interpolate", "upsample", "conv_transpose1d", "conv_transpose2d",
           "multi_head_attention_forward"]


def relu(input, inplace=False):
    try:
        return _relu_(input) if inplace else _pointwise.relu(input)
    except Exception:
        _parsed("relu_" if inplace else "relu", ("input", input))
        raise


@_refusing("relu_", "input", builtin=True)
def relu_(input):
    """relu in place (ReluBackward0)."""
    return _relu_(input)


def tanh(input):
    try:
        return _pointwise.tanh(input)
    except Exception:
        _called("tanh", input)
        raise


def sigmoid(input):
    try:
        return _pointwise.sigmoid(input)
    except Exception:
        _called("sigmoid", input)
        raise


def _softmax_dim(name, ndim, stacklevel):
    # torch's legacy choice of dim when none is given, with its warning.
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning,
                  stacklevel=_user_stacklevel() if stacklevel == 3 else stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along dim (SoftmaxBackward0)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)    # (torch reads it too)
    return _refusing_non_tensors(_reductions.softmax, "softmax", input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """x - logsumexp(x) along dim (LogSoftmaxBackward0)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)    # (torch reads it too)
    return _refusing_non_tensors(_reductions.log_softmax, "log_softmax", input, dim, dtype)


def _refusing_non_tensors(op, name, input, dim, dtype):
    """op(input, dim, dtype) (softmax or log_softmax); a non-tensor input fails as torch's
    input.<name>(dim) does."""
    try:
        return op(input, dim, dtype)
    except Exception:
        _called(name, input)
        raise


def linear(input, weight, bias=None):
    """input @ weight.T + bias, composed as torch composes it: AddmmBackward0 for 2-D input
    with a bias, ViewBackward0 over AddmmBackward0 for other contiguous input (the leading
    dims folded into the rows), matmul then an in-place add otherwise.

    >>> import gradviz as torch
    >>> x, w = torch.ones(2, 3), torch.ones(4, 3, requires_grad=True)
    >>> torch.nn.functional.linear(x, w, torch.zeros(4)).grad_fn
    <AddmmBackward0 ...>
    """
    try:
        wt = _views.t(weight)
        if bias is not None:
            if input.dim() == 2:
                return _linalg.addmm(bias, input, wt)
            if input.is_contiguous():
                # torch's _flatten_nd_linear: fold every leading dim into the rows of one addmm
                lead = tuple(input.shape[:-1])
                folded = _views.view(input, -1, input.shape[-1])
                return _views.view(_linalg.addmm(bias, folded, wt), *lead, weight.shape[0])
        out = _linalg.matmul(input, wt)
        if bias is None:
            return out
        return _add_(out, bias)      # torch adds the bias in place (version 1)
    except Exception:
        _parsed("linear", ("input", input), ("weight", weight), ("bias?", bias),
                keywords=_keywords())
        raise


# ----- Activations -------------------------------------------------------------------------

def gelu(input, approximate="none"):
    """x * Phi(x) (GeluBackward0).

    >>> import gradviz as torch
    >>> torch.nn.functional.gelu(torch.tensor([1.0]), approximate="tanh")
    tensor([0.8412])
    """
    try:
        return _activation.gelu(input, approximate)
    except Exception:
        _parsed("gelu", ("input", input), keywords=_keywords())
        raise


def silu(input, inplace=False):
    """x * sigmoid(x) (SiluBackward0)."""
    if inplace:
        raise NotImplementedError("gradviz: torch.nn.functional.silu(inplace=True) is not "
                                  "implemented by gradviz's core; run with --backend torch to "
                                  "use PyTorch")
    try:
        return _activation.silu(input)
    except Exception:
        _parsed("silu", ("input", input))
        raise


def softplus(input, beta=1, threshold=20):      # torch's defaults: ints (saved so)
    """log(1 + exp(beta x)) / beta (SoftplusBackward0)."""
    try:
        return _activation.softplus(input, beta, threshold)
    except Exception:
        _parsed("softplus", ("input", input), keywords=_keywords())
        raise


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x, or negative_slope * x where x <= 0 (LeakyReluBackward0)."""
    try:
        return _activation.leaky_relu(input, negative_slope, inplace)
    except Exception:
        _parsed("leaky_relu_" if inplace else "leaky_relu", ("input", input))
        raise


def elu(input, alpha=1.0, inplace=False):
    """x, or alpha * (exp(x) - 1) where x <= 0 (EluBackward0)."""
    try:
        return _activation.elu(input, alpha, inplace)
    except Exception:
        _parsed("elu_" if inplace else "elu", ("input", input))
        raise


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val] (HardtanhBackward0)."""
    try:
        return _activation.hardtanh(input, min_val, max_val, inplace)
    except Exception:
        _parsed("hardtanh_" if inplace else "hardtanh", ("input", input))
        raise


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu in place (LeakyReluBackward1)."""
    try:
        return _activation.leaky_relu(input, negative_slope, True)
    except Exception:
        _parsed("leaky_relu_", ("input", input), keywords=_keywords())
        raise


def elu_(input, alpha=1.0):
    """elu in place (EluBackward1)."""
    try:
        return _activation.elu(input, alpha, True)
    except Exception:
        _parsed("elu_", ("input", input), keywords=_keywords())
        raise


def hardtanh_(input, min_val=-1, max_val=1):       # torch's defaults: ints (saved so)
    """hardtanh in place (HardtanhBackward0)."""
    try:
        return _activation.hardtanh(input, min_val, max_val, True)
    except Exception:
        _parsed("hardtanh_", ("input", input), keywords=_keywords())
        raise


def relu6(input, inplace=False):
    """hardtanh(x, 0, 6), as torch records it (HardtanhBackward0)."""
    try:
        return _activation.hardtanh(input, 0, 6, inplace)   # torch's relu6: ints (saved so)
    except Exception:
        _parsed("relu6_" if inplace else "relu6", ("input", input))
        raise


def logsigmoid(input):
    """log(sigmoid(x)) (LogSigmoidBackward0)."""
    try:
        return _activation.logsigmoid(input)
    except Exception:
        _parsed("log_sigmoid", ("input", input), keywords=_keywords())
        raise


def glu(input, dim=-1):
    """a * sigmoid(b) for the halves a, b of input along dim (GluBackward0)."""
    try:
        return _activation.glu(input, dim)
    except Exception:
        _called("dim", input)
        raise


# ----- Losses ------------------------------------------------------------------------------

def _not_implemented(what):
    return NotImplementedError(f"gradviz: torch.nn.functional.{what} is not implemented by "
                               "gradviz's core; run with --backend torch to use PyTorch")


def _legacy_reduction(size_average, reduce, reduction):
    """The reduction name, from the legacy size_average/reduce flags when either is given
    (torch's _Reduction.legacy_get_string, with its deprecation warning at the user's line)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", stacklevel=_user_stacklevel())
    return reduction


def _reduction(size_average, reduce, reduction):
    """torch's Reduction enum (0 none, 1 mean, 2 sum) for a loss function's arguments."""
    if size_average is None and reduce is None and type(reduction) is str and \
            reduction == "mean":
        return 1        # the default, without the two calls below
    return _losses.reduction_enum(_legacy_reduction(size_average, reduce, reduction))


def _size_warning(input, target):
    # size(), not shape: a non-tensor fails here as in torch ("no attribute 'size'")
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.",
                      stacklevel=_user_stacklevel())


def _broadcast(input, target):
    """torch.broadcast_tensors of the pair: expand() only where a shape differs."""
    if input.shape == target.shape:
        return input, target
    shape = tuple(np.broadcast_shapes(input.shape, target.shape))
    return (input if input.shape == shape else input.expand(shape),
            target if target.shape == shape else target.expand(shape))


def _apply_reduction(loss, reduction):
    if reduction == 1:
        return loss.mean()
    if reduction == 2:
        return loss.sum()
    return loss


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (MseLossBackward0)."""
    if weight is not None:
        raise _not_implemented("mse_loss(weight=...)")
    _size_warning(input, target)
    r = _reduction(size_average, reduce, reduction)
    return _losses.mse_loss(*_broadcast(input, target), r)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, composed as torch composes it (MeanBackward0 over AbsBackward0 over
    SubBackward0).

    >>> import gradviz as torch
    >>> torch.nn.functional.l1_loss(torch.tensor([1.0, 2.0]), torch.tensor([0.0, 4.0]))
    tensor(1.5000)
    """
    if weight is not None:
        raise _not_implemented("l1_loss(weight=...)")
    _size_warning(input, target)
    r = _reduction(size_average, reduce, reduction)
    input, target = _broadcast(input, target)
    return _apply_reduction((input - target).abs(), r)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic below beta, linear above (SmoothL1LossBackward0; l1_loss when beta is 0, as
    in torch)."""
    _size_warning(input, target)
    r = _reduction(size_average, reduce, reduction)
    input, target = _broadcast(input, target)
    if beta == 0.0:
        return _apply_reduction((input - target).abs(), r)
    return _losses.smooth_l1_loss(input, target, r, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic below delta, delta-linear above (HuberLossBackward0)."""
    if weight is not None:
        raise _not_implemented("huber_loss(weight=...)")
    _size_warning(input, target)
    input, target = _broadcast(input, target)
    return _losses.huber_loss(input, target, _losses.reduction_enum(reduction), delta)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)) for probabilities x (BinaryCrossEntropyBackward0)."""
    r = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():      # (a non-tensor fails here, as in torch)
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the "
                         "same size.")
    if weight is not None and weight.size() != input.size():   # (size(): torch's error too)
        shape = tuple(np.broadcast_shapes(weight.shape, input.shape))
        if shape != input.shape:
            raise RuntimeError(f"The size of tensor a ({weight.shape[-1]}) must match the size "
                               f"of tensor b ({input.shape[-1]}) at non-singleton dimension "
                               f"{len(shape) - 1}")
    return _losses.binary_cross_entropy(input, target, weight, r)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """binary_cross_entropy of sigmoid(input), computed stably
    (BinaryCrossEntropyWithLogitsBackward0)."""
    r = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():      # (a non-tensor fails here, as in torch)
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    try:
        return _losses.binary_cross_entropy_with_logits(input, target, weight, pos_weight, r)
    except Exception:
        _parsed("binary_cross_entropy_with_logits", ("input", input), ("target", target),
                ("weight?", weight), ("pos_weight?", pos_weight))
        raise


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence of target from input (log-probabilities), composed as torch composes it:
    xlogy(t, t) - t * input (exp(t) * (t - input) with log_target), then the reduction;
    'batchmean' divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        r = _reduction(size_average, reduce, reduction)
    elif reduction == "batchmean":
        r = 2
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=_user_stacklevel())
        r = _losses.reduction_enum(reduction)
    # torch's parser refuses them first (an array input would give a loss here)
    _parsed("kl_div", ("input", input), ("target", target))
    if log_target:
        loss = target.exp() * (target - input)
    else:
        xlogy = getattr(_ops, "xlogy", None)
        if xlogy is None:
            raise _not_implemented("kl_div(log_target=False), which needs torch.xlogy,")
        loss = xlogy(target, target) - target * input
    reduced = _apply_reduction(loss, r)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of class indices (NllLossBackward0; NllLoss2DBackward0 for
    (N, C, d) and (N, C, H, W) inputs, as in torch)."""
    try:
        r = _reduction(size_average, reduce, reduction)
        if input.dim() == 3:
            # torch's nll_loss_nd: (N, C, d) is viewed as an image (N, C, d, 1).
            n, c, d = input.shape
            out = _losses.nll_loss(_views.view(input, n, c, d, 1),
                                  _views.view(target, *target.shape, 1), weight, r, ignore_index)
            return _views.view(out, n, d) if r == 0 else out
        return _losses.nll_loss(input, target, weight, r, ignore_index)
    except Exception:
        _parsed("nll_loss_nd", ("input", input), ("target", target), ("weight?", weight))
        raise


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax followed by nll_loss (NllLossBackward0 over LogSoftmaxBackward0); class
    probabilities as targets and label smoothing are composed as torch composes them.

    >>> import gradviz as torch
    >>> x = torch.zeros(2, 4, requires_grad=True)
    >>> torch.nn.functional.cross_entropy(x, torch.tensor([1, 3]), label_smoothing=0.1)
    tensor(1.3863, grad_fn=<AddBackward0>)
    """
    try:
        r = _reduction(size_average, reduce, reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{label_smoothing:g}")
        class_dim = 0 if input.dim() == 1 else 1
        logp = _reductions.log_softmax(input, class_dim)
        if target.is_floating_point():
            return _cross_entropy_probs(logp, target, weight, r, label_smoothing, class_dim)
        nd = logp._data.ndim        # (input's: log_softmax took it as a tensor)
        if target.dim() == nd and nd > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if nd == 3:     # nll_loss views it as an image
            nll = nll_loss(logp, target, weight, None, ignore_index, None,
                           ("none", "mean", "sum")[r])
        else:   # the reduction already parsed; a non-tensor is refused below, as cross_entropy
            nll = _losses.nll_loss(logp, target, weight, r, ignore_index)
        if label_smoothing <= 0.0:
            return nll
        return _label_smoothing(logp, nll, target, weight, r, ignore_index, label_smoothing,
                                class_dim)
    except Exception:
        _parsed("cross_entropy_loss", ("input", input), ("target", target), ("weight?", weight))
        raise


def _weight_view(weight, logp, class_dim):
    shape = [1] * logp.dim()
    shape[class_dim] = weight.shape[0]
    return _views.view(weight, tuple(shape))


def _cross_entropy_probs(logp, target, weight, r, label_smoothing, class_dim):
    """torch's cross_entropy_loss_prob_target: -(logp * target [* weight]) summed over the
    classes, divided by numel / C for the mean (DivBackward1)."""
    if target.shape != logp.shape:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    n_classes = logp.shape[class_dim]
    if label_smoothing > 0.0:
        target = _ops.add_scalar(_ops.mul_scalar(target, 1 - label_smoothing),
                                   label_smoothing / n_classes)
    prod = logp * target
    if weight is not None:
        prod = prod * _weight_view(weight, logp, class_dim)
    if r == 0:
        return -prod.sum(class_dim)
    if r == 2:
        return -prod.sum()
    return _losses.div_scalar(-prod.sum(), logp.numel() // n_classes)


def _label_smoothing(logp, nll, target, weight, r, ignore_index, label_smoothing, class_dim):
    """torch's cross_entropy_loss_label_smoothing: (1 - ls) * nll + ls / C * smooth, where
    smooth is -(logp [* weight]) summed over the classes, 0 at ignored targets."""
    masked_fill_ = getattr(_ops, "masked_fill_", None)
    if masked_fill_ is None:
        raise _not_implemented("cross_entropy(label_smoothing=...) with class-index targets, "
                               "which needs Tensor.masked_fill_,")
    n_classes = logp.shape[class_dim]
    ignore = target == ignore_index
    if weight is not None:
        smooth = -(logp * _weight_view(weight, logp, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    masked_fill_(smooth, ignore, 0.0)
    if r == 1:
        if weight is not None:
            kept = target._data[~ignore._data].reshape(-1)
            ret = smooth.sum() / _make(weight._data[kept].sum())
        else:
            ret = smooth.sum() / (~ignore).sum()
    elif r == 2:
        ret = smooth.sum()
    else:
        ret = smooth
    return _ops.mul_scalar(nll, 1 - label_smoothing) + _ops.mul_scalar(ret, label_smoothing /
                                                                     n_classes)


# ----- Embedding, dropout, normalization ---------------------------------------------------

def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """The rows of weight at the indices in input (EmbeddingBackward0); the padding_idx row
    gets no gradient."""
    if max_norm is not None:
        raise _not_implemented("embedding(max_norm=...)")
    if padding_idx is not None:
        n = weight.shape[0]
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    try:
        return _embedding.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)
    except Exception:
        _parsed("embedding", ("weight", weight), ("indices", input))
        raise


def one_hot(input, num_classes=-1):
    """int64 one-hot rows of class indices.

    >>> import gradviz as torch
    >>> torch.nn.functional.one_hot(torch.tensor([2, 0]))
    tensor([[0, 0, 1],
            [1, 0, 0]])
    """
    try:
        return _embedding.one_hot(input, num_classes)
    except Exception:
        _parsed("one_hot", ("input", input), keywords=_keywords())
        raise


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p in training and scale the rest by 1 / (1 - p)
    (MulBackward0 over a mask); the input itself when not training."""
    _check_p(p)
    if not training and not isinstance(input, Tensor):
        # (returned as it is below: torch's parser refuses it first)
        _parsed("dropout_" if inplace else "dropout", ("input", input))
    try:
        return (_dropout.dropout_ if inplace else _dropout.dropout)(input, p, training)
    except Exception:
        _parsed("dropout_" if inplace else "dropout", ("input", input))
        raise


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalize over the last dims, then * weight + bias (NativeLayerNormBackward0)."""
    if isinstance(normalized_shape, int):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        "of ints, not int")
    try:
        return _normalization.layer_norm(input, normalized_shape, weight, bias, eps)
    except Exception:
        _parsed("layer_norm", ("input", input), (None, None), ("weight?", weight), ("bias?", bias))
        raise


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Normalize each channel over the batch (NativeBatchNormBackward0); in training the
    running statistics are updated in place, as torch does."""
    if training:
        size = input.size()        # (a non-tensor fails here, as in torch)
        n = 1
        for i, s in enumerate(size):
            if i != 1:
                n *= s
        if n == 1 and len(size) >= 2:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.size()}")
    try:
        return _normalization.batch_norm(input, weight, bias, running_mean, running_var,
                                        training, momentum, eps)
    except Exception:
        _parsed("batch_norm", ("input", input), ("weight?", weight), ("bias?", bias),
                ("running_mean?", running_mean), ("running_var?", running_var))
        raise


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalize groups of channels per sample (NativeGroupNormBackward0)."""
    try:
        return _normalization.group_norm(input, num_groups, weight, bias, eps)
    except Exception:
        _called("dim", input)
        _parsed("group_norm", ("input", input), (None, None), ("weight?", weight),
                ("bias?", bias))
        raise


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(norm(input, p, dim), eps), composed as torch composes it."""
    if out is not None:
        raise _not_implemented("normalize(out=...)")
    _called("norm", input)      # torch calls input.norm first
    denom = _pointwise.clamp_min(input.norm(p, dim, keepdim=True), eps).expand_as(input)
    return input / denom


@_refusing("cosine_similarity", "x1", "x2", builtin=True)
def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """sum(x1 / |x1| * x2 / |x2|) along dim, each norm clamped to eps without history, as
    torch 2.13 composes it."""
    if x1.shape != x2.shape:
        # torch's expand_outplace: both are expanded (ExpandBackward0) once the sizes differ
        shape = tuple(np.broadcast_shapes(x1.shape, x2.shape))
        x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with _no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)



# ----- Channel-wise dropout -----------------------------------------------------------------

def _feature_dropout(input, p, training, inplace):
    """torch's feature_dropout: one Bernoulli(1 - p) draw per (sample, channel), scaled by
    1 / (1 - p) and broadcast over the rest, then input * noise (MulBackward0, as torch
    composes it; the draws are torch's, in its order)."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        noise = input.new_zeros(())
    else:
        noise = input.new_empty(tuple(input.shape[:2]) + (1,) * (input.dim() - 2))
        noise.bernoulli_(1 - p)
        noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, L) or (C, L) input with probability p in training."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note "
            "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    if input.dim() == 3:
        return _feature_dropout(input, p, training, inplace)
    if inplace:
        raise NotImplementedError("gradviz: F.dropout1d(inplace=True) of an unbatched input is "
                                  "not implemented by gradviz's core; run with --backend torch "
                                  "to use PyTorch")
    return _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, H, W) input with probability p in training (a 3D
    input is read as (N, C, L), with torch's warning)."""
    _check_p(p)
    if input.dim() not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=_user_stacklevel())
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=_user_stacklevel())
    return _feature_dropout(input, p, training, inplace)

# ----- More activations (gradviz._ops.activation_extra) ----------------------------------------

def selu(input, inplace=False):
    """scale * elu(x, alpha) with torch's SELU constants (EluBackward0; EluBackward1 in place).

    >>> import gradviz as torch
    >>> torch.nn.functional.selu(torch.tensor([1.0, -1.0]))
    tensor([ 1.0507, -1.1113])
    """
    try:
        return _more.selu_(input) if inplace else _more.selu(input)
    except Exception:
        _parsed("selu_" if inplace else "selu", ("input", input))
        raise


@_refusing("selu_", "input", builtin=True)
def selu_(input):
    return _more.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    """elu(x, alpha) with exp(x / alpha) (CeluBackward0; CeluBackward1 in place)."""
    try:
        return _more.celu_op(input, alpha, inplace)
    except Exception:
        _parsed("celu_" if inplace else "celu", ("input", input))
        raise


@_refusing("celu_", "input", builtin=True)
def celu_(input, alpha=1.0):
    return _more.celu_op(input, alpha, True)


@_refusing("prelu", "input", "weight", builtin=True)
def prelu(input, weight):
    """x where x > 0, else weight * x, one weight per channel (PreluKernelBackward0)."""
    return _more.prelu(input, weight)


def mish(input, inplace=False):
    """x * tanh(softplus(x)) (MishBackward0)."""
    try:
        return _more.mish(input, inplace)
    except Exception:
        _parsed("mish_" if inplace else "mish", ("input", input))
        raise


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6 (HardswishBackward0)."""
    try:
        return _more.hardswish(input, inplace)
    except Exception:
        _parsed("hardswish_" if inplace else "hardswish", ("input", input))
        raise


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6 (HardsigmoidBackward0)."""
    try:
        return _more.hardsigmoid(input, inplace)
    except Exception:
        _parsed("hardsigmoid_" if inplace else "hardsigmoid", ("input", input))
        raise


def softsign(input):
    """x / (1 + |x|), composed as torch's nn.functional writes it (DivBackward0)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x), composed as torch's nn.functional writes it (SubBackward0)."""
    return input - input.tanh()


@_refusing("softshrink", "input", builtin=True)
def softshrink(input, lambd=0.5):
    """x -+ lambd outside [-lambd, lambd], else 0 (SoftshrinkBackward0)."""
    return _more.softshrink(input, lambd)


@_refusing("hardshrink", "input", builtin=True)
def hardshrink(input, lambd=0.5):
    """x outside [-lambd, lambd], else 0 (HardshrinkBackward0)."""
    return _more.hardshrink(input, lambd)


def threshold(input, threshold, value, inplace=False):
    """value where x <= threshold, else x (ThresholdBackward0; ThresholdBackward1 in place)."""
    try:
        return _more.threshold_op(input, threshold, value, inplace)
    except Exception:
        _parsed("threshold_" if inplace else "threshold", ("input", input))
        raise


@_refusing("threshold_", "input", builtin=True)
def threshold_(input, threshold, value):
    return _more.threshold_op(input, threshold, value, True)


# ----- interpolate (gradviz._ops.upsample) -------------------------------------------------------

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_MODE_DIMS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}    # input dims they need


def _spatial_list(what, value, input, dim):
    """size or scale_factor as one value per spatial dim (torch's checks)."""
    if not isinstance(value, (list, tuple)):
        return [value] * dim
    if len(value) != dim:
        shape = "output size of" if what == "size" else "scale_factor of shape"
        fmt = "output size" if what == "size" else "scale_factor"
        letters = "(o1, o2, ...,oK)" if what == "size" else "(s1, s2, ...,sK)"
        raise ValueError(f"Input and {'output' if what == 'size' else 'scale_factor'} must have "
                         f"the same number of spatial dimensions, but got input with spatial "
                         f"dimensions of {list(input.shape[2:])} and {shape} {value}. Please "
                         f"provide input tensor in (N, C, d1, d2, ...,dK) format and {fmt} in "
                         f"{letters} format.")
    return list(value)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """input resized along its spatial dims, as torch's interpolate: modes 'nearest' (3-D and
    4-D input) and 'bilinear' (4-D), by size or scale_factor; other modes are refused.

    >>> import gradviz as torch
    >>> x = torch.tensor([[[[1.0, 2.0]]]])
    >>> torch.nn.functional.interpolate(x, scale_factor=2)
    tensor([[[[1., 1., 2., 2.],
              [1., 1., 2., 2.]]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    output_size = scales = None
    if size is not None:
        output_size = _spatial_list("size", size, input, dim)
    else:
        scales = [float(s) for s in _spatial_list("scale_factor", scale_factor, input, dim)]
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor:
        output_size = [math.floor(float(input.shape[i + 2]) * scales[i]) for i in range(dim)]
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if output_size is None:     # torch's compute_output_size: the product truncated
        output_size = [int(input.shape[i + 2] * scales[i]) for i in range(dim)]
    scales = scales or [None] * dim
    if mode == "nearest" and input.dim() == 3:
        return _upsample.upsample_nearest1d(input, output_size, *scales)
    if mode == "nearest" and input.dim() == 4:
        return _upsample.upsample_nearest2d(input, output_size, *scales)
    if mode == "bilinear" and input.dim() == 4:
        if antialias:
            raise _not_implemented("interpolate(antialias=True)")
        return _upsample.upsample_bilinear2d(input, output_size, align_corners, *scales)
    needs = _MODE_DIMS.get(mode)
    if needs is not None and input.dim() in (3, 4, 5) and input.dim() != needs:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {needs}D "
                                  f"input")
    if input.dim() in (3, 4, 5) and mode in _MODES.split(" | "):
        raise NotImplementedError(f"gradviz: torch.nn.functional.interpolate(mode={mode!r}) on a "
                                  f"{input.dim()}-D input is not implemented by gradviz's core "
                                  f"(it has 'nearest' on 3-D and 4-D input and 'bilinear' on 4-D "
                                  f"input); run with --backend torch to use PyTorch")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.dim()}D) for the modes: {_MODES} (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated in torch: interpolate, with torch's warning."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=_user_stacklevel())
    return interpolate(input, size, scale_factor, mode, align_corners)


# multi-head attention is composed of the functions above (written as torch writes it)
from .multihead import multi_head_attention_forward  # noqa: E402


# A name PyTorch has and gradviz lacks says so, with the --backend torch hint, instead of
# Python's bare "has no attribute".
__getattr__ = _module_getattr("functional", __name__, __all__)
