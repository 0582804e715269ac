"""Rich tables for `gradviz run`, captured as exact text at a fixed width without colour."""

import doctest
import io
import os

import pytest
from rich.console import Console

import gradviz.render.tables
from gradviz.render import print_report, report_renderables
from test_render_reports import modified, report, seed, tensor, zwxb


def show(r, width=100, full=False, hooks=False):
    console = Console(width=width, no_color=True, file=io.StringIO())
    print_report(console, r, full=full, hooks=hooks)
    # rich pads every line of a table to its width: compare without the trailing spaces.
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines()) + "\n"


def with_hooks(r):
    r["hooks"] = [{"target": "z", "kind": "tensor", "grad": [1.0, 1.0]},
                  {"target": "n1", "kind": "node", "grad": [1.0, 1.0]}]
    return r


ZWXB_TABLES = """\
Tensors
name  shape  dtype    requires_grad  is_leaf  grad_fn       _version  retains_grad  grad  data
────────────────────────────────────────────────────────────────────────────────────────────────────
w     [2]    float32  yes            yes      None          0         no            None  [1, 2]
x     [2]    float32  no             yes      None          0         no            None  [3, 4]
b     [2]    float32  yes            yes      None          0         no            None  [0.5, 0.5]
y     [2]    float32  yes            no       MulBackward0  0         no            None  [3, 8]
z     [2]    float32  yes            no       AddBackward0  0         no            None  [3.5, 8.5]

Graph
id  node                next_functions         saved
────────────────────────────────────────────────────────────────────────
n0  AddBackward0 (z)    n1 MulBackward0 (y)    _saved_alpha = 1
                        n3 AccumulateGrad (b)
n1  MulBackward0 (y)    n2 AccumulateGrad (w)  _saved_other x [2] v0->v0
                        None
n2  AccumulateGrad (w)
n3  AccumulateGrad (b)

Hooks (firing order)
#  target               kind    grad
──────────────────────────────────────
1  z                    tensor  [1, 1]
2  n1 MulBackward0 (y)  node    [1, 1]
"""


def test_exact_tables_for_zwxb():
    assert show(with_hooks(zwxb())) == ZWXB_TABLES


NARROW = """\
Tensors
a [] float32
  requires_grad=True  is_leaf=True  grad_fn=None
  _version=0  retains_grad=False
  grad: 12
  data: 2
e [] float32
  requires_grad=True  is_leaf=False
  grad_fn=MulBackward0  _version=0
  retains_grad=False
  grad: None
  data: 24
"""


def test_narrow_consoles_get_one_block_per_tensor():
    r = seed()
    r["tensors"] = [r["tensors"][0], r["tensors"][4]]
    r["nodes"] = []
    assert show(r, width=52) == NARROW


@pytest.mark.parametrize("width", [40, 60, 80, 100, 140])
def test_no_line_is_wider_than_the_console(width):
    r = with_hooks(zwxb())
    r["error"] = {"type": "RuntimeError", "message": "x " * 80, "file": "example.py",
                  "line": 3, "traceback": []}
    assert max(len(line) for line in show(r, width).splitlines()) <= width
    assert "z" in show(r, width) and "AddBackward0" in show(r, width)


def test_saved_tensors_modified_in_place_are_spelled_out():
    text = show(modified())
    assert "_saved_other w [2] v0->v1 MODIFIED" in text
    console = Console(width=100, force_terminal=True, color_system="standard",
                      file=io.StringIO())
    print_report(console, modified())
    assert "\x1b[1;31mv0->v1 MODIFIED\x1b[0m" in console.file.getvalue()


def test_torch_saved_versions_and_freed_buffers():
    r = modified()
    r["nodes"][0]["saved"][0]["saved_version"] = None
    r["nodes"][0]["saved"].append({"name": "_saved_self", "tensor": None, "shape": None,
                                   "dtype": None, "saved_version": None, "version": None,
                                   "value": None, "freed": True})
    text = show(r)
    assert "_saved_other w [2] v?->v1\n" in text
    assert "_saved_self (freed)" in text


