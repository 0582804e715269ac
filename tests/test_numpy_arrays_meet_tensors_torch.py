"""NumPy arrays and scalars meeting tensors in Python's operators and in the functions, against
torch 2.13: the same snippet on both gives the same result type, dtype, values and grad_fn, or
the same error type and first line.

torch's operators return NotImplemented for an ndarray, so Python and NumPy take over: `t + a`
is NumPy's sum wrapped by Tensor.__array_wrap__ (NumPy's dtype, no history, refused for a
tensor that requires grad), `a + t` is a TypeError (NumPy defers to the Tensor, whose reflected
operator declines), `t += a` rebinds t to a new tensor; a NumPy scalar is a number."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _describe(r):
    if isinstance(r, (torch.Tensor, gradviz.Tensor)):
        fn = type(r.grad_fn).__name__ if r.grad_fn is not None else None
        return "Tensor", str(r.dtype).replace("gradviz.", "torch."), r.tolist(), fn
    if isinstance(r, np.ndarray):
        return "ndarray", str(r.dtype), r.tolist()
    return type(r).__name__, r


def _run(t, snippet):
    """What the snippet gives on module t: _describe of the value of `r`, or the error."""
    scope = {"t": t, "np": np,
             "x": t.tensor([1.0, 2.0, 3.0]), "xi": t.tensor([1, 2, 3]),
             "xg": t.tensor([1.0, 2.0, 3.0], requires_grad=True), "a": np.ones(3)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # NumPy 2 on torch's one-argument __array_wrap__
        try:
            exec(snippet, scope)            # noqa: S102 - the cases below
        except (TypeError, RuntimeError, ValueError) as exc:
            return type(exc).__name__, str(exc).split("\n")[0]
    return _describe(scope["r"])


OPERATORS = [
    # an ndarray on the left: NumPy defers to the Tensor, whose reflected operator declines
    "r = a + x", "r = a + xg", "r = a - x", "r = a * x", "r = a ** x", "r = a // x",
    "r = a % x", "r = a @ x", "r = np.ones((2, 3)) + x", "r = np.array(2.) * x",
    "r = a.astype(np.float32) @ x",
    # ... except /, which torch computes as reciprocal(x) * a: NumPy's product
    "r = a / x", "r = a / xg",
    # an ndarray on the right: NumPy's result, wrapped as a tensor without history
    "r = x + a", "r = x - a", "r = x * a", "r = x / a", "r = x ** a", "r = x // a",
    "r = x % a", "r = x @ a", "r = x * np.array(2.)", "r = x * np.array(2)",
    "r = x * np.array([2.])", "r = xi * np.array(2.)", "r = xi * np.array(2.5)",
    "r = xi // np.array([2, 2, 2])", "r = x + np.ones((2, 3))", "r = x + np.ones(2)",
    "r = xg + a", "r = xg * np.array(2.)",
    # NumPy scalars are numbers, on either side; @ takes none
    "r = x * np.float32(2)", "r = x.double() * np.float32(2)", "r = np.float32(2) * x",
    "r = np.int64(3) * x", "r = np.int64(3) * xi", "r = np.float64(3) * xi",
    "r = np.float64(3) - x", "r = np.float64(3) / x", "r = np.float64(3) ** x",
    "r = np.bool_(True) * x", "r = np.float64(2) @ x", "r = x @ np.float64(2)",
    "r = xg * np.float64(2)",
    # in place: declined, so Python falls back to x = x + a (a new tensor)
    "x += a; r = x", "x *= np.array(2.); r = x", "xi += a; r = xi", "xg += a; r = xg",
    "y = x; x -= a; r = y", "b = np.ones(3); b += x; r = b",
    "b = np.ones(3, dtype=np.float32); b *= x; r = b", "x += np.float64(2); r = x",
    # comparisons: == reads an ndarray as a tensor, the others decline
    "r = a < x", "r = a == x", "r = a != x", "r = a >= x", "r = x < a", "r = x == a",
    "r = xi == np.array([1.5, 2, 3])", "r = x == np.ones((2, 3))", "r = x != a",
    "r = x == np.array(['a', 'b', 'c'])", "r = np.float64(1) < x",
    "r = a & xi", "r = xi | a", "r = np.ones(3, dtype=bool) | (x > 1)",
    # NumPy's functions on tensors: wrapped back into a tensor (a bool result as uint8)
    "r = np.add(a, x)", "r = np.exp(x)", "r = np.greater(x, 1)", "r = np.asarray(x)",
    "r = np.asarray(xg)", "r = np.multiply(x, x)",
    # other operands: Python's TypeError
    "r = x + 'a'", "r = x + None", "r = x * [1, 2, 3]", "r = divmod(a, x)",
]


@pytest.mark.parametrize("snippet", OPERATORS)
def test_numpy_operand_in_an_operator_as_torch(snippet):
    assert _run(gradviz, snippet) == _run(torch, snippet)


FUNCTIONS = [
    "r = t.add(x, a)", "r = x.add(a)", "r = x.add_(a)", "r = t.sub(x, a)", "r = x.sub_(a)",
    "r = t.mul(x, a)", "r = x.mul(a)", "r = x.mul_(a)", "r = t.div(x, a)", "r = x.div_(a)",
    "r = t.matmul(x, a)", "r = x.matmul(a)", "r = t.add(x, np.array(2.))",
    "r = t.add(x, 'a')", "r = t.mul(x, None)", "r = t.add(x, a, alpha=2)",
    "r = t.pow(x, a)", "r = x.pow(a)", "r = x.pow_(a)", "r = t.remainder(x, a)",
    "r = t.floor_divide(x, a)", "r = x.floor_divide_(a)", "r = t.true_divide(x, a)",
    "r = t.multiply(x, a)", "r = t.subtract(x, a)", "r = t.divide(x, a)", "r = t.rsub(x, a)",
    "r = t.add(x, np.float64(2))", "r = x.mul(np.int64(2))",
]


@pytest.mark.parametrize("snippet", FUNCTIONS)
def test_numpy_operand_in_a_function_as_torch(snippet):
    assert _run(gradviz, snippet) == _run(torch, snippet)


_DTYPES = ["float16", "float32", "float64", "int32", "int64", "uint8", "bool"]
_OPS = ["+", "-", "*", "/", "<", "=="]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_DTYPES), st.sampled_from(_DTYPES), st.sampled_from(_OPS),
       st.sampled_from(["()", "(3,)", "(2, 3)"]), st.booleans())
def test_tensor_and_ndarray_of_any_dtypes_as_torch(tensor_dtype, array_dtype, op, shape, left):
    make = (f"x = t.tensor([1, 2, 3]).to(t.{tensor_dtype}); "
            f"b = np.full({shape}, 2).astype(np.{array_dtype}); ")
    snippet = make + (f"r = b {op} x" if left else f"r = x {op} b")
    assert _run(gradviz, snippet) == _run(torch, snippet)


def _copied(t, src):
    x = t.zeros(3)
    try:
        x.copy_(src)
    except TypeError as exc:
        return "TypeError", str(exc)
    return x.tolist()


@pytest.mark.parametrize("src", [np.ones(3), np.array(2.0), [1.0, 2.0, 3.0], (1, 2, 3), None,
                                 "a", 2.0, True, np.float32(2)],
                         ids=["ndarray", "0d_ndarray", "list", "tuple", "None", "str", "float",
                              "bool", "np_float32"])
def test_copy_takes_a_tensor_or_a_number_as_torch(src):
    assert _copied(gradviz, src) == _copied(torch, src)
