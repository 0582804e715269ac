"""nll_loss's backward takes a short path when its total weight shows that no sample was
ignored: the same gradients as torch 2.13, and the long path whenever that count could be
rounded (float16 counts above 2048)."""

import numpy as np
import pytest

import gradviz
from gradviz._dmath import row_numbers

torch = pytest.importorskip("torch")


def _grads(t, x, target, dtype, **kw):
    xt = t.tensor(x).to(getattr(t, dtype)).requires_grad_()
    t.nn.functional.nll_loss(xt, t.tensor(target), **kw).backward()
    return xt.grad.to(t.float64).numpy()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 32, 2048])
def test_no_sample_ignored_gives_torchs_gradient(dtype, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 7))
    target = rng.integers(0, 7, n)
    assert np.array_equal(_grads(gradviz, x, target, dtype), _grads(torch, x, target, dtype))


def test_an_ignored_sample_hidden_by_a_rounded_float16_count_gets_no_gradient():
    # 4097 samples, one ignored: the total weight 4096 and the count 4097 are the same
    # float16 number, so the count cannot tell that a sample was ignored.
    n = 4097
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 3))
    target = rng.integers(0, 3, n)
    target[5] = -100
    got = _grads(gradviz, x, target, "float16")
    assert not got[5].any()
    assert np.array_equal(got, _grads(torch, x, target, "float16"))


@pytest.mark.parametrize("target, kw", [([2, -100, 0, 1], {}),
                                         ([2, -100, 0, 1], {"reduction": "sum"}),
                                         ([2, 0, 0, 1], {"ignore_index": 0})])
def test_ignored_samples_get_no_gradient_as_in_torch(target, kw):
    x = np.arange(12.0).reshape(4, 3) / 10
    target = np.array(target)
    got = _grads(gradviz, x, target, "float32", **kw)
    assert not got[1].any()
    assert np.array_equal(got, _grads(torch, x, target, "float32", **kw))


def test_row_numbers_are_cached():
    a = row_numbers(5)
    assert row_numbers(5) is a
    assert list(row_numbers(3)) == [0, 1, 2]
    assert list(row_numbers(5)) == list(range(5))
