"""The torch backend's tracer: what a file does on PyTorch is recorded as the core records it
(file:line of nodes, saved tensors with their versions, the gradients the file's own backward
calls delivered), torch's own version check still raises, and a loop keeps a bounded record."""

import gc
import os
import sys
import textwrap
import weakref

import pytest
from click.testing import CliRunner

from cli.main import cli

torch = pytest.importorskip("torch")

from gradviz.inspect import run_file  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


def _example(name):
    return os.path.join(EXAMPLES, name)


def _write(tmp_path, source):
    path = tmp_path / "f.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_nodes_carry_the_line_that_made_them():
    doc = run_file(_example("mul_chain_backward.py"), backend="torch").report()
    lines = {n["tensor"]: n["line"] for n in doc["nodes"] if n["name"] == "MulBackward0"}
    assert lines == {"c": 34, "e": 36}


def test_saved_tensors_keep_their_names_after_backward_freed_them():
    doc = run_file(_example("mul_chain_backward.py"), backend="torch", backward="e").report()
    saved = {(s["name"], s["tensor"], s["saved_version"], s["freed"])
             for s in doc["nodes"][0]["saved"]}
    assert saved == {("_saved_self", "c", 0, True), ("_saved_other", "d", 0, True)}


def test_the_files_own_backward_delivers_gradients_to_the_hooks_table():
    doc = run_file(_example("retain_grad_and_hooks.py"), backend="torch").report()
    core = run_file(_example("retain_grad_and_hooks.py")).report()
    assert doc["hooks"] and [h["target"] for h in doc["hooks"]] == \
        [h["target"] for h in core["hooks"]]
    assert [c["line"] for c in doc["backward_calls"]] == [48]


def test_torchs_version_check_still_raises_under_the_saved_tensor_hooks(tmp_path):
    path = _write(tmp_path, """\
        import torch
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = a.exp()
        b.add_(1)
        b.sum().backward()
        """)
    error = run_file(path, backend="torch").report()["error"]
    assert error["line"] == 5
    assert error["message"].startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [2]]")
    assert "is at version 1; expected version 0 instead. Hint: enable anomaly detection to " \
        "find the operation that failed to compute its gradient, with " \
        "torch.autograd.set_detect_anomaly(True, check_nan=False)." in error["message"]


_LOOP = """\
    import torch
    w = torch.randn(8, 8, requires_grad=True)
    for step in range({steps}):
        h = torch.randn(4, 8) @ w
        loss = (torch.tanh(h.relu_()) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.01 * w.grad
        w.grad = None
    """


_MODULE_LOOP = """\
    import torch
    from torch import nn
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 8)
    for step in range({steps}):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    """


def _live_tensors():
    """id -> weak reference of every torch.Tensor alive now."""
    gc.collect()
    return {id(o): weakref.ref(o) for o in gc.get_objects() if type(o) is torch.Tensor}


def _new_tensors(before):
    """How many tensors alive now were not alive in before: leftovers of earlier tests that
    are freed meanwhile do not count (a global count went down by them)."""
    return sum(1 for i, ref in _live_tensors().items()
               if i not in before or before[i]() is not ref())


def _retained(tmp_path, steps, source=_LOOP):
    path = _write(tmp_path, source.format(steps=steps))
    before = _live_tensors()
    run = run_file(path, backend="torch")
    assert run.error is None
    t = run.tracer
    assert len(t.backward_calls) == steps
    return {"nodes": len(t._nodes), "tensors": len(t.made_by), "steps": len(t.steps),
            "held": sum(1 for e in t._nodes.values() if e[1]() is not None),
            "module_calls": len(t.module_calls), "live": _new_tensors(before)}


def test_a_training_loop_keeps_a_bounded_record(tmp_path):
    # the tracer keeps the last two steps' nodes and tensors: as many after 120 steps as
    # after 60 (each step's graph used to stay in the table through a saved tensor's
    # snapshot that held the node's own output)
    short, long = _retained(tmp_path, 60), _retained(tmp_path, 120)
    assert long == short
    assert long["nodes"] <= 2 * 6 + 1 and long["tensors"] <= 2 * 6 + 1


def test_a_module_training_loop_keeps_a_bounded_record(tmp_path):
    # neither the finished Module.__call__ frames (their locals hold the step's output and
    # torch's closures) nor the module calls' boundary nodes (the last 512 calls are listed)
    # may keep earlier steps' graphs alive: as many nodes and live tensors after 60 steps as
    # after 30
    short, long = _retained(tmp_path, 30, _MODULE_LOOP), _retained(tmp_path, 60, _MODULE_LOOP)
    assert long == short
    assert long["module_calls"] <= 1 and long["nodes"] <= 2 * 8 + 4


_LARGE = """\
    import torch
    w = torch.linspace(-1, 1, 20000).requires_grad_()
    h = w * 3
    loss = (h * h).sum() + torch.log(w[:2] - 5).sum()
    loss.backward()
    """


