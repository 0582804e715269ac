"""nn.functional.interpolate (nearest on 3-D and 4-D input, bilinear on 4-D, by size or
scale_factor, align_corners, recompute_scale_factor) and the Upsample modules against torch
2.13: values, gradients, grad_fn names, saved values, second-order nodes, errors, refusals."""

import warnings

import numpy as np
import pytest

import gradviz

real = pytest.importorskip("torch")

CASES_2D = [dict(scale_factor=2), dict(scale_factor=1.7), dict(size=(4, 7)), dict(size=4),
            dict(scale_factor=0.5), dict(size=(2, 3)), dict(scale_factor=(2, 3)),
            dict(scale_factor=2, mode="bilinear"),
            dict(scale_factor=2, mode="bilinear", align_corners=True),
            dict(size=(4, 7), mode="bilinear"),
            dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
            dict(scale_factor=(2, 3), mode="bilinear"), dict(size=(2, 3), mode="bilinear"),
            dict(size=(1, 1), mode="bilinear", align_corners=True),
            dict(scale_factor=0.6, mode="bilinear"),
            dict(scale_factor=3.3, mode="bilinear", align_corners=True)]
CASES_1D = [dict(scale_factor=2), dict(scale_factor=1.7), dict(size=9), dict(scale_factor=0.3),
            dict(size=7)]


def _saved(fn):
    return {a: getattr(fn, a) for a in dir(fn) if a.startswith("_saved_")
            and not callable(getattr(fn, a))}


def _run(torch, options, shape, dtype):
    gen = np.random.default_rng(0)
    dt = getattr(torch, dtype)
    x = torch.tensor(gen.standard_normal(shape), dtype=dt, requires_grad=True)
    y = torch.nn.functional.interpolate(x, **options)
    fn = y.grad_fn
    node = (fn.name(), _saved(fn))
    g = torch.tensor(gen.standard_normal(tuple(y.shape)), dtype=dt)
    (gx,) = torch.autograd.grad(y, x, g)
    return (y.detach().numpy(), gx.numpy()) + node


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options, shape", [(c, (2, 3, 3, 5)) for c in CASES_2D]
                         + [(c, (2, 3, 7)) for c in CASES_1D])
