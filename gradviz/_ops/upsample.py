"""Upsampling, as nn.functional.interpolate calls it: upsample_nearest1d, upsample_nearest2d and
upsample_bilinear2d (UpsampleNearest1DBackward0, UpsampleNearest2DBackward0,
UpsampleBilinear2DBackward0), and their backwards, recorded under create_graph=True as torch
records them (UpsampleNearest2DBackwardBackward0, ...). The resampling itself is
gradviz._resample's.
"""

from .._derivatives import DERIVATIVES as D
from .._resample import linear, linear_backward, nearest, nearest_backward
from .._registry import records
from .._tensor import _make
from ..autograd.formula import record
from ._common import _TORCH_SCALAR, _needs


def _checked(self, kernel, output_size):
    """self's array after torch's checks: a float dtype, and sizes above 0."""
    a = self._data
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_TORCH_SCALAR[a.dtype.name]}'")
    spatial = a.shape[2:]
    if min(spatial + tuple(output_size)) <= 0:
        names = ("H", "W")[-len(spatial):] if len(spatial) <= 2 else ("D", "H", "W")
        i = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
        o = ", ".join(f"{n}: {s}" for n, s in zip(names, output_size))
        join = " and " if len(spatial) == 1 else " "
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({i}){join}output ({o})")
    return a


def _forward(row, self, value, args):
    out = _make(value)
    if _needs(self):
        record(D[row], out, (self,), args + (tuple(self.shape),))
    return out


def _backward(row, grad_output, value, args):
    out = _make(value)
    if _needs(grad_output):
        record(D[row], out, (grad_output,), args)
    return out


@records("upsample_nearest1d")
def upsample_nearest1d(self, output_size, scales=None):
    a = _checked(self, "compute_indices_weights_nearest", output_size)
    return _forward("upsample_nearest1d", self, nearest(a, output_size, (scales,)),
                    (tuple(output_size), scales))


@records("upsample_nearest2d")
def upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    a = _checked(self, "upsample_nearest2d_channels_last", output_size)
    return _forward("upsample_nearest2d", self, nearest(a, output_size, (scales_h, scales_w)),
                    (tuple(output_size), scales_h, scales_w))


@records("upsample_bilinear2d")
def upsample_bilinear2d(self, output_size, align_corners, scales_h=None, scales_w=None):
    a = _checked(self, "upsample_bilinear2d_channels_last", output_size)
    value = linear(a, output_size, (scales_h, scales_w), align_corners)
    return _forward("upsample_bilinear2d", self, value.astype(a.dtype, copy=False),
                    (align_corners, tuple(output_size), scales_h, scales_w))


@records("upsample_nearest1d_backward")
def upsample_nearest1d_backward(grad_output, output_size, input_size, scales=None):
    value = nearest_backward(grad_output._data, input_size[2:], (scales,))
    return _backward("upsample_nearest1d_backward", grad_output, value,
                     (tuple(output_size), scales))


@records("upsample_nearest2d_backward")
def upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h=None,
                                scales_w=None):
    value = nearest_backward(grad_output._data, input_size[2:], (scales_h, scales_w))
    return _backward("upsample_nearest2d_backward", grad_output, value,
                     (tuple(output_size), scales_h, scales_w))


@records("upsample_bilinear2d_backward")
def upsample_bilinear2d_backward(grad_output, output_size, input_size, align_corners,
                                 scales_h=None, scales_w=None):
    value = linear_backward(grad_output._data, input_size[2:], (scales_h, scales_w),
                            align_corners)
    return _backward("upsample_bilinear2d_backward", grad_output, value,
                     (align_corners, tuple(output_size), scales_h, scales_w))


__all__ = ["upsample_nearest1d", "upsample_nearest2d", "upsample_bilinear2d",
           "upsample_nearest1d_backward", "upsample_nearest2d_backward",
           "upsample_bilinear2d_backward"]
