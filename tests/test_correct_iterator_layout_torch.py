"""The strides of binary pointwise results, as torch 2.13's TensorIterator lays them out
(compute_fast_setup_type, reorder_dimensions, compatible_stride), swept over pairs of operand
layouts: contiguous, transposed, permuted, sliced, expanded, broadcast rows and columns, size-1
dims with odd strides, channels-last, empty tensors, 0-d tensors and Python numbers. NumPy's
ufuncs lay results out by other rules: a transposed self with a contiguous other gave a
contiguous result (torch follows self), an empty transposed tensor with a number (1, 0) strides
torch gives, a (3, 1) column transposed from a row its own (1, 3)."""

import itertools

import pytest

import gradviz

torch = pytest.importorskip("torch")


def _f(m, n, shape):
    return m.arange(float(n)).reshape(shape) / 7 - 0.5


# Each family: operands whose shapes broadcast together.
FAMILIES = {
    "2d": {
        "c": lambda m: _f(m, 12, (3, 4)),
        "t": lambda m: _f(m, 12, (4, 3)).t(),
        "sl": lambda m: _f(m, 24, (3, 8))[:, ::2],
        "slt": lambda m: _f(m, 24, (8, 3))[::2].t(),
        "ex": lambda m: _f(m, 3, (3, 1)).expand(3, 4),
        "ex0": lambda m: _f(m, 4, (1, 4)).expand(3, 4),
        "row": lambda m: _f(m, 4, (4,)),
        "col": lambda m: _f(m, 3, (3, 1)),
        "colt": lambda m: _f(m, 3, (1, 3)).t(),
        "rowu": lambda m: _f(m, 4, (4,)).unsqueeze(0),
        "0d": lambda m: m.tensor(0.25),
        "num": lambda m: 2,
    },
    "3d": {
        "c": lambda m: _f(m, 24, (2, 3, 4)),
        "p201": lambda m: _f(m, 24, (3, 4, 2)).permute(2, 0, 1),
        "p120": lambda m: _f(m, 24, (4, 2, 3)).permute(1, 2, 0),
        "p021": lambda m: _f(m, 24, (2, 4, 3)).transpose(1, 2),
        "mid": lambda m: _f(m, 8, (2, 1, 4)),
        "midt": lambda m: _f(m, 8, (4, 1, 2)).permute(2, 1, 0),
        "col": lambda m: _f(m, 3, (3, 1)),
        "lastt": lambda m: _f(m, 12, (3, 4)).t().unsqueeze(0).transpose(1, 2),
        "num": lambda m: 1.5,
    },
    "4d": {
        "c": lambda m: _f(m, 48, (2, 3, 2, 4)),
        "cl": lambda m: _f(m, 48, (2, 2, 4, 3)).permute(0, 3, 1, 2),
        "cl1": lambda m: _f(m, 16, (2, 2, 4, 1)).permute(0, 3, 1, 2),
        "bias": lambda m: _f(m, 3, (3, 1, 1)),
        "num": lambda m: 3,
    },
    "empty": {
        "e03": lambda m: m.zeros(0, 3),
        "e30t": lambda m: m.zeros(3, 0).t(),
        "e3": lambda m: m.zeros(3),
        "e0": lambda m: m.zeros(0, 1),
        "ep": lambda m: m.zeros(3, 1, 0).permute(2, 1, 0),
        "num": lambda m: 2,
    },
}
OPS = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmax", "fmin", "atan2",
       "fmod", "remainder", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
       "logical_xor", "hypot", "logaddexp", "logaddexp2", "xlogy", "floor_divide", "rsub",
       "nextafter", "heaviside", "copysign", "true_divide", "div_floor", "div_trunc"]
TENSOR_ONLY = {"maximum", "minimum", "fmax", "fmin", "atan2", "logical_and", "logical_or",
               "logical_xor", "hypot", "logaddexp", "logaddexp2", "nextafter", "heaviside"}


def _call(m, op, x, y):
    if op.startswith("div_"):
        return x.div(y, rounding_mode=op[4:])
    if op == "rsub":
        return m.rsub(x, y)
    return getattr(x, op)(y)


def _run(m, family, a, b, op):
    x, y = FAMILIES[family][a](m), FAMILIES[family][b](m)
    r = _call(m, op, x, y)
    return tuple(r.shape), r.stride(), r.is_contiguous(), str(r.dtype)


# one op for each way gradviz's forwards compute a binary result, over every pair of layouts;
# every op over the pairs whose layouts NumPy and torch disagree on most
PATHS = ["add", "sub", "mul", "div", "div_floor", "rsub", "pow", "eq", "logical_and", "atan2",
         "xlogy", "fmod", "remainder", "floor_divide"]
PAIRS = [("2d", "t", "c"), ("2d", "slt", "ex"), ("2d", "colt", "num"), ("2d", "0d", "colt"),
         ("3d", "p201", "c"), ("3d", "midt", "num"), ("4d", "cl1", "num"), ("4d", "cl", "c"),
         ("empty", "e30t", "num"), ("empty", "ep", "e03")]
CASES = sorted({(f, a, b, op) for f, kinds in FAMILIES.items()
                for a, b in itertools.product(kinds, kinds) for op in PATHS
                if a != "num" and not (b == "num" and op in TENSOR_ONLY)} |
               {(f, a, b, op) for f, a, b in PAIRS for op in OPS
                if not (b == "num" and op in TENSOR_ONLY)})


@pytest.mark.parametrize("family,a,b,op", CASES)
def test_binary_result_strides_as_torch(family, a, b, op):
    want = _run(torch, family, a, b, op)
    try:
        got = _run(gradviz, family, a, b, op)
    except (NotImplementedError, AttributeError) as exc:
        assert "--backend torch" in str(exc)        # refused by name, never wrong
        return
    assert got == want


def _again(m, family, a, b, op):
    # the hot ops mark an operand once NumPy's layout is known to be torch's (a tensor's
    # _iter_plain): a second use, a result used again, and a marked tensor given a new layout
    # through .data must still give torch's strides
    x, y = FAMILIES[family][a](m), FAMILIES[family][b](m)
    first = _call(m, op, x, y)
    r = _call(m, op, x, y)
    got = [r, _call(m, op, r, y), _call(m, op, x, r), _call(m, op, first, r)]
    if isinstance(y, m.Tensor) and y.dim() >= 2:
        x.data = y.transpose(0, 1).contiguous().transpose(0, 1).expand_as(x) + 0 \
            if y.shape == x.shape else x.data
        got.append(_call(m, op, x, y))
    return [(tuple(t.shape), t.stride(), t.is_contiguous()) for t in got]


@pytest.mark.parametrize("family,a,b,op", sorted(
    {(f, a, b, op) for f, kinds in FAMILIES.items() if f != "empty"
     for a, b in itertools.product(kinds, kinds) for op in ("add", "sub", "mul", "div")
     if a != "num" and a != "0d"}))
def test_binary_result_strides_as_torch_when_used_again(family, a, b, op):
    assert _again(gradviz, family, a, b, op) == _again(torch, family, a, b, op)