def test_interpolate_matches_torch(options, shape, dtype):
    ours, theirs = _run(gradviz, options, shape, dtype), _run(real, options, shape, dtype)
    # float32: the same weights, summed in another order (at most a few ulp)
    tol = 1e-12 if dtype == "float64" else 2e-6
    for a, b in zip(ours[:2], theirs[:2]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert ours[2:] == theirs[2:]


@pytest.mark.parametrize("options", [dict(scale_factor=2), dict(size=(4, 7), mode="bilinear"),
                                     dict(scale_factor=1.5, mode="bilinear",
                                          align_corners=True)])
def test_second_order_matches_torch(options):
    def run(torch):
        x = torch.tensor(np.arange(15.0).reshape(1, 1, 3, 5), requires_grad=True)
        y = torch.nn.functional.interpolate(x, **options)
        g = torch.ones(tuple(y.shape), dtype=torch.float64, requires_grad=True)
        (gx,) = torch.autograd.grad(y, x, g, create_graph=True)
        fn = gx.grad_fn
        node = (fn.name(), [n.name() for n, _ in fn.next_functions], _saved(fn))
        (gg,) = torch.autograd.grad((gx * gx).sum(), g)
        return node, gg.numpy()
    (node, gg), (t_node, t_gg) = run(gradviz), run(real)
    assert node == t_node
    np.testing.assert_allclose(gg, t_gg, rtol=1e-12)


def _error(torch, case):
    F = torch.nn.functional
    x = torch.rand(1, 1, 2, 2)
    cases = {
        "align_nearest": lambda: F.interpolate(x, scale_factor=2, align_corners=True),
        "neither": lambda: F.interpolate(x),
        "both": lambda: F.interpolate(x, size=3, scale_factor=2),
        "size_dims": lambda: F.interpolate(x, size=(1, 2, 3)),
        "scale_dims": lambda: F.interpolate(x, scale_factor=(2,)),
        "recompute_size": lambda: F.interpolate(x, size=3, recompute_scale_factor=True),
        "bad_mode": lambda: F.interpolate(x, scale_factor=2, mode="foo"),
        "bilinear_3d": lambda: F.interpolate(x[0], scale_factor=2, mode="bilinear"),
        "bilinear_5d": lambda: F.interpolate(x[None], scale_factor=2, mode="bilinear"),
        "1d_input": lambda: F.interpolate(torch.rand(2), size=3),
        "antialias_nearest": lambda: F.interpolate(x, scale_factor=2, antialias=True),
        "zero_2d": lambda: F.interpolate(x, scale_factor=0.2),
        "zero_1d": lambda: F.interpolate(x[0], size=0),
        "int_nearest1d": lambda: F.interpolate(torch.tensor([[[1, 2]]]), scale_factor=2),
        "int_nearest2d": lambda: F.interpolate(torch.tensor([[[[1, 2]]]]), scale_factor=2),
        "int_bilinear": lambda: F.interpolate(torch.tensor([[[[1, 2]]]]), scale_factor=2,
                                              mode="bilinear"),
    }
    with pytest.raises(Exception) as info:
        cases[case]()
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("case", ["align_nearest", "neither", "both", "size_dims", "scale_dims",
                                  "recompute_size", "bad_mode", "bilinear_3d", "bilinear_5d",
                                  "1d_input", "antialias_nearest", "zero_2d", "zero_1d",
                                  "int_nearest1d", "int_nearest2d", "int_bilinear"])
def test_errors_match_torch(case):
    assert _error(gradviz, case) == _error(real, case)


@pytest.mark.parametrize("options, shape", [
    (dict(scale_factor=2, mode="bicubic"), (1, 1, 2, 2)),
    (dict(scale_factor=2, mode="linear"), (1, 1, 2)),
    (dict(scale_factor=2, mode="area"), (1, 1, 2, 2)),
    (dict(scale_factor=2, mode="nearest-exact"), (1, 1, 2, 2)),
    (dict(scale_factor=2), (1, 1, 2, 2, 2)),
    (dict(scale_factor=2, mode="bilinear", antialias=True), (1, 1, 2, 2))])
def test_modes_the_core_lacks_are_refused(options, shape):
    real.nn.functional.interpolate(real.rand(shape), **options)      # torch has them
    with pytest.raises(NotImplementedError, match="--backend torch"):
        gradviz.nn.functional.interpolate(gradviz.rand(shape), **options)


def _modules(torch):
    nn = torch.nn
    return [nn.Upsample(scale_factor=2), nn.Upsample(size=(3, 4), mode="bilinear",
                                                     align_corners=True),
            nn.Upsample(scale_factor=(2, 3)), nn.Upsample(size=5),
            nn.Upsample(scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
            nn.UpsamplingNearest2d(scale_factor=2), nn.UpsamplingBilinear2d(size=(4, 6))]


def test_modules_match_torch():
    x = np.random.default_rng(2).standard_normal((2, 3, 3, 4))
    for ours, theirs in zip(_modules(gradviz), _modules(real)):
        assert repr(ours) == repr(theirs)
        a = ours(gradviz.tensor(x, requires_grad=True))
        b = theirs(real.tensor(x, requires_grad=True))
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
        assert a.grad_fn.name() == b.grad_fn.name()


def test_upsample_warns_as_torch():
    for torch in (gradviz, real):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = torch.nn.functional.upsample(torch.ones(1, 1, 2, 2), scale_factor=2)
        assert [str(w.message) for w in caught] == [
            "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead."]
        assert tuple(y.shape) == (1, 1, 4, 4)
