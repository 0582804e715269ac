"""Every kind of hook a file can register shows in `run --hooks` (issue #13): tensor hooks,
node pre/post hooks, post-accumulate-grad hooks, module forward (pre-)hooks and full backward
(pre-)hooks, and retain_grad, in firing order, with what each received and returned, checked
against what the same hooks receive on torch 2.13."""

import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from gradviz.inspect import run_file
from gradviz.render import build_dot
from gradviz_cli.main import cli

# Each hook notes what it received in `record` (the file's own account, on either backend).
ALL_KINDS = """\
import gradviz as torch
from gradviz import nn

record = []


def note(kind, value):
    if isinstance(value, (tuple, list)):
        value = [None if v is None else v.detach().tolist() for v in value]
    else:
        value = value.detach().tolist()
    record.append((kind, value))


lin = nn.Linear(2, 1)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[0.5, -1.0]]))
    lin.bias.fill_(0.25)


def forward_pre(m, args):
    note("module_forward_pre", args)
    return (args[0] * 2,)


def forward(m, args, out):
    note("module_forward", out)
    return out + 1


def backward_pre(m, grad_output):
    note("module_backward_pre", grad_output)
    return (grad_output[0] * 3,)


def backward(m, grad_input, grad_output):
    note("module_backward", grad_input)


def post_accumulate(t):
    note("post_accumulate", t.grad)
    t.grad.mul_(10)


def tensor_hook(g):
    note("tensor", g)
    return g * 2


def node_pre(grad_outputs):
    note("pre", grad_outputs)


def node_post(grad_inputs, grad_outputs):
    note("post", grad_inputs)


lin.register_forward_pre_hook(forward_pre)
lin.register_forward_hook(forward)
lin.register_full_backward_pre_hook(backward_pre)
lin.register_full_backward_hook(backward)
x = torch.tensor([[1.0, 2.0]], requires_grad=True)
x.register_post_accumulate_grad_hook(post_accumulate)
y = lin(x)
y.retain_grad()
y.register_hook(tensor_hook)
y.grad_fn.register_prehook(node_pre)
loss = (y ** 2).sum()
loss.grad_fn.register_hook(node_post)
loss.backward()
"""

# The order torch 2.13 runs them in (the file's own record on torch says the same).
ORDER = ["module_forward_pre", "module_forward", "post", "tensor", "retain_grad", "pre",
         "module_backward_pre", "module_backward", "post_accumulate"]


def _write(tmp_path, text):
    path = tmp_path / "hooks.py"
    path.write_text(text)
    return str(path)


def _same(a, b):
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-5)


def test_every_kind_is_reported_in_firing_order(tmp_path):
    run = run_file(_write(tmp_path, ALL_KINDS))
    report = run.report()
    hooks = report["user_hooks"]
    assert [h["kind"] for h in hooks] == ORDER
    functions = {h["kind"]: (h["function"], h["line"]) for h in hooks}
    assert functions["module_forward_pre"] == ("forward_pre", 21)
    assert functions["post_accumulate"] == ("post_accumulate", 40)
    assert functions["retain_grad"] == ("retain_grad", None)
    modules = {h["kind"]: h["module"] for h in hooks}
    assert modules["module_backward"] == modules["module_forward"] == "lin"
    assert modules["tensor"] is None
    # What each hook received is what the file itself saw it receive.
    own = [h for h in hooks if h["kind"] != "retain_grad"]
    for hook, (kind, value) in zip(own, run.namespace["record"]):
        assert hook["kind"] == kind
        assert _same(hook["grad_in"], value), kind
    # Forward hooks are not part of a backward call; backward ones are.
    assert [h["call"] for h in hooks] == [None, None] + [0] * 7
    by_kind = {h["kind"]: h for h in hooks}
    assert by_kind["post_accumulate"]["changed"] is True
    assert _same(by_kind["post_accumulate"]["grad_out"], run.tensor("x").grad.tolist())
    assert by_kind["module_backward"]["grad_out"] is None
    # x.grad was changed by hooks: the tensor hook (× 2), the module pre-hook (× 3) and the
    # post-accumulate hook (× 10).
    marks = {t["name"]: t["grad_changed_by"] for t in report["tensors"]}
    changers = [hooks[k]["kind"] for k in sorted(marks["x"])]
    assert changers == ["tensor", "module_backward_pre", "post_accumulate"]


def test_hooks_receive_what_they_receive_on_torch(tmp_path):
    pytest.importorskip("torch")
    path = _write(tmp_path, ALL_KINDS)
    on_torch = run_file(path, backend="torch")
    want = on_torch.namespace["record"]
    run = run_file(path)
    got = run.namespace["record"]
    assert [k for k, _ in got] == [k for k, _ in want] == [k for k in ORDER
                                                           if k != "retain_grad"]
    for (kind, a), (_, b) in zip(got, want):
        assert _same(a, b), kind
    report = run.report()
    torch_x = on_torch.tensor("x").grad.tolist()
    assert _same(next(t["grad"] for t in report["tensors"] if t["name"] == "x"), torch_x)


