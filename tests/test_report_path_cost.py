"""What `gradviz run` and `gradviz graph --dot` leave out (issue 12, the 100,000-node rows):
modules a command does not use are not imported, the DOT text goes to the body in chunks, and
the run's tables pick their rows in one pass. No timing here (benchmarks/ times)."""

import os
import subprocess
import sys
import textwrap

from gradviz.inspect import run_file
from gradviz.inspect.graphdata import graph_columns
from gradviz.render import dot as dot_module
from gradviz.render.drawing import GraphDrawing
from gradviz.render.grouping import View


def _modules_after(tmp_path, *args):
    """The modules loaded once `gradviz ARGS` ran, in a fresh process."""
    path = tmp_path / "f.py"
    path.write_text("import gradviz as torch\nx = torch.ones(2, requires_grad=True)\n"
                    "y = (x * 2).sum()\n")
    args = [str(path) if a == "FILE" else str(tmp_path / a) if a.endswith(".dot") else a
            for a in args]
    code = textwrap.dedent(f"""\
        import sys
        from gradviz_cli.main import main
        try:
            main({args!r})
        except SystemExit:
            pass
        sys.stderr.write("\\n".join(sorted(sys.modules)))
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                         cwd=tmp_path)
    return set(out.stderr.splitlines())


def test_graph_dot_imports_neither_the_tables_nor_rich_tables(tmp_path):
    loaded = _modules_after(tmp_path, "graph", "FILE", "--dot", "g.dot")
    assert (tmp_path / "g.dot").read_text().startswith("digraph backward {")
    assert "gradviz.render.dot" in loaded
    assert not {"gradviz.render.tables", "rich.table", "rich.panel"} & loaded


def test_run_imports_no_graphviz_and_run_json_no_rich(tmp_path):
    loaded = _modules_after(tmp_path, "run", "FILE")
    assert "gradviz.render.tables" in loaded
    assert not {m for m in loaded if m.split(".")[0] == "graphviz"}
    loaded = _modules_after(tmp_path, "run", "FILE", "--json")
    assert not {m for m in loaded if m.split(".")[0] in ("graphviz", "rich")}


def test_render_names_are_imported_when_asked_for():
    import gradviz.render as render
    assert render.build_dot is dot_module.build_dot
    assert set(render.__all__) <= set(dir(render))
    try:
        render.no_such_name
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_a_long_chain_is_written_in_chunks_with_the_same_text(tmp_path, monkeypatch):
    path = tmp_path / "chain.py"
    path.write_text("import gradviz as torch\nx = torch.tensor(1.0, requires_grad=True)\n"
                    "y = x\nfor i in range(50):\n    y = y * 1.000001\n")
    run = run_file(str(path), retain_graph=True)
    whole = GraphDrawing.of_run(run).source
    monkeypatch.setattr(dot_module, "_CHUNK", 7)
    chunks = dot_module._ColumnBuilder(graph_columns(run)).build(True)
    assert all(type(chunk) is bytes for chunk in chunks)
    assert b"".join(chunks).decode() == whole
    # the header, 51 node statements and 51 edges, 7 a chunk (the AccumulateGrad and its leaf
    # apart), the legend and the closing brace
    assert 16 <= len(chunks) <= 24
    assert max(len(chunk.splitlines()) for chunk in chunks[1:-1]) == 7


def test_view_picks_rows_and_notes_in_one_pass():
    report = {"iterations": [{"kind": "line", "count": 3, "line": 5, "grad_fn": "MulBackward0"},
                             {"kind": "backward", "count": 3, "line": 9, "calls": [0, 3]}],
              "tensors": [{"name": "x", "loop": None}] +
                         [{"name": f"t{i}", "loop": 0, "iteration": i} for i in (1, 2, 3)],
              "nodes": [{"id": f"n{i}", "loop": 1, "iteration": i} for i in (1, 2, 3)]}
    view = View(report)
    assert [t["name"] for t in view.tensors] == ["x", "t3"]
    assert view.tensor_note == " (× 3 MulBackward0 made at line 5, showing the last)"
    assert [n["id"] for n in view.nodes] == ["n3"] and view.hidden_nodes == {"n1", "n2"}
    assert view.node_note == " (× 3 iterations, showing the last)"
    full = View(report, full=True)
    assert len(full.tensors) == 4 and full.hidden_nodes == set()
    assert full.tensor_note == " (× 3 MulBackward0 made at line 5, showing all)"
    assert full.node_note == " (× 3 iterations, showing all)"


def test_the_graph_table_finds_a_node_by_its_number_without_a_dict_of_all():
    from gradviz.render.tables import _ById
    entries = [{"id": "n0"}, {"id": "n1"}, {"id": "x"}, {"id": "n03"}]
    nodes = _ById(entries)
    assert nodes.get("n1") is entries[1] and nodes.by_id is None
    assert nodes.get("x") is entries[2] and nodes.get("n03") is entries[3]
    assert nodes.get("n9", {}) == {} and nodes.get("n3") is None
