"""Everything the inspector does is linear in the size of the run (issue 12).

No timing here (benchmarks/ times): these tests count work and memory at two modest sizes, and
a quadratic step shows as a ratio near 4 where linear gives 2.
"""

import json
import textwrap
import tracemalloc

import numpy as np
from click.testing import CliRunner

from gradviz.inspect import report as report_module
from gradviz.inspect import run_file
from gradviz.inspect.report import report_json, summary_stats
from gradviz_cli.main import cli


def write(tmp_path, source, name="prog.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return str(path)


def leaves_file(tmp_path, n):
    return write(tmp_path, f"""
        import gradviz as torch
        xs = [torch.tensor(float(i % 7), requires_grad=True) for i in range({n})]
        total = sum(xs)
    """, name=f"leaves_{n}.py")


def count_node_type_calls(monkeypatch, path):
    calls = [0]
    real = report_module._node_type

    def counted(node):
        calls[0] += 1
        return real(node)

    monkeypatch.setattr(report_module, "_node_type", counted)
    run_file(path).report()
    monkeypatch.setattr(report_module, "_node_type", real)
    return calls[0]


def test_report_work_grows_linearly_with_leaves(tmp_path, monkeypatch):
    # Each generated leaf used to scan every node for its AccumulateGrad: quadratic.
    small = count_node_type_calls(monkeypatch, leaves_file(tmp_path, 300))
    big = count_node_type_calls(monkeypatch, leaves_file(tmp_path, 1200))
    assert small > 300
    assert big / small < 4.5        # linear: ~4 for 4x the leaves; quadratic: ~16


def training_loop(tmp_path, steps):
    return write(tmp_path, f"""
        import gradviz as torch
        w = torch.randn(64, requires_grad=True)
        x = torch.randn(64)
        for step in range({steps}):
            loss = ((w * x).tanh() * x).sum()
            loss.backward()
            with torch.no_grad():
                w -= 0.01 * w.grad
            w.grad = None
    """, name=f"loop_{steps}.py")


def test_tracer_keeps_the_last_step_not_every_step(tmp_path):
    short = run_file(training_loop(tmp_path, 20)).tracer
    long = run_file(training_loop(tmp_path, 200)).tracer
    assert len(long.nodes) == len(short.nodes) > 0
    assert len(long._made_ids) + len(long.module_output) <= \
        len(short._made_ids) + len(short.module_output) + 5
    # a dead step's gradients are dropped; w's AccumulateGrad lives on (each step's graph is
    # alive while the next forward reuses it, as in torch), and keeps one entry per step
    def per_kind(tracer):
        ops = sum(1 for node, _ in tracer.events if type(node).__name__ != "AccumulateGrad")
        return ops, len(tracer.events) - ops
    assert per_kind(short)[0] == per_kind(long)[0] > 0
    assert per_kind(long)[1] - per_kind(short)[1] == 180
    big = [g for _, grads in long.events for g in grads if isinstance(g, np.ndarray)
           and g.size > 1]
    assert big, "the last step's gradients are kept whole"


def test_gradients_of_a_long_lived_node_are_summarized_after_their_step(tmp_path):
    path = write(tmp_path, """
        import gradviz as torch
        w = torch.randn(1000, requires_grad=True)
        for step in range(5):
            (w * 2).sum().backward()
    """)
    tracer = run_file(path).tracer
    grads = [g[0] for node, g in tracer.events if node.name() == "torch::autograd::"
             "AccumulateGrad" or type(node).__name__ == "AccumulateGrad"]
    assert len(grads) == 5
    assert all(isinstance(g, str) and g.startswith("<1000 elements") for g in grads[:4])
    assert isinstance(grads[4], np.ndarray) and grads[4].shape == (1000,)


def test_long_tables_show_head_and_tail(tmp_path):
    # One line, no loop of the file's (a loop's tensors are grouped to its last iteration).
    path = write(tmp_path, """
        import functools
        import gradviz as torch
        x = torch.tensor(1.0, requires_grad=True)
        y = functools.reduce(lambda a, _: a * 2, range(300), x)
    """)
    r = CliRunner().invoke(cli, ["run", path, "--no-color"], catch_exceptions=False)
    assert r.exit_code == 0
    out = r.stdout
    assert "… 261 more tensors — --full or --json for all" in out
    assert "… 261 more nodes — --full or --json for all" in out
    assert len(out.splitlines()) < 200     # a node keeps a sub-row per edge; --full has 900+
    full = CliRunner().invoke(cli, ["run", path, "--no-color", "--full"])
    assert "more tensors" not in full.stdout and len(full.stdout.splitlines()) > 600


def test_summary_of_a_big_tensor_does_not_copy_it(tmp_path):
    a = np.linspace(-1, 3, 4_000_000, dtype=np.float32)
    a[7] = np.nan
    tracemalloc.start()
    lo, hi, mean = summary_stats(a)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (lo, hi) == (-1.0, 3.0) and abs(mean - 1.0) < 1e-3
    assert peak < a.nbytes * 0.75          # a float64 copy would be 2x a.nbytes


def test_report_json_is_the_report(tmp_path):
    run = run_file(leaves_file(tmp_path, 5))
    rep = run.report()
    text = report_json(rep)
    assert json.loads(text) == json.loads(json.dumps(rep))
    assert text.splitlines()[0] == "{" and text.count("\n") > len(rep)
    rep["stdout"] = float("nan")        # a value no cleaner saw is still valid JSON
    assert json.loads(report_json(rep))["stdout"] == "nan"


def test_a_long_loop_keeps_the_last_two_calls_steps_and_says_so(tmp_path):
    run = run_file(training_loop(tmp_path, 10))
    assert {step.call for step in run.tracer.steps} == {8, 9}
    calls = run.report()["backward_calls"]
    assert [c["steps_kept"] for c in calls] == [False] * 8 + [True, True]
    assert calls[0]["steps"] == [] and calls[9]["steps"]
    r = CliRunner().invoke(cli, ["run", training_loop(tmp_path, 10), "--step", "--no-color"],
                           catch_exceptions=False)
    assert "… 7 earlier backward calls not shown" in r.stdout
    assert "(steps not kept: only the last two backward calls' are)" in r.stdout


# ----- DOT statements written directly are graphviz's, byte for byte ---------------------------

def test_dot_statements_match_the_graphviz_package():
    import graphviz

    from gradviz.render import dot as dot_module
    tricky = ["x", "node", "Graph", "n1", "-1.5", "a b", 'say "hi"', 'end \\"', "back\\\\",
              "<b>", "<b>x</b>", "tab\there", "ünï", "", "a\\nb", "x:y"]
    builder = dot_module._Builder({"tensors": [], "nodes": [], "roots": []}, "backward", None,
                                  False, None, False, True)
    for text in tricky:
        for label in (graphviz.nohtml(text), text):
            expected = graphviz.Digraph()
            expected.node("n0", label, shape="box", tooltip=graphviz.nohtml(text), style="x")
            expected.edge("n0", "n1", label=label, weight="0")
            got = [builder.quote("n0") + builder.attr_list(
                       label, {"tooltip": graphviz.nohtml(text), "style": "x", "shape": "box"}),
                   builder.quote("n0") + " -> " + builder.quote("n1")
                   + builder.attr_list(label, {"weight": "0"})]
            assert [line.strip() for line in expected.body] == got


def test_report_reads_the_module_level_names_once(tmp_path):
    # Each named leaf used to copy the list of module-level names into a new set: 20,000
    # leaves took 41 s (quadratic).
    path = write(tmp_path, """
        import gradviz as torch
        names = globals()
        for i in range(200):
            names[f"t{i}"] = torch.tensor(float(i), requires_grad=True)
    """)
    run = run_file(path)

    class Counted(list):
        reads = 0

        def __getitem__(self, index):
            Counted.reads += 1
            return super().__getitem__(index)

    run._named = Counted(run.named)
    rep = run.report()
    assert sum(1 for t in rep["tensors"] if t["is_leaf"] and not t["generated"]) == 200
    assert Counted.reads <= 2


def test_the_renderer_does_not_import_the_inspector_for_gc_paused():
    # render/dot.py pauses the collector with the helper the report uses, from a module both
    # import: the renderer works from plain data and never depends on the inspector.
    import gradviz._gc
    from gradviz.render import dot
    source = open(dot.__file__, encoding="utf-8").read()
    assert "inspect" not in "".join(line for line in source.splitlines()
                                    if line.lstrip().startswith(("import", "from")))
    assert dot.gc_paused is gradviz._gc.gc_paused is report_module.gc_paused


def test_gc_paused_restores_the_collector_as_it_was():
    import gc

    from gradviz._gc import gc_paused
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()       # the inner pause leaves the outer one paused
    assert gc.isenabled()


def test_run_and_graph_keep_the_collector_paused_after_the_file_ran(tmp_path, monkeypatch):
    # The report, its tables and the drawing are all kept: a collection would only walk them
    # (and the file's graph) again. The file itself runs with the collector as a user has it.
    import gc

    from gradviz.render import drawing, tables
    seen = {}
    path = write(tmp_path, """
        import gc
        import gradviz as torch
        during_file = gc.isenabled()
        x = torch.tensor(1.0, requires_grad=True)
        y = x * 2
    """)
    real_print, real_write = tables.print_report, drawing.GraphDrawing.write

    def print_report(*args, **kwargs):
        seen["tables"] = gc.isenabled()
        return real_print(*args, **kwargs)

    def drawing_write(self, *args, **kwargs):
        seen["drawing"] = gc.isenabled()
        yield from real_write(self, *args, **kwargs)

    monkeypatch.setattr(tables, "print_report", print_report)
    monkeypatch.setattr(drawing.GraphDrawing, "write", drawing_write)
    r = CliRunner().invoke(cli, ["run", path, "--json"], catch_exceptions=False)
    assert r.exit_code == 0 and json.loads(r.stdout)["tensors"]
    assert CliRunner().invoke(cli, ["run", path], catch_exceptions=False).exit_code == 0
    dot = str(tmp_path / "g.dot")
    assert CliRunner().invoke(cli, ["graph", path, "--dot", dot],
                              catch_exceptions=False).exit_code == 0
    assert seen == {"tables": False, "drawing": False}
    assert gc.isenabled()       # restored when the command ends


def test_the_command_line_freezes_what_is_left_before_exiting(tmp_path):
    # At exit Python's last collection would walk the file's graph and the report once more
    # (a quarter of `run` on a 100,000-node chain): main() freezes them first.
    import subprocess
    import sys
    path = write(tmp_path, """
        import gradviz as torch
        x = torch.tensor(1.0, requires_grad=True)
        y = x * 2
    """)
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count(), file=sys.stderr))\n"
            "from gradviz_cli.main import main\n"
            f"main(['run', {path!r}, '--json'])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    frozen = int(proc.stderr.split("frozen")[1].split()[0])
    assert frozen > 1000


