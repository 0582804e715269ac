"""SelectBackward0 on the engine's plain path writes its gradient into the one waiting at its
next node, in place (`q, k, v = qkv[0], qkv[1], qkv[2]`: one zero-fill instead of three, and
no additions), and only where no one else can see that array: the gradients stay torch's in
every other case (hooks, retain_grad, a gradient shared with another node, create_graph, a
second backward)."""

import numpy as np
import pytest

import gradviz

torch = pytest.importorskip("torch")

# Each snippet makes `x` (a leaf) and `loss`; `x.grad` is compared with torch's (sin's
# rounding differs by an ulp between NumPy and torch).
SNIPPETS = {
    "qkv_permuted": "qkv = (x * 2).view(2, 5, 3, 4).permute(2, 0, 1, 3)\n"
                    "q, k, v = qkv[0], qkv[1], qkv[2]\n"
                    "loss = (q * 1 + k * 2 + v * 3).sum()",
    "contiguous_base": "b = x * 2\n"
                       "loss = (b[0] * 3).sum() + (b[1] ** 2).sum()",
    "same_index_twice": "b = x * 2\n"
                        "loss = (b[1] * 3).sum() + (b[1] * 5).sum()",
    "base_also_used": "b = x.t() * 1\n"
                      "loss = (b * b).sum() + b[0].sum() + (b[2] * 4).sum()",
    # The add sends one array to the buffers of both y's node and b's; the select runs while
    # y's node still waits for it: writing into it would change y's gradient too.
    "gradient_shared_with_another_node": "b = x * 2\n"
                                         "y = b * 3\n"
                                         "s = b[1] * 7\n"
                                         "loss = (y + b).sin().sum() + s.sum()",
    "broadcast_gradient_waiting": "b = x * 2\n"
                                  "s = b[0] * 7\n"
                                  "loss = b.sum() + s.sum()",
    "to_0d": "b = x * 2\n"
             "loss = b[1, 2] * 3 + b[1][3] * 4 + b[2].select(0, 2)",
    "leaf_selected": "loss = (x[0] * 3).sum() + (x[1] * 4).sum()",
    "dim_1": "b = (x * 2).t()\n"
             "loss = (b[:, 0] * 3).sum() + (b.select(1, 3) ** 2).sum()",
}


def _once(scope):
    scope["loss"].backward()


def _twice(scope):
    scope["loss"].backward(retain_graph=True)
    scope["loss"].backward()


def _second_order(scope):
    x, loss = scope["x"], scope["loss"]
    (g,) = scope["t"].autograd.grad(loss, x, create_graph=True)
    (g * g * x).sum().backward()


def _grad(t, source, backward):
    x = t.tensor(np.arange(120.0).reshape(10, 12) / 37, dtype=t.float32, requires_grad=True)
    scope = {"x": x, "t": t}
    exec(source, scope)
    backward(scope)
    return x.grad.numpy()


@pytest.mark.parametrize("backward", [_once, _twice, _second_order])
@pytest.mark.parametrize("name", SNIPPETS)
def test_select_gradients_are_torchs(name, backward):
    assert np.allclose(_grad(gradviz, SNIPPETS[name], backward),
                       _grad(torch, SNIPPETS[name], backward), rtol=1e-6)


def test_a_second_backward_through_freed_selects_raises_torchs_error():
    x = gradviz.ones(3, 4, requires_grad=True)
    b = (x * 2).t()
    loss = b[0].sum() + b[1].sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second"):
        loss.backward()


def _sibling_selects(t):
    x = t.ones(2, 5, 12, requires_grad=True)
    qkv = (x * 1).view(2, 5, 3, 4).permute(2, 0, 1, 3)
    return x, qkv, (qkv[0] * 1 + qkv[1] * 2 + qkv[2] * 3).sum()


def test_sibling_selects_write_into_one_buffer(monkeypatch):
    select_node = type((gradviz.ones(2, 3, requires_grad=True) * 1)[0].grad_fn)
    assert select_node.__name__ == "SelectBackward0"
    done = []
    into = select_node._into

    def spy(node, grad, buffers):
        done.append(into(node, grad, buffers))
        return done[-1]
    monkeypatch.setattr(select_node, "_into", spy)
    x, _, loss = _sibling_selects(gradviz)
    loss.backward()
    assert done == [True, True, True]
    xt, _, loss_t = _sibling_selects(torch)
    loss_t.backward()
    assert np.array_equal(x.grad.numpy(), xt.grad.numpy())


def test_hooks_see_torchs_layout():
    strides = {}
    for t in (gradviz, torch):
        x, qkv, loss = _sibling_selects(t)
        qkv.retain_grad()
        loss.backward()
        strides[t] = (qkv.grad.stride(), qkv.grad.is_contiguous())
    assert strides[gradviz] == strides[torch]


def _function_sees(t):
    seen = []

    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return (x * 1).t()

        @staticmethod
        def backward(ctx, g):
            seen.append((tuple(g.stride()), g.is_contiguous()))
            return g.view(-1).view(2, 3).t()
    x = t.ones(3, 2, requires_grad=True)
    y = F.apply(x)
    (y[0] + y[1] * 2).sum().backward()
    return seen, x.grad.tolist()


def _upstream_hook_sees(t):
    seen = []
    x = t.ones(2, 3, requires_grad=True)
    a = x * 1
    a.register_hook(lambda g: seen.append(tuple(g.stride())))
    b = a.t() * 2
    (b[0] + b[1] + b[2]).sum().backward()
    return seen, x.grad.tolist()


@pytest.mark.parametrize("case", [_function_sees, _upstream_hook_sees])
def test_user_code_below_the_selects_sees_torchs_layout(case):
    # a custom Function's backward (g.view(-1) needs torch's contiguous gradient) or a hook
    # anywhere below the selects: the selects send torch's gradients
    assert case(gradviz) == case(torch)
