"""Module machinery and the container / conv / pooling modules against torch 2.13: hooks and
the graph they leave, state_dict order and load_state_dict's errors, registration rules,
traversal, train/eval, zero_grad, and repr, each case run on both backends."""

import warnings

import numpy as np
import pytest

try:
    from . import diffcases as D
    from .test_torch_diff import compare
except ImportError:
    import diffcases as D
    from test_torch_diff import compare

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def run(fn, backend):
    try:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            result = fn(backend)
        # (torch warns about padding='same' with even kernels once per process)
        return [result, [D.Warn(w.category.__name__, str(w.message)) for w in got
                         if not str(w.message).startswith("Using padding='same'")]]
    except Exception as exc:  # noqa: BLE001 - the error is the observable
        return D.Err(exc)


def check(fn):
    ref = run(fn, torch)
    problems = compare(ref, run(fn, gradviz))
    assert not problems, "\n".join(problems)
    return ref


def linear(t, n_in, n_out, seed=0):
    """A Linear with deterministic weights (the two backends' generators differ)."""
    m = t.nn.Linear(n_in, n_out)
    rng = np.random.default_rng(seed)
    with t.no_grad():
        m.weight.copy_(t.tensor(rng.uniform(-1, 1, (n_out, n_in)).tolist()))
        m.bias.copy_(t.tensor(rng.uniform(-1, 1, n_out).tolist()))
    return m


def x_in(t, rg=True):
    return t.tensor(np.linspace(-1, 1, 8).reshape(2, 4).tolist(), requires_grad=rg)


def grads(hook_log):
    return [[D.gval(g) if hasattr(g, "detach") else g for g in part] for part in hook_log]


# ----- hooks ---------------------------------------------------------------------------------

def test_forward_pre_hook_and_forward_hook_may_replace_args_and_output():
    def case(t):
        m = linear(t, 4, 3)
        log = []
        m.register_forward_pre_hook(lambda mod, args: log.append("pre") or (args[0] * 2,))
        m.register_forward_hook(lambda mod, args, out: log.append("post") or out + 1)
        first = m.register_forward_hook(lambda mod, args, out: log.append("first"),
                                        prepend=True)
        y = m(x_in(t))
        first.remove()
        z = m(x_in(t))
        return [log, D.val(y), D.graph(y.grad_fn), D.val(z)]
    check(case)


def test_hooks_with_kwargs():
    def case(t):
        class Scale(t.nn.Module):
            def forward(self, x, factor=1.0):
                return x * factor
        m = Scale()
        m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}),
                                    with_kwargs=True)
        seen = []
        m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(dict(kwargs)),
                                with_kwargs=True)
        return [D.val(m(x_in(t), factor=2.0)), seen]
    check(case)


def test_forward_pre_hook_with_kwargs_bad_return():
    def case(t):
        m = linear(t, 4, 3)
        m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
        return D.outcome(lambda: m(x_in(t)))
    assert isinstance(check(case)[0], D.Err)


def test_full_backward_hook_graph_and_gradients():
    def case(t):
        m = linear(t, 4, 3)
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("hook", gi, go)))
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", go)))
        x = x_in(t)
        y = m(x)
        graph = D.graph(y.grad_fn)
        y.backward(D.upstream(t, y))
        return [graph, [(entry[0],) + tuple(grads(entry[1:])) for entry in log],
                D.gval(x.grad), D.gval(m.weight.grad)]
    check(case)


def test_full_backward_hooks_may_replace_gradients():
    def case(t):
        m = linear(t, 4, 3)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
        x = x_in(t)
        m(x).sum().backward()
        return [D.gval(x.grad), D.gval(m.weight.grad), D.gval(m.bias.grad)]
    check(case)


def test_full_backward_hook_when_no_input_requires_grad_warns():
    def case(t):
        m = linear(t, 4, 3)
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, len(go))))
        y = m(x_in(t, rg=False))
        graph = D.graph(y.grad_fn)
        y.sum().backward()
        return [graph, log]
    check(case)


def test_full_backward_hook_wrong_count():
    def case(t):
        m = linear(t, 4, 3)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        x = x_in(t)
        return D.outcome(lambda: m(x).sum().backward())
    assert isinstance(check(case)[0], D.Err)


def test_backward_hooks_through_sequential_order():
    def case(t):
        net = t.nn.Sequential(linear(t, 4, 3, 1), t.nn.Tanh(), linear(t, 3, 2, 2))
        order = []
        for name, mod in net.named_children():
            mod.register_full_backward_hook(lambda m, gi, go, n=name: order.append(n))
            mod.register_forward_hook(lambda m, a, o, n=name: order.append("f" + n))
        x = x_in(t)
        y = net(x)
        graph = D.graph(y.grad_fn)
        y.sum().backward()
        return [order, graph, D.gval(x.grad)]
    check(case)


