"""Normalization, each one node as torch records it: layer_norm (NativeLayerNormBackward0),
batch_norm (NativeBatchNormBackward0, with torch's update of the running statistics) and
group_norm (NativeGroupNormBackward0). Each saves the mean and the reciprocal standard
deviation it computed as torch's `result1` and `result2`.
"""

import math

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._derivatives import batch_norm_grads, constant, layer_norm_grads
from .._registry import export, records
from .._tensor import _make, _wrap_dim
from ..autograd.formula import keep_raw, record, record_outputs
from ._common import _F16, _TORCH_SCALAR, _needs


def _float_input(a, kernel):
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_TORCH_SCALAR[a.dtype.name]}'")


def _same_dtype(x, *params):
    """torch's mixed-dtype check (ATen's mixed_type.h): parameters or running statistics of
    another dtype than the input are refused, except float32 ones with a float16 input."""
    for t in params:
        if t is not None and t._data.dtype is not x.dtype and t._data.dtype != x.dtype:
            if any(p is not None and p._data.dtype != np.float32 for p in params):
                raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type "
                                   "of Float")
            if x.dtype != np.float16:
                raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
            return


def _shape_text(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _affine(y, weight, bias, shape):
    """y * weight + bias, with weight and bias viewed as `shape` to broadcast (in place: y is
    a fresh array)."""
    if weight is not None:
        np.multiply(y, _per_channel(weight._data, shape), out=y, casting="unsafe")
    if bias is not None:
        np.add(y, _per_channel(bias._data, shape), out=y, casting="unsafe")
    return y


def _per_channel(v, shape):
    """The vector v viewed as `shape` to broadcast over the input; as it is when it already
    does (a 2-D input's (C,)): no reshape call on the hot path."""
    return v if v.shape == shape[1:] else v.reshape(shape)


def _mean(a, dims):
    """np.mean(a, dims, keepdims=True) in a's dtype: its own arithmetic (a sum, divided by the
    count) without its Python wrapper, which costs more than the sums on small inputs."""
    if not a.size:
        return np.mean(a, axis=dims, keepdims=True, dtype=a.dtype)
    n = 1
    for d in dims:
        n *= a.shape[d]
    return np.add.reduce(a, axis=dims, keepdims=True, dtype=a.dtype) / n


# ----- layer_norm --------------------------------------------------------------------------

@export(tensor=False)
@records("native_layer_norm")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
               cudnn_enable=True):
    """(x - mean) / sqrt(var + eps) over the last len(normalized_shape) dims, then
    * weight + bias (NativeLayerNormBackward0).

    >>> import gradviz as torch
    >>> torch.layer_norm(torch.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    x = input._data
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(normalized_shape)
    k = len(shape)
    if not k:       # torch's check: x.shape[x.ndim:] == () would accept it and divide by 1
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if x.shape[x.ndim - k:] != shape or k > x.ndim:
        raise RuntimeError(f"Given normalized_shape={_shape_text(shape)}, expected input with "
                           f"shape [*, {', '.join(map(str, shape))}], but got input of "
                           f"size{_shape_text(x.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.shape != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {_shape_text(t.shape)} and "
                               f"normalized_shape = {_shape_text(shape)}")
    _float_input(x, "LayerNormKernelImpl")
    _same_dtype(x, weight, bias)
    lead = x.shape[:x.ndim - k]
    n = math.prod(shape)
    # On the input viewed as rows of n, as torch's kernel views it.
    if x.dtype == _F16:
        y, mean, rstd = _half_layer_norm(x.reshape(math.prod(lead), n), weight, bias, eps)
    else:
        mean, xc, rstd = _row_moments(x.reshape(math.prod(lead), n), eps)
        y = _affine(np.multiply(xc, rstd[:, None], out=xc), weight, bias, (n,))
    out = _make(y.reshape(x.shape))
    if _needs(input, weight, bias):
        stats = lead + (1,) * k
        record(D["native_layer_norm"], out, (input, weight, bias),
               (input, shape, weight, bias, _make(mean.reshape(stats)),
                _make(rstd.reshape(stats)), eps))
    return out


def _half_layer_norm(x2, weight, bias, eps):
    """torch's CPU kernel on float16 rows x2: the moments, x * rstd - rstd * mean, the weight
    and the bias all in float32, rounded to float16 once (rounding the normalized values first
    loses small outputs: 2.0027e-05 became 0.0); mean and rstd stay float32 when the
    parameters are (torch's mixed types), else float16. (y, mean, rstd)."""
    mean, _, rstd = _row_moments(x2.astype(np.float32), eps)
    y = x2.astype(np.float32) * rstd[:, None] + (-rstd * mean)[:, None]
    if weight is not None:
        y *= weight._data.astype(np.float32, copy=False)
    if bias is not None:
        y += bias._data.astype(np.float32, copy=False)
    mixed = any(p is not None and p._data.dtype != _F16 for p in (weight, bias))
    stats = np.float32 if mixed else _F16
    return y.astype(_F16), mean.astype(stats), rstd.astype(stats)


def _row_moments(x2, eps):
    """The mean of each row of the 2-D array x2, x2 - mean (a fresh array) and
    1 / sqrt(var + eps) of the biased variance, in x2's dtype. The row sums are einsum's:
    one pass without a product array (on 512 rows of 128 float32, 7 and 11 µs where
    np.add.reduce along the rows takes 19, and xc * xc 6 more)."""
    n = x2.shape[1]
    if n == 0:      # empty rows: torch's mean 0 and rstd nan, without NumPy's 0 / 0 warnings
        rows = x2.shape[0]
        return np.zeros(rows, x2.dtype), x2.copy(), np.full(rows, np.nan, x2.dtype)
    mean = np.einsum("ij->i", x2) / n
    xc = x2 - mean[:, None]
    rstd = 1 / np.sqrt(np.einsum("ij,ij->i", xc, xc) / n + eps)
    return mean, xc, rstd.astype(x2.dtype, copy=False)


# ----- batch_norm --------------------------------------------------------------------------

@export(tensor=False)
@records("native_batch_norm")
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled=True):
    """Normalization per channel (dim 1) over the batch and any spatial dims
    (NativeBatchNormBackward0). In training, the batch statistics are used and the running
    ones updated in place, as torch does: mean * momentum + running * (1 - momentum), with the
    unbiased variance; in eval, the running statistics are used."""
    x = input._data
    if x.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(x.ndim, 1)}, {max(x.ndim, 1) - 1}], but got 1)")
    _float_input(x, "batch_norm")
    _same_dtype(x, weight, bias, running_mean, running_var)
    c = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")
    dims = 0 if x.ndim == 2 else (0,) + tuple(range(2, x.ndim))
    shape = (1, c) + (1,) * (x.ndim - 2)
    if x.dtype == _F16 and x.size:
        y, save_mean, save_invstd = _half_batch_norm(x, weight, bias, running_mean, running_var,
                                                     training, momentum, eps, dims, shape)
    elif training:
        # np.add.reduce rather than np.mean: the same sums without mean's overhead, which
        # dominates on a makemore-sized batch. The Python numbers are 0-d arrays of x's dtype
        # (`constant`): the same arithmetic, cheaper on vectors of C channels.
        n = x.size // c
        dt = x.dtype
        stats = running_mean if running_mean is not None else running_var
        if stats is None:
            cn, one, ceps, cm, cunbiased, ckeep = _train_constants(n, eps, dt, 0.0, dt)
        else:
            cn, one, ceps, cm, cunbiased, ckeep = _train_constants(n, eps, dt, momentum,
                                                                   stats._data.dtype)
        mean = np.add.reduce(x, axis=dims, dtype=dt) / cn
        xc = x - (mean if x.ndim == 2 else mean.reshape(shape))
        var = np.add.reduce(xc * xc, axis=dims, dtype=dt) / cn
        invstd = np.divide(one, np.sqrt(var + ceps))
        # The running statistics change in place without a version bump, as in torch.
        if running_mean is not None:
            rm = running_mean._data
            np.add(cm * mean, ckeep * rm, out=rm, casting="unsafe")
        if running_var is not None:
            rv = running_var._data
            np.add(cm * (var * cunbiased), ckeep * rv, out=rv, casting="unsafe")
        # As torch's kernel: one per-channel factor, invstd * weight, so that the batch is
        # multiplied once; xc is fresh, the output is written over it.
        alpha = invstd if weight is None else invstd * weight._data
        y = np.multiply(xc, _per_channel(alpha, shape), out=xc, casting="unsafe")
        if bias is not None:
            np.add(y, _per_channel(bias._data, shape), out=y, casting="unsafe")
        save_mean, save_invstd = mean, invstd
    else:
        if running_mean is None or running_var is None:
            # torch names the first missing one
            missing = "running_mean" if running_mean is None else "running_var"
            raise RuntimeError(f"{missing} must be defined in evaluation mode")
        rstd = 1 / np.sqrt(running_var._data + eps)
        y = _affine((x - running_mean._data.reshape(shape)) * rstd.reshape(shape), weight,
                    bias, shape)
        save_mean = save_invstd = np.zeros(0, dtype=x.dtype)
    out = _make(y if y.dtype is x.dtype else y.astype(x.dtype, copy=False))
    if _needs(input, weight, bias):
        record(D["native_batch_norm"], out, (input, weight, bias),
               (input, weight, running_mean, running_var, _make(save_mean),
                _make(save_invstd), bool(training), eps))
    return out


