"""NumPy scalars as operands, compared with torch 2.13: torch reads np.float64(1.5) as the
Python number 1.5 (a float32 tensor stays float32, an int tensor becomes the default float
dtype), and an integer NumPy scalar as a Python int; np.bool_ it reads as a float. With the
NumPy scalar on the left, NumPy defers to the Tensor (a Tensor results, not an ndarray)."""

import operator

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

TENSORS = {
    "float32": ([1.0, 2.0], "float32"), "float32_0d": (3.0, "float32"),
    "float64": ([1.0, 2.0], "float64"), "float16": ([1.0, 2.0], "float16"),
    "int64": ([1, 2], "int64"), "int64_0d": (2, "int64"), "int32": ([1, 2], "int32"),
    "uint8": ([1, 2], "uint8"), "bool": ([True, False], "bool"),
}
SCALARS = {"np.float64": np.float64(1.5), "np.float32": np.float32(1.5),
           "np.float16": np.float16(1.5), "np.int64": np.int64(2), "np.int32": np.int32(2),
           "np.uint8": np.uint8(3), "np.bool_": np.bool_(True)}
OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
       "truediv": operator.truediv, "pow": operator.pow}


def _result(t, tensor, scalar, op, reflected):
    data, dtype = TENSORS[tensor]
    x = t.tensor(data, dtype=getattr(t, dtype))
    s = SCALARS[scalar]
    try:
        r = OPS[op](s, x) if reflected else OPS[op](x, s)
    except RuntimeError as exc:
        return "RuntimeError", str(exc).split(".")[0]
    return type(r).__name__, str(r.dtype), np.asarray(r.tolist(), dtype=float).round(4).tolist()


@pytest.mark.parametrize("reflected", [False, True])
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("scalar", sorted(SCALARS))
@pytest.mark.parametrize("tensor", sorted(TENSORS))
def test_numpy_scalar_operand_dtype_and_values_as_torch(tensor, scalar, op, reflected):
    assert _result(gradviz, tensor, scalar, op, reflected) == \
        _result(torch, tensor, scalar, op, reflected)


@pytest.mark.parametrize("scalar", ["np.float64", "np.float32", "np.int64", "np.bool_"])
def test_numpy_scalar_operand_keeps_the_gradient_dtype(scalar):
    def run(t):
        x = t.tensor(3.0, requires_grad=True)
        y = x * SCALARS[scalar] + SCALARS[scalar]
        y.backward()
        return str(y.dtype), y.grad_fn.name(), str(x.grad.dtype), x.grad.item()
    assert run(gradviz) == run(torch)
