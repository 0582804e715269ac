"""Activation modules: each calls its nn.functional function; reprs as torch prints them."""

from . import functional as F
from .. import _creation
from .init import constant_
from .modules import Module, Parameter

__all__ = ["ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "GELU", "SiLU", "LeakyReLU",
           "ELU", "Softplus", "Hardtanh", "ReLU6", "LogSigmoid", "GLU", "PReLU", "SELU", "CELU",
           "Mish", "Hardswish", "Hardsigmoid", "Softsign", "Tanhshrink", "Softshrink",
           "Hardshrink", "Threshold"]


class _Activation(Module):
    """A module that keeps its options and calls one nn.functional function with them.

    `super().__init__(F.fn, name=value, ...)` stores each option as the attribute torch names
    it; forward(input) is `F.fn(input, *options)`, in the order given (the function's own
    order), and extra_repr prints `name=value` for each option, except inplace, which torch
    prints only when True.
    """

    def __init__(self, function, **options):
        super().__init__()
        self._function = function
        self._options = tuple(options)
        for name, value in options.items():
            setattr(self, name, value)

    def forward(self, input):
        return self._function(input, *[getattr(self, name) for name in self._options])

    def extra_repr(self):
        shown = [f"{name}={getattr(self, name)}" for name in self._options if name != "inplace"]
        if "inplace" in self._options and self.inplace:
            shown.append("inplace=True")
        return ", ".join(shown)


class ReLU(_Activation):
    def __init__(self, inplace=False):
        super().__init__(F.relu, inplace=inplace)


class Tanh(_Activation):
    def __init__(self):
        super().__init__(F.tanh)


class Sigmoid(_Activation):
    def __init__(self):
        super().__init__(F.sigmoid)


class LogSigmoid(_Activation):
    def __init__(self):
        super().__init__(F.logsigmoid)


class Softmax(_Activation):
    """softmax along dim (SoftmaxBackward0)."""

    def __init__(self, dim=None):
        super().__init__(F.softmax, dim=dim)


class LogSoftmax(_Activation):
    def __init__(self, dim=None):
        super().__init__(F.log_softmax, dim=dim)


class GELU(_Activation):
    """gelu, exact or with torch's tanh approximation.

    >>> import gradviz as torch
    >>> torch.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    """

    def __init__(self, approximate="none"):
        super().__init__(F.gelu, approximate=approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(_Activation):
    def __init__(self, inplace=False):
        super().__init__(F.silu, inplace=inplace)


class LeakyReLU(_Activation):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__(F.leaky_relu, negative_slope=negative_slope, inplace=inplace)


class ELU(_Activation):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(F.elu, alpha=alpha, inplace=inplace)


class Softplus(_Activation):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__(F.softplus, beta=beta, threshold=threshold)


class Hardtanh(_Activation):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        if min_value is not None or max_value is not None:
            raise NotImplementedError("gradviz: torch.nn.Hardtanh(min_value=..., max_value=...) "
                                      "is not implemented by gradviz's core; run with --backend "
                                      "torch to use PyTorch")
        super().__init__(F.hardtanh, min_val=min_val, max_val=max_val, inplace=inplace)
        assert self.max_val > self.min_val, \
            f"max_val ({max_val}) must be greater than min_val ({min_val})"


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class GLU(_Activation):
    def __init__(self, dim=-1):
        super().__init__(F.glu, dim=dim)


class PReLU(Module):
    """prelu with a learnt slope per channel (num_parameters of them, or one), each `init`.

    >>> import gradviz as torch
    >>> torch.nn.PReLU(3)
    PReLU(num_parameters=3)
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self):
        constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class SELU(_Activation):
    def __init__(self, inplace=False):
        super().__init__(F.selu, inplace=inplace)


class CELU(_Activation):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(F.celu, alpha=alpha, inplace=inplace)


class Mish(_Activation):
    def __init__(self, inplace=False):
        super().__init__(F.mish, inplace=inplace)


class Hardswish(_Activation):
    def __init__(self, inplace=False):
        super().__init__(F.hardswish, inplace=inplace)


class Hardsigmoid(_Activation):
    def __init__(self, inplace=False):
        super().__init__(F.hardsigmoid, inplace=inplace)


class Softsign(_Activation):
    def __init__(self):
        super().__init__(F.softsign)


class Tanhshrink(_Activation):
    def __init__(self):
        super().__init__(F.tanhshrink)


class Softshrink(_Activation):
    def __init__(self, lambd=0.5):
        super().__init__(F.softshrink, lambd=lambd)

    def extra_repr(self):
        return str(self.lambd)          # torch prints Softshrink(0.5)


class Hardshrink(Softshrink):
    def __init__(self, lambd=0.5):
        _Activation.__init__(self, F.hardshrink, lambd=lambd)


class Threshold(_Activation):
    def __init__(self, threshold, value, inplace=False):
        super().__init__(F.threshold, threshold=threshold, value=value, inplace=inplace)
