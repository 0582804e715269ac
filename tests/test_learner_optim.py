"""torch.optim.Adadelta, the optimizer of PyTorch's MNIST example (with StepLR), against torch
2.13: updates bit for bit given the same square root, `_version` counts, state_dict, repr and
errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402
from gradviz.optim import _functional  # noqa: E402
from test_learner_surface import _same  # noqa: E402
from test_optim import check_state_dicts, same_bits, torch_sqrt, train  # noqa: E402

CONFIGS = [{}, {"lr": 0.5, "rho": 0.95, "weight_decay": 0.01},
           {"eps": 1e-4, "maximize": True}]


@pytest.mark.parametrize("kw", CONFIGS)
def test_adadelta_is_torchs_bit_for_bit_given_the_same_square_root(kw, monkeypatch):
    monkeypatch.setattr(_functional, "sqrt", torch_sqrt)
    topt, tw, tb = train(torch, "Adadelta", kw)
    gopt, gw, gb = train(gradviz, "Adadelta", kw)
    same_bits(tw.detach().numpy(), gw.detach().numpy())
    same_bits(tb.detach().numpy(), gb.detach().numpy())
    assert (gw._version, gb._version) == (tw._version, tb._version)
    check_state_dicts(topt.state_dict(), gopt.state_dict())
    assert [s._version for s in gopt.state[gw].values()] == \
        [s._version for s in topt.state[tw].values()]


def _mnist_style_loop(torch):
    # PyTorch's MNIST example: Adadelta(lr=1.0) with StepLR(step_size=1, gamma=0.7)
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
    losses = []
    for _ in range(3):
        for _ in range(2):
            optimizer.zero_grad()
            loss = torch.nn.functional.nll_loss(
                torch.nn.functional.log_softmax(model(x), dim=1), y)
            loss.backward()
            optimizer.step()
            losses.append(round(loss.item(), 4))
        scheduler.step()
    return losses, scheduler.get_last_lr(), repr(optimizer), sorted(optimizer.state_dict())


def _bad_rho(torch):
    return torch.optim.Adadelta([torch.nn.Parameter(torch.ones(1))], rho=1.5)


def _bad_lr(torch):
    return torch.optim.Adadelta([torch.nn.Parameter(torch.ones(1))], lr=-1.0)


def _bad_eps(torch):
    return torch.optim.Adadelta([torch.nn.Parameter(torch.ones(1))], eps=-1.0)


@pytest.mark.parametrize("snippet", [_mnist_style_loop, _bad_rho, _bad_lr, _bad_eps])
def test_adadelta_matches_torch(snippet):
    _same(snippet)


def test_adadelta_refuses_other_kernels():
    p = [gradviz.nn.Parameter(gradviz.ones(1))]
    for kw in ({"foreach": True}, {"capturable": True}, {"differentiable": True}):
        with pytest.raises(NotImplementedError, match="--backend torch"):
            gradviz.optim.Adadelta(p, **kw).step()
    assert np.isfinite(gradviz.optim.Adadelta(p, foreach=False).defaults["lr"])