def test_hook_handles_remove():
    def case(t):
        m = linear(t, 4, 3)
        log = []
        h1 = m.register_forward_hook(lambda *a: log.append(1))
        h2 = m.register_full_backward_hook(lambda *a: log.append(2))
        h1.remove()
        h2.remove()
        y = m(x_in(t))
        y.sum().backward()
        return [log, D.graph(y.grad_fn)]
    check(case)


# ----- state_dict ----------------------------------------------------------------------------

def _model(t):
    class Net(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("steps", t.zeros(2))
            self.body = t.nn.Sequential(linear(t, 4, 3, 1), t.nn.ReLU(), linear(t, 3, 2, 2))
            self.scale = t.nn.Parameter(t.ones(1))
            self.register_buffer("cache", t.ones(1), persistent=False)
            self.head = t.nn.ModuleDict({"out": linear(t, 2, 1, 3)})
    return Net()


def test_state_dict_order_and_values():
    def case(t):
        m = _model(t)
        sd = m.state_dict()
        return [list(sd), [D.val(v) for v in sd.values()], [v.requires_grad for v in sd.values()],
                type(sd).__name__, list(m.state_dict(keep_vars=True))]
    check(case)


def test_load_state_dict_round_trip_and_strict_false():
    def case(t):
        src, dst = _model(t), _model(t)
        with t.no_grad():
            for p in src.parameters():
                p.mul_(2)
        r1 = repr(dst.load_state_dict(src.state_dict()))
        sd = src.state_dict()
        sd["extra"] = t.ones(1)
        del sd["scale"]
        r2 = dst.load_state_dict(sd, strict=False)
        return [r1, list(r2.missing_keys), list(r2.unexpected_keys), repr(r2),
                [D.val(p) for p in dst.parameters()], [p.is_leaf for p in dst.parameters()]]
    check(case)


@pytest.mark.parametrize("kind", ["missing", "unexpected", "both", "shape"])
def test_load_state_dict_errors(kind):
    def case(t):
        m = _model(t)
        sd = m.state_dict()
        if kind in ("missing", "both"):
            del sd["body.0.bias"]
            del sd["steps"]
        if kind in ("unexpected", "both"):
            sd["body.9.weight"] = t.ones(1)
        if kind == "shape":
            sd["scale"] = t.ones(3)
        try:
            m.load_state_dict(sd)
        except RuntimeError as exc:
            return str(exc)
        return "no error"
    check(case)


def test_load_state_dict_not_a_mapping():
    def case(t):
        return D.outcome(lambda: _model(t).load_state_dict([1, 2]))
    check(case)


# ----- registration rules --------------------------------------------------------------------

REGISTRATION = [
    lambda t, m: m.register_buffer("a.b", t.ones(1)),
    lambda t, m: m.register_buffer("", t.ones(1)),
    lambda t, m: m.register_buffer(3, t.ones(1)),
    lambda t, m: m.register_buffer("w", [1.0]),
    lambda t, m: m.register_buffer("training", t.ones(1)),
    lambda t, m: m.register_parameter("p", t.ones(1)),
    lambda t, m: m.register_parameter("p", t.nn.Parameter(t.ones(1)) * 2),
    lambda t, m: m.add_module("x.y", t.nn.ReLU()),
    lambda t, m: m.add_module("x", 3),
    lambda t, m: setattr(m, "weight", t.ones(4, 3)),
    lambda t, m: setattr(m, "weight", None) or list(m.state_dict()),
    lambda t, m: m.__getattr__("nothing"),
]


@pytest.mark.parametrize("k", range(len(REGISTRATION)))
def test_registration_rules(k):
    def case(t):
        m = linear(t, 3, 4)
        return D.outcome(lambda: REGISTRATION[k](t, m))
    check(case)


def test_setattr_moves_between_kinds_and_delattr():
    def case(t):
        m = t.nn.Module()
        m.a = t.nn.Parameter(t.ones(1))
        m.register_buffer("b", t.ones(2))
        m.c = t.nn.ReLU()
        m.b = t.zeros(2)
        before = [list(m._parameters), list(m._buffers), list(m._modules), D.val(m.b)]
        m.a = None
        m.d = t.nn.ReLU()
        m.d = t.nn.Parameter(t.ones(1))
        del m.b
        m.c = None
        return before + [list(m._parameters), list(m._buffers), list(m._modules),
                         list(m.state_dict()), D.outcome(lambda: setattr(m, "c", 5))]
    check(case)


def test_assign_before_init():
    def case(t):
        class Bad(t.nn.Module):
            def __init__(self):
                self.w = t.nn.Parameter(t.ones(1))
        return D.outcome(Bad)
    check(case)


# ----- traversal, modes, gradients -------------------------------------------------------------

def test_traversal():
    def case(t):
        m = _model(t)
        shared = t.nn.ReLU()
        m.body.append(shared)
        m.extra = shared
        visited = []
        m.apply(lambda mod: visited.append(type(mod).__name__))
        return [[n for n, _ in m.named_modules()], [n for n, _ in m.named_children()],
                [type(c).__name__ for c in m.children()], len(list(m.modules())),
                [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
                [n for n, _ in m.named_parameters(recurse=False)],
                len(list(m.parameters(recurse=False))), visited,
                [n for n, _ in m.named_modules(prefix="net")]]
    check(case)


def test_train_eval_and_requires_grad():
    def case(t):
        m = _model(t)
        m.eval()
        after_eval = [mod.training for mod in m.modules()]
        m.body.train()
        mixed = [mod.training for mod in m.modules()]
        m.requires_grad_(False)
        rg = [p.requires_grad for p in m.parameters()]
        return [after_eval, mixed, rg, m.train() is m, D.outcome(lambda: m.train("yes"))]
    check(case)


def test_zero_grad():
    def case(t):
        m = linear(t, 4, 3)
        m(x_in(t)).sum().backward()
        g = m.weight.grad
        m.zero_grad(set_to_none=False)
        same = m.weight.grad is g
        zeroed = D.gval(m.weight.grad)
        m.zero_grad()
        return [same, zeroed, m.weight.grad is None, m.bias.grad is None]
    check(case)


# ----- containers ----------------------------------------------------------------------------

def test_sequential_indexing():
    def case(t):
        net = t.nn.Sequential(t.nn.ReLU(), t.nn.Tanh(), t.nn.Sigmoid())
        out = [len(net), type(net[-1]).__name__, type(net[1:]).__name__, len(net[1:]),
               [type(m).__name__ for m in net], D.outcome(lambda: net[3])]
        net.append(t.nn.Identity())
        net.insert(0, t.nn.Flatten())
        del net[1]
        net[0] = t.nn.ReLU()
        out += [list(net._modules), [type(m).__name__ for m in net]]
        from collections import OrderedDict
        named = t.nn.Sequential(OrderedDict([("act", t.nn.ReLU()), ("out", t.nn.Tanh())]))
        return out + [list(named._modules), type(named.act).__name__, repr(named)]
    check(case)


def test_module_list_dict_and_parameter_list():
    def case(t):
        ml = t.nn.ModuleList([t.nn.ReLU(), t.nn.Tanh()])
        ml += [t.nn.Sigmoid()]
        ml.insert(1, t.nn.Identity())
        del ml[0]
        md = t.nn.ModuleDict({"b": t.nn.ReLU(), "a": t.nn.Tanh()})
        md["c"] = t.nn.Sigmoid()
        popped = md.pop("b")
        pl = t.nn.ParameterList([t.nn.Parameter(t.ones(2, 3)), t.zeros(1)])
        pl.append(t.nn.Parameter(t.ones(())))
        return [len(ml), [type(m).__name__ for m in ml], type(ml[-1]).__name__,
                list(md.keys()), "a" in md, type(popped).__name__, len(md), repr(md),
                len(pl), [type(p).__name__ for p in pl], [n for n, _ in pl.named_parameters()],
                repr(pl), D.outcome(lambda: ml[5]),
                D.outcome(lambda: ml.extend(3))]
    check(case)


# ----- conv and pooling modules ----------------------------------------------------------------

MODULES = [
    lambda t: t.nn.Conv2d(3, 8, 3),
    lambda t: t.nn.Conv2d(4, 8, (3, 2), stride=2, padding=1, dilation=2, groups=2, bias=False),
    lambda t: t.nn.Conv2d(2, 4, 3, padding="same", padding_mode="reflect"),
    lambda t: t.nn.Conv2d(2, 4, 2, padding=1, padding_mode="replicate"),
    lambda t: t.nn.Conv1d(2, 3, 2, stride=2, padding=1),
    lambda t: t.nn.Conv2d(2, 4, 4, padding="same"),
    lambda t: t.nn.MaxPool2d(2),
    lambda t: t.nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
    lambda t: t.nn.AvgPool2d(3, stride=1, padding=1),
    lambda t: t.nn.AdaptiveAvgPool2d((2, 3)),
    lambda t: t.nn.Flatten(),
    lambda t: t.nn.Flatten(0, 2),
    lambda t: t.nn.Unflatten(1, (2, 2)),
    lambda t: t.nn.Identity(54, unused=1),
]

INPUTS = {"Conv1d": (2, 2, 9), "Unflatten": (3, 4, 5)}


@pytest.mark.parametrize("k", range(len(MODULES)))
def test_module_repr_forward_and_backward(k):
    def case(t):
        m = MODULES[k](t)
        rng = np.random.default_rng(k)
        with t.no_grad():
            for p in m.parameters():
                p.copy_(t.tensor(rng.uniform(-1, 1, tuple(p.shape)).tolist()))
        shape = INPUTS.get(type(m).__name__, (2, m.in_channels if hasattr(m, "in_channels")
                                              else 4, 7, 6))
        x = t.tensor(rng.uniform(-1, 1, shape).tolist(), requires_grad=True)
        y = m(x)
        y.backward(D.upstream(t, y))
        return [repr(m), D.val(y), D.graph(y.grad_fn), D.gval(x.grad),
                [D.gval(p.grad) for p in m.parameters()],
                [n for n, _ in m.named_parameters()]]
    check(case)


@pytest.mark.parametrize("k", range(6))
def test_conv_module_initialisation_is_torchs(k):
    """After the same manual_seed, torch's reset_parameters values, versions and flags."""
    def case(t):
        t.manual_seed(7)
        m = MODULES[k](t)
        return [[D.val(p) for p in m.parameters()], [p._version for p in m.parameters()],
                [p.is_leaf and p.requires_grad for p in m.parameters()]]
    check(case)


CONV_MODULE_ERRORS = [
    lambda t: t.nn.Conv2d(3, 4, 3, groups=2),
    lambda t: t.nn.Conv2d(4, 3, 3, groups=2),
    lambda t: t.nn.Conv2d(2, 4, 3, padding="full"),
    lambda t: t.nn.Conv2d(2, 4, 3, stride=2, padding="same"),
    lambda t: t.nn.Conv2d(2, 4, 3, padding_mode="mirror"),
]


def _sorted_sets(text):
    """The message with each {'a', 'b'} listed in sorted order: torch prints a Python set,
    whose order depends on the string hash seed and on how its .pyc stored the literal."""
    import re
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", ")))
                  + "}", text)


