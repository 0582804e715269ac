"""DOT source for the autograd graph: exact text, structure, styles, escaping, big graphs."""

import copy
import doctest
import os
import re
import subprocess
import sys

import pytest

import gradviz.render._format
import gradviz.render.dot
from gradviz.render import build_dot, count_nodes, forward_name
from gradviz.render._format import format_shape, summarize
from test_render_reports import (HOSTILE_TENSORS, chain, hostile, modified, node, report, saved,
                                 seed, square, tensor, zwxb)

# ----- A small reader for the DOT the graphviz package writes -----

_ID = r'("(?:[^"\\]|\\.)*"|\w+)'
_STATEMENT = re.compile(rf"^\t+{_ID}(?: -> {_ID})?(?: \[(.*)\])?$")
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s"]+)')


def _unquote(value):
    if not value.startswith('"'):
        return value
    # Undo DOT quoting and our escaping: \" -> ", \\ -> \, \n -> newline, &amp; -> &.
    text = re.sub(r'\\(.)', lambda m: {"n": "\n", "\\": "\\", '"': '"'}[m.group(1)], value[1:-1])
    return text.replace("&amp;", "&")


def parse(dot):
    """Return ({node id: attrs}, [(tail, head, attrs)]) outside the legend, in source order."""
    nodes, edges = {}, []
    in_legend = False
    for line in dot.splitlines()[1:-1]:
        if line.startswith("\tsubgraph cluster_legend"):
            in_legend = True
        if in_legend or re.match(r"\t(graph \[|node \[|edge \[|\w+=)", line):
            continue
        match = _STATEMENT.match(line)
        assert match, f"unexpected DOT line: {line!r}"
        attrs = {k: _unquote(v) for k, v in _ATTR.findall(match.group(3) or "")}
        if match.group(2):
            edges.append((match.group(1), match.group(2), attrs))
        else:
            nodes[match.group(1)] = attrs
    return nodes, edges


def labels(dot):
    nodes, edges = parse(dot)
    return [(nodes[t]["label"], nodes[h]["label"]) for t, h, _ in edges]


def by_label(dot):
    return {attrs["label"]: attrs for attrs in parse(dot)[0].values()}


def legend(dot):
    return re.findall(r'legend\d+ \[label=("[^"]*"|\w+)', dot)


# ----- Exact text -----

SQUARE_DOT = r'''digraph backward {
	graph [ordering=out]
	node [fontsize=10]
	edge [fontsize=10]
	n0 [label="MulBackward0\ns [] float32" fillcolor=darkolivegreen1 penwidth=2 shape=box style=filled tooltip="MulBackward0 (n0)\ns\nshape: []\ndtype: float32\nrequires_grad: True\nis_leaf: False\ngrad_fn: MulBackward0\nversion: 0\nvalue: 9\ngrad: None"]
	n1 [label=AccumulateGrad fillcolor=lightgrey shape=box style=filled tooltip="AccumulateGrad (n1)\naccumulates into a"]
	n2 [label="a [] float32" fillcolor=lightblue shape=ellipse style=filled tooltip="a\nshape: []\ndtype: float32\nrequires_grad: True\nis_leaf: True\ngrad_fn: None\nversion: 0\nvalue: 3\ngrad: None"]
	n1 -> n2
	n0 -> n1
	n0 -> n1
	subgraph cluster_legend {
		color=gray60 fontsize=10 label=Legend
		legend0 [label="root (nothing consumes it)" fillcolor=darkolivegreen1 penwidth=2 shape=box style=filled tooltip="root (nothing consumes it)"]
		legend1 [label="leaf (requires grad)" fillcolor=lightblue shape=ellipse style=filled tooltip="leaf (requires grad)"]
		legend2 [label="grad_fn node" fillcolor=lightgrey shape=box style=filled tooltip="grad_fn node"]
	}
}
'''


def test_exact_dot_for_a_times_a():
    # s = a * a: MulBackward0's next_functions hold AccumulateGrad twice, and so do the edges.
    assert build_dot(square()) == SQUARE_DOT


# ----- Backward view -----

