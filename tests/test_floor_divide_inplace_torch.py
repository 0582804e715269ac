"""The backward error of an in-place floor division names torch's in-place op (aten::floor_divide_),
the out-of-place one aten::floor_divide, as torch 2.13's NotImplemented node does."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

FORMS = ["x //= 2", "x //= t.tensor([2., 2.])", "x //= t.tensor([2., 2.], requires_grad=True)",
         "x.floor_divide_(2)", "x = x // 2", "x = x // t.tensor([2., 2.])",
         "x = t.floor_divide(x, t.tensor([2., 2.]))"]


def _backward_error(t, code):
    env = {"t": t, "x": t.tensor([5.0, 7.0], requires_grad=True) * 1}
    exec(code, env)
    x = env["x"]
    try:
        x.sum().backward()
    except RuntimeError as exc:
        return x.grad_fn.name(), str(exc)
    return x.grad_fn.name(), None


@pytest.mark.parametrize("code", FORMS)
def test_floor_divide_backward_error_as_torch(code):
    assert _backward_error(gradviz, code) == _backward_error(torch, code)
