"""Comparisons and predicates: never recorded in the graph.
"""

import numpy as np

from .._registry import export, method
from .._tensor import Tensor, _make
from ._iterator import iter_layout
from ._common import (_TORCH_SCALAR, _broadcast_error, _coerce, _invalid_combination,
                      _operand)


# ----- Comparisons (never recorded) --------------------------------------------------------

def _compare(ufunc, dunder=False):
    def op(self, other):
        try:
            b, _ = _operand(other)
        except TypeError:
            if not dunder:
                raise
            # torch's == (not !=) reads a NumPy array of numbers as a tensor
            if not (ufunc is np.equal and type(other) is np.ndarray and
                    other.dtype.kind in "biuf"):
                # as torch: Python's fallback, so t == None is False, t < None raises, and
                # ndarray < t a TypeError
                return NotImplemented
            b = other
        a, b = _coerce(self._data, b)
        try:
            return _make(iter_layout(ufunc(a, b), a, b))
        except ValueError as exc:
            raise _broadcast_error(a, b, exc) from None
    op.__name__ = op.__qualname__ = _COMPARE_NAMES[ufunc.__name__]
    return op


_COMPARE_NAMES = {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
                  "greater": "gt", "greater_equal": "ge"}


_COMPARE_UFUNCS = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)
eq, ne, lt, le, gt, ge = (_compare(f) for f in _COMPARE_UFUNCS)
for _f, _fn in zip(_COMPARE_UFUNCS, (eq, ne, lt, le, gt, ge)):
    export(_fn.__name__)(_fn)
    method(f"__{_fn.__name__}__")(_compare(_f, dunder=True))


@export()
def logical_not(self):
    return _make(np.logical_not(self._data))


@export()
def bitwise_not(self):
    """~self on an integer tensor, not self on a bool tensor.

    >>> import gradviz as torch
    >>> torch.bitwise_not(torch.tensor([5, 0]))
    tensor([-6, -1])
    """
    a = self._data
    if a.dtype.kind not in "iub":
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for '
                                  f"'{_TORCH_SCALAR[a.dtype.name]}'")
    return _make(np.invert(a))


@method("__invert__")
def _invert(self):
    # torch's operator ~ refuses a float tensor with its own TypeError before the kernel's
    if self._data.dtype.kind not in "iub":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


def _bitwise(ufunc, kernel, name):
    """self <ufunc> other on integer or bool tensors; torch's `kernel` refuses other dtypes.
    The op (also torch.<name>, which takes a number first as torch's (Number self, Tensor
    other) overload) and its reflected form (`2 & t`, `3 << t`)."""
    def compute(t, other, reflected):
        try:
            b, _ = _operand(other)
        except TypeError:
            return NotImplemented       # only an operator: Python and NumPy take over
        a, b = _coerce(t._data, b)
        if a.dtype.kind not in "iub" or (kernel.endswith("shift_cpu") and a.dtype.kind == "b"):
            raise NotImplementedError(f'"{kernel}" not implemented for '
                                      f"'{_TORCH_SCALAR[a.dtype.name]}'")
        try:
            return _make(iter_layout(ufunc(b, a), b, a) if reflected else
                         iter_layout(ufunc(a, b), a, b))
        except ValueError as exc:
            raise _broadcast_error(a, b, exc) from None

    def op(self, other):
        if isinstance(self, Tensor):
            return compute(self, other, False)
        if isinstance(other, Tensor) and isinstance(self, (bool, int, float, np.integer)):
            return compute(other, self, True)
        raise _invalid_combination(name, (self, other), {})

    def reflected(self, other):
        return compute(self, other, True)
    op.__name__ = op.__qualname__ = ufunc.__name__
    return op, reflected


and_, _rand = _bitwise(np.bitwise_and, "bitwise_and_cpu", "bitwise_and")
or_, _ror = _bitwise(np.bitwise_or, "bitwise_or_cpu", "bitwise_or")
xor, _rxor = _bitwise(np.bitwise_xor, "bitwise_xor_cpu", "bitwise_xor")
lshift, _rlshift = _bitwise(np.left_shift, "lshift_cpu", "bitwise_left_shift")
rshift, _rrshift = _bitwise(np.right_shift, "rshift_cpu", "bitwise_right_shift")
for _fn, _rfn, _name, _torch_name in (
        (and_, _rand, "and", "bitwise_and"), (or_, _ror, "or", "bitwise_or"),
        (xor, _rxor, "xor", "bitwise_xor"), (lshift, _rlshift, "lshift", "bitwise_left_shift"),
        (rshift, _rrshift, "rshift", "bitwise_right_shift")):
    method(f"__{_name}__")(_fn)
    method(f"__r{_name}__")(_rfn)
    export(_torch_name)(_fn)


@export()
def isnan(self):
    return _make(np.isnan(self._data))


@export()
def isinf(self):
    return _make(np.isinf(self._data))


@export()
def isfinite(self):
    return _make(np.isfinite(self._data))


@export()
def equal(self, other):
    return self._data.shape == other._data.shape and bool(np.all(self._data == other._data))


@export()
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(self._data, _operand(other)[0], rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


@export()
def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |self - other| <= atol + rtol * |other|.

    >>> import gradviz as torch
    >>> torch.isclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1]))
    tensor([ True, False])
    """
    a, b = self._data, _operand(other)[0]
    if isinstance(b, np.ndarray) and b.dtype != a.dtype:
        raise RuntimeError(f"{_TORCH_SCALAR[a.dtype.name]} did not match "
                           f"{_TORCH_SCALAR[b.dtype.name]}")
    try:
        return _make(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError as exc:
        raise _broadcast_error(a, b, exc) from None
