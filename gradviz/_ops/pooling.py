"""Pooling: max_pool2d (MaxPool2DWithIndicesBackward0), avg_pool2d (AvgPool2DBackward0) and
adaptive_avg_pool2d (AdaptiveAvgPool2DBackward0, or a mean when the output is 1x1, as torch
records it), over (N, C, H, W) or (C, H, W) input, on strided windows of the input.

Their backwards are ops of their own under create_graph=True (MaxPool2DWithIndicesBackward-
Backward0, ...), as in torch; a plain backward computes them on arrays in the table's formulas.
"""

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._registry import records
from .._tensor import _make
from .._windows import avg_pool_grad, max_pool_grad, out_size, pads, windows
from ..autograd.formula import record
from ._common import _needs
from .reductions import mean
from .views import channels_last_as


def _pair(value, name):
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) == 1:
        return value * 2
    if len(value) != 2:
        raise RuntimeError(f"max_pool2d: {name} must either be a single int, or a tuple of two "
                           f"ints")
    return value


def _geometry(name, self, kernel_size, stride, padding, dilation, ceil_mode):
    if self.dim() < 3 and name == "avg_pool2d":
        # torch's avg_pool2d reads input.size(-3) first
        n = self.dim()
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, "
                         f"{max(n, 1) - 1}], but got -3)")
    if self.dim() not in (3, 4) or self.numel() == 0:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or stride == () or stride == [] else _pair(stride, "stride")
    p, d = _pair(padding, "padding"), _pair(dilation, "dilation")
    if any(x <= 0 for x in s):
        raise RuntimeError("stride should be greater than zero, but got "
                           f"dH: {s[0]} dW: {s[1]}")
    for pi, ki, di in zip(p, k, d):
        if pi > (di * (ki - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pi}, kernel_size={ki} and dilation={di}")
    spatial = tuple(self.shape[-2:])
    out = tuple(out_size(n, ki, si, pi, di, ceil_mode)
                for n, ki, si, pi, di in zip(spatial, k, s, p, d))
    if any(o <= 0 for o in out):
        c = self.shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{spatial[0]}x{spatial[1]}). Calculated "
                           f"output size: ({c}x{out[0]}x{out[1]}). Output size is too small")
    return k, s, p, d, spatial, out, pads(spatial, k, s, p, d, out)


def _padded(a, amounts, value):
    if not any(lo or hi for lo, hi in amounts):
        return a
    return np.pad(a, [(0, 0)] * (a.ndim - 2) + list(amounts), constant_values=value)


def _max_and_arg(views, offsets):
    """The elementwise maximum of the views (one per kernel offset, never a loop over output
    positions) and, for each, offsets[j] of the first view j holding it (torch keeps the
    earlier of equal values).

    j is counted rather than selected: j = how many views, from the first, all differ from
    the maximum (uint8 sums, then one lookup; masked copies cost several times more)."""
    values = np.array(views[0])
    for v in views[1:]:
        # the running maximum second: NumPy's maximum gives its second operand on a tie of
        # +0.0 and -0.0, so the earlier zero's sign stays, as torch's `val > maxval` keeps it
        np.maximum(v, values, out=values)
    if np.isnan(values).any():          # np.maximum lets a nan through: torch's rule below
        return _max_and_arg_nan(views, offsets)
    before = np.not_equal(views[0], values)     # no view so far holds the maximum
    j = before.astype(np.uint8)
    ne = np.empty(values.shape, dtype=bool)
    for v in views[1:-1]:
        np.not_equal(v, values, out=ne)
        before &= ne
        j += before.view(np.uint8)
    return values, np.asarray(offsets, dtype=np.int64).take(j)


def _max_and_arg_nan(views, offsets):
    """The same when the input holds nan: torch's `val > maxval || isnan(val)`, so a nan
    wins and the last nan of a window is the one chosen."""
    values = np.array(views[0])
    arg = np.full(values.shape, offsets[0], dtype=np.int64)
    upd = np.empty(values.shape, dtype=bool)
    for j in range(1, len(views)):
        v = views[j]
        np.greater(v, values, out=upd)
        upd |= np.isnan(v)
        np.copyto(values, v, where=upd)
        np.copyto(arg, offsets[j], where=upd)
    return values, arg


