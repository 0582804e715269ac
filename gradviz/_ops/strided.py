"""Views with strides of their own: Tensor.unfold (sliding windows, UnfoldBackward0) and
torch.as_strided (AsStridedBackward0), and unfold's backward as an op (its double backward).

Windows may overlap, so their gradient is summed back into each element, as torch does.
"""

import numpy as np

from .._derivatives import DERIVATIVES as D, unfold_grad, unfold_windows
from .._registry import export, method, records
from .._tensor import _make, _wrap_dim
from ..autograd.formula import record
from ._common import _needs
from .views import _view_op


# ----- unfold ------------------------------------------------------------------------------

@method()
@records("unfold")
def unfold(self, dimension, size, step):
    """The windows of `size` elements every `step` along `dimension`, as a new last dim of a
    view (UnfoldBackward0).

    >>> import gradviz as torch
    >>> torch.arange(5.0).unfold(0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    a = self._data
    d = _wrap_dim(dimension, a.ndim)
    length = a.shape[d] if a.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return _view_op(self, D["unfold"], (unfold_windows, (d, size, step)),
                    (d, self.shape, size, step))


@records("unfold_backward")
def unfold_backward(grad_in, input_sizes, dim, size, step):
    """zeros(input_sizes) with each window's gradient added back (UnfoldBackwardBackward0):
    unfold's gradient under create_graph=True."""
    out = _make(unfold_grad(grad_in._data, input_sizes, dim, size, step))
    if _needs(grad_in):
        record(D["unfold_backward"], out, (grad_in,), (dim, size, step))
    return out
