"""The attention kernel's score arrays are kept from one call to the next (gradviz._scratch):
reused only when no one holds them, bounded in number and size, and never changing a value."""

import numpy as np
import pytest

import gradviz
from gradviz import _scratch

F = gradviz.nn.functional


@pytest.fixture(autouse=True)
def _empty():
    _scratch._SPARE.clear()
    yield
    _scratch._SPARE.clear()


def test_an_array_given_back_is_taken_again():
    a = _scratch.take((3, 4), np.float32)
    _scratch.give_back(a)
    assert _scratch.take((3, 4), np.float32) is a
    assert _scratch.take((3, 4), np.float32) is not a     # taken: a fresh one now


def test_an_array_someone_holds_is_not_kept():
    a = _scratch.take((3, 4), np.float32)
    held = [a]
    _scratch.give_back(a)
    view = a[1:]
    del held
    _scratch.give_back(a)       # a view of it is alive
    assert _scratch.take((3, 4), np.float32) is not a
    del view


def test_a_view_is_not_kept():
    a = np.empty((2, 3, 4), np.float32)
    v = a[0]
    _scratch.give_back(v)
    assert _scratch._SPARE == {}


def test_kept_arrays_are_bounded():
    for _ in range(3):
        _scratch.give_back(np.empty((2, 2), np.float64))
    assert len(_scratch._SPARE[((2, 2), np.dtype(np.float64))]) == 2
    _scratch.give_back(np.empty((5,), np.float64))         # a new shape replaces them
    assert list(_scratch._SPARE) == [((5,), np.dtype(np.float64))]
    _scratch.give_back(np.empty(_scratch._LARGEST // 8 + 1, np.float64))     # too large
    assert list(_scratch._SPARE) == [((5,), np.dtype(np.float64))]


def _attention_step(seed):
    rng = np.random.default_rng(seed)
    q, k, v = (gradviz.tensor(rng.standard_normal((2, 3, 6, 4)).astype(np.float32),
                              requires_grad=True) for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    (out * out).sum().backward()
    return [t.detach().numpy().copy() for t in (out, q.grad, k.grad, v.grad)]


def test_attention_reuses_its_score_arrays_with_the_same_values():
    first = _attention_step(0)
    # the forward's scores and the backward's two (L, S) arrays are kept ...
    kept = _scratch._SPARE[((2, 3, 6, 6), np.dtype(np.float32))]
    assert len(kept) == 2
    ids = {id(a) for a in kept}
    other = _attention_step(1)      # ... and used by the next call, garbage in them
    assert {id(a) for a in _scratch._SPARE[((2, 3, 6, 6), np.dtype(np.float32))]} == ids
    _scratch._SPARE.clear()
    for got, fresh in zip(other, _attention_step(1)):
        assert np.array_equal(got, fresh)
    assert all(np.array_equal(a, b) for a, b in zip(first, _attention_step(0)))


def test_attention_results_never_share_the_kept_arrays():
    rng = np.random.default_rng(2)
    q = gradviz.tensor(rng.standard_normal((1, 2, 5, 4)).astype(np.float32), requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q)
    out.sum().backward(retain_graph=True)
    kept = _scratch._SPARE[((1, 2, 5, 5), np.dtype(np.float32))]
    saved = out.grad_fn._saved_logsumexp
    for a in kept:
        for t in (out, q.grad, saved):
            assert not np.shares_memory(a, t.detach().numpy())
