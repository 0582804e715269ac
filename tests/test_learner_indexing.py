"""Indexing the way makemore's backprop lecture writes it, against torch 2.13: a Python range
as an index (`logprobs[range(n), Yb]`, read and written), and torch's words when index tensors
cannot be broadcast together."""

import pytest

from test_learner_surface import _same


def _nll_through_range(torch):
    torch.manual_seed(0)
    logprobs = torch.randn(4, 5, requires_grad=True)
    yb = torch.tensor([1, 0, 4, 2])
    loss = -logprobs[range(4), yb].mean()
    loss.backward()
    return loss, logprobs.grad, loss.grad_fn.next_functions[0][0].next_functions[0][0].name()


def _write_through_range(torch):
    yb = torch.tensor([1, 0, 4, 2])
    dlogprobs = torch.zeros(4, 5)
    dlogprobs[range(4), yb] = -1.0 / 4
    dlogits = torch.ones(4, 5)
    dlogits[range(4), yb] -= 1
    return dlogprobs, dlogits, dlogits._version


def _range_steps_and_empty(torch):
    x = torch.arange(10.0)
    return x[range(2, 8, 2)], x[range(0)], x.reshape(2, 5)[range(1, 2), range(3, 4)]


def _broadcast_mismatch_get(torch):
    return torch.ones(5, 3)[torch.tensor([0, 1, 2, 3, 4]), torch.tensor([0, 1, 2])]


def _broadcast_mismatch_2d(torch):
    return torch.ones(5, 3)[[[0, 1], [1, 2]], torch.tensor([0, 1, 2])]


def _broadcast_mismatch_set(torch):
    torch.ones(4, 4)[torch.tensor([0, 1, 2]), torch.tensor([0, 1])] = 1.0


INDEXING = {f.__name__: f for f in (
    _nll_through_range, _write_through_range, _range_steps_and_empty, _broadcast_mismatch_get,
    _broadcast_mismatch_2d, _broadcast_mismatch_set)}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing_matches_torch(name):
    _same(INDEXING[name])
