"""torch.searchsorted and torch.bucketize: where values would be inserted into sorted
boundaries. Integer results, never differentiable (no node, as in torch).
"""

import numpy as np

from .._keywords import write_out
from .._registry import export
from .._tensor import Tensor, _make
from ._common import _TORCH_SCALAR

_S = "torch.searchsorted(): "


def _side(right, side):
    """numpy's side from torch's right= and side= (which must agree)."""
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(f"{_S}side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError(f"{_S}side and right can't be set to opposites, got side of left "
                           f"while right was True")
    return side


def _dims(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _search(seq, values, side, out_int32):
    """The insertion points of values (an array) in seq's last dimension, row by row when seq
    has leading dimensions (they match values' leading dimensions)."""
    dtype = np.int32 if out_int32 else np.int64
    if seq.ndim == 1:
        return np.searchsorted(seq, values, side=side).astype(dtype)
    rows = seq.reshape(-1, seq.shape[-1])
    vals = values.reshape(rows.shape[0], -1)
    out = np.empty(vals.shape, dtype)
    for k in range(rows.shape[0]):
        out[k] = np.searchsorted(rows[k], vals[k], side=side)
    return out.reshape(values.shape)


@export("searchsorted", tensor=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, out=None,
                 sorter=None):
    """The index in sorted_sequence's last dimension where each value would be inserted to keep
    it sorted (the first such index; the last with right=True or side='right').

    >>> import gradviz as torch
    >>> torch.searchsorted(torch.tensor([1, 3, 5, 7]), torch.tensor([3, 6]))
    tensor([1, 3])
    """
    how = _side(right, side)
    seq = sorted_sequence._data
    scalar = not isinstance(input, Tensor)
    values = np.asarray(input) if scalar else input._data
    if seq.ndim == 0:
        raise RuntimeError(f"{_S}boundaries tensor should have positive dimension, but got 0 "
                           f"dimension")
    if scalar and seq.ndim != 1:
        raise RuntimeError(f"{_S}input value can be a scalar only when boundaries tensor "
                           f"dimension is 1, but we got boundaries tensor dim({seq.ndim}) and "
                           f"input value's dim(0) numel(1)")
    if seq.ndim > 1 and (values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(f"{_S}boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, "
                           f"but we got boundaries tensor {_dims(seq.shape)} and input value "
                           f"tensor {_dims(values.shape)}")
    if sorter is not None:
        order = sorter._data
        if order.dtype != np.int64:
            raise RuntimeError(f"{_S}sorter must be a tensor of long dtype but got dtype "
                               f"{_TORCH_SCALAR[order.dtype.name]}")
        if order.shape != seq.shape:
            raise RuntimeError(f"{_S}boundary and sorter must have the same size, but got "
                               f"boundary tensor {_dims(seq.shape)}and got sorter tensor "
                               f"{_dims(order.shape)}")
        if order.size and (order.min() < 0 or order.max() >= seq.shape[-1]):
            raise RuntimeError(f"{_S}sorter index out of range")
        seq = np.take_along_axis(seq, order, axis=-1)
    result = _make(_search(seq, values, how, out_int32))
    if out is None:
        return result
    if out._data.dtype != result._data.dtype:
        raise RuntimeError(f"{_S}output tensor's dtype is wrong, it can only be Int(int32) or "
                           f"Long(int64) depending on whether out_int32 flag is True, but we got "
                           f"output tensor's dtype {_TORCH_SCALAR[out._data.dtype.name]} and "
                           f"out_int32 flag is {out_int32}")
    return write_out("searchsorted", out, result, (), {})


@export("bucketize", tensor=False)
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each value among 1-D sorted boundaries: searchsorted(boundaries, input).

    >>> import gradviz as torch
    >>> torch.bucketize(torch.tensor([0.5, 3.0, 9.0]), torch.tensor([1.0, 3.0, 5.0]))
    tensor([0, 1, 3])
    """
    b = boundaries._data
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


__all__ = ["searchsorted", "bucketize"]