def test_backward_zwxb_nodes_edges_and_styles():
    dot = build_dot(zwxb(), legend=False)
    assert labels(dot) == [
        ("AccumulateGrad", "b [2] float32"),
        ("AccumulateGrad", "w [2] float32"),
        ("AddBackward0\nz [2] float32", "MulBackward0\ny [2] float32"),
        ("AddBackward0\nz [2] float32", "AccumulateGrad"),
        ("MulBackward0\ny [2] float32", "AccumulateGrad"),
    ]
    nodes = by_label(dot)
    assert "x [2] float32" not in nodes  # x does not require grad: None in next_functions
    assert nodes["AddBackward0\nz [2] float32"]["fillcolor"] == "darkolivegreen1"  # root
    assert nodes["MulBackward0\ny [2] float32"]["fillcolor"] == "lightgrey"
    assert nodes["MulBackward0\ny [2] float32"]["shape"] == "box"
    for leaf in ("w [2] float32", "b [2] float32"):
        assert (nodes[leaf]["shape"], nodes[leaf]["fillcolor"]) == ("ellipse", "lightblue")


def test_backward_edges_follow_next_functions_in_argument_order():
    nodes, edges = parse(build_dot(seed(), legend=False))
    def heads(tail):
        return [nodes[h]["label"] for t, h, _ in edges if nodes[t]["label"].startswith(tail)]

    first, second = heads("MulBackward0\ne"), heads("MulBackward0\nc")
    assert first == ["MulBackward0\nc [] float32\ngrad: 4", "AccumulateGrad\ngrad: 6"]
    assert second == ["AccumulateGrad\ngrad: 12", "AccumulateGrad\ngrad: 8"]
    # Each AccumulateGrad points to its own leaf.
    leaves = {nodes[t]["label"]: nodes[h]["label"] for t, h, _ in edges
              if nodes[t]["label"].startswith("AccumulateGrad")}
    assert leaves == {"AccumulateGrad\ngrad: 6": "d [] float32\ngrad: 6",
                      "AccumulateGrad\ngrad: 12": "a [] float32\ngrad: 12",
                      "AccumulateGrad\ngrad: 8": "b [] float32\ngrad: 8"}


def test_grads_are_shown_unless_turned_off():
    shown = by_label(build_dot(seed(), legend=False))
    assert "MulBackward0\ne [] float32\ngrad: 1" in shown
    assert "a [] float32\ngrad: 12" in shown
    hidden = by_label(build_dot(seed(), legend=False, show_grads=False))
    assert "MulBackward0\ne [] float32" in hidden
    assert not [label for label in hidden if "grad:" in label]


def test_every_node_has_a_tooltip_with_the_tensor_details():
    nodes = by_label(build_dot(seed(), legend=False))
    assert nodes["a [] float32\ngrad: 12"]["tooltip"].splitlines() == [
        "a", "shape: []", "dtype: float32", "requires_grad: True", "is_leaf: True",
        "grad_fn: None", "version: 0", "value: 2", "grad: 12", "made at example.py:1",
    ]
    tip = nodes["MulBackward0\nc [] float32\ngrad: 4"]["tooltip"].splitlines()
    assert tip[:3] == ["MulBackward0 (n1)", "c", "shape: []"]
    assert "grad_fn: MulBackward0" in tip and "grad at node: 4" in tip
    assert all("tooltip" in attrs for attrs in nodes.values())


def test_roots_select_a_subgraph():
    dot = build_dot(zwxb(), roots=["y"], legend=False)
    assert labels(dot) == [("AccumulateGrad", "w [2] float32"),
                           ("MulBackward0\ny [2] float32", "AccumulateGrad")]


def test_unknown_root_suggests_close_names():
    with pytest.raises(ValueError, match=r"unknown tensor 'zz'; did you mean 'z'\?"):
        build_dot(zwxb(), roots=["zz"])


def test_a_leaf_root_is_drawn_alone():
    r = report([tensor("a", [], is_root=True)], [], ["a"])
    nodes, edges = parse(build_dot(r, legend=False))
    assert [n["label"] for n in nodes.values()] == ["a [] float32"]
    assert edges == []


def test_empty_report_says_so():
    dot = build_dot(report([], [], []))
    assert 'label="(no autograd graph)"' in dot
    assert parse(dot) == ({}, [])


def test_unknown_view_is_an_error():
    with pytest.raises(ValueError, match="unknown view 'sideways'"):
        build_dot(zwxb(), view="sideways")


# ----- Forward view -----

def test_forward_zwxb_is_the_textbook_graph():
    dot = build_dot(zwxb(), view="forward", legend=False)
    assert labels(dot) == [
        ("w [2] float32", "mul"),
        ("x [2] float32", "mul"),
        ("mul", "y [2] float32"),
        ("y [2] float32", "add"),
        ("b [2] float32", "add"),
        ("add", "z [2] float32"),
    ]
    nodes = by_label(dot)
    assert nodes["x [2] float32"]["style"] == "dashed"  # does not require grad
    assert nodes["w [2] float32"]["fillcolor"] == "lightblue"
    assert nodes["y [2] float32"]["fillcolor"] == "white"
    assert nodes["z [2] float32"]["fillcolor"] == "darkolivegreen1"
    assert {nodes[k]["shape"] for k in ("mul", "add")} == {"box"}
    assert 'rankdir=LR' in dot


