"""torch.X_ for each in-place method that torch also exposes at top level: `torch.sin_(x)` is
`x.sin_()`, `torch.relu_(x)` is `x.relu_()` (the same function, so the same node and
`_version`). Imported after every module that defines Tensor methods.

>>> import gradviz as torch
>>> x = torch.tensor([0.0, -1.0])
>>> torch.relu_(x) is x, x._version
(True, 1)
"""

import numbers

import numpy as np

from .. import _registry
from .._derivatives import DERIVATIVES as D
from .._registry import method, records
from .._tensor import Tensor, _wrap_dim
from ..autograd.formula import record
from ._common import _dims, _needs, _type_name
from .arithmetic import _floatify
from .inplace import _check_inplace, bump_version, inplace_unary, pow_
from .pointwise import _no_bool_kernel
from .strided import as_strided, storage_offset
from .views import _squeeze_view, _transpose_view, _unsqueeze_view


# ----- In-place methods the other families lack ---------------------------------------------

def _no_bool(self, row):
    if self._data.dtype.kind == "b":
        raise _no_bool_kernel(f"{row}_cpu")


sin_ = inplace_unary("sin", np.sin, saves_self=True)
cos_ = inplace_unary("cos", np.cos, saves_self=True)
abs_ = inplace_unary("abs", np.abs, "absolute_", saves_self=True, check=_no_bool)
floor_ = inplace_unary("floor", np.floor)
ceil_ = inplace_unary("ceil", np.ceil)
trunc_ = inplace_unary("trunc", np.trunc, "fix_")


def _np_reciprocal(a):
    # an integer tensor's reciprocal is float: the write refuses it, as torch's cast check
    return np.reciprocal(_floatify(a))


reciprocal_ = inplace_unary("reciprocal", _np_reciprocal)


@method()
def square_(self):
    """self = self ** 2 (torch's square_ is pow_(2): PowBackward0)."""
    return pow_(self, 2)


method("negative_")(_registry.TENSOR["neg_"])


@method()
def fill_diagonal_(self, fill_value, wrap=False):
    """self with fill_value written on its main diagonal (every dim the same length when more
    than 2); wrap: a tall matrix's diagonal starts again below each square block. Composed as
    torch's Fill.cpp composes it: fill_ on an as_strided view of the diagonal (CopySlices over
    FillBackward0, one version bump per view written).

    >>> import gradviz as torch
    >>> torch.zeros(2, 2).fill_diagonal_(1.0)
    tensor([[1., 0.],
            [0., 1.]])
    """
    if isinstance(fill_value, Tensor) and not fill_value._data.ndim and not fill_value._rg:
        fill_value = fill_value.item()      # torch's parser takes such a tensor as a Number
    if isinstance(fill_value, Tensor) or not isinstance(fill_value, numbers.Number):
        raise TypeError(f"fill_diagonal_(): argument 'fill_value' (position 1) must be Number, "
                        f"not {_type_name(fill_value)}")
    shape, strides = self.shape, self.stride()
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and any(n != shape[0] for n in shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    height, width = shape[0], shape[1]
    size, step, offset = min(height, width), sum(strides), storage_offset(self)
    as_strided(self, (size,), (step,), offset).fill_(fill_value)
    if wrap and len(shape) == 2 and height > width + 1:
        # (torch counts the wrapped diagonal's length on the element count, as if contiguous)
        wrap_size = (self.numel() + width) // (width + 1) - size
        as_strided(self, (wrap_size,), (step,), offset + strides[0] * (width + 1)).fill_(
            fill_value)
    return self



# ----- In-place view ops: self becomes the view (its shape and strides change) ---------------

def _restride(self, name, entry, step, args):
    """self.<name>(): self takes the view `step` = (func, args) of its own data and records
    `entry` over its old history; its base, if any, is untouched (torch changes metadata only,
    no CopySlices)."""
    _check_inplace(self)
    if self._base_ is None and self._vc is not None and getattr(self._vc, "views", False):
        # Its views' steps start from the root's data: on the new shape they would read the
        # wrong elements (torch keeps each view's own geometry), so replaying them is refused
        # from now on (gradviz._ops.inplace.view_steps).
        self._vc.views = name
    self._data = step[0](self._array(), *step[1])
    if self._base_ is not None:
        self._view_fn = self._view_fn + (step,)
    bump_version(self, name)
    if _needs(self):
        record(entry, self, (self,), args)
    return self


@method("unsqueeze_")
@records("unsqueeze_")
def _unsqueeze_inplace(self, dim):
    """self with a new dim of size 1 at dim, in place (UnsqueezeBackward1)."""
    d = _wrap_dim(dim, self.dim() + 1)
    return _restride(self, "unsqueeze_", D["unsqueeze_"], (_unsqueeze_view, (d,)),
                     (d, self.shape))


@method("squeeze_")
@records("squeeze_", "squeeze_dim_", "squeeze_dims_")
def _squeeze_inplace(self, dim=None):
    """self without its size-1 dims (all, dim, or the dims given), in place: SqueezeBackward3,
    4 or 5 as torch's squeeze_ overloads."""
    shape = self._data.shape
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
        return _restride(self, "squeeze_", D["squeeze_"], (_squeeze_view, (axes,)),
                         (self.shape,))
    if isinstance(dim, (tuple, list)):
        dims = _dims(dim, len(shape)) if shape else ()
        axes = tuple(i for i in sorted(dims) if shape[i] == 1)
        return _restride(self, "squeeze_", D["squeeze_dims_"], (_squeeze_view, (axes,)),
                         (self.shape, dims))
    d = _wrap_dim(dim, len(shape)) if shape else 0
    axes = (d,) if shape and shape[d] == 1 else ()
    return _restride(self, "squeeze_", D["squeeze_dim_"], (_squeeze_view, (axes,)),
                     (self.shape, d))


@method("transpose_")
@records("transpose_")
def _transpose_inplace(self, dim0, dim1):
    """self with dims dim0 and dim1 swapped, in place (TransposeBackward1)."""
    n = self.dim()
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    return _restride(self, "transpose_", D["transpose_"], (_transpose_view, (d0, d1)),
                     (d0, d1))


@method("t_")
@records("t_")
def _t_inplace(self):
    """self transposed in place, for at most 2 dims (TBackward1)."""
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    dims = (0, 1) if self.dim() == 2 else (0, 0)
    return _restride(self, "t_", D["t_"], (_transpose_view, dims), ())


# ----- torch.X_ ------------------------------------------------------------------------------

# torch's top-level in-place functions whose Tensor method the core has (a test checks
# the list against torch's names)
TOP_LEVEL = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "erf_", "erfc_", "exp2_", "exp_", "expm1_",
    "fill_", "fix_", "floor_", "frac_", "index_put_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "neg_", "negative_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_",
    "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_")
for _name in TOP_LEVEL:
    globals()[_name] = _registry.export(_name, tensor=False)(_registry.TENSOR[_name])
