"""torch.optim and torch.optim.lr_scheduler against torch 2.13: the updates (bit for bit, given
the same gradients), `_version` counts, state_dict structure and round trip, parameter groups,
errors and the arguments gradviz refuses; the schedulers' learning rates over 100 steps."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402
from gradviz.optim import _functional  # noqa: E402

CONFIGS = [
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.01, "dampening": 0.1}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "maximize": True, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.5}),
    ("RMSprop", {}),
    ("RMSprop", {"momentum": 0.9, "centered": True, "weight_decay": 0.01}),
    ("RMSprop", {"alpha": 0.9, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.1}),
]
IDS = [f"{name}-{'-'.join(kw) or 'defaults'}" for name, kw in CONFIGS]


def train(mod, name, kw, steps=100, dtype=np.float32):
    """Feed both backends the same gradients (computed in NumPy from the parameters' values),
    so that only the optimizer's arithmetic is compared."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((37, 13)).astype(dtype)
    b0 = rng.standard_normal(13).astype(dtype)
    noise = rng.standard_normal((steps, 37, 13)).astype(dtype)
    w = mod.nn.Parameter(mod.tensor(w0))
    b = mod.nn.Parameter(mod.tensor(b0))
    opt = getattr(mod.optim, name)([w, b], **kw)
    for i in range(steps):
        opt.zero_grad()
        w.grad = mod.tensor((np.sin(w.detach().numpy() * dtype(3)) + noise[i]).astype(dtype))
        b.grad = mod.tensor(noise[i, 0] * dtype(0.1))
        opt.step()
    return opt, w, b


def torch_sqrt(a):
    return torch.from_numpy(np.ascontiguousarray(a)).sqrt().numpy()


def same_bits(x, y):
    x, y = np.asarray(x), np.asarray(y)
    assert x.dtype == y.dtype
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), np.abs(x - y).max()


@pytest.mark.parametrize("name,kw", CONFIGS, ids=IDS)
def test_update_is_torchs_bit_for_bit_given_the_same_square_root(name, kw, monkeypatch):
    # The only operation computed differently is the square root (torch's CPU build takes it
    # from MKL, not correctly rounded): given torch's square root, every bit agrees.
    monkeypatch.setattr(_functional, "sqrt", torch_sqrt)
    _, tw, tb = train(torch, name, kw)
    _, gw, gb = train(gradviz, name, kw)
    same_bits(tw.detach().numpy(), gw.detach().numpy())
    same_bits(tb.detach().numpy(), gb.detach().numpy())


