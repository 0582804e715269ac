"""Parameter initialisation (in place, without recording)."""

import math


from .. import _creation
from ..autograd.grad_mode import no_grad

__all__ = ["uniform_", "normal_", "zeros_", "ones_", "constant_", "kaiming_uniform_",
           "xavier_uniform_"]


def _fill(t, values):
    with no_grad():
        t._array()[...] = values
        t._version_counter().v += 1
    return t


def uniform_(tensor, a=0.0, b=1.0):
    return _fill(tensor, _creation._rng[0].uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0):
    return _fill(tensor, _creation._rng[0].normal(mean, std, tensor.shape))


def zeros_(tensor):
    return _fill(tensor, 0)


def ones_(tensor):
    return _fill(tensor, 1)


def constant_(tensor, val):
    return _fill(tensor, val)


def _fan_in(tensor):
    # torch's _calculate_fan_in_and_fan_out: a conv weight's fan counts its receptive field.
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive if tensor.dim() > 1 else tensor.shape[0]


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    gain = math.sqrt(2.0 / (1 + a * a))
    bound = gain * math.sqrt(3.0 / _fan_in(tensor))
    return uniform_(tensor, -bound, bound)


def xavier_uniform_(tensor, gain=1.0):
    fan_in, fan_out = _fan_in(tensor), tensor.shape[0]
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)
