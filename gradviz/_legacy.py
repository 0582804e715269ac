"""torch.FloatTensor, torch.LongTensor and the other legacy typed constructors, which older
tutorials still write (`torch.LongTensor([label_to_ix[label]])` in PyTorch's NLP tutorial,
`torch.FloatTensor(x)` in many course notebooks): called with data they make a tensor of their
dtype, called with sizes an uninitialized one, and isinstance(t, torch.FloatTensor) asks for
the dtype, as in torch.

>>> import gradviz as torch
>>> torch.LongTensor([1.7, 2]), torch.FloatTensor(2, 3).shape
(tensor([1, 2]), torch.Size([2, 3]))
>>> isinstance(torch.ones(2), torch.FloatTensor), torch.FloatTensor
(True, <class 'torch.FloatTensor'>)
"""

import numpy as np

from . import _dtype
from ._tensor import _CPP_NAMES, Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
           "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


def _options(dtype):
    return (f"TensorOptions(dtype={_CPP_NAMES[dtype.np.name]}, device=cpu, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


class _LegacyTensorType(type):
    """The type of torch.FloatTensor and its siblings: calling one makes a tensor of its
    dtype (torch's legacy_tensor_ctor); an isinstance check asks for that dtype."""

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"       # as torch prints it

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args, device=None):
        from ._creation import empty, tensor
        if device is not None and str(device) != "cpu":
            raise RuntimeError(f"gradviz: torch.{cls.__name__}(device={str(device)!r}) is not "
                               "implemented by gradviz's core (CPU only); run with --backend "
                               "torch to use PyTorch")
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0].dtype != cls.dtype:
                raise TypeError(f"expected {_options(cls.dtype)} (got "
                                f"{_options(args[0].dtype)})")
            return args[0].detach()         # torch: an alias of the same storage
        if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)) and \
                not isinstance(args[0], _dtype.Size):
            return tensor(args[0], dtype=cls.dtype)
        sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], _dtype.Size) else args
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        for s in sizes:
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                                   f"[{', '.join(map(str, sizes))}]")
        return empty(sizes if sizes else (0,), dtype=cls.dtype)


def _legacy(name, dtype):
    # __module__ stays this module's, so pickle finds the class here (never PyTorch's)
    return _LegacyTensorType(name, (), {"dtype": dtype, "__module__": __name__,
                                        "__doc__": f"torch.{name}: tensors of {dtype}."})


FloatTensor = _legacy("FloatTensor", _dtype.float32)
DoubleTensor = _legacy("DoubleTensor", _dtype.float64)
HalfTensor = _legacy("HalfTensor", _dtype.float16)
LongTensor = _legacy("LongTensor", _dtype.int64)
IntTensor = _legacy("IntTensor", _dtype.int32)
ShortTensor = _legacy("ShortTensor", _dtype.int16)
CharTensor = _legacy("CharTensor", _dtype.int8)
ByteTensor = _legacy("ByteTensor", _dtype.uint8)
BoolTensor = _legacy("BoolTensor", _dtype.bool_)
