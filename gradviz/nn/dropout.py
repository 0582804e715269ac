"""nn.Dropout, Dropout1d and Dropout2d: dropout in training mode, the identity in eval mode."""

from . import functional as F
from .modules import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d"]


class _DropoutNd(Module):
    """torch's _DropoutNd: p and inplace, checked and shown the same way."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability p while training (MulBackward0 over a mask).

    >>> import gradviz as torch
    >>> torch.nn.Dropout(0.1)
    Dropout(p=0.1, inplace=False)
    """

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) input with probability p while training."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels (feature maps) of (N, C, H, W) input with probability p while
    training, as PyTorch's MNIST example does after its second convolution.

    >>> import gradviz as torch
    >>> torch.nn.Dropout2d()
    Dropout2d(p=0.5, inplace=False)
    """

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
