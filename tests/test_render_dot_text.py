"""The DOT writer's escaped text is graphviz's, byte for byte.

The writer escapes each distinct piece of a label or tooltip once (_Escapes), joins the pieces
and quotes the result itself (_quoted), where graphviz would escape and quote every label and
tooltip whole: the tests compare the two on texts that exercise each rule (DOT IDs, keywords,
numbers, quotes after backslashes, control characters, non-characters, surrogates, entities).
"""

import graphviz
import pytest
from graphviz.quoting import quote

from gradviz.render import dot as dot_module
from gradviz.render._format import summarize
from gradviz.render.dot import build_dot, escape_label, escape_tooltip

TRICKY = ["x", "node", "Node", "GRAPH", "strict", "n1", "_a", "1x", "-1.5", ".5", "5.", "-", "",
          " ", "a b", 'say "hi"', 'end \\"', '\\\\"', "back\\", "back\\\\", "a\\nb", "\\N",
          "<b>", "<b>x</b>", "tab\there", "new\nline", "nul\x00", "esc\x1b[31m", "\ufffe\uffff",
          "\ud800", "nbsp\u00a0", "ünï", "…", "⧵", "a & b", "&amp;", "x:y", "{}", "%3"]


def _ours(lines, backslash):
    escapes = dot_module._Escapes(backslash)
    return dot_module._quoted(dot_module._joined(lines, escapes))


@pytest.mark.parametrize("text", TRICKY)
def test_one_line_is_quoted_as_graphviz_quotes_it(text):
    assert _ours([text], "\\\\") == quote(escape_label([text]))
    assert _ours([text], "\u29f5") == quote(escape_tooltip([text]))


def test_lines_and_pieces_are_quoted_as_graphviz_quotes_them():
    for first in TRICKY:
        for second in TRICKY[::3]:
            lines = [first, "shape: [2]", second]
            assert _ours(lines, "\\\\") == quote(escape_label(lines)), lines
            assert _ours(lines, "\u29f5") == quote(escape_tooltip(lines)), lines
            # a line escaped piece by piece reads as the line escaped whole
            escapes = dot_module._Escapes("\\\\")
            assert escapes[first] + " " + escapes[second] == escapes[f"{first} {second}"]


def test_values_that_are_not_text_are_escaped_as_their_text():
    # 1 == True and hash(1) == hash(True): an entry kept under either would answer for both
    escapes = dot_module._Escapes("\\\\")
    assert [escapes[v] for v in (1, True, 1.0, None, "1")] == ["1", "True", "1.0", "None", "1"]
    assert [escapes[v] for v in (True, 1)] == ["True", "1"]
    assert all(type(key) is str for key in escapes)


@pytest.mark.parametrize("value", [0.0, -0.0, 1.0, 1.019, 1e-9, 6e4, 123456.7, float("inf"),
                                   float("-inf"), float("nan"), 3, True, "nan", [1.5]])
def test_a_number_is_summarized_as_its_one_element_list_is(value):
    assert summarize(value) == summarize([value])[1:-1]


def _report(names):
    tensors = [{"name": name, "shape": [2], "dtype": "float32", "requires_grad": True,
                "is_leaf": False, "grad_fn": "MulBackward0", "version": 0, "data": [1.0, 2.5],
                "grad": None, "node": f"n{i}", "is_root": i == 0, "file": name, "line": 3}
               for i, name in enumerate(names)]
    nodes = [{"id": f"n{i}", "name": "MulBackward0", "tensor": name,
              "next_functions": [[f"n{i + 1}", 0]] if i + 1 < len(names) else [],
              "file": name, "line": 3}
             for i, name in enumerate(names)]
    return {"tensors": tensors, "nodes": nodes, "roots": [names[0]]}


def test_node_statements_are_graphviz_statements():
    names = [t for t in TRICKY if t] + ["tail"]
    got = build_dot(_report(names), legend=False).splitlines()
    expected = graphviz.Digraph("backward", graph_attr={"ordering": "out"},
                                node_attr={"fontsize": "10"}, edge_attr={"fontsize": "10"})
    for i, name in enumerate(names):
        fill = {"fillcolor": "darkolivegreen1", "penwidth": "2"} if i == 0 else \
            {"fillcolor": "lightgrey"}
        tooltip = [f"MulBackward0 (n{i})", name, "shape: [2]", "dtype: float32",
                   "requires_grad: True", "is_leaf: False", "grad_fn: MulBackward0",
                   "version: 0", "value: [1, 2.5]", "grad: None", f"made at {name}:3"]
        expected.node(f"n{i}", escape_label(["MulBackward0", f"{name} [2] float32"]),
                      shape="box", style="filled", tooltip=escape_tooltip(tooltip), **fill)
    for i in range(len(names) - 1):
        expected.edge(f"n{i}", f"n{i + 1}")
    assert got == expected.source.splitlines()


def test_tensors_that_differ_in_one_piece_keep_their_own_text():
    # what follows a tensor's name is escaped once for every tensor that shows the same: each
    # piece must still tell tensors apart (-0.0 == 0.0 and True == 1 as dict keys)
    pieces = [("data", 0.0), ("data", -0.0), ("data", 1), ("data", True), ("version", 1),
              ("dtype", "float64"), ("grad", 2.0), ("grad_changed_by", [0]), ("shape", [1])]
    names = [f"t{i}" for i in range(len(pieces) + 1)]
    report = _report(names)
    for t, (key, value) in zip(report["tensors"][1:], pieces):
        t[key] = value
    got = build_dot(report, legend=False)
    for t in report["tensors"]:
        expected = escape_tooltip([
            t["name"], f"shape: {dot_module.format_shape(t['shape'])}", f"dtype: {t['dtype']}",
            "requires_grad: True", "is_leaf: False", "grad_fn: MulBackward0",
            f"version: {t['version']}", f"value: {summarize(t['data'])}",
            f"grad: {summarize(t['grad'])}" + (" (changed by hook #1)"
                                               if t.get("grad_changed_by") else "")])
        assert f'\\n{expected}\\nmade at' in got, t["name"]