def test_forward_grads_sit_on_the_variables():
    nodes = by_label(build_dot(seed(), view="forward", legend=False))
    assert "c [] float32\ngrad: 4" in nodes  # the gradient that reached c's grad_fn
    assert "a [] float32\ngrad: 12" in nodes


def test_forward_keeps_a_repeated_input():
    assert labels(build_dot(square(), view="forward", legend=False)) == [
        ("a [] float32", "mul"),
        ("a [] float32", "mul"),
        ("mul", "s [] float32"),
    ]


def test_forward_scalar_inputs_are_constants():
    nodes, edges = parse(build_dot(chain(1), view="forward", legend=False))
    assert [(nodes[t]["label"], nodes[h]["label"]) for t, h, _ in edges] == [
        ("h0 [3] float32", "mul"),
        ("const", "mul"),
        ("mul", "h1 [3] float32"),
    ]


@pytest.mark.parametrize("name, expected", [
    ("MulBackward0", "mul"), ("AddBackward0", "add"), ("SigmoidBackward0", "sigmoid"),
    ("AddmmBackward0", "addmm"), ("LogSoftmaxBackward0", "log_softmax"),
    ("PowBackward1", "pow"), ("CopySlices", "copy_slices"), ("NllLossBackward0", "nll_loss"),
])
def test_forward_name(name, expected):
    assert forward_name(name) == expected


# ----- Saved tensors, anomalies, parameters, legend -----

def test_show_saved_draws_saved_tensors_with_their_version():
    assert "_saved" not in build_dot(seed())
    nodes, edges = parse(build_dot(seed(), show_saved=True, legend=False))
    saved = {a["label"]: i for i, a in nodes.items() if a["label"].startswith("_saved")}
    assert set(saved) == {"_saved_other\nd [] float32\nsaved at v0",
                          "_saved_self\nc [] float32\nsaved at v0",
                          "_saved_other\nb [] float32\nsaved at v0",
                          "_saved_self\na [] float32\nsaved at v0"}
    assert {nodes[i]["fillcolor"] for i in saved.values()} == {"orange"}
    into = {nodes[t]["label"]: (nodes[h]["label"], a) for t, h, a in edges if t in saved.values()}
    assert into["_saved_self\nc [] float32\nsaved at v0"] == (
        "MulBackward0\ne [] float32\ngrad: 1", {"dir": "none", "style": "dashed"})


def test_saved_values_go_in_the_node_label():
    nodes = by_label(build_dot(zwxb(), show_saved=True, legend=False))
    assert "AddBackward0\nz [2] float32\n_saved_alpha = 1" in nodes


def test_a_saved_tensor_modified_in_place_gets_a_red_edge_with_both_versions():
    dot = build_dot(modified(), show_saved=True)
    nodes, edges = parse(dot)
    (edge,) = [a for t, h, a in edges if nodes[t]["label"].startswith("_saved_other")]
    assert edge == {"label": "saved v0, now v1", "color": "red", "fontcolor": "red",
                    "penwidth": "2", "dir": "none", "style": "dashed"}
    assert '"red edge: saved tensor modified in place\\n(version saved, now)"' in dot


def test_torch_reports_do_not_know_the_saved_version():
    # On the torch backend only the version now is known: never claim a modification.
    r = modified()
    r["nodes"][0]["saved"][0]["saved_version"] = None
    dot = build_dot(r, show_saved=True)
    assert "saved at v?" in dot and "color=red" not in dot


def test_freed_buffers_and_nonfinite_values():
    r = seed()
    r["nodes"][0]["saved"] = [{"name": "_saved_self", "tensor": None, "shape": None,
                               "dtype": None, "saved_version": None, "version": None,
                               "value": None, "freed": True}]
    r["nodes"][0]["grad"] = ["nan", "inf", "-inf", 1.0, 2.0, 3.0, 4.0]  # as the JSON has them
    nodes = by_label(build_dot(r, show_saved=True, legend=False))
    assert ("MulBackward0\ne [] float32\ngrad: min=1 max=4 mean=2.5 nan=1 inf=2 (7 values)\n"
            "_saved_self (freed)") in nodes


