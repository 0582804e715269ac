"""Lazy layers the way d2l.ai uses them, against torch 2.13: an optimizer made from a lazy
model's parameters() before its first call trains it (the parameters are materialized in
place), a parameter before that call is torch's <UninitializedParameter> (and refuses to be
used), and load_state_dict into a lazy model (d2l's read-write chapter) gives it the loaded
shapes."""

import pytest

import gradviz
from test_learner_surface import _same


def _optimizer_before_first_call(torch):
    # d2l's Trainer: model.configure_optimizers() runs before the first batch
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.LazyLinear(8), torch.nn.ReLU(),
                              torch.nn.LazyLinear(3))
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    x, y = torch.randn(6, 2, 2), torch.tensor([0, 1, 2, 0, 1, 2])
    losses = []
    for _ in range(3):
        loss = torch.nn.functional.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    return losses, net[1].weight, opt.param_groups[0]["params"][0] is net[1].weight


def _adam_and_batchnorm_before_first_call(torch):
    torch.manual_seed(1)
    # (no conv bias: batch norm cancels its gradient, and Adam would scale rounding noise)
    net = torch.nn.Sequential(torch.nn.LazyConv2d(2, 3, bias=False), torch.nn.LazyBatchNorm2d(),
                              torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.LazyLinear(2))
    opt = torch.optim.Adam(net.parameters(), lr=0.1)
    x = torch.randn(4, 1, 5, 5)
    for _ in range(2):
        loss = net(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss, net[1].weight, net[1].running_mean, [len(s) for s in opt.state.values()]


def _uninitialized_reprs(torch):
    net = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.LazyBatchNorm1d())
    return (repr(net[0].weight), str(net[0].bias), repr(net.state_dict()),
            repr(list(net.named_parameters())), repr(list(net.named_buffers())),
            type(net[0].weight).__name__, isinstance(net[0].weight, torch.nn.Parameter),
            net[0].weight.requires_grad, net[0].has_uninitialized_params())


def _uninitialized_shape(torch):
    return torch.nn.LazyLinear(4).weight.shape


def _uninitialized_numel(torch):
    # counting a model's parameters before its first call
    return sum(p.numel() for p in torch.nn.LazyLinear(4).parameters())


def _uninitialized_add(torch):
    return torch.nn.LazyLinear(4).weight + 1


def _uninitialized_init(torch):
    return torch.nn.init.xavier_uniform_(torch.nn.LazyLinear(4).weight)


def _load_into_lazy(torch):
    # d2l's read-write chapter: a lazy model's state_dict loaded into a new lazy model
    torch.manual_seed(2)
    net = torch.nn.Sequential(torch.nn.LazyLinear(5), torch.nn.ReLU(), torch.nn.LazyLinear(2))
    x = torch.randn(3, 4)
    y = net(x)
    clone = torch.nn.Sequential(torch.nn.LazyLinear(5), torch.nn.ReLU(), torch.nn.LazyLinear(2))
    keys = clone.load_state_dict(net.state_dict())
    loaded = repr(clone), clone[0].weight.shape, type(clone[0].weight).__name__
    return repr(keys), loaded, clone(x) == y, repr(clone)


def _load_into_lazy_conv_and_batchnorm(torch):
    torch.manual_seed(3)
    net = torch.nn.Sequential(torch.nn.LazyConv2d(2, 3), torch.nn.LazyBatchNorm2d())
    x = torch.randn(2, 3, 4, 4)
    y = net(x)
    clone = torch.nn.Sequential(torch.nn.LazyConv2d(2, 3), torch.nn.LazyBatchNorm2d())
    clone.load_state_dict(net.state_dict())
    return repr(clone), clone(x), y, repr(clone), list(clone.state_dict().items())


def _load_into_lazy_then_wrong_input(torch):
    net = torch.nn.LazyLinear(2)
    net.load_state_dict(torch.nn.Linear(3, 2).state_dict())
    return net(torch.ones(1, 4))


def _load_uninitialized_into_initialized(torch):
    return torch.nn.Linear(3, 2).load_state_dict(torch.nn.LazyLinear(2).state_dict())


LAZY = {f.__name__: f for f in (
    _optimizer_before_first_call, _adam_and_batchnorm_before_first_call, _uninitialized_reprs,
    _uninitialized_shape, _uninitialized_numel, _uninitialized_add, _uninitialized_init,
    _load_into_lazy, _load_into_lazy_conv_and_batchnorm, _load_into_lazy_then_wrong_input,
    _load_uninitialized_into_initialized)}


@pytest.mark.parametrize("name", sorted(LAZY))
def test_lazy_models_match_torch(name):
    _same(LAZY[name])


def test_materialize_keeps_the_object():
    layer = gradviz.nn.LazyLinear(3)
    weight = layer.weight
    assert type(weight) is gradviz.nn.UninitializedParameter
    layer(gradviz.ones(2, 4))
    assert layer.weight is weight and type(weight) is gradviz.nn.Parameter
    assert weight.shape == (3, 4)


def test_a_lazy_layer_on_another_device_is_refused_as_linear_is():
    import gradviz
    for make in (lambda: gradviz.nn.Linear(2, 3, device="cuda"),
                 lambda: gradviz.nn.LazyLinear(3, device="cuda")):
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            make()
