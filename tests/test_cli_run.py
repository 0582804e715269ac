"""`gradviz run`: options, JSON keys and every error path, through click's CliRunner."""

import json
import os

import pytest
from click.testing import CliRunner

from gradviz_cli.main import cli

FILES = os.path.join(os.path.dirname(__file__), "files")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def f(name):
    return os.path.join(FILES, name)


def invoke(*args, catch=False):
    return CliRunner().invoke(cli, list(args), catch_exceptions=catch)


def run_json(*args):
    r = invoke("run", *args, "--json")
    return r.exit_code, json.loads(r.stdout)


TENSOR_KEYS = {"name", "shape", "dtype", "requires_grad", "is_leaf", "grad_fn", "next_functions",
               "version", "retains_grad", "data", "grad"}
NODE_KEYS = {"id", "name", "tensor", "next_functions", "saved"}


def test_json_document_has_the_documented_keys():
    code, doc = run_json(os.path.join(EXAMPLES, "mul_chain_backward.py"), "--backward", "e",
                         "--hooks")
    assert code == 0
    assert {"file", "backend", "tensors", "nodes", "hooks", "anomalies", "error"} <= set(doc)
    assert doc["backend"] == "gradviz" and doc["error"] is None
    for t in doc["tensors"]:
        assert TENSOR_KEYS <= set(t)
    for n in doc["nodes"]:
        assert NODE_KEYS <= set(n)
    for h in doc["hooks"]:
        assert {"target", "grad"} <= set(h)
    assert doc["roots"] == ["e"]


def test_generated_names_and_containers():
    code, doc = run_json(f("containers.py"), "--backward", "hidden")
    assert code == 0
    names = [t["name"] for t in doc["tensors"]]
    assert names[:6] == ["model.weight", "model.bias", "xs[0]", "xs[1]", "params['w']", "out"]
    assert "hidden" in names
    generated = [t for t in doc["tensors"] if t["generated"]]
    # Unnamed tensors are named after what made them: the module call (model(xs[0]) is the
    # last tensor the call made), else the op and its inputs.
    assert [t["name"] for t in generated] == [
        "t(model.weight)", "addmm(model.bias, …, t(model.weight))", "model(xs[0])",
        "sum(model(xs[0]))", "sum(params['w'])", "mul(out, …)"]
    weight = doc["tensors"][0]
    assert weight["is_parameter"] and weight["grad"] is not None


def test_retain_grad_shows_intermediate_gradients():
    _, doc = run_json(os.path.join(EXAMPLES, "mul_chain_backward.py"), "--backward", "e",
                      "--retain-grad")
    c = next(t for t in doc["tensors"] if t["name"] == "c")
    assert c["retains_grad"] and c["grad"] == 4.0


def test_nonscalar_backward_needs_gradient_ones():
    code, doc = run_json(f("nonscalar_root.py"), "--backward", "y")
    assert code == 1
    assert doc["error"]["message"].startswith("grad can be implicitly created only for scalar "
                                              "outputs")
    assert "--gradient ones" in doc["error"]["message"]
    code, doc = run_json(f("nonscalar_root.py"), "--backward", "y", "--gradient", "ones")
    assert code == 0 and doc["tensors"][0]["grad"] == [3.0, 3.0]


def test_retain_graph_allows_a_second_backward():
    code, doc = run_json(os.path.join(EXAMPLES, "graph_z_wx_b.py"), "--backward", "z",
                         "--retain-graph")
    assert code == 0
    saved = [s for n in doc["nodes"] for s in n["saved"]]
    assert saved and not any(s["freed"] for s in saved)


def test_anomaly_reports_the_forward_line():
    code, doc = run_json(os.path.join(EXAMPLES, "nan_grad_where.py"), "--backward", "loss",
                         "--anomaly")
    assert code == 1
    (a,) = doc["anomalies"]
    assert a["name"] == "SqrtBackward0" and a["line"] is not None
    assert doc["error"]["message"].startswith("Function 'SqrtBackward0' returned nan values")
    assert any(fr["line"] == a["line"] for fr in a["traceback"])


def test_import_torch_files_run_on_gradviz_with_args():
    r = invoke("run", f("uses_torch_name.py"), "--json", "--arg", "one", "--", "two")
    code, doc = r.exit_code, json.loads(r.stdout)
    assert code == 0
    assert doc["stdout"] == "argv ['one', 'two']\n"
    assert doc["tensors"][0]["name"] == "x"


def test_syntax_error_is_reported_with_file_and_line():
    code, doc = run_json(f("syntax_error.py"))
    assert code == 1
    assert doc["error"]["type"] == "SyntaxError"
    assert doc["error"]["line"] == 3 and doc["error"]["file"].endswith("syntax_error.py")