@pytest.mark.parametrize("name,kw", CONFIGS, ids=IDS)
def test_update_matches_torch_within_an_ulp_per_step(name, kw):
    topt, tw, tb = train(torch, name, kw)
    gopt, gw, gb = train(gradviz, name, kw)
    if name == "SGD":
        same_bits(tw.detach().numpy(), gw.detach().numpy())
    np.testing.assert_allclose(gw.detach().numpy(), tw.detach().numpy(), rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(gb.detach().numpy(), tb.detach().numpy(), rtol=1e-5, atol=2e-6)
    assert (gw._version, gb._version) == (tw._version, tb._version)
    check_state_dicts(topt.state_dict(), gopt.state_dict())


def test_float64_parameters_stay_float64():
    _, tw, _ = train(torch, "Adam", {}, steps=5, dtype=np.float64)
    _, gw, _ = train(gradviz, "Adam", {}, steps=5, dtype=np.float64)
    assert gw.dtype == gradviz.float64
    np.testing.assert_allclose(gw.detach().numpy(), tw.detach().numpy(), rtol=1e-14)


def _versions(mod):
    mod.manual_seed(0)
    lin = mod.nn.Linear(1, 4)
    out = [lin.weight._version]
    for name, kw in [("Adam", {"lr": 0.1}), ("AdamW", {"amsgrad": True}),
                     ("SGD", {"lr": 0.1, "momentum": 0.9}),
                     ("RMSprop", {"momentum": 0.9, "centered": True}), ("Adagrad", {})]:
        opt = getattr(mod.optim, name)(lin.parameters(), **kw)
        for _ in range(3):
            opt.zero_grad()
            lin(mod.ones(2, 1)).sum().backward()
            opt.step()
        out.append((name, lin.weight._version, lin.bias._version,
                    {k: v._version for k, v in opt.state[lin.weight].items()}))
    return out


def test_versions_of_parameters_and_state_tensors_are_torchs():
    assert _versions(gradviz) == _versions(torch)


def check_state_dicts(ref, got):
    assert ref["param_groups"] == got["param_groups"]
    assert list(ref["state"]) == list(got["state"])
    for i, tstate in ref["state"].items():
        gstate = got["state"][i]
        assert list(tstate) == list(gstate)
        for key, tv in tstate.items():
            gv = gstate[key]
            assert type(gv).__name__ == type(tv).__name__ == "Tensor"
            assert str(gv.dtype) == str(tv.dtype) and tuple(gv.shape) == tuple(tv.shape)
            np.testing.assert_allclose(gv.numpy(), tv.numpy(), rtol=1e-5, atol=1e-5)


def test_state_dict_names_and_layout():
    w = gradviz.nn.Parameter(gradviz.tensor([1.0, 2.0]))
    opt = gradviz.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"]
    assert repr(sd["state"]) == ("{0: {'step': tensor(1.), 'exp_avg': tensor([0.2000, 0.4000]), "
                                 "'exp_avg_sq': tensor([0.0040, 0.0160])}}")
    assert sd["param_groups"] == [{
        "lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0, "amsgrad": False,
        "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
        "fused": None, "decoupled_weight_decay": False, "params": [0]}]


@pytest.mark.parametrize("name,kw", [CONFIGS[1], CONFIGS[4], CONFIGS[9], CONFIGS[12]],
                         ids=["SGD", "Adam", "RMSprop", "Adagrad"])
def test_load_state_dict_resumes_exactly(name, kw):
    full, fw, _ = train(gradviz, name, kw, steps=6)
    first, w, b = train(gradviz, name, kw, steps=3)
    # A fresh optimizer over the same parameters continues from the saved state.
    sd = first.state_dict()
    resumed = getattr(gradviz.optim, name)([w, b], **kw)
    resumed.load_state_dict(sd)
    assert resumed.state_dict()["param_groups"] == sd["param_groups"]
    rng = np.random.default_rng(0)
    rng.standard_normal((37, 13)), rng.standard_normal(13)
    noise = rng.standard_normal((6, 37, 13)).astype(np.float32)
    for i in range(3, 6):
        resumed.zero_grad()
        w.grad = gradviz.tensor((np.sin(w.detach().numpy() * np.float32(3)) + noise[i])
                                .astype(np.float32))
        b.grad = gradviz.tensor(noise[i, 0] * np.float32(0.1))
        resumed.step()
    same_bits(fw.detach().numpy(), w.detach().numpy())


def both(fn):
    """fn(backend) on torch and on gradviz: results, or (error type, message) pairs."""
    out = []
    for mod in (torch, gradviz):
        try:
            out.append(fn(mod))
        except Exception as exc:  # noqa: BLE001 - the error is the observable
            out.append((type(exc).__name__, str(exc)))
    return out


def _params(mod, n=2):
    return [mod.nn.Parameter(mod.ones(2) * (i + 1)) for i in range(n)]


ERRORS = {
    "empty": lambda m: m.optim.SGD([], lr=0.1),
    "tensor": lambda m: m.optim.Adam(m.ones(2)),
    "set": lambda m: m.optim.SGD([{"params": set(_params(m))}], lr=0.1),
    "negative_lr": lambda m: m.optim.Adam(_params(m), lr=-1.0),
    "beta": lambda m: m.optim.Adam(_params(m), betas=(1.0, 0.999)),
    "beta_ints": lambda m: m.optim.Adam(_params(m), betas=(0, 0)),
    "eps": lambda m: m.optim.RMSprop(_params(m), eps=-1.0),
    "alpha": lambda m: m.optim.RMSprop(_params(m), alpha=-0.5),
    "momentum": lambda m: m.optim.SGD(_params(m), lr=0.1, momentum=-0.5),
    "nesterov": lambda m: m.optim.SGD(_params(m), lr=0.1, nesterov=True),
    "lr_decay": lambda m: m.optim.Adagrad(_params(m), lr_decay=-1.0),
    "accumulator": lambda m: m.optim.Adagrad(_params(m), initial_accumulator_value=-1.0),
    "weight_decay": lambda m: m.optim.AdamW(_params(m), weight_decay=-1.0),
    "non_leaf": lambda m: m.optim.SGD([m.ones(2, requires_grad=True) * 2], lr=0.1),
    "not_tensor": lambda m: m.optim.SGD([1.0], lr=0.1),
    "shared": lambda m: (lambda p: m.optim.SGD([{"params": p}, {"params": p[:1]}], lr=0.1))(
        _params(m)),
    "group_not_dict": lambda m: m.optim.SGD(_params(m), lr=0.1).add_param_group([1]),
    "load_groups": lambda m: m.optim.SGD(_params(m), lr=0.1).load_state_dict(
        {"state": {}, "param_groups": []}),
    "load_sizes": lambda m: m.optim.SGD(_params(m), lr=0.1).load_state_dict(
        {"state": {}, "param_groups": [{"lr": 0.1, "params": [0]}]}),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_are_torchs(case):
    ref, got = both(ERRORS[case])
    assert isinstance(ref, tuple), ref
    assert got == ref


@pytest.mark.parametrize("name,arg,value", [
    ("Adam", "foreach", True), ("Adam", "fused", True), ("Adam", "capturable", True),
    ("Adam", "differentiable", True), ("AdamW", "fused", True), ("SGD", "foreach", True),
    ("SGD", "differentiable", True), ("SGD", "fused", True), ("RMSprop", "capturable", True),
    ("RMSprop", "foreach", True), ("Adagrad", "fused", True), ("Adagrad", "foreach", True)])
def test_other_kernels_are_refused(name, arg, value):
    p = gradviz.nn.Parameter(gradviz.ones(2))
    with pytest.raises(NotImplementedError) as err:
        getattr(gradviz.optim, name)([p], lr=0.1, **{arg: value})
    assert str(err.value) == (f"gradviz: torch.optim.{name}({arg}={value!r}) is not implemented "
                              "by gradviz's core; run with --backend torch to use PyTorch")


def test_defaults_of_the_plain_kernels_are_accepted():
    p = gradviz.nn.Parameter(gradviz.ones(2))
    gradviz.optim.Adam([p], foreach=False, fused=False, capturable=False, differentiable=False)
    gradviz.optim.SGD([p], lr=0.1, foreach=None, fused=None)


def test_tensor_lr_and_group_options_are_refused():
    p = gradviz.nn.Parameter(gradviz.ones(2))
    with pytest.raises(NotImplementedError, match=r"torch.optim.Adam\(lr='a Tensor'\)"):
        gradviz.optim.Adam([p], lr=gradviz.tensor(0.1))
    with pytest.raises(NotImplementedError, match=r"torch.optim.SGD\(foreach=True\)"):
        gradviz.optim.SGD([{"params": [p], "foreach": True}], lr=0.1)
    with pytest.raises(NotImplementedError, match=r"torch.optim.Adam\(betas='Tensors'\)"):
        gradviz.optim.Adam([p], betas=(gradviz.tensor(0.9), gradviz.tensor(0.99)))


def _groups(mod):
    a, b, c = _params(mod, 3)
    opt = mod.optim.Adam([{"params": [a], "lr": 0.5}, {"params": b, "betas": (0.5, 0.9)}],
                         lr=0.1)
    opt.add_param_group({"params": [c], "weight_decay": 0.1, "amsgrad": True})
    for p in (a, b, c):
        (p * p).sum().backward()
    opt.step()
    return {"groups": opt.state_dict()["param_groups"], "repr": repr(opt),
            "values": [p.detach().numpy().tolist() for p in (a, b, c)],
            "state": {k: list(v) for k, v in opt.state_dict()["state"].items()}}


def test_param_groups_options_repr_and_add_param_group():
    ref, got = both(_groups)
    assert got == ref


def _zero_grad(mod):
    w = mod.nn.Parameter(mod.tensor([1.0, 2.0]))
    opt = mod.optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    g = w.grad
    opt.zero_grad(set_to_none=False)
    kept = (w.grad is g, w.grad.tolist(), g._version)
    opt.zero_grad()
    return kept, w.grad


def test_zero_grad_in_place_and_to_none():
    ref, got = both(_zero_grad)
    assert got == ref == ((True, [0.0, 0.0], 1), None)


def _outside_graph(mod):
    w = mod.nn.Parameter(mod.tensor([1.0, 2.0]))
    opt = mod.optim.Adam([w], lr=0.1)
    calls = []

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        calls.append(mod.is_grad_enabled())
        return loss

    with mod.no_grad():
        loss = opt.step(closure)
    return (loss.detach().item(), calls, w.is_leaf, w.grad_fn, w.requires_grad, w._version,
            mod.is_grad_enabled())


def test_step_runs_outside_the_graph_and_returns_the_closures_loss():
    ref, got = both(_outside_graph)
    assert got == ref
    assert got[:3] == (5.0, [True], True)


# ----- learning-rate schedulers ------------------------------------------------------------

SCHEDULERS = {
    "StepLR": lambda L, o: L.StepLR(o, 7, gamma=0.3),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, [10, 30, 30, 80], gamma=0.7),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, 0.97),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=23, eta_min=0.001),
    "LambdaLR": lambda L, o: L.LambdaLR(o, [lambda e: 0.95 ** e, lambda e: 1 / (e + 1)]),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, max_lr=[0.5, 1.0], total_steps=100),
    "OneCycleLR-3-linear": lambda L, o: L.OneCycleLR(
        o, max_lr=0.5, epochs=10, steps_per_epoch=10, three_phase=True,
        anneal_strategy="linear", div_factor=10.0),
}


