"""gradviz: a NumPy autograd core with PyTorch's API, and the tools to inspect its graphs.

PyTorch autograd code runs unchanged with `import gradviz as torch`:

>>> import gradviz as torch
>>> a = torch.tensor(2.0, requires_grad=True)
>>> b = torch.tensor(3.0, requires_grad=True)
>>> e = a * b * torch.tensor(4.0, requires_grad=True)
>>> e.backward(); (a.grad, b.grad)
(tensor(12.), tensor(8.))
"""

__version__ = "0.1.0"

import sys as _sys
import threading as _threading
from importlib import import_module as _import_module
from importlib.util import find_spec as _find_spec

# The core (tensor, ops, autograd, nn, optim) is imported on first use of one of its names,
# not by `import gradviz`: `gradviz graph FILE --backend torch` imports gradviz.inspect (and so
# this package) but runs the file on PyTorch: the core was ~half of gradviz's import there.
# `import gradviz as torch` then `torch.tensor(...)` imports it at that first name, into this
# module, in the order below, so every name is what it was when the core loaded eagerly.
# Threads asking for their first name at once wait on _lock until one of them has loaded the
# core (`_loaded` turns True only then). `_loading` is the id of the thread loading it: its own
# imports, which may ask for names too, must not load it again.
_loaded = False
_loading = None
_lock = _threading.RLock()


def _load():
    """Import the core into this module (once)."""
    global _loaded, _loading
    with _lock:
        if _loaded or _loading is not None:
            return
        _loading = _threading.get_ident()
        try:
            globals().update(_ops_names())
            # The forwards _ops_names imported, as torch's argument parser takes them
            # (`input=`, `axis=`, `out=`); the names _other_names imports after them win.
            globals().update(_registry.TORCH)
            globals().update(_other_names())
            _missing.install_tensor_stubs(Tensor)
            _loaded = True
        finally:
            _loading = None