def _half_batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps,
                     dims, shape):
    """torch's CPU kernel on float16 input: the statistics in float32 (the running ones
    updated in float32, stored in their dtype), saved as the parameters' dtype; then one
    per-channel alpha = invstd * weight and beta = bias - mean * alpha from the saved (rounded)
    mean and invstd, and y = x * alpha + beta as one fused multiply-add in float32, rounded to
    float16 once. (y, save_mean, save_invstd)."""
    f32 = np.float32
    xf = x.astype(f32)
    mixed = any(p is not None and p._data.dtype != _F16
                for p in (weight, bias, running_mean, running_var))
    param = f32 if mixed else _F16
    if training:
        n = x.size // x.shape[1]
        mean = np.add.reduce(xf, axis=dims, dtype=f32) / f32(n)
        xc = xf - (mean if x.ndim == 2 else mean.reshape(shape))
        var_sum = np.add.reduce(xc * xc, axis=dims, dtype=f32)
        invstd = f32(1) / np.sqrt(var_sum / f32(n) + f32(eps))
        if running_mean is not None:
            rm = running_mean._data
            rm[...] = (f32(momentum) * mean + f32(1 - momentum) * rm.astype(f32)).astype(
                rm.dtype)
        if running_var is not None:
            rv = running_var._data
            unbiased = var_sum / f32(n - 1) if n > 1 else var_sum * f32(math.inf)
            rv[...] = (f32(momentum) * unbiased + f32(1 - momentum) * rv.astype(f32)).astype(
                rv.dtype)
        save_mean, save_invstd = mean.astype(param), invstd.astype(param)
        mean_f, invstd_f = save_mean.astype(f32), save_invstd.astype(f32)
    else:
        if running_mean is None or running_var is None:
            missing = "running_mean" if running_mean is None else "running_var"
            raise RuntimeError(f"{missing} must be defined in evaluation mode")
        mean_f = running_mean._data.astype(f32)
        invstd_f = f32(1) / np.sqrt(running_var._data.astype(f32) + f32(eps))
        save_mean = save_invstd = np.zeros(0, dtype=param)
    alpha = invstd_f if weight is None else invstd_f * weight._data.astype(f32)
    beta = -mean_f * alpha if bias is None else bias._data.astype(f32) - mean_f * alpha
    # fmadd: x * alpha + beta rounded once (the float64 product of two float32 is exact)
    y = (x.astype(np.float64) * alpha.reshape(shape) + beta.reshape(shape)).astype(f32)
    return y.astype(_F16), save_mean, save_invstd


