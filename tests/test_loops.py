"""What a loop made, grouped (issue #13): the report's "iterations" and per-tensor "loop" /
"iteration" keys, the tables' "(× 1000 iterations, showing the last)", `--full` and
`run --collapse`."""

import json
import textwrap

from click.testing import CliRunner

from gradviz.inspect import run_file
from gradviz.inspect.loops import loop_lines
from gradviz.render.grouping import View
from gradviz_cli.main import cli

TRAIN = """
w = torch.tensor([1.0, -2.0], requires_grad=True)
x = torch.tensor([0.5, 1.5])
for i in range(1000):
    y = w * x
    loss = (y - 1).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
    w.grad.zero_()
"""

NO_BACKWARD = """
x = torch.ones(3, requires_grad=True)
h = x
for i in range(1000):
    h = h * 1.001
total = h.sum()
"""


def _write(tmp_path, body, name="f.py"):
    path = tmp_path / name
    path.write_text("import gradviz as torch\n" + textwrap.dedent(body))
    return str(path)


def _in_main(body):
    return "def main():\n" + textwrap.indent(textwrap.dedent(body), "    ") + \
        "\n\nif __name__ == '__main__':\n    main()\n"


def _run(*args):
    result = CliRunner().invoke(cli, ["run", *args, "--no-color"], catch_exceptions=False,
                                env={"COLUMNS": "100"})
    return result


def _lines(output):
    return [line.rstrip() for line in output.splitlines()]


def test_loop_lines_are_the_bodies_of_loops_and_comprehensions():
    source = ("a = 1\nfor i in x:\n    b = 2\n    c = 3\nwhile a:\n    d = 4\n"
              "e = [f(v) for v in\n     w]\n")
    assert loop_lines(source) == {3, 4, 6, 7, 8}


def test_training_loop_at_module_level(tmp_path):
    path = _write(tmp_path, TRAIN)
    report = run_file(path).report()
    assert report["iterations"] == [{"kind": "backward", "count": 1000, "file": path,
                                     "line": 8, "calls": [0, 999], "nodes": 4}]
    marks = {t["name"]: (t["loop"], t["iteration"]) for t in report["tensors"]}
    assert marks == {"w": (None, None), "x": (None, None), "y": (0, 1000), "loss": (0, 1000),
                     "sub(y, …)": (0, 1000), "pow(sub(y, …))": (0, 1000)}
    result = _run(path)
    assert result.exit_code == 0
    lines = _lines(result.output)
    assert "Tensors (× 1000 iterations, showing the last)" in lines
    assert "Graph (× 1000 iterations, showing the last)" in lines
    # A thousand steps print as one: the header, two tables and their rows.
    assert len(lines) < 40


def test_training_loop_inside_main(tmp_path):
    path = _write(tmp_path, _in_main(TRAIN))
    report = run_file(path).report()
    (group,) = report["iterations"]
    assert (group["kind"], group["count"], group["line"]) == ("backward", 1000, 9)
    marks = {t["name"]: t["iteration"] for t in report["tensors"]}
    assert marks["main.y"] == marks["main.loss"] == 1000
    assert marks["main.w"] is None
    result = _run(path)
    assert result.exit_code == 0
    assert "Tensors (× 1000 iterations, showing the last)" in _lines(result.output)
    result = _run(path, "--full")
    assert "Tensors (× 1000 iterations, showing the last: the run freed the earlier ones)" \
        in _lines(result.output)


def test_earlier_iterations_kept_alive_are_left_out_without_full(tmp_path):
    path = _write(tmp_path, """
        w = torch.tensor(2.0, requires_grad=True)
        losses = []
        for i in range(5):
            loss = (w * i) ** 2
            loss.backward()
            losses.append(loss)
        """)
    report = run_file(path).report()
    marks = {t["name"]: t["iteration"] for t in report["tensors"]}
    # The first iteration's forward ran before any backward: it is not told from set-up.
    assert marks == {"w": None, "losses[0]": None, "losses[1]": 2, "losses[2]": 3,
                     "losses[3]": 4, "losses[4]": 5, "mul(w, …)": None, "%4": 2, "%6": 3,
                     "%8": 4, "%10": 5}
    names = [line.split()[0] for line in _lines(_run(path).output)[2:] if line[:1].isalnum()]
    assert "losses[4]" in names and "losses[1]" not in names and "losses[3]" not in names
    full = _run(path, "--full").output
    assert "Tensors (× 5 iterations, showing all)" in full
    assert "losses[1]" in full and "losses[3]" in full
    # The gradients that reached those earlier iterations' nodes are counted, not listed.
    lines = _lines(_run(path, "--hooks").output)
    start = lines.index("Hooks (firing order)")
    assert [line.split()[1] for line in lines[start + 3:start + 12]] == \
        ["losses[0]", "mul(w,", "w", "w", "w", "w", "losses[4]", "%10", "w"]
    assert lines[start + 12] == \
        "… 6 gradients at nodes of a loop's earlier iterations not shown — --full shows them"


