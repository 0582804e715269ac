"""Tensor methods that are only spellings of ops defined elsewhere: reflected and augmented
operators, `view_as`, the dtype shorthands (`float()`, `long()`, ...), and the `T` / `mT`
properties.
"""

from .. import _dtype
from .._registry import method
from .arithmetic import add, mul
from .inplace import add_, div_, mul_, sub_
from .pointwise import to
from .views import _T, _mT, reshape, view


@method("__radd__")
def _radd(self, other):
    return add(self, other)


@method("__rmul__")
def _rmul(self, other):
    return mul(self, other)


@method("__iadd__")
def _iadd(self, other):
    return add_(self, other)


@method("__isub__")
def _isub(self, other):
    return sub_(self, other)


@method("__imul__")
def _imul(self, other):
    return mul_(self, other)


@method("__itruediv__")
def _idiv(self, other):
    return div_(self, other)


@method()
def view_as(self, other):
    return view(self, *other.shape)


@method()
def reshape_as(self, other):
    return reshape(self, *other.shape)


# ----- dtype shorthands (ToCopyBackward0 when the dtype changes) ---------------------------

@method("float")
def _float(self):
    return to(self, _dtype.float32)


@method("double")
def _double(self):
    return to(self, _dtype.float64)


@method("half")
def _half(self):
    return to(self, _dtype.float16)


@method("long")
def _long(self):
    return to(self, _dtype.int64)


@method("int")
def _int(self):
    return to(self, _dtype.int32)


@method("bool")
def _bool(self):
    return to(self, _dtype.bool_)


method("T")(property(_T))
method("mT")(property(_mT))
