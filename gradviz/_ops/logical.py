"""Logical ops on tensors of any dtype (nonzero is True): logical_and, logical_or,
logical_xor, and membership (isin). Their results are bool tensors, never recorded, as in
torch.
"""

import numpy as np

from .._registry import export
from .._tensor import Tensor, _make
from ._common import _broadcast_error
from ._iterator import iter_layout


def _logical(name, ufunc):
    """torch.<name>(input, other): ufunc of the truth values of two tensors, broadcast."""
    def op(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        try:
            return _make(iter_layout(np.asarray(ufunc(self._data, other._data)), self._data,
                                     other._data))
        except ValueError as exc:
            raise _broadcast_error(self._data, other._data, exc) from None
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.{name}: the elementwise {name[8:]} of the truth values of input and "
                  f"other (a bool tensor).\n\n    >>> import gradviz as torch\n    >>> "
                  f"torch.{name}(torch.tensor([0, 1]), torch.tensor([1, 1])).dtype\n"
                  f"    torch.bool\n    ")
    return op


logical_and = export()(_logical("logical_and", np.logical_and))
logical_or = export()(_logical("logical_or", np.logical_or))
logical_xor = export()(_logical("logical_xor", np.logical_xor))


@export(tensor=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of elements is among test_elements (either may be a number); NaN is never
    found, as in torch.

    >>> import gradviz as torch
    >>> torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2, 3]))
    tensor([False,  True,  True])
    """
    for x in (elements, test_elements):
        if not isinstance(x, (Tensor, int, float, np.generic)):   # np.asarray would take a list
            raise TypeError(f"isin() takes a Tensor or a number, not {type(x).__name__}")
    for x in (elements, test_elements):
        if isinstance(x, bool) or (isinstance(x, Tensor) and x._data.dtype == np.bool_):
            # torch has no bool kernel for isin (a NumPy bool is read as a number)
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _make(np.asarray(np.isin(a, b, invert=invert)))
