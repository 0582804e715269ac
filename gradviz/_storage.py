"""Tensor.storage() and Tensor.untyped_storage(), as far as learners use them: the memory a
tensor and its views share, its size in elements (TypedStorage) or bytes (UntypedStorage), its
address, its elements, and torch's printing. A view's storage is its base's memory (as
Tensor.storage_offset counts), so a view and its base report one storage.

>>> import gradviz as torch
>>> a = torch.arange(6)
>>> a.view(2, 3).storage().data_ptr() == a.storage().data_ptr()
True
"""

import warnings

import numpy as np

from ._dtype import from_numpy_dtype

__all__ = ["TypedStorage", "UntypedStorage"]

# torch.storage._warn_typed_storage_removal's words; torch warns once per process.
_TYPED_WARNING = ("TypedStorage is deprecated. It will be removed in the future and "
                  "UntypedStorage will be the only storage class. This should only matter to "
                  "you if you are using storages directly.  To access UntypedStorage directly, "
                  "use tensor.untyped_storage() instead of tensor.storage()")
_warned = []


def _warn_typed_storage_removal(stacklevel):
    if not _warned:
        _warned.append(True)
        warnings.warn(_TYPED_WARNING, UserWarning, stacklevel=stacklevel + 1)


def _refuse_write():
    raise NotImplementedError("gradviz: writing into a storage (storage[i] = v) is not "
                              "implemented by gradviz's core; run with --backend torch to run "
                              "this file on PyTorch")


class UntypedStorage:
    """The bytes of a tensor's memory (torch.UntypedStorage): `x.untyped_storage().nbytes()`."""

    is_sparse = False

    def __init__(self, owner):
        self._owner = owner
        self._bytes = owner.reshape(-1).view(np.uint8) if owner.flags.c_contiguous else None

    @property
    def device(self):
        from ._tensor import _CPU
        return _CPU

    def nbytes(self):
        return int(self._owner.nbytes)

    size = nbytes
    __len__ = nbytes

    def element_size(self):
        return 1

    def data_ptr(self):
        return self._owner.ctypes.data

    def __getitem__(self, idx):
        if self._bytes is None or not isinstance(idx, int):
            raise NotImplementedError("gradviz: indexing this storage is not implemented by "
                                      "gradviz's core; run with --backend torch to run this "
                                      "file on PyTorch")
        return int(self._bytes[idx])

    def __setitem__(self, idx, value):
        _refuse_write()

    def __iter__(self):
        return iter(self[i] for i in range(self.size()))

    def tolist(self):
        return list(self)

    def __repr__(self):
        # torch.UntypedStorage.__repr__
        info = f"[torch.storage.UntypedStorage(device=cpu) of size {len(self)}]"
        return " " + "\n ".join(str(self[i]) for i in range(self.size())) + "\n" + info


class TypedStorage:
    """The elements of a tensor's memory, of its dtype (torch.TypedStorage, deprecated by
    torch: its methods warn once per process): `x.storage().size()`."""

    is_sparse = False

    def __init__(self, owner, np_dtype):
        self._owner = owner
        self._np_dtype = np.dtype(np_dtype)
        flat = owner.reshape(-1) if owner.flags.c_contiguous else None
        self._flat = None if flat is None else flat.view(np.uint8).view(self._np_dtype)

    @property
    def dtype(self):
        return from_numpy_dtype(self._np_dtype)

    @property
    def device(self):
        from ._tensor import _CPU
        return _CPU

    def size(self):
        _warn_typed_storage_removal(2)
        return int(self._owner.nbytes // self._np_dtype.itemsize)

    def __len__(self):
        _warn_typed_storage_removal(2)
        return int(self._owner.nbytes // self._np_dtype.itemsize)

    def nbytes(self):
        _warn_typed_storage_removal(2)
        return int(self._owner.nbytes)

    def element_size(self):
        _warn_typed_storage_removal(2)
        return self._np_dtype.itemsize

    def data_ptr(self):
        _warn_typed_storage_removal(2)
        return self._owner.ctypes.data

    def untyped(self):
        _warn_typed_storage_removal(2)
        return UntypedStorage(self._owner)

    def __getitem__(self, idx):
        _warn_typed_storage_removal(2)
        if self._flat is None or not isinstance(idx, int):
            raise NotImplementedError("gradviz: indexing this storage is not implemented by "
                                      "gradviz's core; run with --backend torch to run this "
                                      "file on PyTorch")
        return self._flat[idx].item()

    def __setitem__(self, idx, value):
        _refuse_write()

    def __iter__(self):
        _warn_typed_storage_removal(2)
        return iter(self[i] for i in range(len(self)))

    def tolist(self):
        _warn_typed_storage_removal(2)
        return list(self)

    def __str__(self):
        # torch.TypedStorage.__str__: one element a line, then what the storage is
        _warn_typed_storage_removal(2)
        info = (f"[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size "
                f"{len(self)}]")
        return " " + "\n ".join(str(self[i]) for i in range(len(self))) + "\n" + info

    def __repr__(self):
        _warn_typed_storage_removal(2)
        return str(self)


def _owner(tensor):
    """The array of the tensor whose memory tensor's is: its base's for a view (as
    storage_offset counts), else its own."""
    root = tensor if tensor._base_ is None else tensor._base_
    return root._array()


def typed_storage(tensor):
    """Tensor.storage(): torch warns (once) that TypedStorage is deprecated."""
    _warn_typed_storage_removal(3)
    return TypedStorage(_owner(tensor), tensor._array().dtype)


def untyped_storage(tensor):
    return UntypedStorage(_owner(tensor))
