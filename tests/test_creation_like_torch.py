"""The *_like functions lay their result out as torch 2.13's preserve_format does: with the
input's strides when it is dense and non-overlapping (zeros_like(x.t()) is not contiguous),
else dense in the order of the input's strides; random draws fill that layout in memory
order, so their values are torch's too."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

INPUTS = {
    "contiguous": lambda t: t.ones(3, 4),
    "transposed": lambda t: t.ones(3, 4).t(),
    "permuted": lambda t: t.ones(2, 3, 4).permute(2, 0, 1),
    "channels last": lambda t: t.ones(2, 5, 4, 3).permute(0, 3, 1, 2),
    "sliced": lambda t: t.ones(2, 3, 4, 5)[:, :, ::2],
    "permuted and sliced": lambda t: t.ones(2, 3, 4, 5).permute(0, 2, 3, 1)[:, :, :, ::2],
    "expanded": lambda t: t.ones(2, 3).expand(4, 2, 3),
    "expanded and permuted": lambda t: t.ones(3, 5).expand(2, 3, 5).permute(2, 0, 1),
    "size-1 dims": lambda t: t.ones(3, 1, 4).permute(2, 1, 0),
    "a column transposed": lambda t: t.ones(1, 4).t(),
    "sliced and transposed": lambda t: t.ones(6, 8)[:, ::2].t(),
    "0-d": lambda t: t.tensor(3.0),
}

LIKE = {
    "zeros_like": lambda t, x: t.zeros_like(x),
    "ones_like": lambda t, x: t.ones_like(x, dtype=t.float64),
    "empty_like": lambda t, x: t.empty_like(x),
    "full_like": lambda t, x: t.full_like(x, 2.5),
    "rand_like": lambda t, x: t.rand_like(x),
    "randn_like": lambda t, x: t.randn_like(x),
    "randint_like": lambda t, x: t.randint_like(x, 100),
}


def _seen(t, make, like):
    t.manual_seed(0)
    out = LIKE[like](t, INPUTS[make](t))
    values = None if like == "empty_like" else np.array(out.tolist(), dtype=np.float64)
    return out.stride(), out.is_contiguous(), str(out.dtype), values, t.rand(2).tolist()


@pytest.mark.parametrize("like", LIKE)
@pytest.mark.parametrize("make", INPUTS)
def test_like_keeps_the_layout_and_draws_as_torch(make, like):
    ours, theirs = _seen(gradviz, make, like), _seen(torch, make, like)
    assert ours[:3] == theirs[:3]
    if ours[3] is not None:
        np.testing.assert_array_equal(ours[3], theirs[3])
    assert ours[4] == theirs[4]                 # the generator advanced alike


def test_a_result_like_a_transposed_input_is_written_as_torch():
    def seen(t):
        y = t.zeros_like(t.ones(3, 4).t())
        y.add_(t.arange(12.0).view(4, 3))
        return y.stride(), y.tolist(), y.contiguous().view(12).tolist()
    assert seen(gradviz) == seen(torch)
