"""The engine at scale: a million-node chain runs backward and is freed without recursion."""

import gc
import sys
import weakref

import gradviz as torch


def test_million_node_chain_backward_and_teardown():
    limit = sys.getrecursionlimit()
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0000001
    first = weakref.ref(y.grad_fn)
    y.backward()
    # float32 products: (1 + 1e-7) ** 1e6 = 1.105, 1.127 with float32's step; rounding between
    assert 1.09 < x.grad.item() < 1.13
    del y
    gc.collect()
    assert first() is None            # the whole graph was freed
    assert sys.getrecursionlimit() == limit


def test_saved_values_are_released_after_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    y = (h * h).sum()
    node = y.grad_fn.next_functions[0][0]
    assert node._saved_self is h
    y.backward()
    assert node._released
    try:
        node._saved_self
    except RuntimeError as exc:
        assert str(exc).startswith("Trying to backward through the graph a second time")
    else:
        raise AssertionError("saved tensors should be freed")


def test_multiply_by_a_scalar_keeps_no_input_alive():
    # torch saves only what the needed formulas use: self is not needed for y * 2.
    x = torch.tensor([1.0], requires_grad=True)
    h = x * 3
    ref = weakref.ref(h)
    y = h * 2
    del h
    assert ref() is None
    y.sum().backward()
    assert x.grad.tolist() == [6.0]
