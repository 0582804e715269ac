"""The file's own hooks (what each got and returned, which .grad it changed) and the engine's
steps (`run --hooks --step`), checked against what torch 2.13's engine does."""

import io
import textwrap

import pytest
from click.testing import CliRunner
from rich.console import Console

import gradviz
from gradviz.inspect import run_file
from gradviz.inspect.tracer import Tracer, tracing
from gradviz.render import build_dot
from gradviz.render.steps import steps_renderable, user_hooks_table
from gradviz_cli.main import cli

EXAMPLE = "examples/hooks_marked.py"


def _write(tmp_path, body):
    path = tmp_path / "f.py"
    path.write_text("import gradviz as torch\n" + textwrap.dedent(body))
    return str(path)


def _text(renderable, width=80):
    console = Console(file=io.StringIO(), width=width, no_color=True)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())


def test_user_hooks_of_the_example():
    report = run_file(EXAMPLE).report()
    hooks = [{k: h[k] for k in ("index", "call", "kind", "node", "node_name", "target",
                                "input_nr", "function", "line", "grad_in", "grad_out",
                                "changed", "changed_upstream")} for h in report["user_hooks"]]
    assert hooks == [
        {"index": 0, "call": 0, "kind": "tensor", "node": "n1", "node_name": "MulBackward0",
         "target": "y", "input_nr": 0, "function": "scale_by_10", "line": 18, "grad_in": 12.0,
         "grad_out": 120.0, "changed": True, "changed_upstream": []},
        {"index": 1, "call": 0, "kind": "tensor", "node": "n2", "node_name": "AccumulateGrad",
         "target": "w", "input_nr": 0, "function": "<lambda>", "line": 28, "grad_in": 360.0,
         "grad_out": None, "changed": False, "changed_upstream": [0]},
    ]
    marks = {t["name"]: t["grad_changed_by"] for t in report["tensors"]}
    # The hook's own argument is a tensor inside a function: named from its frame (issue #13).
    assert marks == {"x": [0], "w": [0], "y": [], "loss": [], "scale_by_10.grad": []}
    badges = {n["id"]: [(h["kind"], h["function"], h["line"]) for h in n["hooks"]]
              for n in report["nodes"]}
    assert badges == {"n0": [], "n1": [("tensor", "scale_by_10", 18)],
                      "n2": [("tensor", "<lambda>", 28)], "n3": []}


def test_steps_of_the_example():
    (call,) = run_file(EXAMPLE).report()["backward_calls"]
    assert (call["kind"], call["roots"], call["line"], call["by_gradviz"]) == \
        ("backward", ["loss"], 30, False)
    assert call["steps"] == [
        {"node": "n0", "name": "PowBackward0", "tensor": "loss", "grad_in": [1.0],
         "grad_out": [{"node": "n1", "name": "MulBackward0", "input_nr": 0, "grad": 12.0}],
         "hooks": [], "accumulated": None},
        {"node": "n1", "name": "MulBackward0", "tensor": "y", "grad_in": [120.0],
         "grad_out": [{"node": "n2", "name": "AccumulateGrad", "input_nr": 0, "grad": 360.0},
                      {"node": "n3", "name": "AccumulateGrad", "input_nr": 0, "grad": 240.0}],
         "hooks": [0], "accumulated": None},
        {"node": "n2", "name": "AccumulateGrad", "tensor": None, "grad_in": [360.0],
         "grad_out": [], "hooks": [1], "accumulated": "w"},
        {"node": "n3", "name": "AccumulateGrad", "tensor": None, "grad_in": [240.0],
         "grad_out": [], "hooks": [], "accumulated": "x"},
    ]


