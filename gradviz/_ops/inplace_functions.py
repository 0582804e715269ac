"""torch.X_ for each in-place method that torch also exposes at top level: `torch.sin_(x)` is
`x.sin_()`, `torch.relu_(x)` is `x.relu_()` (the same function, so the same node and
`_version`). Imported after every module that defines Tensor methods.

>>> import gradviz as torch
>>> x = torch.tensor([0.0, -1.0])
>>> torch.relu_(x) is x, x._version
(True, 1)
"""

import numpy as np

from .. import _registry
from .._registry import method
from .arithmetic import _floatify
from .inplace import inplace_unary, pow_
from .pointwise import _no_bool_kernel


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


# ----- torch.X_ ------------------------------------------------------------------------------

# torch's top-level in-place functions whose Tensor method the core has (a test checks
# the list against torch's names)
TOP_LEVEL = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "erf_", "erfc_", "exp2_", "exp_", "expm1_",
    "fill_", "fix_", "floor_", "frac_", "log10_", "log1p_", "log2_", "log_", "neg_",
    "negative_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_",
    "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_")
for _name in TOP_LEVEL:
    globals()[_name] = _registry.export(_name, tensor=False)(_registry.TENSOR[_name])
