"""The strides of pointwise results, as torch 2.13 lays them out: contiguous for empty and
0-size inputs, the input's own layout for a dense non-overlapping one (a transpose, a
permute), contiguous for a sliced or expanded one. erf and erfc gave contiguous results for a
transposed input (torch keeps its layout). An empty non-contiguous input with a Python number
(torch's TensorIterator gives strides such as (1, 0)) and a non-contiguous first operand with a
contiguous second (torch follows the first) gave NumPy's layouts; the wider sweep of binary
layouts is test_correct_iterator_layout_torch.py."""

import pytest

import gradviz

torch = pytest.importorskip("torch")

INPUTS = {
    "empty": lambda m: m.zeros(0),
    "empty_0x3": lambda m: m.zeros(0, 3),
    "empty_3x0": lambda m: m.zeros(3, 0),
    "empty_transposed": lambda m: m.zeros(3, 0).t(),
    "empty_permuted": lambda m: m.zeros(2, 0, 4).permute(2, 0, 1),
    "transposed": lambda m: (m.arange(12.0).reshape(4, 3) / 7 - 0.5).t(),
    "permuted": lambda m: (m.arange(24.0).reshape(2, 3, 4) / 9 - 1).permute(2, 0, 1),
    "sliced": lambda m: (m.arange(24.0).reshape(4, 6) / 11)[:, ::2],
    "expanded": lambda m: (m.arange(3.0).reshape(3, 1) / 5).expand(3, 4),
    "scalar": lambda m: m.tensor(0.5),
    "float64_transposed": lambda m: (m.arange(12.0, dtype=m.float64).reshape(4, 3) / 7).t(),
}
UNARY = ["neg", "exp", "log", "sin", "cos", "tanh", "sigmoid", "abs", "relu", "sqrt", "rsqrt",
         "reciprocal", "floor", "ceil", "round", "trunc", "sign", "square", "expm1", "log1p",
         "erf", "erfc", "clone", "exp2", "frac", "atan", "sinh", "isnan", "logical_not", "sgn"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "fmod",
          "remainder", "eq", "lt", "ge", "logical_and", "hypot", "xlogy", "floor_divide"]
TENSOR_ONLY = {"maximum", "minimum", "atan2", "logical_and", "hypot"}


def _layout(y):
    return tuple(y.shape), y.stride(), str(y.dtype), y.flatten().tolist()


def _unary(m, i, op):
    return _layout(getattr(INPUTS[i](m), op)())


def _binary(m, i, op, other):
    x = INPUTS[i](m)
    o = {"self": x, "number": 2, "contiguous": m.ones(tuple(x.shape)) + 0.5}[other]
    return _layout(getattr(x, op)(o))


def _close(a, b):
    """Layouts equal, values within float32 rounding (nan matching nan)."""
    if a[:3] != b[:3] or len(a[3]) != len(b[3]):
        return False
    return all(x == y or x != x and y != y or abs(x - y) <= 1e-6 * max(1.0, abs(y))
               for x, y in zip(a[3], b[3]))


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("inp", sorted(INPUTS))
def test_unary_layout_as_torch(inp, op):
    assert _close(_unary(gradviz, inp, op), _unary(torch, inp, op))


# every input, op and second operand, but a Python number where torch takes none (a case that
# could only ever be skipped is left out)
BINARY_CASES = [(i, b, o) for i in sorted(INPUTS) for b in BINARY
                for o in ("self", "number", "contiguous")
                if not (o == "number" and b in TENSOR_ONLY)]


@pytest.mark.parametrize("inp,op,other", BINARY_CASES)
def test_binary_layout_as_torch(inp, op, other):
    assert _close(_binary(gradviz, inp, op, other), _binary(torch, inp, op, other))
