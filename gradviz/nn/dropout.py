"""nn.Dropout: dropout in training mode, the identity in eval mode."""

from . import functional as F
from .modules import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """Zero each element with probability p while training (MulBackward0 over a mask).

    >>> import gradviz as torch
    >>> torch.nn.Dropout(0.1)
    Dropout(p=0.1, inplace=False)
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