def schedule(mod, make, opt_name="SGD", steps=100):
    ps = _params(mod)
    opt = getattr(mod.optim, opt_name)(
        [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)], lr=0.1, momentum=0.9
    ) if opt_name == "SGD" else getattr(mod.optim, opt_name)(
        [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)])
    sched = make(mod.optim.lr_scheduler, opt)
    seen = [(sched.get_last_lr(), sched.last_epoch)]
    for _ in range(steps):
        opt.step()
        sched.step()
        seen.append((sched.get_last_lr(), sched.last_epoch,
                     [g.get("momentum", g.get("betas")) for g in opt.param_groups],
                     [g["lr"] for g in opt.param_groups]))
    state = sched.state_dict()
    return seen, sorted(state), state["_step_count"], state["base_lrs"]


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_values_are_torchs_over_100_steps(name):
    ref, got = both(lambda m: schedule(m, SCHEDULERS[name]))
    assert got == ref  # exact float equality: the same formulas in the same order


def test_one_cycle_cycles_adams_beta1():
    ref, got = both(lambda m: schedule(m, SCHEDULERS["OneCycleLR"], "Adam"))
    assert got == ref


def _closed_form(mod):
    opt = mod.optim.SGD(_params(mod), lr=0.1)
    out = []
    for make in (lambda L: L.StepLR(opt, 3), lambda L: L.MultiStepLR(opt, [2, 5]),
                 lambda L: L.ExponentialLR(opt, 0.5), lambda L: L.CosineAnnealingLR(opt, 10)):
        sched = make(mod.optim.lr_scheduler)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.step(7)
        out.append((sched.get_last_lr(), [str(w.message)[:40] for w in caught]))
    return out


