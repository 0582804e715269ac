"""torch.optim and torch.optim.lr_scheduler against torch 2.13: the updates (bit for bit, given
the same gradients), `_version` counts, state_dict structure and round trip, parameter groups,
errors and the arguments gradviz refuses; the schedulers' learning rates over 100 steps."""

import importlib
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


def test_a_nan_lr_passes_sgds_check_only_as_in_torch():
    # SGD writes its check `lr < 0.0`, the others `not 0.0 <= lr`.
    nan = float("nan")
    ref, got = both(lambda m: [m.optim.SGD(_params(m), lr=nan).defaults["lr"] != nan,
                               m.optim.Adam(_params(m), lr=nan)])
    assert got == ref == ("ValueError", "Invalid learning rate: nan")
    ref, got = both(lambda m: m.optim.SGD(_params(m), lr=nan).defaults["momentum"])
    assert got == ref == 0


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


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_constructor_arguments_are_torchs(name):
    # Every argument torch's constructor has, with its kind and default: each is either
    # implemented or refused (test_other_kernels_are_refused).
    import inspect
    ref = inspect.signature(getattr(torch.optim, name).__init__).parameters
    got = inspect.signature(getattr(gradviz.optim, name).__init__).parameters
    assert [(p.name, p.kind, p.default) for p in got.values()] == [
        (p.name, p.kind, p.default) for p in ref.values()]


def _names(args):
    return [getattr(a, "__name__", a) for a in args]


def _step_hooks(mod):
    w = mod.nn.Parameter(mod.tensor([1.0, 2.0]))
    opt = mod.optim.SGD([w], lr=0.5)
    calls = []

    def pre(o, args, kwargs):
        calls.append(("pre", o is opt, _names(args[1:]), sorted(kwargs), w.tolist()))
        if kwargs.get("closure") is None:
            return args, {"closure": closure}
        return None

    def post(o, args, kwargs):
        calls.append(("post", o is opt, _names(args[1:]), sorted(kwargs), w.tolist()))

    def closure():
        calls.append(("closure", mod.is_grad_enabled()))
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    optimizer_module = importlib.import_module(mod.__name__ + ".optim.optimizer")
    g_pre = optimizer_module.register_optimizer_step_pre_hook(
        lambda o, a, k: calls.append(("global pre", type(o).__name__)))
    g_post = optimizer_module.register_optimizer_step_post_hook(
        lambda o, a, k: calls.append(("global post", type(o).__name__)))
    h_pre = opt.register_step_pre_hook(pre)
    h_post = opt.register_step_post_hook(post)
    loss = opt.step()
    h_pre.remove()
    g_pre.remove()
    g_post.remove()
    opt.step(closure)
    h_post.remove()
    opt.step(closure)
    bad = opt.register_step_pre_hook(lambda o, a, k: 3)
    try:
        opt.step(closure)
    except RuntimeError as exc:
        calls.append(("error", str(exc).split(" must return")[1]))
    bad.remove()
    return calls, loss.item(), w.tolist(), w._version


def test_step_hooks_are_torchs():
    ref, got = both(_step_hooks)
    assert got == ref
    assert [c[0] for c in got[0]][:5] == ["global pre", "pre", "closure", "post", "global post"]


def _state_dict_hooks(mod):
    w = mod.nn.Parameter(mod.tensor([1.0, 2.0]))
    opt = mod.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("sd pre"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("sd pre first"), prepend=True)

    def post(o, sd):
        calls.append(("sd post", sorted(sd)))
        sd["param_groups"][0]["note"] = "kept"

    opt.register_state_dict_post_hook(post)
    sd = opt.state_dict()

    def load_pre(o, sd):
        calls.append(("load pre", sd["param_groups"][0]["note"]))
        sd = dict(sd)
        sd["param_groups"] = [dict(sd["param_groups"][0], lr=0.25)]
        return sd

    opt.register_load_state_dict_pre_hook(load_pre)
    opt.register_load_state_dict_post_hook(
        lambda o: calls.append(("load post", o.param_groups[0]["lr"])))
    opt.load_state_dict(sd)
    return calls, opt.param_groups[0]["note"], sd["param_groups"][0]["lr"]


def test_state_dict_hooks_are_torchs():
    ref, got = both(_state_dict_hooks)
    assert got == ref
    assert got[0][0:2] == ["sd pre first", "sd pre"]


