"""Sliding windows over the trailing (spatial) dims, for convolution and pooling.

The forward's im2col (`windows`) and the backward's col2im (`col2im`) work on NumPy arrays
(a strided view, and one slice-add per kernel offset) and on Tensors (one index and one
accumulating index_put, so that create_graph=True can differentiate them again). Neither loops
over output positions. The convolution formulas below are written once for both, with
gradviz._dmath's array-or-Tensor helpers.
"""

import itertools
import threading

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ._dmath import _t, matmul, permute, put, reshape, sum_dims, take
from ._registry import ops


def out_size(n, k, s, p, d, ceil_mode=False):
    """torch's output length along one dim (pooling_output_shape when ceil_mode)."""
    span = n + 2 * p - d * (k - 1) - 1
    if ceil_mode:
        o = -(-span // s) + 1
        if (o - 1) * s >= n + p:    # torch: the last window must start inside the input
            o -= 1
        return o
    return span // s + 1


def pads(spatial, kernel, stride, padding, dilation, out):
    """(low, high) padding per spatial dim: `padding` on both sides, more on the high side
    when ceil_mode's last window reaches beyond it."""
    return tuple((p, max(p, (o - 1) * s + d * (k - 1) + 1 - n - p))
                 for n, k, s, p, d, o in zip(spatial, kernel, stride, padding, dilation, out))


def pad_value(x, amounts, value=0.0):
    """x padded by `amounts` ((low, high) per trailing dim) with a constant."""
    if not any(lo or hi for lo, hi in amounts):
        return x
    if _t(x):
        flat = []
        for lo, hi in reversed(amounts):
            flat += [lo, hi]
        return ops.constant_pad_nd(x, flat, value)
    lead = [(0, 0)] * (x.ndim - len(amounts))
    return np.pad(x, lead + list(amounts), constant_values=value)


def crop(x, amounts):
    """The inverse of pad_value: x without its (low, high) borders."""
    if not any(lo or hi for lo, hi in amounts):
        return x
    shape = np.shape(x.detach()._data if _t(x) else x)
    nd = len(amounts)
    key = (slice(None),) * (len(shape) - nd) + tuple(
        slice(lo, n - hi) for (lo, hi), n in zip(amounts, shape[-nd:]))
    return x[key]


def window_index(spatial, kernel, stride, dilation, out, offset=(0,)):
    """Flat index into `spatial` of every window element, shaped (*out, *kernel); `offset` is
    subtracted from the positions first (the padding, for indices into the unpadded input),
    and positions outside `spatial` are -1."""
    nd = len(kernel)
    offset = offset * nd if len(offset) == 1 else offset
    flat = np.zeros(tuple(out) + tuple(kernel), dtype=np.int64)
    outside = np.zeros(flat.shape, dtype=bool)
    mult = 1
    for i in reversed(range(nd)):
        pos = (np.arange(out[i])[:, None] * stride[i] + np.arange(kernel[i])[None, :]
               * dilation[i] - offset[i])
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = out[i], kernel[i]
        pos = pos.reshape(shape)
        outside = outside | (pos < 0) | (pos >= spatial[i])
        flat = flat + pos * mult
        mult *= spatial[i]
    return np.where(outside, -1, flat)


def windows(x, kernel, stride, dilation, out):
    """(..., *out, *kernel): every window of the (already padded) trailing dims of x."""
    nd = len(kernel)
    if _t(x):
        shape = tuple(x.shape)
        lead = shape[:-nd]
        idx = window_index(shape[-nd:], kernel, stride, dilation, out)
        flat = reshape(x, lead + (int(np.prod(shape[-nd:])),))
        return take(flat, (slice(None),) * len(lead) + (idx,))
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    w = sliding_window_view(x, span, axis=tuple(range(x.ndim - nd, x.ndim)))
    key = ((slice(None),) * (x.ndim - nd)
           + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, stride))
           + tuple(slice(None, None, d) for d in dilation))
    return w[key]


def col2im(cols, spatial, kernel, stride, dilation, out):
    """The adjoint of windows: cols (..., *out, *kernel) summed into zeros (..., *spatial)."""
    nd = len(kernel)
    if _t(cols):
        shape = tuple(cols.shape)
        lead = shape[:-2 * nd]
        idx = window_index(spatial, kernel, stride, dilation, out)
        flat = put(cols, lead + (int(np.prod(spatial)),), (slice(None),) * len(lead) + (idx,),
                   True)
        return reshape(flat, lead + tuple(spatial))
    lead = cols.shape[:-2 * nd]
    res = np.zeros(lead + tuple(spatial), dtype=cols.dtype)
    for offs in itertools.product(*(range(k) for k in kernel)):
        dst = tuple(slice(j * d, j * d + (o - 1) * s + 1, s)
                    for j, d, o, s in zip(offs, dilation, out, stride))
        res[(Ellipsis,) + dst] += cols[(Ellipsis,) + offs]
    return res