def _train_constants(n, eps, dt, momentum, stats_dt):
    """batch_norm's numbers in training, as `constant`s: n, 1, eps and momentum in the
    input's dtype, n / (n - 1) (the unbiased variance's factor; inf for n = 1, as var * inf),
    and 1 - momentum in the running statistics' dtype (momentum is unused, and may be None,
    without them). One cached tuple per call's arguments: six lookups of `constant` cost more
    than their arithmetic on C channels."""
    key = (n, eps, dt, momentum, stats_dt)
    c = _TRAIN_CONSTANTS.get(key)
    if c is None:
        if len(_TRAIN_CONSTANTS) >= 64:
            _TRAIN_CONSTANTS.clear()
        c = _TRAIN_CONSTANTS[key] = (
            constant(n, dt), constant(1, dt), constant(eps, dt), constant(momentum, dt),
            constant(n / (n - 1) if n > 1 else math.inf, dt),
            constant(1 - momentum, stats_dt))
    return c


_TRAIN_CONSTANTS = {}


# ----- group_norm --------------------------------------------------------------------------

@export(tensor=False)
@records("native_group_norm")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """Normalization over groups of channels, per sample (NativeGroupNormBackward0)."""
    x = input._data
    n, c = x.shape[0], x.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_shape_text(x.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t._data.ndim != 1 or t._data.size != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"{_shape_text(t.shape)} and input of shape "
                               f"{_shape_text(x.shape)}")
    _float_input(x, "group_norm")
    _same_dtype(x, weight, bias)
    hxw = int(np.prod(x.shape[2:], dtype=np.int64))
    shape = (1, c) + (1,) * (x.ndim - 2)
    if x.dtype == _F16 and x.size:
        y, mean, rstd = _half_group_norm(x, num_groups, weight, bias, eps)
        out = _make(y)
    else:
        g = x.reshape(n, num_groups, -1)
        mean = _mean(g, (2,))
        gc = g - mean
        rstd = 1 / np.sqrt(_mean(gc * gc, (2,)) + eps)
        y = (gc * rstd).reshape(x.shape)
        out = _make(_affine(y, weight, bias, shape).astype(x.dtype, copy=False))
    if _needs(input, weight, bias):
        # The mean and rstd are outputs 1 and 2 of the node, as torch's result1 and result2:
        # the gradient reads them under create_graph=True, and differentiates through them.
        stats = [_make(mean.reshape(n, num_groups)),
                 _make(rstd.reshape(n, num_groups).astype(
                     rstd.dtype if x.dtype == _F16 else x.dtype))]
        record_outputs(D["native_group_norm"], [out] + stats, (input, weight, bias),
                       (input, weight, n, c, hxw, num_groups, eps, *stats))
    return out