def test_graph_builds_only_the_report_parts_its_drawing_reads(tmp_path, monkeypatch):
    # graph reads neither the loops nor, without --show-saved, the saved values: its report
    # leaves them out, and the drawing is the one the whole report gives.
    from gradviz.render.dot import build_graph
    from gradviz.render.drawing import GraphDrawing
    path = write(tmp_path, """
        import gradviz as torch
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        h = w
        for i in range(4):
            h = (h * w).tanh()
        loss = h.sum()
        loss.backward(retain_graph=True)
    """)
    run = run_file(path)
    whole = run.report()
    assert whole["iterations"] and any(n["saved"] for n in whole["nodes"])
    looped = []
    real = report_module.add_iterations
    monkeypatch.setattr(report_module, "add_iterations",
                        lambda *args: looped.append(1) or real(*args))
    for show_saved in (False, True):
        for collapse in (False, True):
            drawing = GraphDrawing.of_run(run, show_saved=show_saved, collapse=collapse)
            assert drawing.source == build_graph(whole, show_saved=show_saved,
                                                 collapse=collapse).source
    assert looped == []
    part = run.report(saved=False, loops=False)
    assert "iterations" not in part and not any(n["saved"] for n in part["nodes"])
    assert [t["name"] for t in part["tensors"]] == [t["name"] for t in whole["tensors"]]


