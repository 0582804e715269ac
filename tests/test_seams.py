"""The seams between the core and the inspector: the tracer interface, the call-site module,
saved values listed by the core, grad-mode save/restore, and `graph` building its DOT once."""

import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

import gradviz as torch
from gradviz.autograd import callsite, tracing
from gradviz.autograd.grad_mode import _GradMode
from gradviz.autograd.saved import saved_names, saved_values, snapshot, was_freed

PKG = pathlib.Path(torch.__file__).resolve().parent
CORE = [p for p in PKG.rglob("*.py") if "inspect" not in p.relative_to(PKG).parts
        and "render" not in p.relative_to(PKG).parts]


def _code_lines(path):
    """The lines of a source file, without doctest examples (`>>>` / `...` lines)."""
    return [(n, line) for n, line in enumerate(path.read_text().splitlines(), 1)
            if not line.lstrip().startswith((">>>", "..."))]


# ----- the core never imports the inspector ----------------------------------------------

def test_core_runs_without_importing_the_inspector():
    code = ("import sys\nimport gradviz as torch\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "y = (x * 2).exp().sum()\ny.backward()\n"
            "lin = torch.nn.Linear(2, 1)\nlin(x).sum().backward()\n"
            "print(sorted(m for m in sys.modules if m.startswith(('gradviz.inspect', "
            "'gradviz.render', 'cli'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_no_core_source_names_the_inspector():
    pattern = re.compile(r"^\s*(from|import)\s+(gradviz\.inspect|\.+inspect)\b|inspect/")
    offenders = [f"{p.relative_to(PKG)}:{n}" for p in CORE for n, line in _code_lines(p)
                 if pattern.search(line)]
    assert offenders == []
    assert len(CORE) > 30       # the walk found the core


# ----- the tracer interface --------------------------------------------------------------

class Recorder(tracing.Tracer):
    """Records every call of the interface as (method, short description of the args)."""

    def __init__(self):
        self.calls = []


def _short(v):
    if v is None or isinstance(v, (str, int, bool)):
        return v
    if isinstance(v, torch.Tensor):
        return "tensor"
    if isinstance(v, torch.autograd.graph.Node):
        return type(v).__name__
    return type(v).__name__


for _name in tracing.METHODS:
    setattr(Recorder, _name,
            lambda self, *args, _n=_name: self.calls.append((_n,) + tuple(map(_short, args))))


def test_methods_are_the_documented_public_methods_of_the_base():
    public = [n for n, v in vars(tracing.Tracer).items() if callable(v) and n[0] != "_"]
    assert list(tracing.METHODS) == public
    assert {"created", "leaf", "node", "made", "inplace", "refused", "module_hook", "begin",
            "fired", "hooked", "grad", "produced", "ran"} <= set(tracing.METHODS)
    base = tracing.Tracer()
    for name in tracing.METHODS:
        method = getattr(base, name)
        assert method.__doc__ and len(method.__doc__.split()) > 8, name
        assert method(*[None] * (method.__code__.co_argcount - 1)) is None     # a no-op


def test_every_method_is_called_by_the_core_and_only_through_tracing_active():
    sources = {p: p.read_text() for p in CORE if p.name != "tracing.py"}
    for name in tracing.METHODS:
        assert any(re.search(rf"\.{name}\(", s) and "_tracing" in s for s in sources.values()), \
            name
    # nothing in the core installs or reads a tracer any other way
    for p, s in sources.items():
        assert "_state.trace" not in s, p
        assert "tracing.active =" not in s, p


def test_a_custom_tracer_receives_the_documented_calls_in_order():
    rec = Recorder()
    with tracing.installed(rec) as installed:
        assert installed is rec and tracing.current() is rec
        a = torch.tensor(2.0, requires_grad=True)
        b = a * 3
        with pytest.raises(RuntimeError, match="leaf Variable"):
            a.add_(1)
        b.add_(1)
        b.register_hook(lambda g: g * 2)
        c = b.exp()
        c.backward()
    assert tracing.current() is None
    assert rec.calls == [
        ("created", "tensor"), ("leaf", "tensor"),
        ("created", "tensor"), ("node", "AccumulateGrad"),
        ("recorded", "MulBackward0", "tensor"),
        ("refused", "tensor", "a leaf Variable that requires grad is being used in an "
                              "in-place operation."),
        ("inplace", "tensor", "add_"), ("recorded", "AddBackward0", "tensor"),
        ("created", "tensor"), ("recorded", "ExpBackward0", "tensor"),
        ("begin", "list", None, False),
        ("grad", "ExpBackward0", "list"), ("sent", "ExpBackward0", "list"),
        ("created", "tensor"), ("created", "tensor"),
        ("fired", "AddBackward0", "tensor", 0, "function", "float32", "tensor"),
        ("hooked", "AddBackward0", 0, "function"),
        ("grad", "AddBackward0", "list"), ("sent", "AddBackward0", "list"),
        ("grad", "MulBackward0", "list"), ("sent", "MulBackward0", "list"),
        ("grad", "AccumulateGrad", "list"), ("created", "tensor"),
        ("sent", "AccumulateGrad", "tuple"), ("end",),
    ]
    assert a.grad.item() == pytest.approx(6 * float(c))


def test_module_hooks_and_post_accumulate_hooks_reach_the_tracer():
    rec = Recorder()
    lin = torch.nn.Linear(2, 1)
    lin.register_forward_hook(lambda m, args, out: None)
    lin.weight.register_post_accumulate_grad_hook(lambda p: None)
    with tracing.installed(rec):
        lin(torch.ones(2)).sum().backward()
    names = [c[0] for c in rec.calls]
    assert ("module_hook", "forward", "Linear", "function", "tensor", None, None) in rec.calls
    assert ("fired", "AccumulateGrad", "post_accumulate", 0, "function", "ndarray",
            "tensor") in rec.calls
    assert names.index("module_hook") < names.index("begin")


def test_a_node_with_post_hooks_gets_produced_and_ran_around_them():
    # what it produced, then what its post-hooks made of it: `sent` only without post-hooks
    rec = Recorder()
    with tracing.installed(rec):
        a = torch.tensor(2.0, requires_grad=True)
        b = a * 3
        b.grad_fn.register_hook(lambda gin, gout: (gin[0] * 2, None))
        b.backward()
    names = [c[:2] for c in rec.calls
             if c[0] in ("grad", "produced", "fired", "ran", "sent", "applied")]
    assert names == [("grad", "MulBackward0"), ("produced", "MulBackward0"),
                     ("fired", "MulBackward0"), ("ran", "MulBackward0"),
                     ("grad", "AccumulateGrad"), ("sent", "AccumulateGrad")]
    assert a.grad.item() == 6.0


def test_a_subclass_overriding_produced_or_ran_has_both_called_for_sent():
    from gradviz.inspect.tracer import Tracer

    class Counting:
        def produced(self, node, outs):
            self.seen.append(type(node).__name__)
            super().produced(node, outs)

    class Direct(Counting, Tracer):     # produced in a class it mixes in
        pass

    class Sub(Tracer):
        def ran(self, node, outs):
            self.seen.append(type(node).__name__)
            super().ran(node, outs)

    for cls in (Direct, Sub):
        t = cls()
        t.seen = []
        with tracing.installed(t):
            x = torch.tensor(2.0, requires_grad=True)
            (x * 3).exp().backward()
        assert t.seen == ["ExpBackward0", "MulBackward0", "AccumulateGrad"], cls
        assert [type(s.node).__name__ for s in t.steps] == t.seen


def test_install_restores_on_exceptions_and_accepts_only_tracers():
    outer, inner = Recorder(), Recorder()
    with tracing.installed(outer):
        with pytest.raises(ZeroDivisionError):
            with tracing.installed(inner):
                1 / 0
        assert tracing.current() is outer
    assert tracing.current() is None
    with pytest.raises(TypeError, match="must be a gradviz.autograd.tracing.Tracer"):
        tracing.install(object())
    assert tracing.current() is None


def test_the_inspector_tracer_extends_the_core_base():
    from gradviz.inspect.tracer import Tracer
    assert issubclass(Tracer, tracing.Tracer)
    for name in tracing.METHODS:
        assert callable(getattr(Tracer, name))


def test_retain_all_keeps_saved_values():
    class Keep(tracing.Tracer):
        retain_all = True
    x = torch.ones(2, requires_grad=True)
    with tracing.installed(Keep()):
        y = (x * x).sum()
        y.backward()
    y.backward()        # would raise without retain_all
    assert x.grad.tolist() == [4.0, 4.0]


# ----- one module decides which frames are gradviz's ---------------------------------------

_FRAME_READS = re.compile(r"_getframe|\.f_back\b|extract_stack|f_code\.co_filename|_PKG_DIR")


def test_only_callsite_reads_frames():
    offenders = [f"{p.relative_to(PKG)}:{n}" for p in PKG.rglob("*.py")
                 if p.name != "callsite.py"
                 for n, line in _code_lines(p) if _FRAME_READS.search(line)]
    assert offenders == []


def test_user_site_and_register_host(tmp_path):
    here = callsite.user_site(1)
    assert here == (__file__, here[1]) and here[1] > 0
    host = tmp_path / "host.py"
    host.write_text("def call(f):\n    return f()\n")
    ns = {}
    exec(compile(host.read_text(), str(host), "exec"), ns)
    # outside any host: the whole stack outside gradviz is the user's
    assert any(fr.filename == __file__ for fr in ns["call"](callsite.user_stack))
    callsite.register_host(str(host))
    try:
        # inside a host: only frames below the innermost host frame are the user's
        assert callsite.is_gradviz_file(str(host))
        assert ns["call"](callsite.user_stack) == []

        def inner():
            return [f.f_code.co_name for f in callsite.user_functions(sys._getframe())]
        # the user's functions up to the host: not this test, which called the host
        assert ns["call"](inner) == ["inner"]
        assert "test_user_site_and_register_host" in inner()
    finally:
        callsite._hosts = tuple(h for h in callsite._hosts if h != str(host))
        callsite._internal.clear()
        callsite._hosted.clear()


def test_register_library(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "mod.py").write_text("def call(f):\n    return f()\n")
    ns = {}
    exec(compile((lib / "mod.py").read_text(), str(lib / "mod.py"), "exec"), ns)

    def inner():
        return [f.f_code.co_name for f in callsite.user_functions(sys._getframe())]
    assert ns["call"](callsite.user_site) == (str(lib / "mod.py"), 2)
    assert "call" in ns["call"](inner)
    callsite.register_library(str(lib) + os.sep)
    try:
        # a library's frames are passed over, but do not end the user's functions as a host's
        site = ns["call"](callsite.user_site); line = sys._getframe().f_lineno  # noqa: E702
        assert site == (__file__, line)
        assert ns["call"](inner)[:2] == ["inner", "test_register_library"]
        assert not callsite.is_gradviz_file(str(lib / "mod.py"))
    finally:
        callsite._libraries = tuple(p for p in callsite._libraries if p != str(lib) + os.sep)
        callsite._internal.clear()


def test_nodes_record_the_users_line():
    x = torch.ones(2, requires_grad=True)
    y = x * 2; line = sys._getframe().f_lineno  # noqa: E702
    assert y.grad_fn._where == (__file__, line)


# ----- saved values listed by the core -----------------------------------------------------

_SAVED_CASES = {
    "mul": lambda t, a, b: a * b,
    "exp": lambda t, a, b: a.exp(),
    "sum": lambda t, a, b: a.sum(),
    "pow": lambda t, a, b: a ** 3,
    "mm": lambda t, a, b: a @ b,
    "div": lambda t, a, b: a / b,
    "tanh": lambda t, a, b: a.tanh(),
    "sigmoid": lambda t, a, b: a.sigmoid(),
    "mean_dim": lambda t, a, b: a.mean(dim=0),
    "softmax": lambda t, a, b: t.softmax(a, dim=1),
    "transpose": lambda t, a, b: a.transpose(0, 1),
}


@pytest.mark.parametrize("case", sorted(_SAVED_CASES))
def test_saved_values_use_torchs_saved_names(case):
    real = pytest.importorskip("torch")
    names = {}
    for mod, kind in ((torch, "gradviz"), (real, "torch")):
        a = mod.ones(3, 3, requires_grad=True)
        b = mod.full((3, 3), 2.0, requires_grad=True)
        node = _SAVED_CASES[case](mod, a, b).grad_fn
        names[kind] = {n for n in dir(node) if n.startswith("_saved_")}
        if kind == "gradviz":
            # the properties of its node class (FormulaNode's own helpers are not torch's)
            names[kind] = {n for n in vars(type(node)) if n.startswith("_saved_")}
            labels = [v.label for v in saved_values(node)]
            listed = saved_names(node)
    assert set(labels) == names["gradviz"]       # what the node itself exposes
    assert set(labels) == names["torch"]
    assert set(listed) == names["torch"] and list(listed) == labels


def test_saved_values_after_backward_and_snapshot():
    a = torch.ones(2, requires_grad=True)
    y = a * a.exp()
    node = y.grad_fn
    before = snapshot(node)
    assert [(v.label, v.saved_version, v.tensor is a) for v in before] == \
        [("_saved_self", 0, True), ("_saved_other", 0, False)]
    assert not was_freed(node)
    y.sum().backward()
    assert was_freed(node) and saved_values(node) == []
    assert saved_names(node) == ("_saved_self", "_saved_other")
    assert before[0].data.tolist() == [1.0, 1.0]
    assert saved_values(node.next_functions[0][0]) is None     # AccumulateGrad saves nothing


def test_saved_values_of_a_custom_function_and_a_result():
    class Scale(torch.autograd.Function):
        """x * w, saving (x, None, w): a None is not a saved value."""

        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, None, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, _, w = ctx.saved_tensors
            return g * w, g * x

    x = torch.ones(2, requires_grad=True)
    y = Scale.apply(x, torch.full((2,), 3.0))
    assert [(v.label, v.data.tolist()) for v in saved_values(y.grad_fn)] == \
        [("saved_tensors[0]", [1.0, 1.0]), ("saved_tensors[2]", [3.0, 3.0])]
    assert saved_names(y.grad_fn) == ()
    z = x.exp()
    assert [(v.label, v.tensor is z) for v in saved_values(z.grad_fn, z)] == \
        [("_saved_result", True)]
    assert snapshot(z.grad_fn)[0].tensor is None
    y.sum().backward()
    assert was_freed(y.grad_fn) and saved_values(y.grad_fn) == []


# ----- one context manager saves and restores grad mode ------------------------------------

@pytest.mark.parametrize("make", [lambda: _GradMode(False), lambda: _GradMode(True),
                                  torch.no_grad, torch.enable_grad,
                                  lambda: torch.set_grad_enabled(False),
                                  torch.inference_mode])
@pytest.mark.parametrize("start", [True, False])
def test_grad_mode_is_restored_on_exceptions(make, start):
    torch.set_grad_enabled(start)
    try:
        with pytest.raises(KeyError):
            with make():
                raise KeyError("boom")
        assert torch.is_grad_enabled() is start
        assert not torch.is_inference_mode_enabled()
    finally:
        torch.set_grad_enabled(True)


def test_backward_restores_grad_mode_when_a_hook_or_custom_backward_raises():
    class Bad(torch.autograd.Function):
        """Its backward raises, where create_graph=True turned grad mode on."""

        forward = staticmethod(lambda ctx, x: x.clone())

        @staticmethod
        def backward(ctx, g):
            assert torch.is_grad_enabled()      # create_graph=True
            raise ValueError("bad backward")

    x = torch.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: 1 / 0)
    for start in (True, False):
        hooked, out = y.sum(), Bad.apply(x).sum()
        torch.set_grad_enabled(start)
        try:
            with pytest.raises(ZeroDivisionError):
                hooked.backward()
            assert torch.is_grad_enabled() is start
            with pytest.raises(ValueError, match="bad backward"):
                out.backward(create_graph=True)
            assert torch.is_grad_enabled() is start
        finally:
            torch.set_grad_enabled(True)