def test_node_hooks_retain_grad_and_a_hook_that_changes_nothing(tmp_path):
    path = _write(tmp_path, """\
        a = torch.tensor(2.0, requires_grad=True)
        b = torch.tensor(5.0, requires_grad=True)
        c = a * b
        c.retain_grad()
        d = c + b
        def pre(grads):
            return (grads[0] * 3,)
        def post(grad_inputs, grad_outputs):
            return None
        d.grad_fn.register_prehook(pre)
        c.grad_fn.register_hook(post)
        b.register_hook(lambda g: g.clone())
        d.backward()
        """)
    report = run_file(path).report()
    hooks = [(h["kind"], h["target"], h["grad_in"], h["grad_out"], h["changed"],
              h["changed_upstream"]) for h in report["user_hooks"]]
    assert hooks == [
        ("pre", "d", [1.0], [3.0], True, []),
        ("retain_grad", "c", 3.0, None, False, [0]),
        ("post", "c", [15.0, 6.0], None, False, [0]),
        ("tensor", "b", 9.0, 9.0, False, [0]),   # 3 from d, 3 * a from c, summed first
    ]
    marks = {t["name"]: t["grad_changed_by"] for t in report["tensors"]}
    assert marks == {"a": [0], "b": [0], "c": [0], "d": [], "pre.grads[0]": []}
    assert [h["index"] for h in report["user_hooks"]] == [0, 1, 2, 3]


def test_unchanged_gradients_are_not_marked(tmp_path):
    path = _write(tmp_path, """\
        w = torch.tensor(2.0, requires_grad=True)
        y = w * 3
        y.register_hook(lambda g: g * 1)
        y.backward()
        """)
    report = run_file(path).report()
    assert [h["changed"] for h in report["user_hooks"]] == [False]
    assert [t["grad_changed_by"] for t in report["tensors"]] == [[], []]


def test_backward_from_the_command_line_is_marked_by_gradviz():
    report = run_file("examples/mul_chain_backward.py", backward="e").report()
    (call,) = report["backward_calls"]
    assert (call["by_gradviz"], call["file"], call["line"], call["roots"]) == \
        (True, None, None, ["e"])
    assert [s["name"] for s in call["steps"]][0] == "MulBackward0"
    assert report["user_hooks"] == []


def test_steps_text_at_80_columns():
    text = _text(steps_renderable(run_file(EXAMPLE).report()))
    assert text == textwrap.dedent("""\
        Backward call 1: loss.backward() at examples/hooks_marked.py:30
        1. n0 PowBackward0 (loss)  received 1
             -> n1 MulBackward0 (y): 12
        2. n1 MulBackward0 (y)  received 120
             hook #1 scale_by_10 (line 18): 12 -> 120 (changed)
             -> n2 AccumulateGrad (w): 360
             -> n3 AccumulateGrad (x): 240
        3. n2 AccumulateGrad (w)  received 360
             hook #2 <lambda> (line 28): 360 -> None (unchanged)
             wrote w.grad
        4. n3 AccumulateGrad (x)  received 240
             wrote x.grad""")


def test_user_hooks_table_text():
    text = _text(user_hooks_table(run_file(EXAMPLE).report()))
    assert text == textwrap.dedent("""\
        Your hooks (firing order)
        hook                      kind         on  grad in  grad out
        ────────────────────────────────────────────────────────────────────
        #1 scale_by_10 (line 18)  tensor hook  y   12       120 (changed)
        #2 <lambda> (line 28)     tensor hook  w   360      None (unchanged)""")


def test_cli_step_and_hooks():
    runner = CliRunner(env={"COLUMNS": "100", "NO_COLOR": "1"})
    result = runner.invoke(cli, ["run", EXAMPLE, "--hooks", "--step"], catch_exceptions=False)
    assert result.exit_code == 0
    x_row = next(line for line in result.stdout.splitlines() if line.startswith("x "))
    assert "float32  yes       yes   None          0    no       240 (changed by" in x_row
    assert "#1 scale_by_10 (line 18)  tensor hook  y   12       120 (changed)" in result.stdout
    assert "\n     hook #1 scale_by_10 (line 18): 12 -> 120 (changed)" in result.stdout
    plain = runner.invoke(cli, ["run", EXAMPLE], catch_exceptions=False)
    assert plain.exit_code == 0
    assert "Your hooks" not in plain.stdout and "Backward call 1" not in plain.stdout
    assert "240 (changed by" in plain.stdout and "hook #1)" in plain.stdout


def test_cli_json_keeps_steps_only_with_step():
    import json
    runner = CliRunner()
    doc = json.loads(runner.invoke(cli, ["run", EXAMPLE, "--json"]).stdout)
    assert doc["user_hooks"] == [] and doc["backward_calls"][0]["steps"] == []
    doc = json.loads(runner.invoke(cli, ["run", EXAMPLE, "--json", "--step", "--hooks"]).stdout)
    assert len(doc["user_hooks"]) == 2 and len(doc["backward_calls"][0]["steps"]) == 4


