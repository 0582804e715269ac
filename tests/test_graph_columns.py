"""gradviz.inspect.graphdata: the graph command's drawing of a plain run, read straight from the
recorded graph, is the drawing of the run's report, byte for byte; a run whose drawing shows
more than its forward graph is drawn from the report."""

import pytest

from gradviz.inspect import run_file
from gradviz.inspect.graphdata import graph_columns
from gradviz.render.drawing import GraphDrawing

DEFAULT = {"modules": {"depth": None, "expand": []}}   # the graph command's defaults

PLAIN = {
    "chain": '''\
import gradviz as torch
x = torch.tensor(1.0, requires_grad=True)
y = x
for i in range(600):
    y = y * 1.000001
''',
    "leaves": '''\
import gradviz as torch
xs = [torch.tensor(float(i % 7), requires_grad=True) for i in range(100)]
total = sum(xs)
''',
    "kinds": '''\
import gradviz as torch
w = torch.nn.Parameter(torch.randn(3, 2))
b = torch.zeros(2, requires_grad=True)
c = torch.ones(3)
x = torch.randn(4, 3, dtype=torch.float64)
h = (x.float() @ w + b).relu()
y = (h * c[:2]).sum()
z = h.exp().mean()
q, r = torch.ones(2, 2, requires_grad=True).unbind(0)
''',
    "escapes": '''\
import gradviz as torch
def f():
    a_b = torch.tensor([1.0, 2.0], requires_grad=True)
    return a_b * 2
globals()["we\\\\ird \\"&<name>"] = f()
o = torch.ones(2, requires_grad=True)
o2 = o.sin().cos().tan().exp().log().neg().abs().sqrt().sigmoid().tanh().relu()
''',
    # two names for one tensor, a named tensor that is another's input (the walk starts again
    # from the roots), a second output named, long generated names shortened to `%N`
    "names": """\
import gradviz as torch
x = torch.ones(3, requires_grad=True)
a = b = x * 2
c = (a + b).exp().sin().cos().tan().exp().log().neg().abs()
first, second = torch.ones(2, 3, requires_grad=True).unbind(0)
d = second * c
e = first.sum() + a.sum()
""",
}

NOT_PLAIN = {
    "backward": "y = (x * 2).sum()\ny.backward()\n",
    "retain_grad": "y = x * 2\ny.retain_grad()\nz = y.sum()\n",
    "hook": "y = x * 2\ny.register_hook(lambda g: g)\n",
    "leaf_hook": "x.register_hook(lambda g: g)\ny = x * 2\n",
    "in_place": "y = x * 2\ny.mul_(3)\n",
    "shared_leaf": "y = x * 2\nz = y * x\n",
    "module": "m = torch.nn.Linear(2, 1)\ny = m(x)\n",
    "error": "y = x * 2\nraise ValueError('no')\n",
}


def _run(tmp_path, source):
    path = tmp_path / "f.py"
    path.write_text(source)
    return run_file(str(path), retain_graph=True)


def _drawn(drawing):
    return drawing.source, drawing.count, drawing.shared, drawing.refs, \
        [note.plain for note in drawing.notes]


@pytest.mark.parametrize("name", sorted(PLAIN))
@pytest.mark.parametrize("options", [DEFAULT, {"modules": None}, dict(DEFAULT, legend=False),
                                     {"modules": {"depth": 1, "expand": []}}])
def test_plain_run_is_drawn_from_columns_as_from_its_report(tmp_path, name, options):
    run = _run(tmp_path, PLAIN[name])
    assert graph_columns(run) is not None
    report = run.report(saved=False, loops=False)
    assert _drawn(GraphDrawing.of_run(run, **options)) == _drawn(GraphDrawing(report, **options))


@pytest.mark.parametrize("name", sorted(NOT_PLAIN))
def test_a_run_whose_drawing_shows_more_is_drawn_from_its_report(tmp_path, name):
    source = "import gradviz as torch\nx = torch.ones(2, requires_grad=True)\n" + NOT_PLAIN[name]
    run = _run(tmp_path, source)
    assert graph_columns(run) is None
    report = run.report(saved=False, loops=False)
    assert _drawn(GraphDrawing.of_run(run, **DEFAULT)) == _drawn(GraphDrawing(report, **DEFAULT))


def test_columns_of_a_small_graph(tmp_path):
    run = _run(tmp_path, "import gradviz as torch\nx = torch.tensor(2.0, requires_grad=True)\n"
                         "y = (x * 3).exp()\n")
    columns = graph_columns(run)
    assert columns.roots == ["y"]
    assert columns.kinds == ["ExpBackward0", "MulBackward0", "AccumulateGrad"]
    assert columns.nexts == [(1,), (2,), ()]
    assert columns.made == ["y", "mul(x, …)", "x"]
    assert [line for _, line in columns.sites] == [3, 3, 3]
    assert columns.tensors["mul(x, …)"][:10] == ((), "float32", True, False, "MulBackward0",
                                                 0, 6.0, None, False, 1)


def test_graph_command_draws_a_plain_run_without_building_its_report(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import gradviz.inspect.report as report_module
    from gradviz_cli.main import cli
    expected = GraphDrawing(_run(tmp_path, PLAIN["chain"]).report(saved=False, loops=False),
                            **DEFAULT)
    path = tmp_path / "f.py"

    def refuse(*args, **kwargs):
        raise AssertionError("the report was built")
    monkeypatch.setattr(report_module, "build_report", refuse)
    out = tmp_path / "g.dot"
    r = CliRunner().invoke(cli, ["graph", str(path), "--dot", str(out)], catch_exceptions=False)
    assert r.exit_code == 0
    assert out.read_text() == expected.source
    assert f"wrote {out} (602 nodes, DOT)" in " ".join(r.stderr.split())


def test_a_drawing_from_columns_is_written_chunk_by_chunk(tmp_path):
    import io

    from gradviz.render.drawing import output_targets
    run = _run(tmp_path, PLAIN["names"])
    drawing = GraphDrawing.of_run(run, **DEFAULT)
    assert drawing._source is None and all(type(c) is bytes for c in drawing.chunks)
    expected = GraphDrawing(run.report(saved=False, loops=False), **DEFAULT)
    out = tmp_path / "g.dot"
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    targets = output_targets(dot=str(out), output="-", stdout=stdout)
    assert len(list(drawing.write(targets, stdout=stdout))) == 1
    assert out.read_text() == stdout.buffer.getvalue().decode() == expected.source
    assert drawing._source is None          # written without joining the text
    assert drawing.source == expected.source and drawing.refs == expected.refs


def test_refs_from_columns_are_in_drawing_order(tmp_path):
    run = _run(tmp_path, PLAIN["kinds"])
    expected = GraphDrawing(run.report(saved=False, loops=False), **DEFAULT)
    assert list(GraphDrawing.of_run(run, **DEFAULT).refs.items()) == list(expected.refs.items())
