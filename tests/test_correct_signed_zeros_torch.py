"""Signed zeros and infinities against torch 2.13: remainder (a zero result keeps a's sign,
as torch's fmod-then-shift does; NumPy's takes b's), fmod, and max_pool2d choosing between
+0.0 and -0.0 in a window (torch keeps the first: `val > maxval`), value and gradient."""

import math

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

VALUES = [-0.0, 0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, math.inf, -math.inf, math.nan]


def _signed(v):
    return "nan" if v != v else (math.copysign(1.0, v), v)


def _table(t, op, dtype, how):
    out = []
    for a in VALUES:
        for b in VALUES:
            if how == "tensors":
                r = getattr(t, op)(t.tensor(a, dtype=dtype), t.tensor(b, dtype=dtype))
            elif how == "number":
                r = getattr(t, op)(t.tensor(a, dtype=dtype), b)
            else:
                if op == "fmod":
                    continue
                r = a % t.tensor(b, dtype=dtype)      # the reflected %
            out.append(_signed(r.item()))
    return out


@pytest.mark.parametrize("how", ["tensors", "number", "reflected"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["remainder", "fmod"])
def test_remainder_and_fmod_signs_match_torch(op, dtype, how):
    assert (_table(gradviz, op, getattr(gradviz, dtype), how)
            == _table(torch, op, getattr(torch, dtype), how))


WINDOWS = {
    "neg_first": [[-0.0, 0.0], [0.0, -0.0]],
    "pos_first": [[0.0, -0.0], [-0.0, 0.0]],
    "neg_row": [[-0.0, -0.0], [0.0, 0.0]],
    "pos_row": [[0.0, 0.0], [-0.0, -0.0]],
    "all_neg": [[-0.0, -0.0], [-0.0, -0.0]],
    "neg_then_nan": [[-0.0, math.nan], [0.0, 1.0]],
    "negative_and_zero": [[-1.0, -0.0], [0.0, -2.0]],
}


def _pool(t, window, kernel):
    x = t.tensor([[window]], requires_grad=True)
    y = t.nn.functional.max_pool2d(x, kernel)
    y.sum().backward()
    return [_signed(v) for v in y.flatten().tolist()], x.grad.flatten().tolist()


@pytest.mark.parametrize("kernel", [2, 1, (1, 2)])
@pytest.mark.parametrize("window", list(WINDOWS))
def test_max_pool2d_keeps_the_first_zero_as_torch(window, kernel):
    assert _pool(gradviz, WINDOWS[window], kernel) == _pool(torch, WINDOWS[window], kernel)
