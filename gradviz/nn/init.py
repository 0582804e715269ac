"""gradviz.nn.init: parameter initialisation, in place and without recording, with torch's
formulas in torch's order of operations, so that after the same seed the values are torch's
bit for bit (the draws come from gradviz._random). trunc_normal_ runs torch 2.13's two
rejection samplers draw for draw; orthogonal_ agrees within float32 rounding (its QR is
NumPy's, in float64). The names without the trailing underscore are torch's deprecated
aliases, with its FutureWarning.

>>> import gradviz as torch
>>> _ = torch.manual_seed(0)
>>> w = torch.empty(2, 3)
>>> torch.nn.init.kaiming_uniform_(w, a=5 ** 0.5)
tensor([[-0.0043,  0.3097, -0.4752],
        [-0.4249, -0.2224,  0.1548]])
"""

import math
import warnings

import numpy as _np

# private names: torch.nn.init has no as_tensor, empty, where, no_grad, ...
from .._creation import (empty as _empty, empty_like as _empty_like, eye as _eye,
                         randperm as _randperm, tensor as _as_tensor)
from .._ops.pointwise import where as _where
from ..autograd.callsite import user_stacklevel as _user_stacklevel
from .._missing import module_getattr as _module_getattr
from ..autograd.grad_mode import no_grad as _no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_", "uniform", "normal", "constant", "eye",
           "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
           "orthogonal", "sparse"]

# A name torch.nn.init has and the core lacks says so, in torch's module's name
__getattr__ = _module_getattr("nn.init", __name__, __all__)


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (torch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U[a, b) samples."""
    with _no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std**2) samples."""
    with _no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    with _no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with _no_grad():
        return tensor.zero_()


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with _no_grad():
        return tensor.copy_(_eye(*tensor.shape, dtype=tensor.dtype))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    """gain / sqrt(fan), or None for a zero-element tensor (torch warns and leaves it)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=_user_stacklevel())
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He initialisation from U[-bound, bound], bound = gain * sqrt(3 / fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He initialisation from N(0, std**2), std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std**2) samples truncated to [a, b], by torch 2.13's rejection
    sampling, so the draws are torch's: when [a, b] holds more than 30% of the mass, whole
    normal_ draws replace the rejected values until none is left; otherwise uniform proposals
    on [a, b] are accepted with probability exp(log density - log peak).

    >>> import gradviz as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.nn.init.trunc_normal_(torch.empty(3), std=0.02)
    tensor([ 0.0308, -0.0059, -0.0436])
    """
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=_user_stacklevel())
    with _no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            # torch compares with the bounds rounded to the tensor's dtype.
            lo, hi = (float(_np.asarray(v, dtype=tensor.numpy().dtype)) for v in (a, b))
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                result = _where(mask, _empty_like(result).normal_(mean, std, generator=generator),
                               result)
            if tensor is not result:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = _empty_like(tensor)
        accept_buf = _empty_like(tensor)

        def rejected(values):
            values.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
            return accept_buf.uniform_(generator=generator).log_().gt(values)

        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        pending = rejected(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = _where(pending, candidates, result)
                pending = _where(pending, rejected(candidates), pending)
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix: the Q of the QR decomposition of a normal_ draw
    of shape (rows, numel // rows), its columns' signs fixed by R's diagonal (torch's
    convention, which makes Q unique). Equal to torch's within float32 rounding: NumPy's QR
    runs in float64, torch's LAPACK call in the tensor's dtype.

    >>> import gradviz as torch
    >>> w = torch.nn.init.orthogonal_(torch.empty(3, 5))
    >>> torch.allclose(w @ w.T, torch.eye(3), atol=1e-6)
    True
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _empty(rows, cols, dtype=tensor.dtype).normal_(0, 1, generator=generator).numpy()
    if rows < cols:
        flat = flat.T
    q, r = _np.linalg.qr(flat)
    q = q * _np.sign(_np.diag(r))
    if rows < cols:
        q = q.T
    with _no_grad():
        tensor.view_as(_as_tensor(q)).copy_(_as_tensor(q, dtype=tensor.dtype))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D tensor with N(0, std**2) draws, then zero ceil(sparsity * rows) entries of
    each column (rows picked by randperm from the default generator, as torch does).

    >>> import gradviz as torch
    >>> w = torch.nn.init.sparse_(torch.empty(4, 3), sparsity=0.5)
    >>> (w == 0).sum(0).tolist()
    [2, 2, 2]
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with _no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            tensor[_randperm(rows)[:num_zeros], col] = 0
    return tensor


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta (an identity convolution,
    per group).

    >>> import gradviz as torch
    >>> torch.nn.init.dirac_(torch.empty(2, 2, 3))[:, :, 1]
    tensor([[1., 0.],
            [0., 1.]])
    """
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    centre = tuple(s // 2 for s in sizes[2:])
    with _no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(per_group, sizes[1])):
                tensor[(g * per_group + d, d) + centre] = 1
    return tensor


def _deprecated(new):
    """torch's old names without the underscore: the same function, with a FutureWarning."""
    old = new.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=_user_stacklevel())
        return new(*args, **kwargs)

    deprecated_init.__name__ = old
    deprecated_init.__doc__ = f"Deprecated: use nn.init.{new.__name__}."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