def test_step_without_backward(tmp_path):
    path = _write(tmp_path, "x = torch.ones(2, requires_grad=True) * 2\n")
    runner = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"})
    result = runner.invoke(cli, ["run", path, "--step"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout.rstrip().endswith("No backward ran (nothing to step through).")


def test_dot_badges_hooked_nodes_and_the_legend_says_so():
    dot = build_dot(run_file(EXAMPLE).report())
    assert '\\n[hook] scale_by_10 line 18" color=purple' in dot
    assert "[hook] <lambda> line 28" in dot
    assert 'legend3 [label="[hook], double purple outline:\\nthe file registered a hook ' \
        'here\\n(tensor hook, node pre/post hook,\\npost-accumulate-grad hook, module\\n' \
        'backward hook or retain_grad)"' in dot
    assert "grad: 240 (changed by hook #1)" in dot
    plain = build_dot(run_file("examples/mul_chain_backward.py", backward="e").report())
    assert "[hook]" not in plain and "purple" not in plain


# ----- The engine's order, against torch 2.13's -------------------------------------------

def _graphs(tm):
    """Graphs whose backward order is worth comparing: (name, root)."""
    w1 = tm.tensor(2.0, requires_grad=True)
    w2 = tm.tensor(3.0, requires_grad=True)
    w3 = tm.tensor(3.0, requires_grad=True)
    l1 = tm.ones(2, 2) * w1
    l2 = l1 + w2
    l3 = l1 * w3
    yield "w1 w2 w3", (l2 * l3).mean()
    x = tm.tensor([0.5, 1.0, 2.0], requires_grad=True)
    a = x * 2
    b = x.exp()
    yield "diamond", (a * b + a.sin()).sum()
    m = tm.tensor([[1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    v = tm.tensor([1.0, -1.0], requires_grad=True)
    h = (m @ v).relu()
    p, q = (m * 3).unbind(0)
    yield "matmul unbind", (h * p).sum() + q.pow(2).sum() + (m.t() @ v).tanh().sum()


def _torch_order(torch, root):
    order, seen, stack = [], set(), [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_prehook(lambda grads, node=node: order.append(node.name()))
        stack.extend(fn for fn, _ in node.next_functions)
    root.backward()
    return order


@pytest.mark.parametrize("case", ["w1 w2 w3", "diamond", "matmul unbind"])
def test_step_order_matches_torch(case):
    torch = pytest.importorskip("torch")
    want = _torch_order(torch, dict(_graphs(torch))[case])
    tracer = Tracer()
    with tracing(tracer):
        dict(_graphs(gradviz))[case].backward()
    got = [step.node.name() for step in tracer.steps]
    assert got == want
    assert len(got) > 5


def test_large_step_gradients_are_summaries_and_grad_calls_are_named(tmp_path):
    path = _write(tmp_path, """\
        x = torch.ones(20, requires_grad=True)
        y = (x * 2).sum()
        (g,) = torch.autograd.grad(y, x)
        """)
    (call,) = run_file(path).report()["backward_calls"]
    assert (call["kind"], call["roots"], call["line"]) == ("grad", ["y"], 4)
    assert [s["name"] for s in call["steps"]] == ["SumBackward0", "MulBackward0"]
    assert call["steps"][0]["grad_out"][0]["grad"] == \
        "<20 elements, shape [20]: min 1, max 1, mean 1>"
    assert call["steps"][0]["grad_in"] == [1.0]


def test_step_on_the_torch_backend_steps_as_on_the_core():
    pytest.importorskip("torch")
    runner = CliRunner(env={"COLUMNS": "100", "NO_COLOR": "1"})
    out = {}
    for backend in ("gradviz", "torch"):
        result = runner.invoke(cli, ["run", EXAMPLE, "--step", "--backend", backend],
                               catch_exceptions=False)
        assert result.exit_code == 0
        out[backend] = result.stdout[result.stdout.index("Backward call 1"):]
    assert [line.rstrip() for line in out["torch"].splitlines()][-2:] == \
        ["4. n3 AccumulateGrad (x)  received 240", "     wrote x.grad"]
    # the file's hooks are recorded on torch too: their step lines name them on both
    assert "hook #1 scale_by_10 (line 18): 12 -> 120 (changed)" in out["torch"]
    assert out["torch"] == out["gradviz"]
