"""gradviz.render.drawing: the graph command's work as a library (targets, one build, notes)."""

import io
import os

import pytest
from click.testing import CliRunner

import gradviz.render.dot as dot_module
from gradviz.inspect import run_file
from gradviz.render.dot import build_dot, count_nodes, shared_tensors
from gradviz.render.drawing import GraphDrawing, Target, output_targets
from gradviz.render.renderer import RenderError
from gradviz_cli.main import cli

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
Z = os.path.join(EXAMPLES, "graph_z_wx_b.py")

RNN = '''\
import gradviz as torch
w = torch.tensor(0.5, requires_grad=True)
h = torch.tensor(0.0)
for t in range(80):
    h = torch.tanh(h * w + 1)
'''


def count_builds(monkeypatch):
    calls = []
    original = dot_module._Builder.build

    def build(self, legend):
        calls.append(self.view)
        return original(self, legend)
    monkeypatch.setattr(dot_module._Builder, "build", build)
    return calls


def test_graph_builds_its_dot_once(tmp_path, monkeypatch):
    big = tmp_path / "big.py"
    big.write_text(RNN.replace("range(80)", "range(300)"))   # above LARGE_GRAPH nodes
    calls = count_builds(monkeypatch)
    r = CliRunner().invoke(cli, ["graph", str(big), "--dot", str(tmp_path / "g.dot"),
                                 "-o", "-"], catch_exceptions=False)
    assert r.exit_code == 0
    assert calls == ["backward"]
    assert "warning: 1500 nodes: the drawing will be hard to read" in r.stderr


def test_the_drawing_is_what_build_dot_count_nodes_and_shared_tensors_give(tmp_path):
    path = tmp_path / "rnn.py"
    path.write_text(RNN)
    report = run_file(str(path)).report()
    for options in ({}, {"view": "forward"}, {"collapse": True}, {"max_depth": 3}):
        drawing = GraphDrawing(report, **options)
        assert drawing.source == build_dot(report, **options)
        assert drawing.count == count_nodes(report, **options)
        assert drawing.shared == shared_tensors(report, **options)
    split = GraphDrawing(report)
    assert split.shared == {"w": 80} and split.count == 400    # w drawn once per step


def test_output_targets():
    assert output_targets(svg="a.svg", dot="a.dot", output="b.png") == [
        Target("svg", "a.svg", os.path.abspath("a.svg")),
        Target("dot", "a.dot", os.path.abspath("a.dot")),
        Target("png", "b.png", os.path.abspath("b.png"))]
    assert output_targets(output="-") == [Target("dot", "-", "-")]
    assert output_targets(output="G.GV")[0].fmt == "dot"
    with pytest.raises(RenderError, match="cannot tell the format of 'g.jpeg'") as info:
        output_targets(output="g.jpeg")
    assert info.value.exit_code == 2
    with pytest.raises(RenderError, match="say where to draw") as info:
        output_targets()
    assert info.value.exit_code == 2


def test_notes_say_what_happened_and_escape_it():
    report = {"file": "f.py", "tensors": [], "nodes": [], "roots": [],
              "error": {"type": "ValueError", "message": "bad [/x]\x1b", "file": "f.py",
                        "line": 3}}
    notes = [n.plain for n in GraphDrawing(report).notes]
    assert notes == [
        "ValueError: bad [/x]\\x1b (f.py:3) — drawing what was recorded up to there",
        "f.py: no graph to draw (no tensor that requires grad has a grad_fn or an "
        "AccumulateGrad)"]


def test_write_to_stdout_and_dot_first(tmp_path):
    report = run_file(Z).report()
    drawing = GraphDrawing(report)
    out = io.StringIO()
    targets = output_targets(output="-", dot=str(tmp_path / "z.dot"))
    lines = [line.plain for line in drawing.write(targets, stdout=out)]
    assert out.getvalue() == drawing.source
    assert lines == [f"wrote {tmp_path / 'z.dot'} (6 nodes, DOT)"]
    assert (tmp_path / "z.dot").read_text() == drawing.source