def test_grad_mode_is_saved_and_restored_in_one_place():
    # Nothing assigns _state.enabled: _GradMode (a _Setting of the field) is the only writer.
    writes = []
    for p in CORE:
        for node in ast.walk(ast.parse(p.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Attribute) and sub.attr == "enabled" and \
                            getattr(sub.value, "id", None) == "_state":
                        writes.append(f"{p.relative_to(PKG)}:{node.lineno}")
    assert writes == []
    for cm in (torch.no_grad, torch.enable_grad, torch.set_grad_enabled, torch.inference_mode):
        assert issubclass(cm, _GradMode)
    assert _GradMode._field == "enabled"


# ----- graph builds its DOT once ------------------------------------------------------------

def test_graph_builds_its_dot_once(tmp_path, monkeypatch):
    from cli.main import cli
    from gradviz.render import dot
    calls = []
    build = dot._Builder.build

    def counting(self, *args, **kwargs):
        calls.append(1)
        return build(self, *args, **kwargs)

    monkeypatch.setattr(dot._Builder, "build", counting)
    src = tmp_path / "big.py"
    # a graph larger than LARGE_GRAPH, so the command also warns about its size
    src.write_text("import gradviz as torch\nx = torch.ones(1, requires_grad=True)\ny = x\n"
                   f"for _ in range({dot.LARGE_GRAPH}):\n    y = y * 1.0001\n")
    out = tmp_path / "big.dot"
    result = CliRunner().invoke(cli, ["graph", str(src), "--dot", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "hard to read" in result.output
    assert out.read_text().startswith("digraph backward {")
    assert len(calls) == 1


def test_graph_command_is_thin():
    source = (pathlib.Path(__file__).resolve().parent.parent / "cli" / "commands" /
              "graph.py").read_text()
    body = source[source.index('    """', source.index("def graph(")) + 4:]
    body = body[body.index('"""') + 3:]
    assert "GraphDrawing.of_run(" in body
    for computing in ("report()", "canonical", ".tensor(", "for r in roots"):
        assert computing not in body
