"""The engine at scale: a million-node chain runs backward and is freed without recursion."""

import gc
import sys
import weakref

import pytest

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


def _fan_in_grads(monkeypatch, steal):
    """x's gradient through a node whose buffer sums three fresh gradients; the number of sums
    done in place into the buffer (steal=False: none allowed)."""
    import numpy as np

    from gradviz.autograd import engine
    if not steal:
        monkeypatch.setattr(engine, "_UNSHARED", 0)
    inplace = []

    def counting_add(a, b, out=None):
        inplace.append(out is not None)
        return np.add(a, b, out=out)
    monkeypatch.setattr(engine, "_np_add", counting_add)
    x = torch.tensor(np.linspace(-1, 1, 4096, dtype=np.float32).reshape(64, 64),
                     requires_grad=True)
    y = x * 1.5
    (y.exp() + y.sin() + y.tanh()).sum().backward()
    return x.grad, sum(inplace)


def test_buffer_sums_in_place_give_the_same_bits(monkeypatch):
    stolen, n_stolen = _fan_in_grads(monkeypatch, steal=True)
    monkeypatch.undo()
    copied, n_copied = _fan_in_grads(monkeypatch, steal=False)
    assert n_stolen == 2 and n_copied == 0
    assert stolen._data.tobytes() == copied._data.tobytes()


def test_buffer_never_sums_into_a_gradient_a_hook_kept():
    # ExpBackward0 runs first (made last) and its gradient, kept by a node hook, is the first
    # in y's buffer: SinBackward0's must not be summed into it in place (torch does not steal a
    # gradient someone else holds).
    import numpy as np
    x = torch.tensor(np.linspace(-1, 1, 4096, dtype=np.float32), requires_grad=True)
    y = x * 2
    s = y.sin()
    a = y.exp()
    kept = []
    a.grad_fn.register_hook(lambda gin, gout: kept.append(gin[0]))
    (s + a).sum().backward()
    expected = (x * 2).exp().detach()
    assert kept[0].tolist() == expected.tolist()


def test_an_unshared_first_leaf_gradient_becomes_grad_without_a_copy(monkeypatch):
    import numpy as np

    from gradviz.autograd import engine, graph
    offered = []

    def spy(var, g, steal=False):
        offered.append(steal)
        graph.accumulate(var, g, steal)
    monkeypatch.setattr(engine, "accumulate", spy)
    w = torch.tensor(np.arange(12, dtype=np.float32).reshape(4, 3), requires_grad=True)
    x = torch.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4))
    (x @ w).sum().backward()
    assert offered == [True]            # mm's fresh x.t() @ grad: no one else holds it
    assert w.grad.tolist() == (x.t() @ torch.ones(5, 3)).tolist()
    g = np.ones((4, 3), np.float32)
    leaf = torch.zeros(4, 3, requires_grad=True)
    graph.accumulate(leaf, g, steal=True)
    assert leaf.grad._data is g


def test_a_leaf_gradient_someone_holds_is_copied():
    # A node hook keeps the gradient that reaches w; the next backward adds into w.grad in
    # place, which must not change what the hook kept.
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = w * 2
    kept = []
    y.grad_fn.register_hook(lambda gin, gout: kept.append(gin[0]))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert kept[0].tolist() == [2.0, 2.0, 2.0]
    assert w.grad.tolist() == [4.0, 4.0, 4.0]