def test_loop_without_backward(tmp_path):
    path = _write(tmp_path, NO_BACKWARD)
    report = json.loads(_run(path, "--json").output)
    assert report["iterations"] == [{"kind": "line", "count": 1000, "file": path, "line": 6,
                                     "grad_fn": "MulBackward0", "nodes": 1000}]
    # JSON keeps everything still alive, numbered in the order it was made.
    tensors = {t["name"]: t for t in report["tensors"]}
    assert len(tensors) == 1002
    assert (tensors["h"]["iteration"], tensors["mul(x, …)"]["iteration"]) == (1000, 1)
    assert tensors["total"]["loop"] is None
    lines = _lines(_run(path).output)
    assert lines[2:8] == [
        "Tensors (× 1000 MulBackward0 made at line 6, showing the last)",
        "name   shape  dtype    req_grad  leaf  grad_fn       ver  retains  grad  data",
        "─" * 94,
        "x      [3]    float32  yes       yes   None          0    no       None  [1, 1, 1]",
        "h      [3]    float32  yes       no    MulBackward0  0    no       None  [2.717, 2.717, "
        "2.717]",
        "total  []     float32  yes       no    SumBackward0  0    no       None  8.151",
    ]
    assert "Graph (× 1000 MulBackward0 made at line 6, showing the last)" in lines
    # --full shows every one of them (checked on the view, not on 2,000 printed rows).
    full = View(report, full=True)
    assert len(full.tensors) == 1002 and len(full.nodes) == len(report["nodes"])


def test_collapse_folds_a_chain_as_graph_does(tmp_path):
    path = _write(tmp_path, NO_BACKWARD)
    lines = _lines(_run(path, "--full", "--collapse").output)
    graph = lines[lines.index("Graph (× 1000 MulBackward0 made at line 6, showing all) "
                              "(--collapse folded 999 nodes into chains)"):]
    assert graph[3:7] == [
        "n0     SumBackward0 (total)                    n1 MulBackward0 (h)       "
        "_saved_self_sym_sizes = [3]",
        "n1     MulBackward0 × 1000 (n1 … n1000: h …    n1001 AccumulateGrad (x)",
        "       mul(x, …))",
        "                                               None",
    ]
    tensors = lines[lines.index("Tensors (× 1000 MulBackward0 made at line 6, showing all) "
                                "(--collapse folded 999)"):]
    assert [line.split()[0] for line in tensors[3:8] if line[:1].isalpha()] == \
        ["x", "h", "total"]


def test_a_function_called_twice_is_shown_whole():
    # step() runs twice: step[1].y and step[2].y are both rows (a loop of FEW or fewer).
    result = _run("examples/def_main_script.py")
    assert result.exit_code == 0
    assert "step[1].y" in result.output and "step[2].y" in result.output
    assert "iterations" not in result.output


def test_hooks_of_earlier_iterations_are_counted_not_listed(tmp_path):
    path = _write(tmp_path, """
        w = torch.tensor(2.0, requires_grad=True)
        for i in range(5):
            y = w * (i + 1)
            y.register_hook(lambda g: g * 2)
            y.backward()
        """)
    lines = _lines(_run(path, "--hooks").output)
    start = lines.index("Your hooks (firing order)")
    assert lines[start + 3:] == [
        "#5 <lambda> (line 6)  tensor hook  y   1        2 (changed)",
        "… 4 firings in a loop's earlier iterations not shown — --full shows them",
    ]
    full = _lines(_run(path, "--hooks", "--full").output)
    start = full.index("Your hooks (firing order)")
    assert [line.split("  ")[0] for line in full[start + 3:start + 8]] == \
        [f"#{k} <lambda> (line 6)" for k in range(1, 6)]


def test_forward_hooks_of_earlier_iterations_are_counted_not_listed(tmp_path):
    path = _write(tmp_path, """
        lin = torch.nn.Linear(1, 1)
        lin.register_forward_hook(lambda m, args, out: None)
        for i in range(4):
            lin(torch.ones(1, 1)).sum().backward()
        """)
    report = run_file(path).report()
    forward = [h for h in report["user_hooks"] if h["kind"] == "module_forward"]
    assert [(h["call"], h["before_call"]) for h in forward] == \
        [(None, 0), (None, 1), (None, 2), (None, 3)]
    lines = _lines(_run(path, "--hooks").output)
    start = lines.index("Your hooks (firing order)")
    # The last iteration's firing (hook #4; the output is lin's random init), then the count.
    assert len(lines) == start + 5
    assert lines[start + 3].startswith("#4 <lambda> (line 4)  forward hook  lin  output [[")
    assert lines[start + 4] == \
        "… 3 firings in a loop's earlier iterations not shown — --full shows them"


def test_code_run_by_exec_has_no_file_to_read(tmp_path):
    path = _write(tmp_path, """
        x = torch.ones(2, requires_grad=True)
        for i in range(5):
            exec("y = x * 2")
            y.sum().backward()
        """)
    result = _run(path)
    assert result.exit_code == 0
    assert "Tensors (× 5 iterations, showing the last)" in _lines(result.output)
