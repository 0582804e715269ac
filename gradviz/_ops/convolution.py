"""Convolution: conv1d and conv2d, recorded as torch records them, one ConvolutionBackward0
node (input, weight, bias), computed as matrix products over the input's windows
(gradviz._windows: a strided view, never a Python loop over output positions).
"""

import warnings

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._derivatives import conv_bias_grad, conv_input_grad, conv_values, conv_weight_grad
from ..autograd.callsite import user_stacklevel
from .._registry import export, records
from .._tensor import Tensor, _make
from .._windows import conv
from ..autograd.formula import record, record_outputs
from ._common import _TORCH_SCALAR, _needs
from .views import channels_last_as
from .views import squeeze, unsqueeze

_C_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int"}
_E_CONV = D["convolution"]
_WARNED = []


def _tuple(value, nd, name):
    if isinstance(value, int):
        return (value,) * nd
    value = tuple(value)
    if len(value) == 1:
        return value * nd
    if len(value) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return value


def _check(input, weight, bias, nd, groups):
    x, w = input._data, weight._data
    b = None if bias is None else bias._data
    if b is not None and b.dtype != x.dtype:      # torch checks the bias's dtype first
        raise RuntimeError(f"Input type ({_C_TYPE.get(x.dtype.name, x.dtype.name)}) and "
                           f"bias type ({_C_TYPE.get(b.dtype.name, b.dtype.name)}) should "
                           f"be the same")
    if w.ndim != nd + 2:
        raise RuntimeError(f"weight should have at least three dimensions" if w.ndim < 3 else
                           f"Expected {nd + 1}-dimensional input for {nd + 2}-dimensional weight "
                           f"{list(w.shape)}, but got {x.ndim}-dimensional input of size "
                           f"{list(x.shape)} instead")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(w.shape)}] instead")
    if x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {w.shape[1] * groups} channels, but got "
                           f"{x.shape[1]} channels instead")
    if x.dtype != w.dtype:
        raise RuntimeError(f"expected scalar type {_TORCH_SCALAR[x.dtype.name]} but found "
                           f"{_TORCH_SCALAR[w.dtype.name]}")
    if b is not None and (b.ndim != 1 or b.shape[0] != w.shape[0]):
        raise RuntimeError(f"Given weight of size {list(w.shape)}, expected bias to be "
                           f"1-dimensional with {w.shape[0]} elements, but got bias of size "
                           f"{list(b.shape)} instead")


@export("convolution", tensor=False)
@records("convolution")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """torch.convolution: one ConvolutionBackward0 node. A transposed convolution (weight
    (C_in, C_out / groups, *kernel)) is the adjoint of the convolution by the same weight;
    gradviz records it for the double backward of convolutions, as torch does."""
    nd = weight.dim() - 2
    st, pd = _tuple(stride, nd, "stride"), _tuple(padding, nd, "padding")
    dl = _tuple(dilation, nd, "dilation")
    if any(s <= 0 for s in st):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in pd):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dl):
        raise RuntimeError("dilation should be greater than zero")
    x, w = input._data, weight._data
    if transposed:
        op = _tuple(output_padding, nd, "output_padding")
        _check_transposed(input, weight, bias, nd, groups, st, dl, op)
        r = conv_values(x, w, st, pd, dl, True, op, groups)
    else:
        _check(input, weight, bias, nd, groups)
        _check_span(x.shape[2:], w.shape[2:], pd, dl)
        r = conv(x, w, st, pd, dl, groups)
    if bias is not None:
        b = bias._data.reshape((-1,) + (1,) * nd)
        dt = np.result_type(r, b)
        # r is fresh memory (conv's and conv_values' results never alias their inputs): the
        # bias goes in place when r is already C-ordered, else into a C-ordered array (`r + b`
        # would keep a transposed view's order and ascontiguousarray would copy it again).
        r = np.add(r, b, out=r if r.flags.c_contiguous and r.dtype == dt else
                   np.empty(r.shape, dtype=dt))
    out = _make(channels_last_as(np.ascontiguousarray(r, dtype=x.dtype), x, w))
    if _needs(input, weight, bias):
        record(_E_CONV, out, (input, weight, bias),
               (input, weight, tuple(bias.shape) if bias is not None else (0,), tuple(stride),
                tuple(padding), tuple(dilation), bool(transposed), tuple(output_padding),
                groups, tuple(x.shape)))
    return out


def _check_span(spatial, kernel, pd, dl):
    padded = tuple(n + 2 * p for n, p in zip(spatial, pd))
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dl))
    if any(s > n for s, n in zip(span, padded)):
        sizes = " x ".join(str(n) for n in padded)
        ks = " x ".join(str(s) for s in span)
        raise RuntimeError(f"Calculated padded input size per channel: ({sizes}). Kernel size: "
                           f"({ks}). Kernel size can't be greater than actual input size")


