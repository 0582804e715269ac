"""Views with strides of their own: Tensor.unfold (sliding windows, UnfoldBackward0) and
torch.as_strided (AsStridedBackward0), and unfold's backward as an op (its double backward).

Windows may overlap, so their gradient is summed back into each element, as torch does.
"""

import operator

import numpy as np

from .._derivatives import (DERIVATIVES as D, storage_memory, storage_view, unfold_grad,
                            unfold_windows)
from .._registry import export, method, records
from .._tensor import _make, _wrap_dim
from ..autograd.formula import keep_raw_of, negative, record
from ._common import _needs
from .views import _make_view, _view_op


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
    out = _view_op(self, D["unfold"], (unfold_windows, (d, size, step)),
                   (d, self.shape, size, step))
    # torch saves the dimension as given (negative: read unsigned)
    return keep_raw_of(out, D["unfold"], dimension=dimension) if dimension < 0 else out


@records("unfold_backward")
def unfold_backward(grad_in, input_sizes, dim, size, step):
    """zeros(input_sizes) with each window's gradient added back (UnfoldBackwardBackward0):
    unfold's gradient under create_graph=True."""
    out = _make(unfold_grad(grad_in._data, input_sizes, dim, size, step))
    if _needs(grad_in):
        record(D["unfold_backward"], out, (grad_in,), (dim, size, step))
    return out


# ----- as_strided --------------------------------------------------------------------------

def _storage(self):
    """(the root tensor whose memory self views, self's offset in it in elements). gradviz
    implements as_strided over a dense root, whose memory is torch's storage when the op that
    made it lays out its result as torch does (linalg.inv's is column-major, as torch's)."""
    root = self if self._base_ is None else self._base_
    if storage_memory(root._array()) is None:
        raise NotImplementedError("gradviz: as_strided of a tensor whose storage is not "
                                  "dense is not implemented by gradviz's core; run with "
                                  "--backend torch to use PyTorch")
    return root, storage_offset(self)


def _check_geometry(size, stride, offset, numel, itemsize):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: [{', '.join(map(str, stride))}]")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes="
                           f"[{', '.join(map(str, size))}] and strides="
                           f"[{', '.join(map(str, stride))}]")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > numel:
        raise RuntimeError(f"setStorage: sizes [{', '.join(map(str, size))}], strides "
                           f"[{', '.join(map(str, stride))}], storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {need * itemsize} "
                           f"are out of bounds for storage of size {numel * itemsize}")


@export()
@records("as_strided_storage")
def as_strided(self, size, stride, storage_offset=None):
    """A view of self's storage with the given sizes, strides and offset, in elements
    (AsStridedBackward0); the offset defaults to self's own.

    >>> import gradviz as torch
    >>> torch.arange(6.0).as_strided((2, 2), (1, 2))
    tensor([[0., 2.],
            [1., 3.]])
    """
    root, own = _storage(self)
    size, stride = tuple(map(operator.index, size)), tuple(map(operator.index, stride))
    offset = own if storage_offset is None else operator.index(storage_offset)
    r = root._array()
    _check_geometry(size, stride, offset, r.size, r.itemsize)
    out = _make_view(root, storage_view(r, size, stride, offset),
                     (storage_view, (size, stride, offset)))
    if _needs(self):
        record(D["as_strided_storage"], out, (self,),
               (size, stride, storage_offset, _positions(self._array(), r, own), r.size))
    return out


def _positions(a, root, offset):
    """The storage position of each of a's elements (a views root's memory from offset)."""
    steps = tuple(s // a.itemsize for s in a.strides)
    return storage_view(np.arange(root.size), a.shape, steps, offset)


# ----- Where a tensor sits in its storage ----------------------------------------------------

@method()
def storage_offset(self):
    """The offset of self's first element in its storage, in elements.

    >>> import gradviz as torch
    >>> torch.arange(4.0)[1:].storage_offset()
    1
    """
    root = self if self._base_ is None else self._base_
    return (self._array().ctypes.data - root._array().ctypes.data) // self._array().itemsize
