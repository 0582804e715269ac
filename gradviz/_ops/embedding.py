"""Lookups by class index: embedding (EmbeddingBackward0) and one_hot (no gradient)."""

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._registry import export, records
from .._tensor import _make
from ..autograd.formula import record
from ..autograd.grad_mode import _state

_UNSIGNED = {np.dtype(np.int64): np.uint64, np.dtype(np.int32): np.uint32}
_I64 = np.dtype(np.int64)


@export(tensor=False)
@records("embedding")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The rows of weight at indices (EmbeddingBackward0); the padding_idx row gets no
    gradient.

    >>> import gradviz as torch
    >>> torch.embedding(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([1, 1]))
    tensor([[3., 4.],
            [3., 4.]])
    """
    if sparse:
        raise NotImplementedError("gradviz: torch.embedding(sparse=True) is not implemented by "
                                  "gradviz's core; run with --backend torch to use PyTorch")
    w = weight._data
    idx = indices._data
    # (int64 by identity first: a dtype used as a key is hashed at each lookup)
    unsigned = np.uint64 if idx.dtype is _I64 else _UNSIGNED.get(idx.dtype)
    if unsigned is None:
        name = {"float32": "Float", "float64": "Double", "float16": "Half", "bool": "Bool",
                "int16": "Short", "int8": "Char", "uint8": "Byte"}.get(idx.dtype.name)
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got torch.{name}Tensor "
                           f"instead (while checking arguments for embedding)")
    if w.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    # One reduction for both bounds: seen as unsigned, a negative index is past the end.
    if idx.size and np.maximum.reduce(idx.view(unsigned), axis=None) >= w.shape[0]:
        raise IndexError("index out of range in self")
    out = _make(w.take(idx, axis=0))        # the rows, as w[idx] but without its dispatch
    if _state.enabled and weight._rg:
        record(D["embedding"], out, (weight,),
               (w.shape[0], indices, padding_idx, scale_grad_by_freq, sparse))
    return out


def one_hot(tensor, num_classes=-1):
    """int64 one-hot rows of class indices, with a last dim of num_classes (or max + 1)."""
    t = tensor._data
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size:
        if t.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if t.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = _make((t[..., None] == np.arange(num_classes)).astype(np.int64))
    if t.size:
        out._version_counter().v = 2     # torch fills zeros, then scatters the ones in place
    return out
