"""F.conv_transpose1d/2d and nn.ConvTranspose1d/2d against torch 2.13: values, gradients, the
graph (ConvolutionBackward0, and ConvolutionBackwardBackward0 under create_graph=True), the
default initialisation draw for draw under manual_seed, reprs, output_size and errors."""

import numpy as np
import pytest

import gradviz

real = pytest.importorskip("torch")

CASES = [  # (nd, input shape, weight shape, bias, options)
    (2, (2, 4, 5, 5), (4, 3, 3, 3), True, dict(stride=2)),
    (2, (2, 4, 5, 4), (4, 3, 3, 2), True, dict(stride=2, padding=1, output_padding=1,
                                               groups=2, dilation=2)),
    (2, (1, 2, 3, 3), (2, 5, 4, 4), False, dict(stride=(2, 1), padding=(1, 0))),
    (2, (2, 3, 3), (2, 2, 3, 3), True, dict(stride=3, output_padding=2)),       # unbatched
    (1, (2, 4, 6), (4, 2, 3), True, dict(stride=2, padding=1, output_padding=1)),
    (1, (3, 5), (3, 4, 2), False, dict(groups=1, dilation=3)),                   # unbatched
    (1, (2, 6, 4), (6, 1, 3), True, dict(groups=3, stride=3, output_padding=1)),
]


def _run(torch, nd, xs, ws, has_bias, options):
    gen = np.random.default_rng(0)
    x = torch.tensor(gen.standard_normal(xs), requires_grad=True)
    w = torch.tensor(gen.standard_normal(ws), requires_grad=True)
    groups = options.get("groups", 1)
    b = torch.tensor(gen.standard_normal(ws[1] * groups), requires_grad=True) if has_bias \
        else None
    conv = getattr(torch.nn.functional, f"conv_transpose{nd}d")
    y = conv(x, w, b, **options)
    names = (y.grad_fn.name(), [n and n.name() for n, _ in y.grad_fn.next_functions])
    inputs = (x, w) if b is None else (x, w, b)
    grads = torch.autograd.grad((y * y).sum(), inputs, create_graph=True)
    second = [g.grad_fn.name() for g in grads]
    gg = torch.autograd.grad(sum((g * g).sum() for g in grads), inputs)
    return ([y.detach().numpy()] + [g.detach().numpy() for g in grads]
            + [g.numpy() for g in gg]), names, second


@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv_transpose_matches_torch(case):
    ours, theirs = _run(gradviz, *CASES[case]), _run(real, *CASES[case])
    for a, b in zip(ours[0], theirs[0]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    assert ours[1:] == theirs[1:]


def _modules(torch):
    torch.manual_seed(3)
    nn = torch.nn
    return [nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2,
                               dilation=2),
            nn.ConvTranspose2d(3, 2, (2, 4), bias=False), nn.ConvTranspose1d(4, 6, 3),
            nn.ConvTranspose1d(2, 3, 5, stride=2, output_padding=1, dtype=torch.float64)]


def test_modules_match_torch_draw_for_draw():
    x2 = np.random.default_rng(1).standard_normal((2, 4, 5, 5))
    for ours, theirs in zip(_modules(gradviz), _modules(real)):
        assert repr(ours) == repr(theirs)
        for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert n == tn
            np.testing.assert_array_equal(p.detach().numpy(), tp.detach().numpy())
        shape = (2, ours.in_channels) + (5,) * ours._nd
        x = x2.reshape(-1)[:int(np.prod(shape))].reshape(shape)
        a = ours(gradviz.tensor(x, dtype=ours.weight.dtype))
        b = theirs(real.tensor(x, dtype=theirs.weight.dtype))
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_output_size_as_torch():
    for torch in (gradviz, real):
        torch.manual_seed(0)
        m = torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
        assert tuple(m(torch.rand(1, 2, 5, 5), output_size=[12, 12]).shape) == (1, 3, 12, 12)
        assert tuple(m(torch.rand(2, 5, 5), output_size=[3, 11, 12]).shape) == (3, 11, 12)


def _error(torch, case):
    F = torch.nn.functional
    x, w = torch.rand(1, 2, 5, 5), torch.rand(2, 3, 3, 3)
    cases = {
        "input_dims": lambda: F.conv_transpose2d(torch.rand(5, 5), w),
        "padding_str": lambda: F.conv_transpose2d(x, w, padding="same"),
        "output_padding": lambda: F.conv_transpose2d(x, w, stride=2, output_padding=2),
        "channels": lambda: F.conv_transpose2d(x, torch.rand(3, 3, 3, 3)),
        "bias": lambda: F.conv_transpose2d(x, w, torch.rand(2)),
        "padding_mode": lambda: torch.nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect"),
        "output_size": lambda: torch.nn.ConvTranspose2d(2, 3, 3, stride=2)(
            x, output_size=[14, 12]),
        "output_size_len": lambda: torch.nn.ConvTranspose2d(2, 3, 3)(x, output_size=[7]),
    }
    with pytest.raises(Exception) as info:
        cases[case]()
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("case", ["input_dims", "padding_str", "output_padding", "channels",
                                  "bias", "padding_mode", "output_size", "output_size_len"])
def test_errors_match_torch(case):
    assert _error(gradviz, case) == _error(real, case)