def test_values_are_summarized_unless_full():
    r = report([tensor("big", [10], data=[0.5] * 10, grad=[float(i) for i in range(10)])], [], [])
    # Wide enough that no value wraps inside its column.
    assert "all 0.5 (10 values)" in show(r, width=160)
    assert "min=0 max=9 mean=4.5 (10 values)" in show(r, width=160)
    assert "[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]" in show(r, width=200, full=True)


def test_names_are_never_read_as_markup():
    r = report([tensor("[bold red]x[/]", [], data=1.0)], [], [])
    assert "[bold red]x[/]  []" in show(r)


def test_anomalies_and_the_error_panel():
    r = zwxb()
    r["anomalies"] = [{"node": "n1", "name": "MulBackward0", "file": "example.py", "line": 4,
                       "message": "Function 'MulBackward0' returned nan values in its 0th output.",
                       "traceback": [{"file": "example.py", "line": 4, "function": "<module>",
                                      "code": "y = w * x"}]}]
    r["error"] = {"type": "RuntimeError", "file": "example.py", "line": 9,
                  "message": "one of the variables needed for gradient computation has been "
                             "modified by an inplace operation",
                  "traceback": [{"file": "example.py", "line": 9, "function": "<module>",
                                 "code": "z.backward()"}]}
    text = show(r)
    assert text.split("Anomalies\n", 1)[1] == """\
node             where         message
─────────────────────────────────────────────────────────────────────────────────────────────
n1 MulBackward0  example.py:4  Function 'MulBackward0' returned nan values in its 0th output.
                                 File "example.py", line 4, in <module>
                                   y = w * x

╭─ Error ──────────────────────────────────────────────────────────────────────────────────────────╮
│ RuntimeError: one of the variables needed for gradient computation has been modified by an       │
│ inplace operation                                                                                │
│ at example.py:9                                                                                  │
│ Traceback (your code only):                                                                      │
│   File "example.py", line 9, in <module>                                                         │
│     z.backward()                                                                                 │
╰──────────────────────────────────────────────────────────────────────────────────────────────────╯
"""


def test_a_file_without_tensors_says_so():
    assert show(report([], [], [])) == "No tensors found in example.py.\n"


def test_hooks_that_never_fired_are_mentioned_when_asked_for():
    assert "No hooks fired" in show(zwxb(), hooks=True)
    assert "No hooks fired" not in show(zwxb())
    assert "No hooks fired" not in show(with_hooks(zwxb()), hooks=True)


def test_renderables_leave_out_empty_tables():
    parts = report_renderables(report([tensor("a", [])], [], []))
    assert len(parts) == 1
    assert len(report_renderables(with_hooks(zwxb()))) == 3


def test_docstring_examples_run():
    result = doctest.testmod(gradviz.render.tables)
    assert result.attempted > 0 and result.failed == 0


GRAPH_80 = """\
Graph
id  node                      next_functions           saved
────────────────────────────────────────────────────────────────────────────────
n0  SumBackward0 (main.loss)  n1 PowBackward0          _saved_self_sym_sizes =
                              (pow(sub(step[2].y,      [3]
                              …)))
n1  PowBackward0              n2 SubBackward0          _saved_self
    (pow(sub(step[2].y, …)))  (sub(step[2].y, …))      sub(step[2].y, …) [3]
                                                       v0->v0 (freed)
                                                       _saved_exponent (freed)
n2  SubBackward0              n3 MulBackward0          _saved_alpha = 1
    (sub(step[2].y, …))       (step[2].y)
                              None
"""


def test_graph_rows_keep_each_edge_and_saved_value_beside_its_node_at_80_columns():
    from gradviz.inspect import run_file
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "def_main_script.py")
    report = run_file(path).report()
    report["tensors"] = []
    text = show(report, width=80)
    graph = text[text.index("Graph"):]
    assert graph.startswith(GRAPH_80)
    assert max(len(line) for line in text.splitlines()) <= 80
