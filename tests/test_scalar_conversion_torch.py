"""Python and NumPy numbers meeting a tensor, compared with torch 2.13 bit for bit.

float16: torch's CPU mul and div kernels (and lerp, addcmul, addcdiv) compute in float32, their
"opmath" type, with the number read as a float32, and round to float16 once: float16 1e-3 * 1e5
is 100.06 in torch, where NumPy rounds 1e5 to float16's inf first. add, sub, pow, remainder read
the number as a float16, as NumPy does.

Range: a number stored into a tensor (fill_, clamp's bounds, alpha, masked_fill, where, item
assignment) or read into a kernel's float32 (lerp's weight, addcmul's value) goes through torch's
checked conversion: 1e300 into float32 is an error, not inf.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings, strategies as st  # noqa: E402

import gradviz  # noqa: E402


def _outcome(t, code, x=None, s=None):
    """What `code` (an expression over torch `t`, tensor data `x` and number `s`) gives: the
    result's dtype and bits, or the error's type and first sentence."""
    env = {"t": t, "np": np, "s": s,
           "x": None if x is None else t.tensor(np.asarray(x, dtype=np.float16))}
    try:
        r = eval(code, env)
    except (RuntimeError, TypeError, ValueError, OverflowError) as exc:
        return type(exc).__name__, str(exc).split(". ")[0]
    a = np.asarray(r.detach().numpy())
    return str(r.dtype).replace("gradviz.", "torch."), a.shape, _bits(a)


def _bits(a):
    """The values' bit patterns, with every nan made the same (the kernels' nan payloads and
    signs are not part of torch's contract)."""
    a = np.where(np.isnan(a), np.nan, a).astype(a.dtype)
    return a.view(np.uint16 if a.itemsize == 2 else np.uint32 if a.itemsize == 4 else
                  np.uint64).tolist()


# ----- float16 with one number -------------------------------------------------------------

HALF_OPS = {
    "mul": "x * s", "rmul": "s * x", "mul_fn": "t.mul(x, s)", "mul_": "x.clone().mul_(s)",
    "div": "x / s", "rdiv": "s / x", "div_": "x.clone().div_(s)",
    "true_divide": "t.true_divide(x, s)",
    "div_floor": "t.div(x, s, rounding_mode='floor')",
    "div_trunc": "t.div(x, s, rounding_mode='trunc')",
    "mul_0d_float32": "x * t.tensor(s)", "div_0d_float64": "x / t.tensor(s, dtype=t.float64)",
    "add": "x + s", "sub": "x - s", "rsub": "s - x", "pow": "x.abs() ** s",
    "rpow": "abs(s) ** x",
    "lerp": "t.lerp(x, t.ones_like(x), s)",
    "addcmul": "t.addcmul(x, x, x, value=s)",
    "addcdiv": "t.addcdiv(x, x, x.abs() + 1, value=s)",
    "clamp_min": "t.clamp(x, min=s)", "clamp_max": "t.clamp(x, max=s)",
    "where": "t.where(x > 0, x, s)", "fill_": "x.clone().fill_(s)",
}
HALF_DATA = [1e-3, 0.1, 3.0, -2.5, 0.7, 65504.0, -0.0, 6e-8]
HALF_SCALARS = [1e5, 1e-5, 3.3, -2.3, 0.1, 1 / 3, 100000, 7, 65519.0, np.float64(1e5),
                np.float32(3.3)]


@pytest.mark.parametrize("s", HALF_SCALARS, ids=repr)
@pytest.mark.parametrize("op", sorted(HALF_OPS))
def test_float16_tensor_with_a_number_as_torch(op, s):
    code = HALF_OPS[op]
    assert _outcome(gradviz, code, HALF_DATA, s) == _outcome(torch, code, HALF_DATA, s)


@settings(max_examples=40, deadline=None)
@given(x=st.lists(st.floats(width=16, allow_nan=False, allow_infinity=False), min_size=1,
                  max_size=8),
       s=st.floats(-1e6, 1e6, allow_nan=False))
@pytest.mark.parametrize("op", ["mul", "div", "rdiv", "div_floor", "lerp", "addcmul",
                                "addcdiv", "mul_", "div_"])
def test_float16_opmath_bit_for_bit_as_torch(op, x, s):
    code = HALF_OPS[op]
    assert _outcome(gradviz, code, x, s) == _outcome(torch, code, x, s)


# ----- Numbers out of a dtype's range ------------------------------------------------------

RANGE_OPS = {
    "fill_": "x.clone().fill_(s)", "clamp_min": "t.clamp(x, min=s)",
    "clamp_max": "t.clamp(x, max=s)", "clamp_min_fn": "t.clamp_min(x, s)",
    "alpha": "t.add(x, x, alpha=s)", "sub_alpha": "t.sub(x, x, alpha=s)",
    "alpha_": "x.clone().add_(x, alpha=s)", "sub_alpha_": "x.clone().sub_(x, alpha=s)",
    "masked_fill": "x.masked_fill(x > 1, s)", "where": "t.where(x > 1, x, s)",
    "where_left": "t.where(x > 1, s, x)", "full_like": "t.full_like(x, s)",
    "addcmul": "t.addcmul(x, x, x, value=s)", "pow": "x ** s",
    "lerp": "t.lerp(x, x, s) if x.is_floating_point() else x", "mul": "x * s",
    "setitem": "x.clone().__setitem__(0, s)",
}
RANGE_DTYPES = ["float16", "float32", "float64", "int32", "int64", "uint8", "bool"]
RANGE_VALUES = [1e300, -1e300, 70000.0, 65519.0, 3.4028235e38, math.inf, math.nan, 2 ** 70,
                -2 ** 70, 2 ** 40, np.float64(1e300), 2.5]


def _range_outcome(t, dtype, code, s):
    x = t.tensor([1.0, 2.0, 3.0]).to(getattr(t, dtype))
    if code.startswith("x.clone().__setitem__"):
        x = x.clone()
        code = "x.__setitem__(0, s) or x"
    env = {"t": t, "x": x, "s": s}
    try:
        r = eval(code, env)
    except (RuntimeError, TypeError, ValueError, OverflowError, NotImplementedError) as exc:
        return type(exc).__name__, str(exc).split(". ")[0]
    return str(r.dtype).replace("gradviz.", "torch."), _bits(np.asarray(r.numpy(), dtype=float))


# Differences that are not about the number's range, left as they are.
RANGE_KNOWN = {
    ("setitem", 2 ** 70): "torch's item assignment parses the int itself (a ValueError)",
    ("setitem", -2 ** 70): "torch's item assignment parses the int itself (a ValueError)",
    ("sub_alpha", "bool"): "torch parses every argument before refusing a bool subtraction",
    ("sub_alpha_", "bool"): "torch parses every argument before refusing a bool subtraction",
    ("addcmul", "float64"): "torch's float64 addcmul rounds value * t1 * t2 + input once (fma)",
}


@pytest.mark.parametrize("s", RANGE_VALUES, ids=repr)
@pytest.mark.parametrize("dtype", RANGE_DTYPES)
@pytest.mark.parametrize("op", sorted(RANGE_OPS))
def test_number_out_of_range_as_torch(op, dtype, s):
    code = RANGE_OPS[op]
    known = RANGE_KNOWN.get((op, s)) if type(s) is int else None
    known = known or RANGE_KNOWN.get((op, dtype))
    if known and _range_outcome(gradviz, dtype, code, s) != _range_outcome(torch, dtype, code, s):
        pytest.xfail(known)
    assert _range_outcome(gradviz, dtype, code, s) == _range_outcome(torch, dtype, code, s)