def _check_transposed(input, weight, bias, nd, groups, st, dl, op):
    """torch's checks of a transposed convolution's shapes (weight (C_in, C_out / groups,
    *kernel))."""
    x, w = input._data, weight._data
    if w.ndim != nd + 2 or x.ndim != nd + 2:
        raise NotImplementedError("gradviz: a transposed convolution without a batch dimension "
                                  "is not implemented by gradviz's core; run with --backend "
                                  "torch to use PyTorch")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if x.shape[1] != w.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {w.shape[0]} channels, but got "
                           f"{x.shape[1]} channels instead")
    if w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(w.shape)}] instead")
    if any(o >= s and o >= d for o, s, d in zip(op, st, dl)):
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           f"got output_padding_height: {op[0]} output_padding_width: "
                           f"{op[-1]} stride_height: {st[0]} stride_width: {st[-1]} "
                           f"dilation_height: {dl[0]} dilation_width: {dl[-1]}")
    if x.dtype != w.dtype:
        raise RuntimeError(f"expected scalar type {_TORCH_SCALAR[x.dtype.name]} but found "
                           f"{_TORCH_SCALAR[w.dtype.name]}")
    if bias is not None and (bias._data.ndim != 1 or bias._data.shape[0] != w.shape[1] * groups):
        raise RuntimeError(f"Given transposed=1, weight of size {list(w.shape)}, expected bias "
                           f"to be 1-dimensional with {w.shape[1] * groups} elements, but got "
                           f"bias of size {list(bias._data.shape)} instead")


@records("convolution_backward")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups):
    """The gradients of input, weight and bias as one op with three outputs
    (ConvolutionBackwardBackward0), as torch records them under create_graph=True."""
    g, x, w = grad_output._data, input._data, weight._data
    args = (bias_sizes, stride, padding, dilation, transposed, output_padding, groups)
    outs = [_make(np.ascontiguousarray(conv_input_grad(g, x, w, *args, x.shape))),
            _make(np.ascontiguousarray(conv_weight_grad(g, x, w, *args))),
            _make(np.ascontiguousarray(conv_bias_grad(g, x, w, *args)))]
    if _needs(grad_output, input, weight):
        record_outputs(D["convolution_backward"], outs, (grad_output, input, weight),
                       (grad_output, input, weight, stride, padding, dilation, transposed,
                        output_padding, groups))
    return outs


def _conv_nd(nd, name, input, weight, bias, stride, padding, dilation, groups):
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        bad = "input" if not isinstance(input, Tensor) else "weight"
        raise TypeError(f"{name}() argument '{bad}' must be Tensor, not "
                        f"{type(input if bad == 'input' else weight).__name__}")
    input, batched = _batched(input, nd, name)
    stride, dilation = _tuple(stride, nd, "stride"), _tuple(dilation, nd, "dilation")
    out_pad = (0,) * nd
    if isinstance(padding, str):
        if padding == "valid":
            # torch passes padding=[0] (and output_padding=[0]) down for 'valid'.
            padding, out_pad = (0,), (0,)
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            input, padding = _same_padding(input, weight, dilation, nd)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _tuple(padding, nd, "padding")
    out = convolution(input, weight, bias, stride, padding, dilation, False, out_pad, groups)
    return out if batched else squeeze(out, 0)


def _batched(input, nd, name):
    """(input with a batch dim, whether it had one): torch's convolutions take unbatched input
    through an unsqueeze (UnsqueezeBackward0) and squeeze the result back."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if input.dim() == nd + 2:
        return input, True
    return unsqueeze(input, 0), False


def _same_padding(input, weight, dilation, nd):
    """torch's _convolution_same: symmetric padding, and an extra zero row/column on the high
    side (a ConstantPadNdBackward0 node) where the total is odd."""
    from .padding import constant_pad_nd
    total = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    pad = [t // 2 for t in total]
    extra = [t % 2 for t in total]
    if any(extra):
        if not _WARNED:
            # torch warns once per process (TORCH_WARN_ONCE).
            _WARNED.append(True)
            warnings.warn("Using padding='same' with even kernel lengths and odd dilation "
                          "may require a zero-padded copy of the input be created",
                          stacklevel=user_stacklevel())
        flat = []
        for e in reversed(extra):
            flat += [0, e]
        input = constant_pad_nd(input, flat, 0)
    return input, tuple(pad)


@export("conv1d", tensor=False)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over (N, C, L) or (C, L) input (ConvolutionBackward0).

    >>> import gradviz as torch
    >>> torch.conv1d(torch.ones(1, 1, 4), torch.ones(1, 1, 2, requires_grad=True)).grad_fn
    <ConvolutionBackward0 ...>
    """
    return _conv_nd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


@export("conv2d", tensor=False)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over (N, C, H, W) or (C, H, W) input (ConvolutionBackward0).

    >>> import gradviz as torch
    >>> x = torch.ones(1, 1, 3, 3)
    >>> torch.conv2d(x, torch.ones(1, 1, 2, 2, requires_grad=True), padding=1).shape
    torch.Size([1, 1, 4, 4])
    """
    return _conv_nd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)