@pytest.mark.parametrize("k", range(len(CONV_MODULE_ERRORS)))
def test_conv_module_errors(k):
    def case(t):
        try:
            CONV_MODULE_ERRORS[k](t)
        except Exception as exc:  # noqa: BLE001 - the error is the observable
            return [type(exc).__name__, _sorted_sets(str(exc))]
        return "no error"
    check(case)


def test_cnn_state_dict_keys_and_repr():
    def case(t):
        net = t.nn.Sequential(t.nn.Conv2d(3, 4, 3), t.nn.ReLU(), t.nn.MaxPool2d(2),
                              t.nn.Flatten(), t.nn.Linear(4, 2))
        return [repr(net), list(net.state_dict()),
                [list(v.shape) for v in net.state_dict().values()]]
    check(case)


def test_parameter_str_and_repr():
    def case(t):
        p = t.nn.Parameter(t.tensor([1.0, 2.0]))
        return [str(p), repr(p), f"{p}"]
    check(case)


@pytest.mark.parametrize("name", ["cnn_random_data.py", "module_hooks.py"])
def test_examples_print_what_torch_prints(name, capsys, monkeypatch):
    """The CNN and module-hook examples print the same text on gradviz and on torch 2.13."""
    import os
    import runpy
    import sys
    path = os.path.join(os.path.dirname(__file__), "..", "examples", name)
    outputs = []
    for backend in (torch, gradviz):
        with monkeypatch.context() as m:
            for mod in ("", ".nn", ".optim", ".autograd", ".nn.functional"):
                m.setitem(sys.modules, "gradviz" + mod,
                          sys.modules[backend.__name__ + mod] if mod else backend)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                runpy.run_path(path, run_name="__main__")
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert outputs[0].count("\n") >= 4


def test_to_double_float_and_cpu_keep_the_parameters():
    def case(t):
        m = _model(t)
        params = list(m.parameters())
        m.body[0](x_in(t)).sum().backward()
        out = [m.to("cpu") is m, m.cpu() is m]
        m.double()
        out += [[str(p.dtype) for p in m.parameters()], [str(b.dtype) for b in m.buffers()],
                all(a is b for a, b in zip(params, m.parameters())),
                str(m.body[0].weight.grad.dtype), [p.is_leaf for p in m.parameters()]]
        m.to(t.float32)
        out += [[str(p.dtype) for p in m.parameters()],
                D.outcome(lambda: m.to(t.int64))]
        m.to(dtype=t.float64)
        out += [[str(v.dtype) for v in m.state_dict().values()]]
        return out
    check(case)