def _named(mod):
    lin = mod.nn.Linear(2, 3)
    opt = mod.optim.AdamW(lin.named_parameters(), lr=0.1)
    lin(mod.ones(1, 2)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    out = [sd["param_groups"], list(sd["state"])]
    opt2 = mod.optim.AdamW(mod.nn.Linear(2, 3).named_parameters(), lr=0.3)
    opt2.load_state_dict(sd)
    out.append(opt2.param_groups[0]["param_names"])
    for bad in ([("a", lin.weight), lin.bias], [{"params": [lin.weight]}]):
        try:
            opt.add_param_group({"params": bad} if isinstance(bad[0], tuple) else bad[0])
        except ValueError as exc:
            out.append(str(exc))
    return out


def test_named_parameters_keep_their_names_as_torch():
    ref, got = both(_named)
    assert got == ref
    assert got[0][0]["param_names"] == ["weight", "bias"]


def _indices_with_duplicates(mod):
    a, b, c = _params(mod, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = mod.optim.SGD([{"params": [a, a, b]}, {"params": [c]}], lr=0.1, momentum=0.5)
    for p in (a, b, c):
        (p * p).sum().backward()
    opt.step()
    sd = opt.state_dict()
    return [g["params"] for g in sd["param_groups"]], sorted(sd["state"])


def test_state_dict_numbers_parameters_as_torch_with_duplicates():
    ref, got = both(_indices_with_duplicates)
    assert got == ref == ([[1, 1, 2], [3]], [1, 2, 3])


def _load_casts(mod):
    w = mod.nn.Parameter(mod.ones(2, dtype=mod.float64))
    opt = mod.optim.Adam([w])
    sd = {"state": {0: {"step": mod.tensor(3.0), "exp_avg": mod.ones(2),
                        "exp_avg_sq": mod.ones(2), "extra": [mod.ones(1)]}},
          "param_groups": [dict(opt.state_dict()["param_groups"][0])]}
    opt.load_state_dict(sd)
    st = opt.state[w]
    return {k: (str(v.dtype) if hasattr(v, "dtype") else [str(x.dtype) for x in v])
            for k, v in st.items()}


def test_load_state_dict_casts_state_but_step_to_the_parameters_dtype():
    ref, got = both(_load_casts)
    assert got == ref
    assert got["step"] == "torch.float32" and got["extra"] == ["torch.float64"]


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
    "MultiplicativeLR": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.9 + 0.001 * e),
    "ConstantLR": lambda L, o: L.ConstantLR(o, factor=0.3, total_iters=17),
    "LinearLR": lambda L, o: L.LinearLR(o, start_factor=0.05, end_factor=0.7, total_iters=41),
    "PolynomialLR": lambda L, o: L.PolynomialLR(o, total_iters=60, power=1.7),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(
        o, T_0=7, T_mult=2, eta_min=0.001),
    "CosineAnnealingWarmRestarts-1": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=9),
    "SequentialLR": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, start_factor=0.1, total_iters=10), L.ExponentialLR(o, 0.95),
            L.CosineAnnealingLR(o, T_max=20)], milestones=[10, 40]),
    "SequentialLR-nested": lambda L, o: L.SequentialLR(
        o, [L.ConstantLR(o, factor=0.5, total_iters=3),
            L.SequentialLR(o, [L.StepLR(o, 5, 0.5), L.PolynomialLR(o, 30)], milestones=[20])],
        milestones=[8]),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler(
        [L.LinearLR(o, start_factor=0.2, total_iters=10), L.ExponentialLR(o, 0.98)]),
    "CyclicLR": lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=7,
                                        step_size_down=5, mode="triangular2"),
    "CyclicLR-exp_range": lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=9,
                                                  mode="exp_range", gamma=0.99),
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


def _sched_state(state):
    # Nested schedulers' states are compared by their keys; functions are not comparable.
    return {k: (sorted(v) if isinstance(v, dict) else
                [sorted(x) for x in v] if k == "_schedulers" else
                None if callable(v) else v) for k, v in state.items()}


@pytest.mark.parametrize("name", [n for n in SCHEDULERS if "Sequential" in n or "Chained" in n
                                  or "Cyclic" in n or "Warm" in n])
def test_scheduler_state_dicts_hold_torchs_values(name):
    def run(mod):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ps = _params(mod)
            opt = mod.optim.SGD([{"params": [p]} for p in ps], lr=0.1, momentum=0.9)
            sched = SCHEDULERS[name](mod.optim.lr_scheduler, opt)
            for _ in range(13):
                opt.step()
                sched.step()
        return _sched_state(sched.state_dict())
    ref, got = both(run)
    assert got == ref


def _plateau(mod, **kw):
    opt = mod.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(
        _params(mod))], lr=0.1)
    sched = mod.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.94, 0.96, 0.97, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5] * 4
    seen = []
    for m in metrics:
        opt.step()
        sched.step(m)
        seen.append((sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter,
                     sched.best, sched.last_epoch))
    state = sched.state_dict()
    sched.load_state_dict(state)
    return seen, sorted(state), sched.in_cooldown


