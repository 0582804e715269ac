"""Tensor.nbytes and Tensor.itemsize, torch's size properties.

makemore's MLP lecture and PyTorch's tensor tutorials read them; both are NumPy's own numbers:
itemsize is element_size(), nbytes is numel() * itemsize, for a view too (torch counts the
view's elements, not its storage's).

    >>> import gradviz as torch
    >>> torch.arange(18).view(3, 6)[1:].nbytes
    96
"""

from .._registry import method


def _nbytes(self):
    return int(self._data.size) * self._data.dtype.itemsize


def _itemsize(self):
    return self._data.dtype.itemsize


method("nbytes")(property(_nbytes))
method("itemsize")(property(_itemsize))
