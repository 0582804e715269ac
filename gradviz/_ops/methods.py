"""Tensor methods that are only spellings of ops defined elsewhere: reflected and augmented
operators, `view_as`, the dtype shorthands (`float()`, `long()`, ...), and the `T` / `mT`
properties.
"""

from .. import _dtype
from .._registry import method
from .._tensor import Tensor
from .arithmetic import add, mul
from .inplace import (add_, bitwise_and_, bitwise_left_shift_, bitwise_or_,
                      bitwise_right_shift_, bitwise_xor_, div_, floor_divide_, mul_, pow_,
                      remainder_, sub_)
from .pointwise import to
from .views import _T, _mT, reshape, view


# The reflected and augmented operators are the ops themselves: b + a is a + b's sum, and
# a += b is add_(a, b), which returns a as Python's protocol wants.
for _name, _op in (("__radd__", add), ("__rmul__", mul), ("__iadd__", add_),
                   ("__isub__", sub_), ("__imul__", mul_), ("__itruediv__", div_),
                   ("__ifloordiv__", floor_divide_), ("__imod__", remainder_),
                   ("__ipow__", pow_), ("__iand__", bitwise_and_), ("__ior__", bitwise_or_),
                   ("__ixor__", bitwise_xor_), ("__ilshift__", bitwise_left_shift_),
                   ("__irshift__", bitwise_right_shift_)):
    method(_name)(_op)


@method()
def view_as(self, other):
    return view(self, tuple(other.shape))


@method()
def reshape_as(self, other):
    return reshape(self, tuple(other.shape))


# ----- dtype shorthands (ToCopyBackward0 when the dtype changes) ---------------------------

def _shorthand(name, dtype):
    """Tensor.<name>(): self.to(dtype)."""
    def convert(self):
        return to(self, dtype)
    convert.__name__ = convert.__qualname__ = "_" + name
    return convert


for _name, _dt in (("float", _dtype.float32), ("double", _dtype.float64),
                   ("half", _dtype.float16), ("long", _dtype.int64), ("int", _dtype.int32),
                   ("short", _dtype.int16), ("char", _dtype.int8), ("byte", _dtype.uint8),
                   ("bool", _dtype.bool_)):
    method(_name)(_shorthand(_name, _dt))

method("T")(property(_T))
method("mT")(property(_mT))


@method()
def type_as(self, other):
    """self in other's dtype (ToCopyBackward0 when it changes, self itself when not).

    >>> import gradviz as torch
    >>> torch.tensor([1, 2]).type_as(torch.zeros(1))
    tensor([1., 2.])
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return to(self, other.dtype)
