"""graph, check-inplace, gradcheck and explain through the command line: outputs, exit codes."""

import json
import os
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from gradviz_cli.main import cli

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
FILES = os.path.join(os.path.dirname(__file__), "files")
Z = os.path.join(EXAMPLES, "graph_z_wx_b.py")


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def has_renderer():
    from gradviz.render.renderer import find_renderer
    return find_renderer() is not None


@pytest.mark.skipif(not has_renderer(), reason="no Graphviz renderer")
def test_graph_svg_has_every_named_tensor(tmp_path):
    out = tmp_path / "z.svg"
    r = invoke("graph", Z, "--svg", str(out), "--backward", "z", "--show-saved")
    assert r.exit_code == 0, r.stderr
    text = " ".join(t.text or "" for t in ET.parse(out).iter() if t.tag.endswith("text"))
    for name in ("w", "b", "y", "z", "AccumulateGrad", "MulBackward0", "AddBackward0"):
        assert name in text
    assert "wrote" in r.stderr


def test_graph_dot_to_stdout_is_byte_identical():
    a = invoke("graph", Z, "-o", "-").stdout
    b = invoke("graph", Z, "-o", "-").stdout
    assert a == b and a.startswith("digraph") and "0x" not in a


def test_graph_forward_view_and_root():
    r = invoke("graph", Z, "--view", "forward", "--root", "z", "-o", "-", "--no-legend")
    assert r.exit_code == 0
    assert "mul" in r.stdout and "add" in r.stdout and "Legend" not in r.stdout


def test_graph_usage_errors():
    assert invoke("graph", Z).exit_code == 2                       # no output named
    r = invoke("graph", Z, "-o", "z.jpeg")
    assert r.exit_code == 2 and "extension" in r.stderr
    r = invoke("graph", Z, "--root", "zz", "-o", "-")
    assert r.exit_code == 2 and "Did you mean z" in r.stderr
    r = invoke("graph", os.path.join(FILES, "missing.py"), "-o", "-")
    assert r.exit_code == 2


def test_graph_unwritable_path_is_exit_2(tmp_path):
    r = invoke("graph", Z, "--dot", str(tmp_path / "no" / "such" / "dir" / "z.dot"))
    assert r.exit_code == 2 and "cannot write" in r.stderr
    assert not (tmp_path / "no").exists()


def test_graph_without_renderer_writes_dot_and_exits_3(tmp_path, monkeypatch):
    monkeypatch.setattr("gradviz.render.renderer.find_renderer", lambda *a, **k: None)
    monkeypatch.delenv("GRADVIZ_DOT", raising=False)
    r = invoke("graph", Z, "--svg", str(tmp_path / "z.svg"))
    assert r.exit_code == 3
    assert (tmp_path / "z.dot").read_text().splitlines()[1].startswith("digraph")
    assert not (tmp_path / "z.svg").exists()
    assert "graphviz-pure" in r.stderr


def test_graph_of_a_failing_file_still_draws_and_exits_1():
    r = invoke("graph", os.path.join(EXAMPLES, "inplace_version_error.py"), "-o", "-")
    assert r.exit_code == 1 and r.stdout.startswith("digraph")


def test_check_inplace_text_and_exit_codes():
    r = invoke("check-inplace", os.path.join(EXAMPLES, "inplace_version_error.py"), "--no-color")
    assert r.exit_code == 1
    assert "setitem on 'b'" in r.stdout and "fix:" in r.stdout
    r = invoke("check-inplace", os.path.join(EXAMPLES, "inplace_ok_when_not_saved.py"))
    assert r.exit_code == 0 and "No in-place edit breaks backward." in r.stdout
    data = os.path.join(FILES, "inplace_data_edit.py")
    assert invoke("check-inplace", data).exit_code == 0
    assert invoke("check-inplace", data, "--strict").exit_code == 1
    doc = json.loads(invoke("check-inplace", data, "--json").stdout)
    assert set(doc) == {"file", "findings", "warnings", "error"}
    assert invoke("check-inplace", os.path.join(FILES, "nope.py")).exit_code == 2


def test_gradcheck_table_and_json():
    path = os.path.join(EXAMPLES, "broadcast_grad_shape.py")
    r = invoke("gradcheck", path, "--no-color", "--max-elements", "2")
    assert r.exit_code == 0 and "pass" in r.stdout and "d loss / d leaf" in r.stdout
    doc = json.loads(invoke("gradcheck", path, "--json", "--root", "loss").stdout)
    (root,) = doc["roots"]
    assert [lf["name"] for lf in root["leaves"]] == ["w", "b"]
    assert invoke("gradcheck", path, "--root", "nope").exit_code == 2


def test_gradcheck_reports_a_leaf_edited_in_place():
    doc = json.loads(invoke("gradcheck", os.path.join(EXAMPLES, "training_loop_mlp.py"),
                            "--json", "--max-elements", "1").stdout)
    assert not doc["passed"]
    assert any(r["error"] for r in doc["roots"])


def test_explain_text_json_and_unknown_name():
    path = os.path.join(EXAMPLES, "relu_zero_grad.py")
    r = invoke("explain", path, "x", "--root", "loss", "--no-color")
    assert r.exit_code == 0 and "ReluBackward0" in r.stdout
    doc = json.loads(invoke("explain", path, "x", "--json").stdout)
    assert {"tensor", "root", "grad", "causes", "path"} <= set(doc)
    r = invoke("explain", path, "xx")
    assert r.exit_code == 2 and "Did you mean x" in r.stderr