def test_scalar_values_are_written_as_plain_numbers(tmp_path):
    # A 0-d tensor's value is its item(), nan and inf as the strings JSON needs.
    path = write(tmp_path, """
        import gradviz as torch
        a = torch.tensor(1.5)
        b = torch.tensor(float("nan"))
        c = torch.tensor(-float("inf"), dtype=torch.float64)
        d = torch.tensor(3)
        e = torch.tensor(True)
        f = torch.tensor([1.0, float("inf")])
    """)
    data = {t["name"]: t["data"] for t in run_file(path).report()["tensors"]}
    assert data == {"a": 1.5, "b": "nan", "c": "-inf", "d": 3, "e": True, "f": [1.0, "inf"]}
    assert [type(v) for v in data.values()] == [float, str, str, int, bool, list]


def test_a_leaf_used_at_many_depths_is_still_drawn_once_per_depth(tmp_path):
    # The drawing looks for the users of AccumulateGrad nodes only: a weight shared by every
    # step of a long chain is split, one used once is not.
    from gradviz.render.dot import build_graph
    path = write(tmp_path, """
        import gradviz as torch
        w = torch.tensor(1.0, requires_grad=True)
        v = torch.tensor(2.0, requires_grad=True)
        h = v * 1.0
        for i in range(60):
            h = h * w
    """)
    built = build_graph(run_file(path).report(), split_shared=0)
    assert built.shared == {"w": 60} and "v" not in built.shared
    assert built.count == 61 + 2 + 2 * 60     # the muls, v and its AccumulateGrad, 60 copies


