"""Indexing the way makemore's backprop lecture writes it, against torch 2.13: a Python range
as an index (`logprobs[range(n), Yb]`, read and written), and torch's words when index tensors
cannot be broadcast together; and a Python list as the whole index, which torch reads as a tuple
of indices when it is shorter than 32 and holds a sequence, a tensor, a slice, None or Ellipsis
(treatSequenceAsTuple, NumPy's legacy rule) and as one index otherwise."""

import warnings

import numpy as np
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


# ----- A list as the whole index: a tuple of indices, or one index ------------------------------

LIST_KEYS = {
    "ranges": lambda t: [range(2), range(2)],
    "one_range": lambda t: [range(2)],
    "int_and_list": lambda t: [0, [0, 1]],
    "lists": lambda t: [[0, 1], [0, 1]],
    "one_list": lambda t: [[2, 0]],
    "nested": lambda t: [[[0, 1], [1, 2]], [0, 1]],
    "tuples": lambda t: [(0, 1), (1, 2)],
    "ints": lambda t: [0, 2, 1],
    "ints_repeated": lambda t: [2, 2],
    "bools": lambda t: [True, False, True],
    "empty": lambda t: [],
    "empty_inner": lambda t: [[]],
    "floats": lambda t: [1.5, 0.2],
    "int_slice": lambda t: [0, slice(1, 3)],
    "slice_list": lambda t: [slice(1, 3), [0, 2]],
    "none": lambda t: [None, 0],
    "ellipsis": lambda t: [..., [0, 1]],
    "tensor": lambda t: [t.tensor([0, 1])],
    "tensors": lambda t: [t.tensor([0, 1]), t.tensor([1, 2])],
    "tensor_0d": lambda t: [t.tensor(1), 2],
    "ndarray_0d": lambda t: [np.array(1), 2],
    "numpy_int": lambda t: [np.int64(1), 2],
    "lists_31": lambda t: [[0, 1]] * 31,
    "lists_32": lambda t: [[0, 1]] * 32,
    "ints_32": lambda t: [1] * 32,
    "slices_32": lambda t: [slice(None)] * 32,
    "tensors_32": lambda t: [t.tensor([0, 1])] * 32,
    "str": lambda t: ["a"],
    "tuple_key": lambda t: ([0, 1], [1, 2]),
}


def _read_through_list(key, make):
    def snippet(torch):
        x = make(torch).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # torch: non-tuple sequence is deprecated
            y = x[key(torch)]
        if y.numel():
            (y * torch.arange(1.0, y.numel() + 1).view(y.shape)).sum().backward()
        return y, y.grad_fn.name(), x.grad
    return snippet


def _write_through_list(key, make, value):
    def snippet(torch):
        x = make(torch).clone()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x[key(torch)] = value(torch)
        return x, x._version
    return snippet


def _x2(torch):
    return torch.arange(12.0).view(3, 4)


def _x3(torch):
    return torch.arange(24.0).view(2, 3, 4)


@pytest.mark.parametrize("shape", ["2d", "3d"])
@pytest.mark.parametrize("key", sorted(LIST_KEYS))
@pytest.mark.parametrize("how", ["read", "write_scalar", "write_tensor"])
def test_list_index_matches_torch(how, key, shape):
    make = {"2d": _x2, "3d": _x3}[shape]
    if how == "read":
        snippet = _read_through_list(LIST_KEYS[key], make)
    else:
        value = (lambda t: 0.0) if how == "write_scalar" else (lambda t: t.tensor(-1.0))
        snippet = _write_through_list(LIST_KEYS[key], make, value)
    _same(snippet)
