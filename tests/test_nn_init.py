"""torch.nn.init against torch 2.13: after the same seed (or with a Generator), every
initialiser gives torch's values bit for bit (orthogonal_ within float32 rounding: its QR runs
in NumPy), bumps `_version` as torch does, leaves the generator where torch leaves it, and
raises and warns with torch's words."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def run(mod, fn, shape, dtype="float32", seed=0, generator=False):
    """fn(init, tensor, generator) on a fresh tensor after seeding: the values, the version
    count, the next draw of the generator used, and the warnings."""
    mod.manual_seed(seed)
    gen = mod.Generator().manual_seed(seed + 100) if generator else None
    t = mod.empty(*shape, dtype=getattr(mod, dtype))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(mod.nn.init, t, gen)
    nxt = mod.rand(1, generator=gen).item()
    return (out is t, t.numpy().copy(), t._version, nxt,
            [(w.category.__name__, str(w.message)) for w in caught])


def both(fn, shape, **kw):
    return run(torch, fn, shape, **kw), run(gradviz, fn, shape, **kw)


def same(ref, got, exact=True):
    assert got[0] == ref[0] and got[2:] == ref[2:]
    assert got[1].dtype == ref[1].dtype and got[1].shape == ref[1].shape
    if exact:
        assert np.array_equal(got[1].view(np.uint8), ref[1].view(np.uint8)), \
            np.abs(got[1] - ref[1]).max()
    else:
        np.testing.assert_allclose(got[1], ref[1], rtol=2e-6, atol=2e-6)


TRUNC = [
    ((100, 7), {}), ((1000,), {"std": 0.02}), ((5,), {}), ((33,), {"mean": 0.5, "std": 2.0,
                                                                  "a": -1.0, "b": 1.0}),
    ((257,), {"a": 1.5, "b": 3.0}), ((4000,), {"a": 2.0, "b": 4.0}), ((5,), {"a": -0.1,
                                                                          "b": 0.1}),
    ((64, 64), {"mean": 1.0, "std": 0.5, "a": 0.0, "b": 2.0}), ((3,), {"mean": 9.0}),
]


@pytest.mark.parametrize("shape,kw", TRUNC, ids=[f"{s}-{k}" for s, k in TRUNC])
@pytest.mark.parametrize("seed", [0, 7])
def test_trunc_normal_is_torchs_bit_for_bit(shape, kw, seed):
    # Both of torch 2.13's samplers: redrawn normals when [a, b] holds > 30% of the mass,
    # accepted uniform proposals otherwise; the warning when the mean is far outside.
    ref, got = both(lambda init, t, g: init.trunc_normal_(t, generator=g, **kw), shape,
                    seed=seed)
    same(ref, got)
    assert (got[1] >= kw.get("a", -2.0)).all() and (got[1] <= kw.get("b", 2.0)).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trunc_normal_with_a_generator_and_in_float64(dtype):
    for kw in ({}, {"a": 1.0, "b": 5.0}):
        ref, got = both(lambda init, t, g: init.trunc_normal_(t, generator=g, **kw), (50, 3),
                        dtype=dtype, generator=True)
        same(ref, got)


ORTHO = [(5, 3), (3, 5), (4, 4), (3, 2, 4), (6, 1), (1, 6), (0, 3)]


@pytest.mark.parametrize("shape", ORTHO, ids=[str(s) for s in ORTHO])
def test_orthogonal_is_torchs_within_float32_rounding(shape):
    ref, got = both(lambda init, t, g: init.orthogonal_(t, gain=1.5, generator=g), shape,
                    generator=True)
    same(ref, got, exact=False)
    if got[1].size:
        flat = got[1].reshape(shape[0], -1) / 1.5
        small = flat if flat.shape[0] <= flat.shape[1] else flat.T
        np.testing.assert_allclose(small @ small.T, np.eye(small.shape[0]), atol=1e-5)


EXACT = {
    "uniform_": lambda init, t, g: init.uniform_(t, -0.5, 2.0, generator=g),
    "normal_": lambda init, t, g: init.normal_(t, 1.0, 0.1, generator=g),
    "constant_": lambda init, t, g: init.constant_(t, 0.3),
    "ones_": lambda init, t, g: init.ones_(t),
    "zeros_": lambda init, t, g: init.zeros_(t),
    "xavier_uniform_": lambda init, t, g: init.xavier_uniform_(t, gain=2.0, generator=g),
    "xavier_normal_": lambda init, t, g: init.xavier_normal_(t, generator=g),
    "kaiming_uniform_": lambda init, t, g: init.kaiming_uniform_(t, a=0.2, mode="fan_out",
                                                                 generator=g),
    "kaiming_normal_": lambda init, t, g: init.kaiming_normal_(t, nonlinearity="relu",
                                                               generator=g),
    "sparse_": lambda init, t, g: init.sparse_(t.view(t.shape[0], -1), 0.3, std=0.5,
                                               generator=g),
}


@pytest.mark.parametrize("name", list(EXACT))
@pytest.mark.parametrize("generator", [False, True], ids=["seed", "generator"])
@pytest.mark.parametrize("shape", [(7, 5), (16, 3, 3, 3)], ids=["2d", "4d"])
def test_initialisers_are_torchs_bit_for_bit(name, generator, shape):
    ref, got = both(EXACT[name], shape, generator=generator)
    same(ref, got)


@pytest.mark.parametrize("shape,groups", [((2, 2, 3), 1), ((4, 2, 3, 3), 2),
                                          ((6, 4, 3, 3, 2), 3), ((3, 5, 4), 1)])
def test_dirac_and_eye_are_torchs(shape, groups):
    ref, got = both(lambda init, t, g: init.dirac_(t, groups), shape)
    same(ref, got)
    ref, got = both(lambda init, t, g: init.eye_(t.view(t.shape[0], -1)), shape)
    same(ref, got)


def test_zero_element_tensors_warn_as_torch():
    for name in ("kaiming_uniform_", "kaiming_normal_"):
        ref, got = both(EXACT[name], (0, 3))
        same(ref, got)
        assert got[4] == [("UserWarning", "Initializing zero-element tensors is a no-op")]


def test_deprecated_names_warn_as_torch():
    ref, got = both(lambda init, t, g: init.xavier_uniform(t), (3, 4))
    same(ref, got)
    assert got[4] == [("FutureWarning", "`nn.init.xavier_uniform` is now deprecated in favor "
                       "of `nn.init.xavier_uniform_`.")]
    assert set(gradviz.nn.init.__all__) == set(torch.nn.init.__all__)


ERRORS = {
    "fan_1d": lambda init, m: init.xavier_uniform_(m.empty(3)),
    "mode": lambda init, m: init.kaiming_normal_(m.empty(3, 3), mode="fan"),
    "gain": lambda init, m: init.calculate_gain("swish"),
    "slope": lambda init, m: init.calculate_gain("leaky_relu", True),
    "eye_3d": lambda init, m: init.eye_(m.empty(2, 2, 2)),
    "dirac_2d": lambda init, m: init.dirac_(m.empty(2, 2)),
    "dirac_groups": lambda init, m: init.dirac_(m.empty(3, 2, 2), groups=2),
    "orthogonal_1d": lambda init, m: init.orthogonal_(m.empty(3)),
    "sparse_3d": lambda init, m: init.sparse_(m.empty(2, 2, 2), 0.1),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_are_torchs(case):
    out = []
    for mod in (torch, gradviz):
        with pytest.raises(Exception) as err:
            ERRORS[case](mod.nn.init, mod)
        out.append((type(err.value).__name__, str(err.value)))
    assert out[1] == out[0]


def test_gains_are_torchs():
    names = ["linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]
    for mod in (torch, gradviz):
        assert [mod.nn.init.calculate_gain(n) for n in names] + [
            mod.nn.init.calculate_gain("leaky_relu", 0.2)] == [
            torch.nn.init.calculate_gain(n) for n in names] + [
            torch.nn.init.calculate_gain("leaky_relu", 0.2)]
