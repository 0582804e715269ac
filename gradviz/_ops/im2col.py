"""F.unfold (im2col: every sliding block of an image as a column, Im2ColBackward0) and its
adjoint F.fold (col2im: columns summed back into an image, Col2ImBackward0). Each one's
gradient is the other, so second derivatives record the other's node, as in torch.
"""

from .._derivatives import DERIVATIVES as D, col2im_array, im2col_array
from .._registry import records
from .._tensor import _make
from .._windows import out_size
from ..autograd.formula import record
from ._common import _TORCH_SCALAR, _needs


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _check_geometry(kernel, dilation, padding, stride):
    for name, (h, w), ok, what in (("kernel", kernel, 0, "kernel size should be greater "
                                    "than zero"),
                                   ("stride", stride, 0, "stride should be greater than zero"),
                                   ("dilation", dilation, 0, "dilation should be greater than "
                                    "zero"),
                                   ("pad", padding, -1, "padding should be non-negative")):
        if h <= ok or w <= ok:
            raise RuntimeError(f"{what}, but got {name}_height: {h} {name}_width: {w}")


def _check_dtype(a, kernel):
    """torch's CPU kernels take floating and bool tensors, and refuse integer ones."""
    if a.dtype.kind in "iu":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_TORCH_SCALAR[a.dtype.name]}'")


def _blocks(spatial, kernel, dilation, padding, stride):
    return tuple(out_size(n, k, s, p, d)
                 for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation))


@records("im2col")
def im2col(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.unfold: the (C * kh * kw, L) columns of every sliding block of
    each (C, H, W) image, L blocks in row-major order.

    >>> import gradviz as torch
    >>> torch.nn.functional.unfold(torch.arange(9.0).reshape(1, 1, 3, 3), 2).shape
    torch.Size([1, 4, 4])
    """
    kernel, dilation, padding, stride = map(_pair, (kernel_size, dilation, padding, stride))
    a = input._data
    if a.ndim not in (3, 4) or 0 in a.shape[1:]:
        if a.ndim == 2:
            raise IndexError("Dimension out of range (expected to be in range of [-2, 1], but "
                             "got 2)")
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           "and other non-zero dimensions for input, but got: "
                           f"[{', '.join(map(str, a.shape))}]")
    _check_geometry(kernel, dilation, padding, stride)
    blocks = _blocks(a.shape[-2:], kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size ({a.shape[-2]}, {a.shape[-1]}), kernel_size="
            f"{kernel}, dilation={dilation}, padding={padding}, calculated shape of the array "
            f"of sliding blocks as ({blocks[0]}, {blocks[1]}), but its components must be at "
            "least one.")
    _check_dtype(a, "im2col_out_cpu")
    out = _make(im2col_array(a, kernel, dilation, padding, stride))
    if _needs(input):
        record(D["im2col"], out, (input,),
               (kernel, dilation, padding, stride, a.shape[-1], a.shape[-2]))
    return out


@records("col2im")
def col2im(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.fold: columns (C * kh * kw, L) summed back into (C, H, W) images,
    where the blocks overlap (the adjoint of unfold).

    >>> import gradviz as torch
    >>> torch.nn.functional.fold(torch.ones(1, 4, 4), (3, 3), 2)[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """
    size, kernel, dilation, padding, stride = map(_pair, (output_size, kernel_size, dilation,
                                                          padding, stride))
    a = input._data
    if a.ndim not in (2, 3) or 0 in a.shape[1:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"[{', '.join(map(str, a.shape))}]")
    _check_geometry(kernel, dilation, padding, stride)
    k = kernel[0] * kernel[1]
    if a.shape[-2] % k:
        raise RuntimeError(f"Expected size of input's dimension {a.ndim - 2} to be divisible by "
                           f"the product of kernel_size, but got input.size({a.ndim - 2})="
                           f"{a.shape[-2]} and kernel_size={kernel}.")
    blocks = _blocks(size, kernel, dilation, padding, stride)
    if blocks[0] * blocks[1] != a.shape[-1]:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, padding="
            f"{padding}, stride={stride}, expected size of input's dimension {a.ndim - 1} to "
            f"match the calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
            f"{blocks[0] * blocks[1]}, but got input.size({a.ndim - 1})={a.shape[-1]}.")
    _check_dtype(a, "col2im_out_cpu")
    out = _make(col2im_array(a, size, kernel, dilation, padding, stride))
    if _needs(input):
        record(D["col2im"], out, (input,), (kernel, dilation, padding, stride))
    return out