def _ops_names():
    from ._dtype import (Size, dtype, float16, float32, float64, int8, int16, int32, int64, uint8,
                         get_default_dtype, set_default_dtype)
    from ._dtype import bool_ as bool  # noqa: A001  (torch.bool)
    from ._tensor import Tensor, device
    from ._tensor_str import set_printoptions
    from . import _ops
    from ._ops.arithmetic import (add, div, div as divide, div as true_divide, floor_divide, mul,
                                  mul as multiply, neg, neg as negative, pow, reciprocal, remainder,
                                  rsub, sub, sub as subtract)
    from ._ops.comparison import (allclose, eq, equal, ge, gt, isclose, isfinite, isinf, isnan, le,
                                  logical_not, lt, ne)
    from ._ops.bilinear import (bilinear)
    from ._ops.convolution import (conv1d, conv2d, convolution)
    from ._ops.linalg import (addbmm, addmm, addmv, baddbmm, bmm, cdist, cross, det, dot, einsum,
                              inverse, kron, matmul, mm, mv, outer, outer as ger, tensordot)
    from ._ops.padding import (constant_pad_nd)
    from ._ops.shape import (adjoint, atleast_1d, atleast_2d, atleast_3d, broadcast_shapes,
                             broadcast_tensors, broadcast_to, chunk, column_stack, diag, diag_embed,
                             diagonal, diff, dstack, flip, fliplr, flipud, hstack, meshgrid, movedim,
                             movedim as moveaxis, repeat_interleave, roll, rot90, split, swapaxes,
                             swapdims, tensor_split, tile, trace, tril, triu, unflatten, vstack,
                             vstack as row_stack)
    from ._ops.pointwise import (abs, ceil, clamp, clamp as clip, clamp_max, clamp_min, clone, cos, exp,
                                 floor, log, maximum, minimum, relu, round, sigmoid, sgn, sign, sin,
                                 sqrt, square, tanh, trunc, where)
    from ._ops.random import bernoulli, multinomial, normal
    from ._ops.dropout import (dropout, dropout_)
    from ._ops.embedding import (embedding)
    from ._ops.normalization import (batch_norm, group_norm, layer_norm)
    from ._ops.reductions import (all, amax, amin, any, argmax, argmin, count_nonzero, cumprod, cumsum,
                                   log_softmax, logsumexp, max, mean, min, norm, prod, softmax, std,
                                   std_mean, sum, var, var_mean)
    from ._ops.scatter import (argwhere, gather, index_add, index_copy, index_fill, index_select,
                               masked_fill, masked_scatter, masked_select, nonzero, scatter,
                               scatter_add, take_along_dim)
    from ._ops.sorting import (argsort, median, msort, nanmedian, sort, topk)
    from ._ops.selection import cummax, cummin, kthvalue
    from ._ops.reductions import nanmean, nansum
    from ._ops.shape import dsplit, hsplit, split_with_sizes, tril_indices, triu_indices, vsplit
    from ._ops.indexing import index_put_copy as index_put
    from ._ops.strided import as_strided
    from ._ops.logical import isin, logical_and, logical_or, logical_xor
    from ._ops.special import (acos, acos as arccos, acosh, acosh as arccosh, addcdiv, addcmul,
                               arctan2, asin, asin as arcsin, asinh, asinh as arcsinh, atan,
                               atan as arctan, atan2, atanh, atanh as arctanh, cosh, erf, erfc, exp2,
                               expm1, fmod, frac, hypot, lerp, log10, log1p, log2, logaddexp,
                               logaddexp2, logit, rsqrt, sinh, tan, xlogy)
    from ._ops.bucketing import bucketize, searchsorted
    from ._ops.conv_transpose import conv_transpose1d, conv_transpose2d
    from ._ops.activation_extra import (celu, celu_, hardshrink, prelu, selu, selu_, threshold,
                                        threshold_)
    from ._ops.inplace_functions import (
        abs_, acos_, acosh_, arccos_, arccosh_, arcsin_, arcsinh_, arctan_, arctanh_, asin_,
        asinh_, atan_, atanh_, ceil_, clamp_, clamp_max_, clamp_min_, clip_, cos_, cosh_, erf_,
        erfc_, exp2_, exp_, expm1_, fill_, fix_, floor_, frac_, index_put_, log10_, log1p_,
        log2_, log_, logit_, neg_, negative_, reciprocal_, relu_, round_, rsqrt_, sigmoid_,
        sin_, sinh_, sqrt_, square_, tan_, tanh_, trunc_, xlogy_, zero_)
    from ._ops.counting import bincount, histc, histogram, unique, unique_consecutive
    from ._ops.decompositions import svd
    from ._ops.comparison import (and_ as bitwise_and, bitwise_not, lshift as bitwise_left_shift,
                                  or_ as bitwise_or, rshift as bitwise_right_shift,
                                  xor as bitwise_xor)
    from ._ops.views import (cat, cat as concat, cat as concatenate, flatten, narrow, permute, reshape,
                             select, squeeze, stack, t, transpose, unbind, unsqueeze)
    from ._creation import (arange, as_tensor, empty, empty_like, empty_strided, eye, from_numpy,
                            full, full_like, get_rng_state, initial_seed, is_tensor, linspace,
                            logspace, manual_seed, ones, ones_like, rand, rand_like, randint,
                            randint_like, randn, randn_like, randperm, seed, set_rng_state, tensor,
                            zeros, zeros_like, set_default_device, get_default_device)
    from ._random import Generator, default_generator
    from ._legacy import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor,
                          HalfTensor, IntTensor, LongTensor, ShortTensor)
    from . import _registry  # noqa: F401
    return locals()


def _other_names():
    from . import autograd
    from . import linalg
    from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled
    from .autograd.grad_mode import is_grad_enabled, is_inference, is_inference_mode_enabled
    from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled
    from . import nn
    from . import optim
    from . import return_types
    from . import accelerator, backends, cuda, utils
    from . import serialization
    from .serialization import load, save
    from . import _missing
    float = float32  # noqa: A001  (torch.float)
    double = float64
    half = float16
    long = int64
    int = int32  # noqa: A001  (torch.int)
    return locals()


