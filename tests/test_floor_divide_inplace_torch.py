"""The backward error of an in-place floor division names torch's in-place op (aten::floor_divide_),
the out-of-place one aten::floor_divide, as torch 2.13's NotImplemented node does."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

CASES = {
    "//= number": "x //= 2",
    "//= tensor": "x //= t.tensor([2., 2.])",
    "//= tensor that requires grad": "x //= t.tensor([2., 2.], requires_grad=True)",
    "floor_divide_": "x.floor_divide_(2)",
    "// number": "x = x // 2",
    "// tensor": "x = x // t.tensor([2., 2.])",
    "floor_divide": "x = t.floor_divide(x, t.tensor([2., 2.]))",
}


def _backward_error(t, code):
    env = {"t": t, "x": t.tensor([5.0, 7.0], requires_grad=True) * 1}
    exec(code, env)
    x = env["x"]
    try:
        x.sum().backward()
    except RuntimeError as exc:
        return x.grad_fn.name(), str(exc)
    return x.grad_fn.name(), None


@pytest.mark.parametrize("name", sorted(CASES))
def test_floor_divide_backward_error_as_torch(name):
    assert _backward_error(gradviz, CASES[name]) == _backward_error(torch, CASES[name])
