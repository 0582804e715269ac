"""The torch backend's tracer: what a file does on PyTorch is recorded as the core records it
(file:line of nodes, saved tensors with their versions, the gradients the file's own backward
calls delivered), torch's own version check still raises, and a loop keeps a bounded record."""

import os
import sys
import textwrap

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


def _retained(tmp_path, steps):
    path = _write(tmp_path, _LOOP.format(steps=steps))
    run = run_file(path, backend="torch")
    assert run.error is None
    t = run.tracer
    assert len(t.backward_calls) == steps
    return {"nodes": len(t._nodes), "tensors": len(t.made_by), "steps": len(t.steps),
            "held": sum(1 for e in t._nodes.values() if e[1]() is not None)}


def test_a_training_loop_keeps_a_bounded_record(tmp_path):
    # the tracer keeps the last two steps' nodes and tensors: as many after 120 steps as
    # after 60 (each step's graph used to stay in the table through a saved tensor's
    # snapshot that held the node's own output)
    short, long = _retained(tmp_path, 60), _retained(tmp_path, 120)
    assert long == short
    assert long["nodes"] <= 2 * 6 + 1 and long["tensors"] <= 2 * 6 + 1


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
