"""dtypes, torch.Size and type promotion.

gradviz stores every tensor in a NumPy array; a `dtype` names the NumPy dtype the way torch does
(`torch.float32`). Promotion follows torch's rules, which differ from NumPy's: a Python float
never upcasts a float32 tensor, an int tensor times a Python float is float32 (the default
dtype), and a 0-d tensor only decides the result when its category (bool < int < float) is
higher than that of the dimensioned operands.
"""

import math

import numpy as np

__all__ = ["dtype", "Size", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
           "uint8", "bool_", "get_default_dtype", "set_default_dtype", "result_type"]

_BOOL, _INT, _FLOAT = 0, 1, 2


class dtype:
    """A tensor element type; prints as torch does (`torch.float32`)."""

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "_cat")

    def __init__(self, name, np_dtype, cat, signed=True):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = cat == _FLOAT
        self.is_signed = signed
        self.itemsize = self.np.itemsize
        self._cat = cat

    @property
    def is_complex(self):
        return False

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = dtype("float16", np.float16, _FLOAT)
float32 = dtype("float32", np.float32, _FLOAT)
float64 = dtype("float64", np.float64, _FLOAT)
int8 = dtype("int8", np.int8, _INT)
int16 = dtype("int16", np.int16, _INT)
int32 = dtype("int32", np.int32, _INT)
int64 = dtype("int64", np.int64, _INT)
uint8 = dtype("uint8", np.uint8, _INT, signed=False)
bool_ = dtype("bool", np.bool_, _BOOL, signed=False)

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_)
_FROM_NP = {d.np: d for d in _ALL}
_NAMES = {d.name: d for d in _ALL}
_default = [float32]


def _by_name(name):
    return _NAMES[name]


def from_numpy_dtype(np_dtype, result=True):
    """The gradviz dtype of a NumPy dtype; raises TypeError for unsupported ones. With
    result=False (data about to be cast to another dtype, which torch reads), a dtype torch has
    and gradviz lacks gives None: tensor(np.array([1], dtype=np.uint16), dtype=float32) works."""
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        pass
    np_dtype = np.dtype(np_dtype)
    if np_dtype.name in _TORCH_ONLY:
        if not result:
            return None
        raise TypeError(f"gradviz: torch.{np_dtype.name} tensors are not implemented by "
                        "gradviz's core; run with --backend torch to use PyTorch")
    raise TypeError(f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. The only "
                    "supported types are: float64, float32, float16, complex64, complex128, "
                    "int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool.")


# NumPy dtypes torch has and gradviz's core lacks
_TORCH_ONLY = ("uint16", "uint32", "uint64", "complex64", "complex128")


def to_numpy_dtype(d):
    """Accept a gradviz dtype, a NumPy dtype or a Python type; return the NumPy dtype."""
    if d is None:
        return None
    if isinstance(d, dtype):
        return d.np
    if d is float:
        return float64.np       # torch's Python float is double, whatever the default dtype
    if d is complex:
        raise TypeError("gradviz: complex dtypes are not implemented by gradviz's core; run "
                        "with --backend torch to use PyTorch")
    if d is int:
        return int64.np
    if d is bool:
        return bool_.np
    return from_numpy_dtype(np.dtype(d)).np


def _int_overflow(v):
    """torch's error for a Python int given as a number (a Scalar) that is neither an int64 nor
    a uint64."""
    return OverflowError("can't convert negative int to unsigned" if v < 0 else
                         "int too big to convert")


def get_default_dtype():
    """The dtype of float data created without a dtype (float32 unless changed)."""
    return _default[0]


def set_default_dtype(d):
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


# ----- Promotion ---------------------------------------------------------------------------

_ORDER = {float16: 3, float32: 4, float64: 5}


def _promote(a, b):
    """Promote two NumPy dtypes as torch.promote_types does for the dtypes gradviz supports."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        # torch: the higher category keeps its own dtype (int64 + float32 -> float32, bool +
        # int8 -> int8); NumPy would widen to float64.
        return a if ca > cb else b
    return np.promote_types(a, b)


def _category(np_dtype):
    k = np_dtype.kind
    return _FLOAT if k == "f" else (_BOOL if k == "b" else _INT)


def result_type(operands):
    """torch's result dtype (as a NumPy dtype) for a mix of arrays (with ndim) and Python scalars.

    Dimensioned tensors win over 0-d tensors, which win over Python scalars, unless a lower
    priority group has a higher category: `ones(3) * tensor(2., dtype=float64)` is float32, but
    `arange(3) * 2.5` is float32 (the default dtype), as in torch.
    """
    dim = zero = wrapped = None
    for x in operands:
        if isinstance(x, (np.ndarray, np.generic)):
            if x.ndim:
                dim = _promote(dim, x.dtype)
            else:
                zero = _promote(zero, x.dtype)
        elif isinstance(x, bool):
            wrapped = _promote(wrapped, np.dtype(np.bool_))
        elif isinstance(x, int):
            wrapped = _promote(wrapped, np.dtype(np.int64))
        elif isinstance(x, float):
            wrapped = _promote(wrapped, _default[0].np)
    return _combine(dim, _combine(zero, wrapped))


def _combine(higher, lower):
    # torch's combine_categories: the higher-priority dtype wins unless the lower one is of a
    # higher category (e.g. an int tensor with a float scalar).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if _category(lower) > _category(higher):
        if _category(lower) == _FLOAT and lower.kind == "f" and higher.kind != "f":
            return lower
        return _promote(higher, lower)
    return higher


class Size(tuple):
    """The shape of a tensor: a tuple that prints as `torch.Size([3, 4])`."""

    __slots__ = ()

    def __repr__(self):
        return f"torch.Size([{', '.join(str(int(s)) for s in self)}])"

    __str__ = __repr__

    def numel(self):
        return math.prod(self)

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r


# torch's scalar type names (its kernels' errors: "not implemented for 'Long'") and C++ type
# names (its type metadata and checks: "out of bounds for long int"), by NumPy dtype name
_TORCH_SCALAR = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                 "uint8": "Byte", "bool": "Bool", "float32": "Float", "float64": "Double",
                 "float16": "Half"}
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
              "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}