def _hooks_output(path, columns):
    result = CliRunner().invoke(cli, ["run", path, "--hooks", "--no-color"],
                                catch_exceptions=False, env={"COLUMNS": str(columns)})
    assert result.exit_code == 0
    lines = [line.rstrip() for line in result.output.splitlines()]
    return result.output, lines[lines.index("Your hooks (firing order)") + 1:]


def test_hooks_table_names_every_kind(tmp_path):
    output, table = _hooks_output(_write(tmp_path, ALL_KINDS), 120)
    assert table[2:] == [
        "#1 forward_pre (line 21)      forward pre-hook           lin                   "
        "args [[1, 2]]      [[2, 4]] (changed)",
        "#2 forward (line 26)          forward hook               lin                   "
        "output [[-2.75]]   [[-1.75]] (changed)",
        "#3 node_post (line 54)        node post-hook             n0 SumBackward0       "
        "[[1]]              None (unchanged)",
        "                                                         (loss)",
        "#4 tensor_hook (line 45)      tensor hook                y                     "
        "[[-3.5]]           [[-7]] (changed)",
        "#5 retain_grad                retain_grad                y                     "
        "[[-7]]             stored in .grad",
        "#6 node_pre (line 50)         node pre-hook              n2                    "
        "[[-7]]             None (unchanged)",
        "                                                         BackwardHookFunction",
        "                                                         Backward (y)",
        "#7 backward_pre (line 31)     full backward pre-hook     lin                   "
        "[[-7]]             [[-21]] (changed)",
        "#8 backward (line 36)         full backward hook         lin                   "
        "[[-10.5, 21]]      None (unchanged)",
        "#9 post_accumulate (line 40)  post-accumulate-grad hook  x                     "
        ".grad [[-21, 42]]  .grad [[-210, 420]]",
        " " * 98 + "(changed)",
    ]
    # x.grad went through three hooks that changed it (#4, #7 and #9): the Tensors table
    # says so in x's grad cell (folded over three lines at this width).
    x_row = next(i for i, line in enumerate(output.splitlines()) if line.startswith("x "))
    cell = [line[92:107].strip() for line in output.splitlines()[x_row:x_row + 4]]
    assert " ".join(cell).strip() == "[[-210, 420]] (changed by hook #4, #7, #9)"


def test_hooks_at_80_columns_are_two_lines_each(tmp_path):
    _, blocks = _hooks_output(_write(tmp_path, ALL_KINDS), 80)
    assert blocks[:4] == [
        "#1 forward_pre (line 21)  forward pre-hook on lin",
        "    in: args [[1, 2]]  out: [[2, 4]] (changed)",
        "#2 forward (line 26)  forward hook on lin",
        "    in: output [[-2.75]]  out: [[-1.75]] (changed)",
    ]
    assert blocks[-2:] == [
        "#9 post_accumulate (line 40)  post-accumulate-grad hook on x",
        "    in: .grad [[-21, 42]]  out: .grad [[-210, 420]] (changed)",
    ]


def test_graph_badges_module_and_post_accumulate_hooks(tmp_path):
    report = run_file(_write(tmp_path, ALL_KINDS)).report()
    kinds = sorted(h["kind"] for n in report["nodes"] for h in n["hooks"])
    assert kinds == ["module_backward", "module_backward_pre", "post", "post_accumulate",
                     "pre", "retain_grad", "tensor"]
    dot = build_dot(report)
    assert "post_accumulate (post-accumulate) line 40" in dot
    assert "post-accumulate-grad hook, module" in dot


def test_explain_says_which_hooks_changed_a_grad_checked_on_torch(tmp_path):
    from gradviz.inspect.explain import explain
    pytest.importorskip("torch")
    result = explain("examples/every_hook_kind.py", "x")
    assert [c["message"] for c in result["causes"]] == [
        "hooks above 'x' changed the gradient on its way to it: <lambda> (line 48), "
        "<lambda> (line 35)",
        "a post-accumulate-grad hook on 'x' (times_ten) changed its .grad in place after "
        "backward wrote it, so .grad is not the gradient shown",
    ]
    ran = run_file("examples/every_hook_kind.py", backend="torch")
    assert _same(result["grad"], ran.tensor("x").grad.tolist())
    # Without the post-accumulate hook, torch's x.grad is the gradient explain shows.
    source = open("examples/every_hook_kind.py").read()
    path = tmp_path / "no_post_hook.py"
    path.write_text(source.replace("x.register_post_accumulate_grad_hook(times_ten)", ""))
    without = run_file(str(path), backend="torch").tensor("x").grad.tolist()
    assert _same(result["computed"], without)


def test_step_without_hooks_names_the_hooks_that_fired():
    result = CliRunner().invoke(cli, ["run", "examples/every_hook_kind.py", "--step",
                                      "--no-color"], catch_exceptions=False,
                                env={"COLUMNS": "100"})
    assert result.exit_code == 0
    lines = [line.rstrip() for line in result.output.splitlines()]
    assert "Your hooks (firing order)" not in lines
    # x's post-accumulate-grad hook ran after AccumulateGrad wrote x.grad.
    assert lines[-3:] == [
        "11. n8 AccumulateGrad (x)  received [[-21, 42]]",
        "      wrote x.grad",
        "      hook #9 times_ten (line 41): .grad [[-21, 42]] -> .grad [[-210, 420]] (changed)",
    ]
