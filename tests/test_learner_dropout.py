"""Channel-wise dropout (nn.Dropout1d / nn.Dropout2d, F.dropout1d / F.dropout2d), as CNN
tutorials use it after a convolution, against torch 2.13: the same channels dropped draw for
draw, MulBackward0, gradients, eval mode, reprs, warnings and errors."""

import warnings

import pytest

from test_learner_surface import _same


def _dropout2d_module(torch):
    torch.manual_seed(0)
    x = torch.randn(2, 4, 3, 3, requires_grad=True)
    drop = torch.nn.Dropout2d(0.3)
    y = drop(x)
    y.sum().backward()
    drop.eval()
    return y, x.grad, y.grad_fn.name(), drop(x) is x, repr(drop), repr(torch.nn.Dropout1d())


def _dropout1d_batched_and_not(torch):
    torch.manual_seed(1)
    x = torch.randn(3, 5, 4)
    return (torch.nn.functional.dropout1d(x, 0.5), torch.nn.functional.dropout1d(x[0], 0.5),
            torch.nn.functional.dropout1d(x, 0.5, training=False) is x)


def _dropout2d_edges(torch):
    torch.manual_seed(2)
    x = torch.randn(2, 3, 2, 2, requires_grad=True)
    ones = torch.nn.functional.dropout2d(x, 1.0)
    zero = torch.nn.functional.dropout2d(x, 0.0)
    h = x * 2
    inplace = torch.nn.functional.dropout2d(h, 0.5, inplace=True)
    return ones, ones.grad_fn.name(), zero is x, inplace is h, h, h._version, h.grad_fn.name()


def _dropout2d_3d_input_warns(torch):
    torch.manual_seed(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.nn.functional.dropout2d(torch.randn(2, 3, 4), 0.5)
        z = torch.nn.functional.dropout2d(torch.randn(2, 3), 0.5)
    return y, z, [str(w.message)[:60] for w in caught]


def _dropout1d_wrong_dims(torch):
    return torch.nn.functional.dropout1d(torch.ones(2, 3, 4, 5))


def _dropout2d_bad_p(torch):
    return torch.nn.Dropout2d(1.5)


def _mnist_style_net(torch):
    torch.manual_seed(4)
    conv = torch.nn.Conv2d(1, 4, 3)
    drop = torch.nn.Dropout2d()
    x = torch.randn(2, 1, 6, 6)
    out = torch.nn.functional.relu(drop(conv(x)))
    out.mean().backward()
    # (the weight's gradient itself is summed in another order: compare where it is zero)
    return out, (conv.weight.grad != 0).sum()


def _negative_zero_through_relu_and_clamp(torch):
    # a dropped channel of negative values is -0.0; torch's relu and clamps keep it (x unless
    # x < bound), and tensor printing shows the sign
    x = torch.tensor([-0.0, 0.0, -1.0, float("nan"), 2.0])
    z = torch.zeros(5)
    values = [torch.relu(x), torch.clamp(x, min=0), torch.clamp(-x, max=0), x.clamp_min(0),
              x.clamp_max(-0.0), torch.clamp(x, min=z), torch.clamp(-x, max=-z),
              x.clamp_min(z), torch.tensor([-0.0]).relu_()]
    return [repr(v) for v in values]


DROPOUT = {f.__name__: f for f in (_negative_zero_through_relu_and_clamp,
    _dropout2d_module, _dropout1d_batched_and_not, _dropout2d_edges, _dropout2d_3d_input_warns,
    _dropout1d_wrong_dims, _dropout2d_bad_p, _mnist_style_net)}


@pytest.mark.parametrize("name", sorted(DROPOUT))
def test_channel_dropout_matches_torch(name):
    _same(DROPOUT[name])
