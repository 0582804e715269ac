"""tanh's and sigmoid's gradients round as torch's CPU kernels: tanh's `grad * (1 - y*y)` with
`1 - y*y` rounded once (torch's vector code computes it with a fused multiply-add), sigmoid's
`grad * (1 - y) * y` in that order. Rounding the square first
differed from torch in about half the elements, which the makemore "backprop ninja" lecture
shows: its cmp() of the hand-written `(1.0 - h**2) * dh` against autograd prints
`exact: False` on torch and printed `exact: True` on the core.
"""

import numpy as np
import pytest

import gradviz
from gradviz._dmath import sigmoid_backward as sigmoid_formula
from gradviz._dmath import tanh_backward as tanh_formula
from gradviz._ops.backward import sigmoid_backward, tanh_backward

torch = pytest.importorskip("torch")

DTYPES = ["float16", "float32", "float64"]


def _torch_tanh_and_grad(dtype, n=4099):
    # n is not a multiple of any vector width: the kernel's tail is compared too
    rng = np.random.RandomState(7)
    y = torch.tanh(torch.from_numpy(rng.randn(n) * 2).to(getattr(torch, dtype)))
    g = torch.from_numpy(rng.randn(n)).to(getattr(torch, dtype))
    return y, g


@pytest.mark.parametrize("dtype", DTYPES)
def test_tanh_backward_op_matches_torch_bit_for_bit(dtype):
    y, g = _torch_tanh_and_grad(dtype)
    expected = torch.ops.aten.tanh_backward(g, y).numpy()
    got = tanh_backward(gradviz.tensor(g.numpy()), gradviz.tensor(y.numpy())).numpy()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tanh_backward_node_matches_torch_bit_for_bit(dtype):
    # the node's formula on a plain backward (arrays), from torch's saved result
    y, g = _torch_tanh_and_grad(dtype)
    expected = torch.ops.aten.tanh_backward(g, y).numpy()
    got = tanh_formula(g.numpy(), y.numpy())
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)



@pytest.mark.parametrize("dtype", DTYPES)
def test_sigmoid_backward_matches_torch_bit_for_bit(dtype):
    # torch's kernel computes grad * (1 - y) * y; grad * y * (1 - y) rounds otherwise in ~35%
    rng = np.random.RandomState(8)
    y = torch.sigmoid(torch.from_numpy(rng.randn(4099) * 3).to(getattr(torch, dtype)))
    g = torch.from_numpy(rng.randn(4099)).to(getattr(torch, dtype))
    expected = torch.ops.aten.sigmoid_backward(g, y).numpy()
    op = sigmoid_backward(gradviz.tensor(g.numpy()), gradviz.tensor(y.numpy())).numpy()
    np.testing.assert_array_equal(op, expected)
    np.testing.assert_array_equal(sigmoid_formula(g.numpy(), y.numpy()), expected)
