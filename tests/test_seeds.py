"""Every scenario of the seed notes, with the notes' numbers (PyTorch 2.13 where they differ)."""

import warnings

import numpy as np
import pytest

import gradviz as torch


def test_mul_chain_grads_12_and_8():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    c = a * b
    d = torch.tensor(4.0, requires_grad=True)
    e = c * d
    e.backward()
    assert (a.grad.item(), b.grad.item(), d.grad.item()) == (12.0, 8.0, 6.0)
    assert e.grad_fn.name() == "MulBackward0"
    assert e.grad_fn.next_functions[0][0] is c.grad_fn
    assert [type(n).__name__ for n, _ in c.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    assert c.grad_fn.next_functions[0][0].variable is a


def test_example2_b_without_grad_has_none_edge():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0)
    c = a * b
    c.backward()
    assert a.grad.item() == 3.0 and b.grad is None
    assert c.grad_fn.next_functions[1] == (None, 0)


def _w_graph():
    input = torch.ones([2, 2], requires_grad=False)
    w1 = torch.tensor(2.0, requires_grad=True)
    w2 = torch.tensor(3.0, requires_grad=True)
    w3 = torch.tensor(3.0, requires_grad=True)
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    return w1, l1, l4


def test_retain_grad_w1_21_l1_525():
    w1, l1, l4 = _w_graph()
    loss = l4.mean()
    assert loss.item() == 30.0
    l1.retain_grad()
    l4.retain_grad()
    loss.retain_grad()
    loss.backward()
    assert w1.grad.item() == 21.0
    assert loss.grad.item() == 1.0
    np.testing.assert_allclose(l4.grad.numpy(), np.full((2, 2), 0.25))
    np.testing.assert_allclose(l1.grad.numpy(), np.full((2, 2), 5.25))
    assert l1.grad_fn.name() == "MulBackward0" and loss.grad_fn.name() == "MeanBackward0"


def test_hooks_fire_loss_then_l4_then_l1():
    _, l1, l4 = _w_graph()
    loss2 = l4.mean()
    fired = []
    l1.register_hook(lambda g: fired.append(("l1", g.tolist())))
    l4.register_hook(lambda g: fired.append(("l4", g.tolist())))
    loss2.register_hook(lambda g: fired.append(("loss", g.tolist())))
    loss2.backward()
    assert [n for n, _ in fired] == ["loss", "l4", "l1"]
    assert fired[0][1] == 1.0 and fired[2][1] == [[5.25, 5.25], [5.25, 5.25]]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert loss2.grad is None
    assert "not a leaf Tensor" in str(w[0].message)


def test_dynamic_control_flow_grads():
    def f(x):
        result = 1
        for ii in x:
            if ii.item() > 0:
                result = ii * result
        return result

    x = torch.arange(-2, 4, dtype=torch.float32).requires_grad_()
    y = f(x)
    y.backward()
    assert x.grad.tolist() == [0, 0, 0, 6, 3, 2]


def test_abs_control_flow():
    def abs_(x):
        return x if x.data[0] > 0 else -x

    x = torch.ones(1, requires_grad=True)
    abs_(x).backward()
    assert x.grad.tolist() == [1.0]
    x = (-1 * torch.ones(1)).requires_grad_()
    y = abs_(x)
    y.backward()
    assert x.grad.tolist() == [-1.0]
    assert repr(y) == "tensor([1.], grad_fn=<NegBackward0>)"


def test_x2_exp_matches_hand_derivative():
    x = torch.randn(3, 4, requires_grad=True)
    y = x ** 2 * torch.exp(x)
    y.backward(torch.ones(y.size()))
    hand = 2 * x * torch.exp(x) + x ** 2 * torch.exp(x)
    assert torch.allclose(x.grad, hand)
    assert y.grad_fn.name() == "MulBackward0" and hand.grad_fn.name() == "AddBackward0"