def _half_group_norm(x, num_groups, weight, bias, eps):
    """torch's CPU kernel on float16 input: each group's mean and rstd in float32; per channel
    scale = rstd * weight and bias = -scale * mean + bias, and y = x * scale + bias as one
    fused multiply-add in float32, rounded to float16 once. mean and rstd (n, groups, 1) in
    the parameters' dtype (float32 when they are, torch's mixed types)."""
    f32 = np.float32
    n, c = x.shape[0], x.shape[1]
    g = x.astype(f32).reshape(n, num_groups, -1)
    mean = np.add.reduce(g, axis=2, dtype=f32, keepdims=True) / f32(g.shape[2])
    gc = g - mean
    var = np.add.reduce(gc * gc, axis=2, dtype=f32, keepdims=True) / f32(g.shape[2])
    rstd = f32(1) / np.sqrt(var + f32(eps))
    mixed = any(p is not None and p._data.dtype != _F16 for p in (weight, bias))
    stats = f32 if mixed else _F16
    if weight is None and bias is None:
        # torch: (x - mean) * rstd in float32
        return (gc * rstd).astype(_F16).reshape(x.shape), mean.astype(stats), rstd.astype(stats)
    per = c // num_groups
    # (n, groups, channels per group): each channel's scale and bias
    scale = np.repeat(rstd, per, axis=2)
    if weight is not None:
        scale = scale * weight._data.astype(f32).reshape(1, num_groups, per)
    shift = -scale * np.repeat(mean, per, axis=2)
    if bias is not None:
        shift = shift + bias._data.astype(f32).reshape(1, num_groups, per)
    xs = x.astype(np.float64).reshape(n, num_groups, per, -1)
    y = (xs * scale[..., None] + shift[..., None]).astype(f32).astype(_F16).reshape(x.shape)
    return y, mean.astype(stats), rstd.astype(stats)


# ----- Their backwards, recorded under create_graph=True ----------------------------------

@records("native_layer_norm_backward")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias):
    """The gradients of layer_norm's input, weight and bias as one op with three outputs
    (NativeLayerNormBackwardBackward0), as torch records them under create_graph=True."""
    w = None if weight is None else weight._data
    outs = [_make(np.asarray(g)) for g in layer_norm_grads(
        [grad_out._data], 7, input._data, normalized_shape, w, None, mean._data, rstd._data,
        None)]
    if _needs(grad_out, input, weight, bias):
        record_outputs(D["native_layer_norm_backward"], outs,
                       (grad_out, input, mean, rstd, weight, bias),
                       (grad_out, input, mean, normalized_shape, rstd, weight))
    return outs


@records("native_batch_norm_backward")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps):
    """The gradients of batch_norm's input, weight and bias as one op with three outputs
    (NativeBatchNormBackwardBackward0), as torch records them under create_graph=True."""
    w = None if weight is None else weight._data
    stats = tuple(None if t is None else t._data
                  for t in (running_mean, running_var, save_mean, save_invstd))
    outs = [_make(np.asarray(g)) for g in batch_norm_grads(
        [grad_out._data], 7, input._data, w, *stats, train, eps)]
    if _needs(grad_out, input, weight):
        record_outputs(D["native_batch_norm_backward"], outs,
                       (grad_out, input, weight, save_mean, save_invstd),
                       (grad_out, input, weight, running_mean, running_var, save_mean,
                        save_invstd, train, eps))
    return outs


@records("unsqueeze_")
def unsqueeze_(self, dim):
    """torch's in-place unsqueeze_ as group_norm's gradient applies it to a fresh result: the
    unsqueezed tensor, recorded as UnsqueezeBackward1. Not public: self keeps its shape, where
    Tensor.unsqueeze_ would change it."""
    d = _wrap_dim(dim, self.dim() + 1)
    out = _make(np.expand_dims(self._data, d))
    if _needs(self):
        node = record(D["unsqueeze_"], out, (self,), (d, self.shape))
        if dim < 0:
            keep_raw(node, "dim", dim)      # torch saves the dim as given (-1, -2)
    return out
