"""A saved output edited in place, on gradviz and on torch 2.13: every op that saves its
result (or an output, as std_mean's result0 and a custom Function's saved output) × every
kind of edit (direct, through a view, through detach(), under no_grad, ...) gives torch's
error word for word, naming the node that saved the output (torch's SavedVariable for an
output), or no error where torch has none (.data, saved_tensors_hooks: torch checks no
version through hooks)."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _custom_exp(t):
    class E(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return y * g
    return E.apply


# op name -> t -> (x -> (output to edit, loss))
MAKERS = {
    "exp": lambda t: lambda x: _one(x.exp()),
    "tanh": lambda t: lambda x: _one(x.tanh()),
    "sigmoid": lambda t: lambda x: _one(x.sigmoid()),
    "sqrt": lambda t: lambda x: _one(x.sqrt()),
    "pow_scalar_base": lambda t: lambda x: _one(t.pow(2.0, x)),
    "softmax": lambda t: lambda x: _one(t.softmax(x, 0)),
    "exp_": lambda t: lambda x: _one(x.exp_()),
    "sigmoid_": lambda t: lambda x: _one(x.sigmoid_()),
    "exp_on_view": lambda t: lambda x: _one((x[0:2].exp_(), x)[1]),
    "relu_inplace": lambda t: lambda x: _one(t.nn.functional.relu(x, inplace=True)),
    "std_mean_std": lambda t: lambda x: _first(t.std_mean(x.view(2, 2), 0)),
    "std_mean_mean": lambda t: lambda x: _second(t.std_mean(x.view(2, 2), 0)),
    "custom_function": lambda t: lambda x: _one(_custom_exp(t)(x)),
}


def _one(y):
    return y, y.sum()


def _first(outs):
    return outs[0], outs[0].sum() + outs[1].sum()


def _second(outs):
    return outs[1], outs[0].sum() + outs[1].sum()


def _nograd(t, y):
    with t.no_grad():
        y.mul_(2)


EDITS = {
    "direct": lambda t, y: y.add_(1),
    "view": lambda t, y: y[0:1].add_(1),
    "detach": lambda t, y: y.detach().add_(1),
    "view_detach": lambda t, y: y.view(-1).detach().mul_(2),
    "detach_view": lambda t, y: y.detach()[1:].mul_(2),
    "setitem": lambda t, y: y.__setitem__(0, 5.0),
    "setitem_detach": lambda t, y: y.detach().__setitem__(0, 5.0),
    "no_grad": _nograd,
    "unsqueeze": lambda t, y: y.unsqueeze(0).add_(1),
    "reshape": lambda t, y: y.reshape(-1).add_(1),
    "narrow": lambda t, y: y.narrow(0, 0, 1).add_(1),
    "select": lambda t, y: y.select(0, 0).add_(1),
    "masked_fill_": lambda t, y: y.masked_fill_(y > 0, 0.0),
    "clamp_": lambda t, y: y.clamp_(max=0.1),
    "zero_": lambda t, y: y.zero_(),
    "copy_detach": lambda t, y: y.detach().copy_(y.detach() + 1),
    "data": lambda t, y: y.data.add_(1),
    "chunk_detach": lambda t, y: y.detach().chunk(2)[0].add_(1),
}


def _outcome(t, op, edit, hooks):
    x = t.tensor([0.5, 0.7, 0.2, 0.1], requires_grad=True) * 1
    try:
        if hooks:
            with t.autograd.graph.saved_tensors_hooks(lambda v: v, lambda v: v):
                y, loss = MAKERS[op](t)(x)
        else:
            y, loss = MAKERS[op](t)(x)
        EDITS[edit](t, y)
        loss.backward()
    except RuntimeError as exc:
        return str(exc)
    return "ok"


@pytest.mark.parametrize("edit", list(EDITS))
@pytest.mark.parametrize("op", list(MAKERS))
def test_an_edited_saved_output_raises_as_torch(op, edit):
    assert _outcome(gradviz, op, edit, False) == _outcome(torch, op, edit, False)


@pytest.mark.parametrize("edit", ["direct", "view", "detach", "no_grad", "zero_"])
@pytest.mark.parametrize("op", ["exp", "std_mean_std", "custom_function", "exp_on_view"])
def test_saved_tensors_hooks_turn_the_version_check_off_as_in_torch(op, edit):
    assert _outcome(gradviz, op, edit, True) == _outcome(torch, op, edit, True)


def _hooked_input(t):
    """A saved input (not an output) edited after saved_tensors_hooks packed it."""
    a = t.ones(3, requires_grad=True)
    b = a * 2
    with t.autograd.graph.saved_tensors_hooks(lambda v: v, lambda v: v):
        z = b * b
    b.add_(1)
    z.sum().backward()
    return a.grad.tolist()


def test_a_hooked_saved_input_edited_in_place_is_not_checked_as_in_torch():
    assert _hooked_input(gradviz) == _hooked_input(torch)


@pytest.mark.parametrize("op", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dtype", ["long", "bool", "int32"])
def test_spread_of_an_integer_tensor_names_the_op_as_torch(op, dtype):
    def message(t):
        with pytest.raises(RuntimeError) as info:
            getattr(t, op)(t.ones(3, dtype=getattr(t, dtype)))
        return str(info.value)
    assert message(gradviz) == message(torch)