# ----- Convolution as matrix products over the windows ---------------------------------------

def _order(nd):
    """(N, C, *out, *kernel) -> (C, *kernel, N, *out): the windows as one matrix per group,
    rows (channel, kernel offset), columns (image, output position)."""
    return (1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,) + tuple(range(2, 2 + nd))


def _cols(x, kernel, stride, padding, dilation, groups):
    """The windows of x as (G, Cg*K, N*L) matrices, with the output's spatial shape."""
    shape = tuple(np.shape(x._data if _t(x) else x))
    nd = len(kernel)
    out = tuple(out_size(n, k, s, p, d) for n, k, s, p, d
                in zip(shape[2:], kernel, stride, padding, dilation))
    w = windows(pad_value(x, [(p, p) for p in padding]), kernel, stride, dilation, out)
    n, c = shape[0], shape[1]
    cols = reshape(permute(w, _order(nd)), (groups, (c // groups) * int(np.prod(kernel)),
                                            n * int(np.prod(out))))
    return cols, out


def _grad_matrix(grad, groups):
    """The output gradient (N, O, *out) as (G, Og, N*L) matrices."""
    shape = tuple(np.shape(grad._data if _t(grad) else grad))
    n, o = shape[0], shape[1]
    g = reshape(grad, (n, groups, o // groups, int(np.prod(shape[2:]))))
    return reshape(permute(g, (1, 2, 0, 3)), (groups, o // groups, -1))


# ----- The common case on arrays: 2-D, stride 1, dilation 1, one group ----------------------
#
# The output positions are laid out on the padded input's rows ("wide" rows of Wp columns, of
# which the last kw - 1 are not outputs). Then every kernel offset (i, j) is one shift of
# i * Wp + j along each flattened padded plane: im2col and col2im become kh * kw contiguous
# slice copies / adds instead of strided 6-D copies. The extra columns are zeroed (windows and
# output gradient alike), so they add exact zeros; the products run over the same (channel,
# kernel offset) rows in the same order as the general path.

_SCRATCH = threading.local()
_SCRATCH_LIMIT = 64 << 20      # bytes: a larger work array is allocated each time


def _scratch(tag, shape, dtype):
    """An uninitialized work array for a temporary that never leaves this module, kept per
    thread and handed out again for the same (tag, shape, dtype). A training step then reuses
    its im2col matrices instead of taking fresh pages from the system for each: their page
    faults cost about as much as the copies that fill them."""
    cache = getattr(_SCRATCH, "arrays", None)
    if cache is None:
        cache = _SCRATCH.arrays = {}
    key = (tag, shape, dtype)
    a = cache.get(key)
    if a is None:
        a = np.empty(shape, dtype=dtype)
        if a.nbytes <= _SCRATCH_LIMIT:
            if len(cache) >= 16:        # many layer shapes: start over, do not grow
                cache.clear()
            cache[key] = a
    return a


def _wide(x_shape, weight, stride, dilation, groups):
    return (groups == 1 and len(x_shape) == 4 and not _t(weight)
            and all(s == 1 for s in stride) and all(d == 1 for d in dilation))


def _wide_cols(x, kernel, padding):
    """(cols (C*kh*kw, N*oh*Wp) with the extra columns zeroed, (oh, ow), Wp)."""
    n, c, h, w = x.shape
    (kh, kw), (ph, pw) = kernel, padding
    hp, wp = h + 2 * ph, w + 2 * pw
    oh, ow = hp - kh + 1, wp - kw + 1
    lw = oh * wp
    buf = _scratch("padded", (n, c, hp * wp + kw - 1), x.dtype)
    buf.fill(0)
    buf[:, :, :hp * wp].reshape(n, c, hp, wp)[:, :, ph:ph + h, pw:pw + w] = x
    cols = _scratch("cols", (c, kh * kw, n, lw), x.dtype)
    src = buf.transpose(1, 0, 2)
    for i in range(kh):
        for j in range(kw):
            off = i * wp + j
            cols[:, i * kw + j] = src[:, :, off:off + lw]
    cols.reshape(c * kh * kw, n, oh, wp)[..., ow:] = 0
    return cols.reshape(c * kh * kw, n * lw), (oh, ow), wp


def _wide_grad(grad, wp):
    """The output gradient (N, O, oh, ow) as (O, N*oh*Wp), zero in the extra columns."""
    n, o, oh, ow = grad.shape
    g = _scratch("grad", (o, n, oh, wp), grad.dtype)
    g[..., :ow] = grad.transpose(1, 0, 2, 3)
    g[..., ow:] = 0
    return g.reshape(o, n * oh * wp)


def _wide_conv(x, weight, padding):
    o = weight.shape[0]
    cols, (oh, ow), wp = _wide_cols(x, weight.shape[2:], padding)
    w = weight.reshape(o, -1)
    r = np.matmul(w, cols, out=_scratch("product", (o, cols.shape[1]), np.result_type(w, cols)))
    r = r.reshape(o, x.shape[0], oh, wp)[..., :ow].transpose(1, 0, 2, 3)
    # A fresh C-ordered copy (always a copy: the product's array is reused by the next call).
    return np.array(r, order="C")


def _wide_grad_input(grad, input_shape, weight, padding):
    n, c, h, w = input_shape
    o, _, kh, kw = weight.shape
    ph, pw = padding
    hp, wp = h + 2 * ph, w + 2 * pw
    oh = grad.shape[2]
    lw = oh * wp
    wt = weight.reshape(o, -1).T
    g = _wide_grad(grad, wp)
    dt = np.result_type(wt, g)
    dcols = np.matmul(wt, g, out=_scratch("dcols", (c * kh * kw, n * lw), dt))
    dcols = dcols.reshape(c, kh * kw, n, lw)
    res = _scratch("col2im", (c, n, hp * wp + kw - 1), dt)
    res.fill(0)
    for i in range(kh):
        for j in range(kw):
            off = i * wp + j
            res[:, :, off:off + lw] += dcols[:, i * kw + j]
    full = res[:, :, :hp * wp].reshape(c, n, hp, wp)
    # A fresh C-ordered copy (always a copy: res is reused by the next call).
    return np.array(full[:, :, ph:ph + h, pw:pw + w].transpose(1, 0, 2, 3), order="C")


# ----- Any convolution -----------------------------------------------------------------------

def conv(x, weight, stride, padding, dilation, groups):
    """The convolution of x (N, C, *spatial) with weight (O, C/groups, *kernel), no bias:
    one matrix product per group over all images at once. On arrays the result is always
    fresh memory (never a view of x, weight or a work array), which the caller may write."""
    if _wide(np.shape(x), weight, stride, dilation, groups) and not _t(x):
        return _wide_conv(x, weight, padding)
    o = weight.shape[0]
    n = x.shape[0]
    nd = len(weight.shape) - 2
    cols, out = _cols(x, tuple(weight.shape[2:]), stride, padding, dilation, groups)
    r = matmul(reshape(weight, (groups, o // groups, -1)), cols)     # (G, Og, N*L)
    r = permute(reshape(r, (groups, o // groups, n) + out),
                (2, 0, 1) + tuple(range(3, 3 + nd)))
    return reshape(r, (n, o) + out)


def conv_grad_weight(grad, input, weight_shape, stride, padding, dilation, groups):
    """d conv / d weight: the output gradient times the input's windows."""
    if (_wide(weight_shape, grad, stride, dilation, groups) and not _t(input)
            and len(weight_shape) == 4):
        cols, _, wp = _wide_cols(input, tuple(weight_shape[2:]), padding)
        # (cols @ g^T)^T rather than g @ cols^T: the same dot products over the long N*oh*Wp
        # axis, which OpenBLAS computes about a quarter faster in this orientation (the CNN
        # step's two layers: 2.0 -> 1.4 ms and 1.2 -> 1.0 ms; the same bits there).
        # C-ordered, as the weight (and torch's gradient) is.
        gw = np.ascontiguousarray(np.matmul(cols, _wide_grad(grad, wp).T).T)
        return gw.reshape(tuple(weight_shape))
    cols, _ = _cols(input, tuple(weight_shape[2:]), stride, padding, dilation, groups)
    gw = matmul(_grad_matrix(grad, groups), _swap(cols))            # (G, Og, Cg*K)
    return reshape(gw, tuple(weight_shape))


def conv_grad_input(grad, input_shape, weight, stride, padding, dilation, groups):
    """d conv / d input: the weight's transpose times the output gradient, put back in
    place by col2im, with the padding cropped."""
    if (_wide(input_shape, weight, stride, dilation, groups) and not _t(grad)
            and np.isfinite(weight).all()):         # extra columns: weight * 0 must be 0
        return _wide_grad_input(grad, input_shape, weight, padding)
    o = weight.shape[0]
    nd = len(input_shape) - 2
    kernel = tuple(weight.shape[2:])
    n, c = input_shape[0], input_shape[1]
    out = tuple(grad.shape[2:])
    w = reshape(weight, (groups, o // groups, -1))
    dcols = matmul(_swap(w), _grad_matrix(grad, groups))            # (G, Cg*K, N*L)
    dcols = reshape(dcols, (c,) + kernel + (n,) + out)
    dcols = permute(dcols, tuple(int(i) for i in np.argsort(_order(nd))))  # (N, C, *out, *k)
    spatial = tuple(input_shape[2:])
    padded = tuple(s + 2 * p for s, p in zip(spatial, padding))
    full = col2im(dcols, padded, kernel, stride, dilation, out)
    # Rows and columns no window reached (stride larger than the kernel's reach) stay 0.
    return crop(full, [(p, p) for p in padding])


def _swap(x):
    return x.transpose(-2, -1) if _t(x) else np.swapaxes(x, -2, -1)


# ----- Pooling and padding gradients -------------------------------------------------------

def max_pool_grad(grad, self_sizes, indices):
    """The gradient of max pooling: each output's gradient added at its argmax (`indices`,
    flat over the last two dims of the input, as torch returns them)."""
    idx = indices._data if _t(indices) else indices
    lead = int(np.prod(self_sizes[:-2]))
    plane = int(np.prod(self_sizes[-2:]))
    idx = idx.reshape(lead, -1)
    if _t(grad):
        rows = np.arange(lead)[:, None]
        flat = put(reshape(grad, (lead, idx.shape[1])), (lead, plane), (rows, idx), True)
        return reshape(flat, tuple(self_sizes))
    where = (idx + (np.arange(lead) * plane)[:, None]).ravel()
    # np.add.at in the gradient's dtype: NumPy 2's is several times faster than a float64
    # np.bincount and a cast back.
    g = np.zeros(lead * plane, dtype=np.result_type(grad))
    np.add.at(g, where, np.ravel(grad))
    return g.reshape(self_sizes)


def avg_pool_grad(grad, geometry):
    """The gradient of average pooling: each output's gradient over its divisor, spread over
    its window by col2im, the padding cropped."""
    padded, kernel, stride, out, amounts, divisor = geometry
    nd = len(kernel)
    g = grad / divisor if _t(grad) else grad / divisor.astype(grad.dtype, copy=False)
    shape = tuple(np.shape(g._data if _t(g) else g))
    full = shape + tuple(kernel)
    g = reshape(g, shape + (1,) * nd)
    g = g.expand(full) if _t(g) else np.broadcast_to(g, full)
    return crop(col2im(g, padded, kernel, stride, (1,) * nd, out), amounts)


def constant_pad(x, pad):
    """x padded by torch's flat `pad` list (last dim first; negative values crop)."""
    if _t(x):
        return ops.constant_pad_nd(x, list(pad), 0)
    return constant_pad_array(x, pad, 0)


def constant_pad_array(a, pad, value):
    nd = len(pad) // 2
    amounts = [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(nd))]
    lead = a.ndim - nd
    key = (slice(None),) * lead + tuple(
        slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(amounts, a.shape[lead:]))
    a = a[key]
    widths = [(0, 0)] * lead + [(max(lo, 0), max(hi, 0)) for lo, hi in amounts]
    if not any(lo or hi for lo, hi in widths):
        return np.array(a)
    return np.pad(a, widths, constant_values=value)


def pad_maps(shape, pad, mode, dtype):
    """For reflect / replicate padding: per padded dim (axis, source index per output position,
    its one-hot matrix (input length x output length) for the backward)."""
    nd = len(pad) // 2
    maps = []
    for i in range(nd):
        axis = -1 - i
        n = shape[axis]
        lo, hi = pad[2 * i], pad[2 * i + 1]
        pos = np.arange(-lo, n + hi)
        if mode == "reflect":
            period = 2 * (n - 1) if n > 1 else 1
            pos = np.abs(pos) % period
            src = np.where(pos >= n, period - pos, pos)
        else:
            src = np.clip(pos, 0, n - 1)
        onehot = (np.arange(n)[:, None] == src[None, :]).astype(dtype)
        maps.append((axis, src, onehot))
    return maps


def gather_pad_grad(grad, maps):
    """The gradient of reflect / replicate padding: each output's gradient summed back onto the
    input position it was copied from (a product with each dim's one-hot matrix)."""
    for axis, _, onehot in maps:
        if axis == -1:
            grad = matmul(grad, onehot.T)
        else:
            grad = matmul(onehot, grad)
    return grad