def is_floating_point(input):
    return input.is_floating_point()


def detach(input):
    return input.detach()


def numel(input):
    return input.numel()


__all__ = [
    "Tensor", "Size", "dtype", "device", "float16", "float32", "float64", "int8", "int16", "int32",
    "int64", "uint8", "bool", "float", "double", "half", "long", "int", "get_default_dtype",
    "set_default_dtype", "set_default_device", "get_default_device", "set_printoptions",
    "tensor", "as_tensor",
    "from_numpy", "ones", "zeros", "full", "empty", "ones_like", "zeros_like", "full_like",
    "empty_like", "rand", "randn", "randint", "rand_like", "randn_like", "arange", "linspace",
    "eye", "logspace", "empty_strided", "manual_seed", "seed", "initial_seed", "randperm", "randint_like", "get_rng_state",
    "set_rng_state", "Generator", "default_generator", "normal", "bernoulli", "multinomial", "is_tensor", "numel", "abs", "add", "addmm",
    "allclose", "argmax", "argmin", "bmm", "cat", "ceil", "clamp", "clamp_max", "clamp_min", "clip",
    "clone", "concat", "concatenate", "cos", "div", "divide", "dot", "equal", "exp",
    "flatten", "floor", "floor_divide", "isfinite", "isinf", "isnan", "log", "log_softmax",
    "logical_not", "matmul", "max", "maximum", "mean", "min", "minimum", "mm", "mul", "multiply",
    "mv", "narrow", "neg", "negative", "outer", "permute", "pow", "prod", "reciprocal", "relu",
    "remainder", "reshape", "round", "rsub", "select", "sigmoid", "sgn", "sign", "sin", "softmax",
    "sqrt",
    "square", "squeeze", "stack", "sub", "subtract", "sum", "t", "tanh", "transpose", "true_divide",
    "trunc", "unbind", "unsqueeze", "where", "eq", "ne", "lt", "le", "gt",
    "ge", "is_floating_point", "detach", "autograd", "no_grad",
    "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_anomaly_enabled",
    "is_inference", "is_inference_mode_enabled",
    "is_anomaly_check_nan_enabled", "nn", "optim", "return_types", "linalg", "accelerator",
    "backends", "cuda",
    "utils", "serialization", "save", "load", "batch_norm", "dropout", "dropout_", "embedding", "group_norm", "layer_norm",
]

def __getattr__(name):
    if not name.startswith("__") and _importing():
        if _loading not in (None, _threading.get_ident()):
            # another thread is loading the core: importing its modules from here too would
            # meet them half imported (a circular import across threads); wait for it
            _load()
            if name in globals():
                return globals()[name]
        if _find_spec(f"{__name__}.{name}"):
            # a module of gradviz being imported asks for another (`from .. import _dtype`),
            # maybe while the core is half imported: that module alone, as Python's import
            # gives it
            return _import_module(f"{__name__}.{name}")
    if not _loaded:
        _load()
        if name in globals():
            return globals()[name]
    # Not a name of the core: say whether PyTorch has it (run with --backend torch) or
    # whether it is a typo, instead of Python's bare "has no attribute".
    from ._missing import module_getattr
    module_getattr("torch", __name__, globals())(name)


def _importing():
    """Whether one of gradviz's modules is being imported now (its spec says so while its code
    runs): anyone else asking for a name gets the core first (`from gradviz import _registry`
    comes filled, as it did when the core was imported eagerly)."""
    # (a loop: this module's globals shadow the builtin any with torch.any once the core loaded)
    for key, module in list(_sys.modules.items()):
        if key.startswith(__name__ + ".") and \
                getattr(getattr(module, "__spec__", None), "_initializing", False):
            return True
    return False


def __dir__():
    _load()
    return sorted(globals())
