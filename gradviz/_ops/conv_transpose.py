"""Transposed convolution: conv_transpose1d and conv_transpose2d, torch.convolution with
transposed=True (one ConvolutionBackward0 node, as torch records it), over batched or unbatched
input.
"""

from .._registry import export
from .._tensor import Tensor
from .convolution import _batched, _tuple, convolution
from .views import squeeze


def _conv_transpose_nd(nd, name, input, weight, bias, stride, padding, output_padding, groups,
                       dilation):
    for arg, value in (("input", input), ("weight", weight)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}() argument '{arg}' must be Tensor, not "
                            f"{type(value).__name__}")
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    input, batched = _batched(input, nd, name)
    out = convolution(input, weight, bias, _tuple(stride, nd, "stride"),
                      _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation"), True,
                      _tuple(output_padding, nd, "output_padding"), groups)
    return out if batched else squeeze(out, 0)


@export("conv_transpose1d", tensor=False)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L) input, weight
    (C_in, C_out / groups, k) (ConvolutionBackward0).

    >>> import gradviz as torch
    >>> torch.conv_transpose1d(torch.ones(1, 1, 3), torch.ones(1, 1, 2), stride=2)
    tensor([[[1., 1., 1., 1., 1., 1.]]])
    """
    return _conv_transpose_nd(1, "conv_transpose1d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


@export("conv_transpose2d", tensor=False)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W) input, weight
    (C_in, C_out / groups, kh, kw) (ConvolutionBackward0).

    >>> import gradviz as torch
    >>> torch.conv_transpose2d(torch.ones(1, 1, 2, 2), torch.ones(1, 1, 2, 2), stride=2).shape
    torch.Size([1, 1, 4, 4])
    """
    return _conv_transpose_nd(2, "conv_transpose2d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


__all__ = ["conv_transpose1d", "conv_transpose2d"]