def test_a_tensor_edited_in_place_is_a_root_only_at_its_new_grad_fn():
    # b = a + 2; b[0] = 1.0: b's grad_fn is now CopySlices, and the report's generated name
    # for AddBackward0's output describes the same tensor.
    r = report(
        [tensor("a", [2], accumulator="n2"),
         tensor("b", [2], grad_fn="CopySlices", node="n0", is_root=True, version=1),
         tensor("%1", [2], grad_fn="CopySlices", node="n0", is_root=True, version=1)],
        [node("n0", "CopySlices", made="b", next_functions=[["n1", 0], [None, 0]]),
         node("n1", "AddBackward0", made="%1", next_functions=[["n2", 0], [None, 0]],
              inputs=["a", None], saved=[saved("_saved_alpha", None, None, value=1)]),
         node("n2", "AccumulateGrad", variable="a")],
        ["b"])
    nodes = by_label(build_dot(r, legend=False))
    assert nodes["CopySlices\nb [2] float32"]["fillcolor"] == "darkolivegreen1"
    assert nodes["AddBackward0\n%1 [2] float32"]["fillcolor"] == "lightgrey"


def test_anomalies_are_marked_red():
    r = seed()
    r["nodes"][1]["anomaly"] = "Function 'MulBackward0' returned nan values in its 0th output."
    nodes = by_label(build_dot(r, legend=False))
    label = ("MulBackward0\nc [] float32\ngrad: 4\n"
             "anomaly: Function 'MulBackward0' returned nan values in its 0th ou...")
    assert (nodes[label]["color"], nodes[label]["fillcolor"]) == ("red", "mistyrose")
    assert "anomaly: Function 'MulBackward0' returned nan values in its 0th output." in \
        nodes[label]["tooltip"]


def test_parameters_have_a_double_outline():
    nodes = by_label(build_dot(chain(2, with_weight=True), legend=False))
    assert nodes["w [3] float32"]["peripheries"] == "2"
    assert "peripheries" not in nodes["h0 [3] float32"]


def test_legend_lists_the_kinds_drawn_and_can_be_hidden():
    assert legend(build_dot(zwxb())) == ['"root (nothing consumes it)"', '"leaf (requires grad)"',
                                         '"grad_fn node"']
    assert legend(build_dot(zwxb(), view="forward", show_saved=True)) == [
        '"root (nothing consumes it)"', '"leaf (requires grad)"', '"does not require grad"',
        '"intermediate tensor"', "operator", '"saved tensor (version saved at)"']
    assert "cluster_legend" not in build_dot(zwxb(), legend=False)


# ----- Determinism -----

def test_the_same_report_gives_the_same_bytes():
    first = build_dot(seed(), show_saved=True)
    assert build_dot(copy.deepcopy(seed()), show_saved=True) == first
    assert build_dot(seed(), show_saved=True) == first
    assert not re.search(r"0x[0-9a-f]{6,}|\d{9,}", first)  # no memory addresses


def test_the_same_bytes_in_a_fresh_interpreter():
    code = ("import sys; sys.path.insert(0, 'tests'); from test_render_reports import hostile;"
            "from gradviz.render import build_dot;"
            "sys.stdout.write(build_dot(hostile(), view='forward', show_saved=True))")
    outputs = []
    for seed_value in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed_value, PYTHONPATH=os.getcwd())
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                              check=True)
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].decode() == build_dot(hostile(), view="forward", show_saved=True)


# ----- Escaping -----

def _expected_text(name):
    # Tabs become spaces; other control characters, newlines included, become U+FFFD.
    return "".join("\ufffd" if ch < " " and ch != "\t" else ch for ch in name.replace("\t", " "))


@pytest.mark.parametrize("view", ["backward", "forward"])
def test_hostile_names_stay_text(view):
    dot = build_dot(hostile(), view=view, show_saved=True)
    nodes, edges = parse(dot)  # every line is a well-formed statement
    text = "\n".join(a["label"] for a in nodes.values())
    for name in HOSTILE_TENSORS.values():
        assert _expected_text(name) + " [2] " in text
    assert "<script>alert(1)</script>" in text
    assert "anomaly: ]]>" in text
    # No HTML-like label (<...>) and no raw newline inside any statement.
    assert not re.search(r"=<", dot)
    assert len(dot.splitlines()) == dot.count("\n")
    # Backslashes reach DOT doubled, so \N and \G are never expanded by Graphviz.
    assert r'\\N\\G [2] &amp;#65;' in dot


