"""Dropout as torch records it: the input times a mask of 0 and 1 / (1 - p) (MulBackward0,
the mask without history)."""

import numpy as np

from .. import _random
from .._registry import export
from .._tensor import _make
from ._common import _TORCH_SCALAR
from .arithmetic import mul
from .inplace import mul_


def bernoulli_mask(shape, p):
    """A 0/1 array, 1 with probability p: the dropout mask's draws, from gradviz's default
    generator in one call (torch's bernoulli_(p) on an empty tensor, same values)."""
    return _random.bernoulli(shape, p)


def _dropout(input, p, train, inplace):
    if p == 0 or not train or input.numel() == 0:
        return input
    a = input._data
    if a.dtype.kind != "f":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_TORCH_SCALAR[a.dtype.name]}")
    if p == 1:
        noise = _make(np.zeros((), dtype=a.dtype))      # torch: input * zeros({})
    else:
        keep = a.dtype.type(1 - p)
        noise = _make(bernoulli_mask(a.shape, 1 - p).astype(a.dtype) / keep)
    return mul_(input, noise) if inplace else mul(input, noise)


@export(tensor=False)
def dropout(input, p, train):
    """Zero each element with probability p and scale the others by 1 / (1 - p), in training
    (`train`); the input itself otherwise.

    >>> import gradviz as torch
    >>> x = torch.ones(3)
    >>> torch.dropout(x, 0.5, False) is x
    True
    """
    return _dropout(input, p, train, False)


@export(tensor=False)
def dropout_(input, p, train):
    """dropout in place (MulBackward0 over the input's history)."""
    return _dropout(input, p, train, True)