def test_z_wx_b_graph_and_retain_graph_accumulation():
    x = torch.ones(1)
    b = torch.rand(1, requires_grad=True)
    w = torch.rand(1, requires_grad=True)
    y = w * x
    z = y + b
    assert (x.requires_grad, b.requires_grad, w.requires_grad, y.requires_grad) == \
        (False, True, True, True)
    assert (x.is_leaf, w.is_leaf, b.is_leaf, y.is_leaf, z.is_leaf) == \
        (True, True, True, False, False)
    assert z.grad_fn.next_functions[0][0] == y.grad_fn
    assert type(z.grad_fn.next_functions[1][0]).__name__ == "AccumulateGrad"
    assert y.grad_fn.next_functions[1] == (None, 0)
    assert w.grad_fn is None and x.grad_fn is None
    z.backward(retain_graph=True)
    assert w.grad.tolist() == [1.0]
    z.backward()
    assert w.grad.tolist() == [2.0]


def test_second_backward_without_retain_graph_raises():
    w = torch.tensor([2.0], requires_grad=True)
    z = w * torch.tensor([3.0])
    z.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second"):
        z.backward()


def test_requires_grad_corrected_rule_for_non_leaves():
    x1 = torch.randn(5, requires_grad=True)
    x2 = torch.randn(5)
    y1 = x1.pow(x1)
    y2 = x2.pow(x2)
    z = y1 + y2
    assert (y1.requires_grad, y2.requires_grad, z.requires_grad) == (True, False, True)
    assert y2.is_leaf and y2.grad_fn is None


def test_float_plus_0d_tensor_is_a_tensor():
    a = torch.randn(1)
    assert a.shape == torch.Size([1]) and repr(a.shape) == "torch.Size([1])"
    a = a.squeeze()
    assert repr(a.shape) == "torch.Size([])"
    x = 1.0
    x += a
    assert isinstance(x, torch.Tensor) and x.dtype == torch.float32


def test_no_grad_set_grad_enabled_and_requires_grad_():
    x2 = torch.ones(2, 2, requires_grad=True)
    assert (x2 ** 2).requires_grad
    with torch.no_grad():
        assert not (x2 ** 2).requires_grad
    assert x2.requires_grad
    torch.set_grad_enabled(False)
    try:
        assert not (torch.ones(1) * x2).requires_grad
    finally:
        torch.set_grad_enabled(True)
    a = torch.randn(2, 2)
    a = (a * 3) / (a - 1)
    assert not a.requires_grad
    a.requires_grad_(True)
    assert (a * a).sum().grad_fn.name() == "SumBackward0"


def test_inplace_version_error():
    a = torch.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    assert b._version == 0
    loss = (b * b).mean()
    b[0] = 1000.0
    assert b._version == 1
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    assert type(b.grad_fn).__name__ == "CopySlices"
    with pytest.raises(RuntimeError) as err:
        loss.backward()
    assert str(err.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [2]], which is output 0 of torch::autograd::CopySlices, "
        "is at version 1; expected version 0 instead.")


def test_inplace_on_leaf_is_rejected():
    a = torch.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in "
                                           "an in-place operation.$"):
        a[:] = 0
    assert a.is_leaf and a.tolist() == [10.0, 5.0, 2.0, 3.0]


def test_module_parameters_is_a_generator():
    from gradviz import nn

    class MyLinear(nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(i, o))
            self.bias = nn.Parameter(torch.randn(o))

        def forward(self, input):
            return (input @ self.weight) + self.bias

    my = MyLinear(3, 64)
    with pytest.raises(TypeError, match="object of type 'generator' has no len"):
        len(my.parameters())
    assert len(list(my.parameters())) == 2
    assert [n for n, _ in my.named_parameters()] == ["weight", "bias"]
    assert my(torch.ones(2, 3)).shape == torch.Size([2, 64])


def test_exp_repr_and_grad_fn_of_user_tensors():
    a = torch.tensor(2.0, requires_grad=True)
    assert repr(a.exp()) == "tensor(7.3891, grad_fn=<ExpBackward0>)"
    x1 = torch.ones(2, 2)
    x2 = torch.ones(2, 2, requires_grad=True)
    y = x1 * x2
    assert x1.grad_fn is None and x2.grad_fn is None
    assert repr(y) == "tensor([[1., 1.],\n        [1., 1.]], grad_fn=<MulBackward0>)"
    assert repr(x2 + 1) == "tensor([[2., 2.],\n        [2., 2.]], grad_fn=<AddBackward0>)"