def test_large_gradients_are_kept_as_the_summaries_the_report_prints(tmp_path):
    # a copy of every node's gradient for the last two backward calls took ~1 GB on a
    # transformer: beyond what the report prints whole, the tracer keeps the summary
    from gradviz.inspect.report import GradSummary
    path = _write(tmp_path, _LARGE)
    run, whole = run_file(path, backend="torch"), run_file(path, backend="torch", full=True)
    kept = [g for e in run.tracer._nodes.values() if e[3] for g in e[3]]
    assert any(isinstance(g, GradSummary) for g in kept)
    assert not any(isinstance(g, GradSummary) for e in whole.tracer._nodes.values()
                   if e[3] for g in e[3])
    assert run.report() == whole.report()
    def grad_of_h(report):
        return next(n["grad"] for n in report["nodes"] if n["tensor"] == "h")
    assert grad_of_h(run.report()) == \
        "<20000 elements, shape [20000]: min -6, max 6, mean 0; --full for all values>"
    assert len(grad_of_h(whole.report(full=True))) == 20000
    # a summary's report(full=True) says the values were not kept
    assert grad_of_h(run.report(full=True)) == \
        "<20000 elements, shape [20000]: min -6, max 6, mean 0; whole values were not kept>"


def test_a_summarized_gradient_with_nan_is_still_found_by_anomaly(tmp_path):
    path = _write(tmp_path, """\
        import torch
        w = torch.linspace(-1, 1, 20000).requires_grad_()
        h = w.sqrt()
        h.sum().backward()
        """)
    run, whole = run_file(path, backend="torch"), run_file(path, backend="torch", full=True)
    assert [type(n).__name__ for n, _ in run.tracer.nonfinite] == ["SqrtBackward0"]
    assert run.report() == whole.report()
    sqrt = [n for n in run.report()["nodes"] if n["name"] == "SqrtBackward0"][0]
    assert sqrt["anomaly"] is not None


def test_a_snapshot_still_names_a_tensor_edited_in_place_by_its_node(tmp_path):
    # relu_ saves its result, which is the tensor it edited: held weakly by the snapshot
    path = _write(tmp_path, """\
        import torch
        x = torch.tensor([1.0, -2.0], requires_grad=True)
        y = x * 1
        y.relu_()
        y.sum().backward()
        """)
    doc = run_file(path, backend="torch").report()
    relu = next(n for n in doc["nodes"] if n["name"] == "ReluBackward0")
    assert [(s["name"], s["tensor"], s["freed"]) for s in relu["saved"]] == \
        [("_saved_result", "y", True)]


def test_check_inplace_on_torch_finds_what_the_core_finds():
    r = CliRunner().invoke(cli, ["check-inplace", _example("inplace_version_error.py"),
                                 "--backend", "torch"], catch_exceptions=False)
    assert r.exit_code == 1
    assert "1. setitem on 'b' at " in r.stdout
    assert "saved by MulBackward0 (_saved_self) at " in r.stdout


def test_check_inplace_without_torch_is_a_usage_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)      # `import torch` raises ImportError
    r = CliRunner().invoke(cli, ["check-inplace", _example("inplace_version_error.py"),
                                 "--backend", "torch"])
    assert r.exit_code == 2 and "pip install torch" in r.stderr


def test_a_summarized_gradient_counts_its_nans_on_both_backends(tmp_path):
    # min/max/mean leave NaN out: the summary must still say one is there
    path = _write(tmp_path, """\
        import torch
        w = torch.ones(20000, requires_grad=True)
        x = w * torch.cat([torch.tensor([float('nan')]), torch.ones(19999)])
        x.sum().backward()
        """)
    for backend in ("gradviz", "torch"):
        grad = next(t["grad"] for t in run_file(path, backend=backend).report()["tensors"]
                    if t["name"] == "w")
        assert grad == "<20000 elements, shape [20000]: min 1, max 1, mean 1, 1 NaN; " \
                       "--full for all values>", backend


_EDITS_THROUGH_TEMPORARY_VIEWS = """
    import {mod} as torch

    def one_hot(line):
        t = torch.zeros(len(line), 1, 5)
        for li, c in enumerate(line):
            t[li][0]["abcde".find(c)] = 1      # each view is freed at once
        return t

    data = one_hot("cab")
    w = torch.ones(5, requires_grad=True)
    for step in range(3):                       # later backward calls age the edits
        (data * w).sum().backward()
"""


def test_edits_through_temporary_views_outlive_later_backward_calls(tmp_path):
    # the tutorial's tensor[li][0][i] = 1 (examples/name_classifier_rnn.py): after two more
    # backward calls the torch tracer held each edit through its freed view and lost it
    docs = {}
    for mod, backend in (("gradviz", "gradviz"), ("torch", "torch")):
        path = _write(tmp_path, _EDITS_THROUGH_TEMPORARY_VIEWS.format(mod=mod))
        docs[backend] = run_file(path, backend=backend).report()
    for doc in docs.values():
        row = next(t for t in doc["tensors"] if t["name"] == "data")
        assert (row["version"], row["edits"]) == (3, 3)
        assert [(h["op"], h["line"]) for h in row["history"]] == [("setitem", 7)] * 3