def test_tooltips_show_backslashes_as_a_lookalike():
    dot = build_dot(hostile(), legend=False)
    tooltips = [a["tooltip"] for a in parse(dot)[0].values()]
    assert any("\u29f5N\u29f5G" in t for t in tooltips)
    assert not any("\\" in t for t in tooltips)


# ----- Big graphs -----

def test_max_depth_hides_deeper_nodes_behind_a_marker():
    dot = build_dot(chain(10), max_depth=2, legend=False)
    nodes, edges = parse(dot)
    assert [a["label"] for a in nodes.values()] == [
        "MulBackward0\nh10 [3] float32", "MulBackward0\nh9 [3] float32",
        "MulBackward0\nh8 [3] float32", "..."]
    assert nodes["n3"]["shape"] == "plaintext"
    assert labels(dot)[-1] == ("MulBackward0\nh8 [3] float32", "...")
    assert count_nodes(chain(10), max_depth=2) == 4
    assert "deeper nodes hidden (max_depth)" in build_dot(chain(10), max_depth=2)


def test_max_depth_in_the_forward_view():
    nodes, edges = parse(build_dot(chain(10), view="forward", max_depth=0, legend=False))
    assert [(nodes[t]["label"], nodes[h]["label"]) for t, h, _ in edges] == [
        ("...", "h9 [3] float32"),
        ("h9 [3] float32", "mul"),
        ("const", "mul"),
        ("mul", "h10 [3] float32"),
    ]


def test_collapse_folds_a_chain_of_the_same_op():
    dot = build_dot(chain(1000), collapse=True, legend=False)
    assert labels(dot) == [("AccumulateGrad", "h0 [3] float32"),
                           ("MulBackward0 x1000\nh1000 [3] float32", "AccumulateGrad")]
    assert by_label(dot)["MulBackward0 x1000\nh1000 [3] float32"]["shape"] == "box3d"
    assert count_nodes(chain(1000), collapse=True) == 3
    assert count_nodes(chain(1000)) == 1002


def test_collapse_keeps_each_outside_edge_once():
    dot = build_dot(chain(50, with_weight=True), collapse=True, legend=False)
    assert labels(dot) == [
        ("AccumulateGrad", "w [3] float32"),
        ("AccumulateGrad", "h0 [3] float32"),
        ("MulBackward0 x50\nh50 [3] float32", "AccumulateGrad"),
        ("MulBackward0 x50\nh50 [3] float32", "AccumulateGrad"),
    ]
    nodes, edges = parse(dot)
    heads = [nodes[edges[i][0]]["label"] for i in (0, 1)]
    assert heads == ["AccumulateGrad", "AccumulateGrad"]
    fwd = labels(build_dot(chain(50, with_weight=True), view="forward", collapse=True,
                           legend=False))
    assert fwd == [("h0 [3] float32", "mul x50"),
                   ("w [3] float32", "mul x50"),
                   ("mul x50", "h50 [3] float32")]


def test_collapse_never_folds_a_node_with_two_consumers():
    # In s = a * a nothing repeats; in zwxb the ops differ: nothing folds.
    assert build_dot(square(), collapse=True) == build_dot(square())
    assert build_dot(zwxb(), collapse=True) == build_dot(zwxb())


def test_a_long_chain_is_walked_without_recursion():
    assert sys.getrecursionlimit() < 5000
    assert count_nodes(chain(5000)) == 5002
    assert count_nodes(chain(5000), view="forward") == 15001


# ----- Value summaries, and the docstring examples -----

@pytest.mark.parametrize("value, text", [
    (None, "None"), (2.0, "2"), (0.1 + 0.2, "0.3"), (True, "True"), (3, "3"),
    ([[1.0, 2.0], [3.0, 4.0]], "[[1, 2], [3, 4]]"), ([], "[]"),
    ([1.0] * 7, "all 1 (7 values)"),
    ([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "min=0 max=6 mean=3 (7 values)"),
    ([float("nan")] * 3 + [float("inf")] * 4, "nan=3 inf=4 (7 values)"),
])
def test_summarize(value, text):
    assert summarize(value) == text


def test_summarize_full_gives_every_value_at_full_precision():
    expected = "[" + ", ".join(["0.30000000000000004"] * 7) + "]"
    assert summarize([0.1 + 0.2] * 7, full=True) == expected


def test_format_shape():
    assert [format_shape(s) for s in ([2, 3], [3], [], None)] == ["[2, 3]", "[3]", "[]", "?"]


@pytest.mark.parametrize("module", [gradviz.render.dot, gradviz.render._format])
def test_docstring_examples_run(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
