"""gradviz.nn.functional: relu, tanh, sigmoid, softmax, log_softmax, linear, mse_loss,
cross_entropy, nll_loss — with torch's grad_fn names (linear is AddmmBackward0)."""

from .._ops import activation, linalg, losses, pointwise, reductions, views
from .._ops.inplace import relu_
from .._tensor import Tensor

__all__ = ["relu", "tanh", "sigmoid", "softmax", "log_softmax", "linear", "mse_loss",
           "cross_entropy", "nll_loss",
           "gelu", "silu", "softplus", "leaky_relu", "elu", "hardtanh", "relu6", "logsigmoid",
           "glu"]


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
    """input @ weight.T + bias: AddmmBackward0 for 2-D input with a bias, as in torch.

    >>> import gradviz as torch
    >>> x, w = torch.ones(2, 3), torch.ones(4, 3, requires_grad=True)
    >>> torch.nn.functional.linear(x, w, torch.zeros(4)).grad_fn
    <AddmmBackward0 ...>
    """
    wt = views.t(weight)
    if input.dim() == 2 and bias is not None:
        return linalg.addmm(bias, input, wt)
    if input.dim() == 1 and bias is not None:
        return views.view(linalg.addmm(bias, views.unsqueeze(input, 0), wt),
                          weight.shape[0])
    out = linalg.matmul(input, wt)
    return out if bias is None else out + bias


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


# ----- Activations -------------------------------------------------------------------------

def gelu(input, approximate="none"):
    """x * Phi(x) (GeluBackward0).

    >>> import gradviz as torch
    >>> torch.nn.functional.gelu(torch.tensor([1.0]), approximate="tanh")
    tensor([0.8412])
    """
    return activation.gelu(input, approximate)


def silu(input, inplace=False):
    """x * sigmoid(x) (SiluBackward0)."""
    if inplace:
        raise NotImplementedError("gradviz: torch.nn.functional.silu(inplace=True) is not "
                                  "implemented by gradviz's core; run with --backend torch to "
                                  "use PyTorch")
    return activation.silu(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta (SoftplusBackward0)."""
    return activation.softplus(input, beta, threshold)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x, or negative_slope * x where x <= 0 (LeakyReluBackward0)."""
    return activation.leaky_relu(input, negative_slope, inplace)


def elu(input, alpha=1.0, inplace=False):
    """x, or alpha * (exp(x) - 1) where x <= 0 (EluBackward0)."""
    return activation.elu(input, alpha, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val] (HardtanhBackward0)."""
    return activation.hardtanh(input, min_val, max_val, inplace)


def relu6(input, inplace=False):
    """hardtanh(x, 0, 6), as torch records it (HardtanhBackward0)."""
    return activation.hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input):
    """log(sigmoid(x)) (LogSigmoidBackward0)."""
    return activation.logsigmoid(input)


def glu(input, dim=-1):
    """a * sigmoid(b) for the halves a, b of input along dim (GluBackward0)."""
    return activation.glu(input, dim)