def test_a_custom_function_gradient_sharing_a_tensors_data_is_copied():
    saved = torch.tensor([5.0, 6.0])

    class Passthrough(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return saved.detach()       # shares saved's array

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    Passthrough.apply(x).sum().backward()
    Passthrough.apply(x).sum().backward()
    assert saved.tolist() == [5.0, 6.0]
    assert x.grad.tolist() == [10.0, 12.0]


def _retained_after_inplace(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)                   # retain_grad moves to the new grad_fn, as in torch
    (y * 5).sum().backward()
    b = x * 1
    b.retain_grad()
    v = b[:2]
    v.retain_grad()
    v.mul_(2)                   # through a view: b's moves to CopySlices
    (b * 3).sum().backward()
    return y.grad.tolist(), b.grad.tolist(), v.grad, x.grad.tolist()


def test_retain_grad_follows_an_inplace_edit():
    assert _retained_after_inplace(torch) == ([5.0] * 3, [3.0] * 3, None, [36.0, 36.0, 33.0])


def test_retain_grad_follows_an_inplace_edit_as_in_torch():
    import pytest
    real = pytest.importorskip("torch")
    assert _retained_after_inplace(torch) == _retained_after_inplace(real)


def _second_derivative_through_an_edited_view(lib, k):
    import numpy as np
    x = lib.tensor(np.arange(1., 13.).reshape(3, 4) / 7, dtype=lib.float64, requires_grad=True)
    w = lib.tensor(np.arange(1., 4.) / 5, dtype=lib.float64, requires_grad=True)
    y = x * x
    if k == 0:
        y[1:, ::2].mul_(3)
    else:
        y.diagonal().add_(w * w)
    out = (y * y).sum() + y.sin().sum()
    g = lib.autograd.grad(out, (x, w), create_graph=True, allow_unused=True)
    h = lib.autograd.grad(sum((gi * gi).sum() for gi in g if gi is not None), (x, w),
                          allow_unused=True)
    return [None if a is None else a.detach().tolist() for a in g + h]


def test_second_derivatives_flow_through_an_in_place_edit_of_a_view():
    # CopySlices and AsStridedBackward0 under create_graph=True: their gradients were array
    # copies with no graph, so the second derivative lost the path through the edit
    import pytest
    real = pytest.importorskip("torch")
    import numpy as np
    for k in (0, 1):
        ours, theirs = (_second_derivative_through_an_edited_view(lib, k) for lib in (torch, real))
        for a, b in zip(ours, theirs):
            assert (a is None) == (b is None)
            if a is not None:
                assert np.allclose(a, b, rtol=1e-10, atol=1e-12)


def _second_derivative_through_mul_(lib):
    x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
    y = x * x
    y.mul_(w)
    saved = type(y.grad_fn._saved_self.grad_fn).__name__ if lib is not torch else \
        y.grad_fn._saved_self.grad_fn.name()
    g = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
    h = lib.autograd.grad(sum((gi * gi).sum() for gi in g), (x, w))
    return saved, [a.tolist() for a in g + h]


def test_an_in_place_op_saves_the_original_self_with_its_history():
    # mul_ with an other that requires grad saves self as it was, as a clone that keeps its
    # history (CloneBackward0, as torch): a detached copy lost the second derivative through x
    import pytest
    real = pytest.importorskip("torch")
    assert _second_derivative_through_mul_(torch) == _second_derivative_through_mul_(real)
    assert _second_derivative_through_mul_(torch)[0] == "CloneBackward0"


def test_a_node_knows_the_line_that_made_it():
    # Nodes keep the instruction offset and compute the line on demand (callsite.line_at).
    import inspect
    from gradviz.autograd.callsite import keeping_sites, line_at
    x = torch.ones(2, requires_grad=True)
    with keeping_sites():       # (a node keeps its site only when someone may read it)
        y = x.exp()
        made = inspect.currentframe().f_lineno - 1
    assert y.grad_fn._where == (__file__, made)
    f = inspect.currentframe()
    while f is not None:                # every frame of the stack, pytest's included
        assert line_at(f.f_code, f.f_lasti) == f.f_lineno
        f = f.f_back


def test_one_input_nodes_keep_their_edge_as_torch_shows_it():
    t = pytest.importorskip("torch")
    seen = []
    for lib in (torch, t):
        x = lib.ones(3, requires_grad=True)
        y = x.exp().sum()
        z = x.clone()
        z[0:2].exp_()                   # CopySlices over a one-input in-place op
        (y + z.sum()).backward()
        seen.append(([type(f).__name__ for f, _ in y.grad_fn.next_functions],
                     [type(f).__name__ for f, _ in z.grad_fn.next_functions],
                     y.grad_fn.next_functions[0][0].next_functions[0][1],
                     [round(v, 5) for v in x.grad.tolist()]))
    assert seen[0] == seen[1]
    assert seen[0][:2] == (["ExpBackward0"], ["CloneBackward0"])


def test_a_pass_ignores_divide_invalid_and_overflow_and_keeps_the_rest_of_numpys_state():
    # The engine sets NumPy's error state for the pass from the caller's (gradviz._fperr's
    # enter_pass, np.errstate's work without its object): a hook inside sees divide, invalid
    # and over ignored and the caller's `under`; the caller's state is back after the pass,
    # also when the pass raises, and a second caller state gets its own pass state.
    import numpy as np

    seen = []

    def hook(g):
        seen.append(np.geterr())
        return g

    x = torch.tensor([1.0, 0.0], requires_grad=True)
    with np.errstate(all="raise"):
        y = x.log() * 2
        y.register_hook(hook)
        y.sum().backward()
        assert np.geterr() == dict.fromkeys(("divide", "over", "under", "invalid"), "raise")
    with np.errstate(all="warn"):
        y = x.log() * 2
        y.register_hook(hook)
        y.sum().backward()
        y = x.log() * 2
        y.register_hook(lambda g: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            y.sum().backward()
        assert np.geterr() == dict.fromkeys(("divide", "over", "under", "invalid"), "warn")
    ignored = dict.fromkeys(("divide", "over", "invalid"), "ignore")
    assert seen == [{**ignored, "under": "raise"}, {**ignored, "under": "warn"}]
    assert x.grad.tolist() == [4.0, float("inf")]