def test_exception_keeps_tables_and_user_frames_only():
    code, doc = run_json(f("raises.py"))
    assert code == 1
    e = doc["error"]
    assert e["type"] == "RuntimeError" and e["line"] == 5
    assert [fr["line"] for fr in e["traceback"]] == [10, 5]
    assert all("gradviz" + os.sep not in fr["file"] for fr in e["traceback"])
    assert [t["name"] for t in doc["tensors"]] == ["x", "y"]


def test_missing_file_and_not_python_are_usage_errors():
    r = invoke("run", f("does_not_exist.py"))
    assert r.exit_code == 2 and "no such file" in r.stderr
    r = invoke("run", f("not_python.txt"))
    assert r.exit_code == 2 and "not a Python file" in r.stderr


def test_unknown_name_suggests_close_matches():
    r = invoke("run", os.path.join(EXAMPLES, "mul_chain_backward.py"), "--backward", "ee")
    assert r.exit_code == 2
    assert "no tensor named 'ee'" in r.stderr and "Did you mean e" in r.stderr


def test_no_tensors_says_so():
    r = invoke("run", f("no_tensors.py"), "--no-color")
    assert r.exit_code == 0
    assert "no tensors" in r.stdout.lower()


def test_torch_backend_absent(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "torch":
            raise ImportError("no torch")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    r = invoke("run", os.path.join(EXAMPLES, "mul_chain_backward.py"), "--backend", "torch")
    assert r.exit_code == 2 and "needs PyTorch" in r.stderr


def test_torch_backend_gives_the_same_tables():
    pytest.importorskip("torch")
    path = os.path.join(EXAMPLES, "mul_chain_backward.py")
    _, mine = run_json(path, "--backward", "e")
    _, theirs = run_json(path, "--backward", "e", "--backend", "torch")
    keys = ["name", "shape", "dtype", "requires_grad", "is_leaf", "grad_fn", "next_functions",
            "version", "data", "grad"]
    for a, b in zip(mine["tensors"], theirs["tensors"]):
        assert {k: a[k] for k in keys} == {k: b[k] for k in keys}
    assert [n["name"] for n in mine["nodes"]] == [n["name"] for n in theirs["nodes"]]


def test_version_and_help():
    r = invoke("--version")
    assert r.exit_code == 0 and r.stdout.startswith("gradviz ")
    r = invoke("--help")
    assert r.exit_code == 0
    for cmd in ("run", "graph", "check-inplace", "gradcheck", "explain"):
        assert cmd in r.stdout
        sub = invoke(cmd, "--help")
        assert sub.exit_code == 0 and "Examples:" in sub.stdout


def test_the_version_is_looked_up_only_for_version():
    # importlib.metadata (and the email package it loads) cost every command 0.04 s to start
    import subprocess
    import sys
    code = "import sys, gradviz_cli.main; print('importlib.metadata' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert out.stdout.strip() == "False", out.stderr


def test_every_command_and_option_is_in_the_readme():
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    for name, cmd in cli.commands.items():
        assert f"gradviz {name}" in readme, name
        for p in cmd.params:
            for opt in p.opts:
                if opt.startswith("--"):
                    assert opt in readme, (name, opt)


def test_ctrl_c_exits_130(monkeypatch):
    from gradviz_cli import main as main_mod

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr("gradviz.inspect.run_file", interrupted)
    with pytest.raises(SystemExit) as exc:
        main_mod.main(["run", os.path.join(EXAMPLES, "mul_chain_backward.py")])
    assert exc.value.code == 130


# ----- tensors made inside functions ------------------------------------------------------------

def test_tensors_inside_functions_are_named_after_the_function_and_call():
    path = os.path.join(EXAMPLES, "def_main_script.py")
    code, doc = run_json(path)
    assert code == 0
    names = [t["name"] for t in doc["tensors"]]
    assert names == ["main.x", "main.w", "main.loss", "step[1].y", "step[1].loss", "step[2].y",
                     "sub(step[1].y, …)", "pow(sub(step[1].y, …))", "sub(step[2].y, …)",
                     "pow(sub(step[2].y, …))"]
    assert doc["roots"] == ["main.loss", "step[1].loss"]
    node_names = {n["tensor"] for n in doc["nodes"]}
    assert {"main.loss", "step[2].y", "main.w"} <= node_names


def test_every_name_option_takes_function_locals_and_generated_names():
    path = os.path.join(EXAMPLES, "def_main_script.py")
    r = invoke("graph", path, "--root", "step[1].loss", "-o", "-")
    assert r.exit_code == 0, r.output
    assert "(no autograd graph)" not in r.stdout
    assert 'label="SumBackward0\\nstep[1].loss [] float32\\ngrad: 1"' in r.stdout
    assert "step[2].y" not in r.stdout
    by_alias = invoke("graph", path, "--root", "%1", "-o", "-")
    by_name = invoke("graph", path, "--root", "pow(sub(step[2].y, …))", "-o", "-")
    assert by_alias.exit_code == by_name.exit_code == 0
    assert by_alias.stdout == by_name.stdout
    code, doc = run_json(path, "--backward", "step[2].y", "--gradient", "ones")
    assert doc["backward"] == "step[2].y"
    r = invoke("run", path, "--backward", "main.nope")
    assert r.exit_code == 2
    assert "no tensor named 'main.nope' in " in r.output
    assert "Did you mean main.x, main.w, main.loss?" in r.output


# ----- saved tensors modified after backward ------------------------------------------------------

def test_modified_after_backward_is_harmless_and_pending_backward_stays_red():
    path = f("step_after_backward.py")
    r = CliRunner().invoke(cli, ["run", path], env={"COLUMNS": "200"}, catch_exceptions=False)
    assert r.exit_code == 0
    lines = [line.rstrip() for line in r.stdout.splitlines()]
    harmless = ("_saved_self w [2] v0->v2 modified after backward (harmless: the graph was "
                "already used)")
    assert any(line.endswith(harmless) for line in lines)
    assert any(line.endswith("_saved_self w [2] v1->v2 MODIFIED") for line in lines)
    assert sum("MODIFIED" in line for line in lines) == 2
    code, doc = run_json(path)
    saved = {n["tensor"]: n["saved"] for n in doc["nodes"] if n["name"] == "MulBackward0"}
    assert [(s["saved_version"], s["version"], s["freed"]) for s in saved["mul(w, w)"]] == [
        (0, 2, True), (0, 2, True)]
    assert [(s["saved_version"], s["version"], s["freed"]) for s in saved["%4"]] == [
        (1, 2, False), (1, 2, False)]
    dot = invoke("graph", path, "--show-saved", "-o", "-").stdout
    assert dot.count("modified after backward (harmless: the graph was already used)") == 2
    assert dot.count(" color=red dir=none") == 2


# ----- a tensor edited in place is one row, with its history -------------------------------------

def test_an_edited_tensor_is_one_row_with_its_history():
    code, doc = run_json(f("inplace_history.py"))
    assert code == 0
    assert [t["name"] for t in doc["tensors"]] == ["a", "b", "c", "mul(b, …)"]
    b = doc["tensors"][1]
    assert [(h["version"], h["grad_fn"], h["op"], h["line"]) for h in b["history"]] == [
        (1, "CopySlices", "setitem", 4), (2, "MulBackward0", "mul_", 5), (3, None, "add_", 7)]
    assert [n["tensor"] for n in doc["nodes"]] == [
        "c", "mul(b, …)", "b", "b (v1)", "b (v0)", "a"]
    r = CliRunner().invoke(cli, ["run", f("inplace_history.py")], env={"COLUMNS": "100"})
    lines = [line.rstrip() for line in r.stdout.splitlines()]
    start = lines.index("In-place edits")
    assert lines[start:start + 4] == [
        "In-place edits", "b  version 1: CopySlices at line 4",
        "b  version 2: MulBackward0 at line 5",
        "b  version 3: add_ under no_grad (not recorded) at line 7"]


def test_module_call_outputs_are_named_after_the_module():
    code, doc = run_json(os.path.join(EXAMPLES, "def_main_mlp.py"))
    assert code == 0
    generated = [t["name"] for t in doc["tensors"] if t["generated"]]
    assert generated == ["t(main.model.fc1.weight)", "fc1(main.x)", "relu(fc1(main.x))",
                         "t(main.model.fc2.weight)", "fc2(relu(fc1(main.x)))"]
    weight = doc["tensors"][0]
    assert weight["edits"] == 1 and weight["history"][0]["op"] == "uniform_"
    r = CliRunner().invoke(cli, ["run", os.path.join(EXAMPLES, "def_main_mlp.py")],
                           env={"COLUMNS": "120"})
    assert "In-place edits" not in r.stdout     # initialisation under no_grad is not news
    r = invoke("graph", os.path.join(EXAMPLES, "def_main_mlp.py"), "--root", "fc1(main.x)",
               "-o", "-")
    assert r.exit_code == 0 and "fc2(" not in r.stdout and "fc1(main.x) [2, 4]" in r.stdout
