"""Normalization modules: LayerNorm, BatchNorm1d/2d/3d (and their Lazy forms) and GroupNorm,
with torch's parameters and buffers (names, order, initial values) and reprs."""

from .. import _creation
from .._dtype import int64
from . import functional as F
from . import init
from ..autograd.grad_mode import no_grad
from .modules import (Module, Parameter, UninitializedBuffer, UninitializedParameter,
                      _is_lazy, _LazyModuleMixin)

__all__ = ["LayerNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d", "GroupNorm"]


def _param(shape, dtype, fill):
    p = Parameter(_creation.empty(tuple(shape), dtype=dtype))
    fill(p)
    return p


def _affine(module, affine, shape, dtype, bias):
    """torch's learnable affine pair: weight (ones) and bias (zeros) of the given shape, each
    registered as a None parameter when switched off, as torch registers it."""
    if affine:
        module.weight = _param(shape, dtype, init.ones_)
        if bias:
            module.bias = _param(shape, dtype, init.zeros_)
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


class LayerNorm(Module):
    """layer_norm over the last dims, with an elementwise weight (ones) and bias (zeros).

    >>> import gradviz as torch
    >>> torch.nn.LayerNorm(4)
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    """

    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine(self, elementwise_affine, self.normalized_shape, dtype, bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class _BatchNorm(Module):
    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine(self, affine, (num_features,), dtype, bias)
        if track_running_stats:
            _running_stats(self, num_features, dtype)
            self.register_buffer("num_batches_tracked", init.zeros_(
                _creation.empty((), dtype=int64)))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                object.__setattr__(self, name, None)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input):
        """torch's _BatchNorm.forward: count the batch, pick the averaging factor (momentum,
        or 1 / batches seen when momentum is None), normalize with batch statistics in
        training, with the running ones in eval."""
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None,
                            self.running_var if use_stats else None, self.weight, self.bias,
                            bn_training, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


def _running_stats(module, num_features, dtype):
    module.register_buffer("running_mean", init.zeros_(_creation.empty(num_features, dtype=dtype)))
    module.register_buffer("running_var", init.ones_(_creation.empty(num_features, dtype=dtype)))


class BatchNorm1d(_BatchNorm):
    """batch_norm over (N, C) or (N, C, L) input; running statistics in buffers."""

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """batch_norm over (N, C, H, W) input; running statistics in buffers."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """batch_norm over (N, C, D, H, W) input; running statistics in buffers."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _LazyBatchNorm(_LazyModuleMixin):
    """torch's _LazyNormBase: num_features is read from the first input's dim 1; until then
    weight, bias and the running statistics are uninitialized (num_batches_tracked is there,
    0), and the first call materializes them in place."""

    def __init__(self, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        for name in ("weight", "bias"):
            if self._parameters[name] is not None:
                setattr(self, name, UninitializedParameter(dtype=dtype))
        if track_running_stats:
            for name in ("running_mean", "running_var"):
                self.register_buffer(name, UninitializedBuffer(dtype=dtype))

    def initialize_parameters(self, input):
        # torch: the input is checked first; with nothing to infer the layer keeps 0 features
        self._check_input_dim(input)
        if not self.has_uninitialized_params():
            return
        self.num_features = int(input.shape[1])
        with no_grad():
            for t, fill in ((self.weight, init.ones_), (self.bias, init.zeros_),
                            (self.running_mean, init.zeros_), (self.running_var, init.ones_)):
                if _is_lazy(t):
                    t.materialize((self.num_features,))
                    fill(t)


class LazyBatchNorm1d(_LazyBatchNorm, BatchNorm1d):
    """A BatchNorm1d whose num_features is read from its first input.

    >>> import gradviz as torch
    >>> bn = torch.nn.LazyBatchNorm1d()
    >>> bn(torch.ones(4, 3)).shape, bn
    (torch.Size([4, 3]), BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True))
    """

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm, BatchNorm2d):
    """A BatchNorm2d whose num_features is read from its first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyBatchNorm, BatchNorm3d):
    """A BatchNorm3d whose num_features is read from its first input."""

    cls_to_become = BatchNorm3d


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine(self, affine, (num_channels,), dtype, bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")
