"""The source positions of torch's upsampling kernels (nearest, and linear along each spatial
dim for bilinear), and the separable forward and backward on NumPy arrays.

Each spatial dim is resampled on its own, as torch's kernels do: nearest picks one source
index per output index; linear mixes two neighbours with weights l0 + l1 = 1, written here as an
(out, in) matrix so that the forward is A_h @ x @ A_w.T and the backward A_h.T @ g @ A_w.
Positions are computed in torch's precision: float for nearest (its nearest_idx uses float
scales), the input's float type for linear (opmath).
"""

import numpy as np

__all__ = ["nearest_indices", "linear_matrix", "nearest", "nearest_backward", "linear",
           "linear_backward"]


def nearest_indices(out_n, in_n, scale):
    """torch's nearest_idx: the source index of each output index (scale: the user's scale
    factor, or None to use in_n / out_n)."""
    if out_n == in_n:
        return np.arange(out_n)
    if out_n == 2 * in_n:
        return np.arange(out_n) >> 1
    f32 = np.float32
    s = f32(1.0 / scale) if scale is not None and scale > 0 else f32(in_n) / f32(out_n)
    idx = np.floor(np.arange(out_n, dtype=f32) * s).astype(np.int64)
    return np.minimum(idx, in_n - 1)


def linear_matrix(out_n, in_n, scale, align_corners, dtype):
    """The (out_n, in_n) weights of torch's linear resampling along one dim
    (area_pixel_compute_scale, area_pixel_compute_source_index, guard_index_and_lambda)."""
    t = np.float32 if dtype == np.float32 else np.float64
    if align_corners:
        s = t(in_n - 1) / t(out_n - 1) if out_n > 1 else t(0)
    else:
        s = t(1.0 / scale) if scale is not None and scale > 0 else t(in_n) / t(out_n)
    dst = np.arange(out_n, dtype=t)
    if align_corners:
        src = s * dst
    else:
        src = np.maximum(s * (dst + t(0.5)) - t(0.5), t(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), in_n - 1)
    l1 = np.clip(src - i0.astype(t), t(0), t(1))
    i1 = i0 + (i0 < in_n - 1)
    rows = np.arange(out_n)
    a = np.zeros((out_n, in_n), dtype)
    np.add.at(a, (rows, i0), (t(1) - l1).astype(dtype))
    np.add.at(a, (rows, i1), l1.astype(dtype))
    return a


def nearest(x, out_sizes, scales):
    """x resampled to out_sizes along its trailing dims by nearest source index."""
    k = len(out_sizes)
    for d, (o, s) in enumerate(zip(out_sizes, scales)):
        axis = x.ndim - k + d
        x = np.take(x, nearest_indices(o, x.shape[axis], s), axis=axis)
    return x


def nearest_backward(g, in_sizes, scales):
    """nearest's gradient: each output's gradient added to its source element."""
    k = len(in_sizes)
    for d, (n, s) in enumerate(zip(in_sizes, scales)):
        axis = g.ndim - k + d
        moved = np.moveaxis(g, axis, 0)
        out = np.zeros((n,) + moved.shape[1:], g.dtype)
        np.add.at(out, nearest_indices(moved.shape[0], n, s), moved)
        g = np.moveaxis(out, 0, axis)
    return np.ascontiguousarray(g)


def linear(x, out_sizes, scales, align_corners):
    """x resampled along its trailing dims by torch's linear weights (bilinear for two)."""
    k = len(out_sizes)
    for d, (o, s) in enumerate(zip(out_sizes, scales)):
        axis = x.ndim - k + d
        a = linear_matrix(o, x.shape[axis], s, align_corners, x.dtype)
        x = np.moveaxis(np.tensordot(a, x, axes=([1], [axis])), 0, axis)
    return np.ascontiguousarray(x)


def linear_backward(g, in_sizes, scales, align_corners):
    k = len(in_sizes)
    for d, (n, s) in enumerate(zip(in_sizes, scales)):
        axis = g.ndim - k + d
        a = linear_matrix(g.shape[axis], n, s, align_corners, g.dtype)
        g = np.moveaxis(np.tensordot(a.T, g, axes=([1], [axis])), 0, axis)
    return np.ascontiguousarray(g)