def test_step_with_an_epoch_uses_the_closed_form_and_warns():
    ref, got = both(_closed_form)
    assert got == ref


def _warnings(mod):
    opt = mod.optim.SGD(_params(mod), lr=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched = mod.optim.lr_scheduler.StepLR(opt, 2)
        sched.step()          # before optimizer.step(): torch warns
        sched.get_lr()        # outside step(): torch warns
    return [str(w.message) for w in caught]


def test_scheduler_warnings_are_torchs():
    ref, got = both(_warnings)
    assert got == ref and len(got) == 2


SCHED_ERRORS = {
    "not_optimizer": lambda m: m.optim.lr_scheduler.StepLR(object(), 2),
    "resume": lambda m: m.optim.lr_scheduler.StepLR(m.optim.SGD(_params(m), lr=0.1), 2,
                                                    last_epoch=3),
    "lambdas": lambda m: m.optim.lr_scheduler.LambdaLR(m.optim.SGD(_params(m), lr=0.1),
                                                       [lambda e: 1, lambda e: 1]),
    "total": lambda m: m.optim.lr_scheduler.OneCycleLR(m.optim.SGD(_params(m), lr=0.1), 1.0),
    "pct": lambda m: m.optim.lr_scheduler.OneCycleLR(m.optim.SGD(_params(m), lr=0.1), 1.0,
                                                     total_steps=10, pct_start=2.0),
    "overrun": lambda m: [s.step() for s in [m.optim.lr_scheduler.OneCycleLR(
        m.optim.SGD(_params(m), lr=0.1), 1.0, total_steps=3)] for _ in range(4)],
    "no_momentum": lambda m: m.optim.lr_scheduler.OneCycleLR(
        m.optim.Adagrad(_params(m)), 1.0, total_steps=3),
}


@pytest.mark.parametrize("case", list(SCHED_ERRORS))
def test_scheduler_errors_are_torchs(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref, got = both(SCHED_ERRORS[case])
    assert isinstance(ref, tuple), ref
    assert got == ref


def test_scheduler_state_dict_round_trip():
    def run(mod):
        opt = mod.optim.SGD(_params(mod), lr=0.1)
        sched = mod.optim.lr_scheduler.CosineAnnealingLR(opt, 10)
        for _ in range(4):
            opt.step()
            sched.step()
        opt2 = mod.optim.SGD(_params(mod), lr=0.1)
        sched2 = mod.optim.lr_scheduler.CosineAnnealingLR(opt2, 10)
        sched2.load_state_dict(sched.state_dict())
        opt2.load_state_dict(opt.state_dict())
        opt2.step()
        sched2.step()
        return sched2.get_last_lr(), sched2.last_epoch, opt2.param_groups[0]["lr"]
    ref, got = both(run)
    assert got == ref


# ----- shapes, custom optimizers, names gradviz lacks ----------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

SHAPES = st.sampled_from([(), (0,), (1,), (7,), (3, 0), (2, 3), (17, 5), (2, 1, 33)])


@settings(max_examples=30, deadline=None)
@given(shape=SHAPES, config=st.sampled_from(CONFIGS), seed=st.integers(0, 2 ** 16))
def test_any_shape_updates_as_torch(shape, config, seed):
    name, kw = config
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal(shape).astype(np.float32)
    grads = rng.standard_normal((4,) + shape).astype(np.float32)
    out = []
    for mod in (torch, gradviz):
        p = mod.nn.Parameter(mod.tensor(p0))
        opt = getattr(mod.optim, name)([p], **kw)
        for g in grads:
            p.grad = mod.tensor(g)
            opt.step()
        out.append((p.detach().numpy().copy(), p._version, tuple(p.shape)))
    (ref, ref_version, ref_shape), (got, got_version, got_shape) = out
    assert (got_version, got_shape) == (ref_version, ref_shape)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


class PlainGD:
    """A user-written optimizer, as tutorials write one."""

    @staticmethod
    def make(mod):
        class GD(mod.optim.Optimizer):
            def __init__(self, params, lr=0.1):
                super().__init__(params, {"lr": lr})

            @mod.no_grad()
            def step(self):
                for group in self.param_groups:
                    for p in group["params"]:
                        state = self.state[p]
                        state["calls"] = state.get("calls", 0) + 1
                        p.add_(p.grad, alpha=-group["lr"])
        return GD


def test_a_user_written_optimizer_works_as_on_torch():
    def run(mod):
        w = mod.nn.Parameter(mod.tensor([1.0, -2.0]))
        opt = PlainGD.make(mod)([w], lr=0.25)
        for _ in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        return w.tolist(), w._version, opt.state_dict(), repr(opt)
    ref, got = both(run)
    assert got == ref


def test_optimizers_gradviz_lacks_say_so():
    with pytest.raises(AttributeError) as err:
        gradviz.optim.NAdam    # noqa: B018
    assert str(err.value).startswith("gradviz's core does not implement torch.optim.NAdam "
                                     "(PyTorch 2.13")
    assert "run with --backend torch" in str(err.value)