@records("max_pool2d_with_indices")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """(values, indices): the maximum of each window and its flat index in the input plane."""
    k, s, p, d, spatial, out, amounts = _geometry("max_pool2d", self, kernel_size, stride,
                                                  padding, dilation, ceil_mode)
    a = self._array()
    w = windows(_padded(a, amounts, -np.inf), k, s, d, out)
    views = [w[..., j // k[1], j % k[1]] for j in range(k[0] * k[1])]
    # The flat index in the (unpadded) input plane of each window's winner: its offset in the
    # window, plus where the window starts.
    width = spatial[1]
    offsets = [j // k[1] * (d[0] * width) + j % k[1] * d[1] for j in range(k[0] * k[1])]
    values, indices = _max_and_arg(views, offsets)
    base = ((np.arange(out[0]) * s[0] - p[0])[:, None] * width
            + (np.arange(out[1]) * s[1] - p[1])[None, :])
    indices += base
    res = _make(values)
    idx = _make(channels_last_as(indices, a))       # values are laid out as a already
    if _needs(self):
        record(D["max_pool2d_with_indices"], res, (self,),
               (self, _saved(kernel_size), _saved(stride), _saved(padding), _saved(dilation),
                ceil_mode, idx, tuple(a.shape)))
    return res, idx


def _saved(value):
    return (value, value) if isinstance(value, int) else tuple(value)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """torch.nn.functional.max_pool2d (MaxPool2DWithIndicesBackward0)."""
    values, indices = max_pool2d_with_indices(input, kernel_size, () if stride is None
                                              else stride, padding, dilation, ceil_mode)
    return (values, indices) if return_indices else values


@records("avg_pool2d")
def avg_pool2d(self, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """torch.nn.functional.avg_pool2d (AvgPool2DBackward0)."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, d, spatial, out, amounts = _geometry("avg_pool2d", self, kernel_size, stride,
                                                  padding, 1, ceil_mode)
    a = self._array()
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(spatial, amounts))
    w = windows(_padded(a, amounts, 0), k, s, d, out)
    total = w.sum(axis=(-2, -1))
    if divisor_override is not None:
        divisor = np.full(out, float(divisor_override))
    else:
        # torch divides by the window's size clipped to the padded input (count_include_pad)
        # or to the input itself.
        inside = np.zeros(padded)
        if count_include_pad:
            inside[:spatial[0] + 2 * p[0], :spatial[1] + 2 * p[1]] = 1
        else:
            inside[p[0]:p[0] + spatial[0], p[1]:p[1] + spatial[1]] = 1
        divisor = windows(inside, k, s, d, out).sum(axis=(-2, -1))
    res = _make((total / divisor.astype(a.dtype)).astype(a.dtype, copy=False))
    if _needs(self):
        geometry = (padded, k, s, out, amounts, divisor)
        record(D["avg_pool2d"], res, (self,),
               (self, _saved(kernel_size), () if stride is None else _saved(stride),
                _saved(padding), ceil_mode, count_include_pad, divisor_override, geometry))
    return res


def _bins(n, m, dtype):
    """The (m x n) averaging matrix of adaptive pooling along one dim: output i averages
    input [floor(i n / m), ceil((i + 1) n / m))."""
    i = np.arange(m)
    start = (i * n) // m
    end = -((-(i + 1) * n) // m)
    j = np.arange(n)
    inside = (j[None, :] >= start[:, None]) & (j[None, :] < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


@records("adaptive_avg_pool2d")
def adaptive_avg_pool2d(self, output_size):
    """torch.nn.functional.adaptive_avg_pool2d; a 1x1 output is a mean over the last two dims
    (MeanBackward1), as torch records it."""
    if self.dim() not in (3, 4) or self.numel() == 0:
        raise RuntimeError("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(self.shape)}")
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    h, w = self.shape[-2:]
    size = (h if size[0] is None else size[0], w if size[1] is None else size[1])
    if size == (1, 1):
        return mean(self, (-1, -2), keepdim=True)
    a = self._array()
    bins = (_bins(h, size[0], a.dtype), _bins(w, size[1], a.dtype).T)
    res = _make(channels_last_as(np.matmul(np.matmul(bins[0], a), bins[1]), a))
    if _needs(self):
        record(D["adaptive_avg_pool2d"], res, (self,), (self, (bins[0], bins[1].T)))
    return res


# ----- The backwards, recorded under create_graph=True -------------------------------------

@records("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    """Each output's gradient added at its argmax (`indices`)."""
    out = _make(max_pool_grad(grad_output._data, tuple(self.shape), indices._data))
    if _needs(grad_output, self):
        record(D["max_pool2d_with_indices_backward"], out, (grad_output, self), (indices,))
    return out


@records("avg_pool2d_backward")
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override, geometry):
    """Each output's gradient over its divisor, spread over its window."""
    out = _make(avg_pool_grad(grad_output._data, geometry))
    if _needs(grad_output, self):
        record(D["avg_pool2d_backward"], out, (grad_output, self),
               (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override))
    return out


@records("adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward(grad_output, self, bins):
    """bins[0]^T @ grad_output @ bins[1]: each output's gradient spread over its bin."""
    g = grad_output._data
    out = _make(np.matmul(np.matmul(bins[0].T, g), bins[1]))
    if _needs(grad_output, self):
        record(D["adaptive_avg_pool2d_backward"], out, (grad_output, self),
               (g.shape[-2], g.shape[-1]))
    return out