def _printed(report, **options):
    import io

    from rich.console import Console

    from gradviz.render.tables import print_report
    console = Console(file=io.StringIO(), width=100, no_color=True)
    print_report(console, report, **options)
    return console.file.getvalue()


def test_a_lazy_report_is_the_report(tmp_path):
    # build_report(lazy=True) builds each entry when it is read: the same entries, keys in the
    # same order (the JSON text), the same tables with every option.
    path = write(tmp_path, """
        import gradviz as torch
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        w.register_hook(lambda g: g * 2)
        h = w
        for i in range(5):
            h = (h * w).tanh()
        b = w.detach().clone()
        b.mul_(2)
        loss = h.sum() + b.sum()
        for step in range(3):
            loss.backward(retain_graph=True)
    """)
    run = run_file(path)
    eager, lazy = run.report(), run.report(lazy=True)
    assert isinstance(eager["nodes"], list) and not isinstance(lazy["nodes"], list)
    assert report_json(lazy) == report_json(eager)
    assert lazy["nodes"] == eager["nodes"] and lazy["tensors"] == eager["tensors"]
    assert lazy["nodes"][-1] == eager["nodes"][-1] and lazy["tensors"][1:3] == eager["tensors"][1:3]
    for options in ({}, {"full": True}, {"collapse": True}, {"hooks": True, "steps": True}):
        assert _printed(run.report(lazy=True), **options) == _printed(eager, **options)


def test_the_tables_build_only_the_entries_they_print(tmp_path, monkeypatch):
    # A terminal `run` of a long chain prints its last iteration: 2 of its 2,001 nodes and 2
    # of its 2,001 tensors are built whole; the counts in the titles are still over all.
    path = write(tmp_path, """
        import gradviz as torch
        x = torch.tensor(1.0, requires_grad=True)
        y = x
        for i in range(2000):
            y = y * 1.000001
    """)
    built = {"node": 0, "tensor": 0}
    for kind in built:
        real = getattr(report_module._Builder, f"{kind}_entry")

        def counted(self, *args, _real=real, _kind=kind):
            built[_kind] += 1
            return _real(self, *args)

        monkeypatch.setattr(report_module._Builder, f"{kind}_entry", counted)
    report = run_file(path).report(lazy=True)
    assert built == {"node": 0, "tensor": 0} and len(report["nodes"]) == 2001
    out = _printed(report)
    assert built == {"node": 2, "tensor": 2}
    assert "Graph (× 2000 MulBackward0 made at line 6, showing the last)" in out
    r = CliRunner().invoke(cli, ["run", path, "--no-color"], catch_exceptions=False)
    assert r.stdout.endswith(out) and built == {"node": 4, "tensor": 4}
    r = CliRunner().invoke(cli, ["run", path, "--json"], catch_exceptions=False)
    assert len(json.loads(r.stdout)["nodes"]) == 2001 and built["node"] == 4 + 2001