@pytest.mark.parametrize("kw", [
    {"patience": 2}, {"mode": "max", "factor": 0.5, "patience": 1, "cooldown": 2},
    {"threshold_mode": "abs", "threshold": 0.02, "patience": 0, "min_lr": [0.01, 0.05]},
    {"mode": "max", "threshold_mode": "abs", "patience": 1, "eps": 0.05, "factor": 0.3},
    {"threshold": 0, "patience": 1}],
    ids=["min-rel", "max-rel-cooldown", "min-abs-min_lrs", "max-abs-eps", "ties"])
def test_reduce_lr_on_plateau_is_torchs(kw):
    ref, got = both(lambda m: _plateau(m, **kw))
    assert got == ref


def _warm_restarts_epochs(mod):
    opt = mod.optim.SGD(_params(mod), lr=0.1)
    sched = mod.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2)
    out = []
    for epoch in (0.5, 3, 7.25, 16, 40.5, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched.step(epoch)
        out.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
    return out


def test_warm_restarts_with_fractional_epochs_is_torchs():
    ref, got = both(_warm_restarts_epochs)
    assert got == ref


def test_one_cycle_cycles_adams_beta1():
    ref, got = both(lambda m: schedule(m, SCHEDULERS["OneCycleLR"], "Adam"))
    assert got == ref


def _closed_form(mod):
    opt = mod.optim.SGD(_params(mod), lr=0.1)
    out = []
    for make in (lambda L: L.StepLR(opt, 3), lambda L: L.MultiStepLR(opt, [2, 5]),
                 lambda L: L.ExponentialLR(opt, 0.5), lambda L: L.CosineAnnealingLR(opt, 10),
                 lambda L: L.ConstantLR(opt, 0.5, 4), lambda L: L.LinearLR(opt, 0.2, 0.9, 6),
                 lambda L: L.PolynomialLR(opt, 8, 2.0)):
        sched = make(mod.optim.lr_scheduler)
        for epoch in (3, 7, 11):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sched.step(epoch)
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
    "constant_factor": lambda m: m.optim.lr_scheduler.ConstantLR(
        m.optim.SGD(_params(m), lr=0.1), factor=1.5),
    "linear_start": lambda m: m.optim.lr_scheduler.LinearLR(
        m.optim.SGD(_params(m), lr=0.1), start_factor=0),
    "linear_end": lambda m: m.optim.lr_scheduler.LinearLR(
        m.optim.SGD(_params(m), lr=0.1), end_factor=2),
    "multiplicative_not_callable": lambda m: m.optim.lr_scheduler.MultiplicativeLR(
        m.optim.SGD(_params(m), lr=0.1), 0.5),
    "warm_T_0": lambda m: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        m.optim.SGD(_params(m), lr=0.1), T_0=0),
    "warm_T_mult": lambda m: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        m.optim.SGD(_params(m), lr=0.1), T_0=3, T_mult=1.5),
    "warm_eta": lambda m: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        m.optim.SGD(_params(m), lr=0.1), T_0=3, eta_min="0"),
    "warm_negative_epoch": lambda m: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        m.optim.SGD(_params(m), lr=0.1), T_0=3).step(-1),
    "plateau_factor": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(
        m.optim.SGD(_params(m), lr=0.1), factor=1.0),
    "plateau_mode": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(
        m.optim.SGD(_params(m), lr=0.1), mode="up"),
    "plateau_threshold_mode": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(
        m.optim.SGD(_params(m), lr=0.1), threshold_mode="x"),
    "plateau_min_lrs": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(
        m.optim.SGD(_params(m), lr=0.1), min_lr=[0.1, 0.2]),
    "plateau_not_optimizer": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(None),
    "sequential_empty": lambda m: m.optim.lr_scheduler.SequentialLR(
        m.optim.SGD(_params(m), lr=0.1), [], []),
    "sequential_milestones": lambda m: (lambda o: m.optim.lr_scheduler.SequentialLR(
        o, [m.optim.lr_scheduler.StepLR(o, 2)], [3]))(m.optim.SGD(_params(m), lr=0.1)),
    "sequential_plateau": lambda m: (lambda o: m.optim.lr_scheduler.SequentialLR(
        o, [m.optim.lr_scheduler.ReduceLROnPlateau(o)], []))(m.optim.SGD(_params(m), lr=0.1)),
    "sequential_no_optimizer": lambda m: m.optim.lr_scheduler.SequentialLR(
        m.optim.SGD(_params(m), lr=0.1), [object()], []),
    "chained_empty": lambda m: m.optim.lr_scheduler.ChainedScheduler([]),
    "cyclic_mode": lambda m: m.optim.lr_scheduler.CyclicLR(
        m.optim.SGD(_params(m), lr=0.1), 0.1, 1.0, mode="sine"),
    "cyclic_no_momentum": lambda m: m.optim.lr_scheduler.CyclicLR(
        m.optim.Adagrad(_params(m)), 0.1, 1.0),
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
