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
from gradviz.render.dot import SHARED_STRETCH, shared_tensors
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


# ----- Shared tensors: drawn once per depth of use -----

def rnn(steps):
    """h{t} = tanh(h{t-1} * w + b) for t = 1..steps, h0 not requiring grad: w and b are each
    used at every step, each step three ranks below the one before."""
    tensors = [tensor("h0", [], requires_grad=False), tensor("w", [], accumulator="accw"),
               tensor("b", [], accumulator="accb")]
    nodes = []
    for t in range(steps, 0, -1):
        below = [f"tanh{t - 1}", 0] if t > 1 else [None, 0]
        nodes += [
            node(f"tanh{t}", "TanhBackward0", made=f"h{t}", next_functions=[[f"add{t}", 0]],
                 inputs=[f"a{t}"]),
            node(f"add{t}", "AddBackward0", made=f"a{t}",
                 next_functions=[[f"mul{t}", 0], ["accb", 0]], inputs=[f"p{t}", "b"]),
            node(f"mul{t}", "MulBackward0", made=f"p{t}", next_functions=[below, ["accw", 0]],
                 inputs=[f"h{t - 1}", "w"]),
        ]
        tensors += [tensor(f"h{t}", [], grad_fn="TanhBackward0", node=f"tanh{t}",
                           is_root=t == steps),
                    tensor(f"a{t}", [], grad_fn="AddBackward0", node=f"add{t}"),
                    tensor(f"p{t}", [], grad_fn="MulBackward0", node=f"mul{t}")]
    nodes += [node("accw", "AccumulateGrad", variable="w"),
              node("accb", "AccumulateGrad", variable="b")]
    return report(tensors, nodes, [f"h{steps}"])


def shared_ids(nodes, prefix):
    return [i for i, a in nodes.items()
            if a["label"].startswith(prefix) and "(shared" in a["label"]]


def test_a_leaf_used_50_times_is_drawn_once_per_use():
    # h{i} = h{i-1} * w, 50 times: w is used at 50 depths, its edges would cross 1,225 ranks.
    r = chain(50, with_weight=True)
    nodes, edges = parse(build_dot(r))
    accs, leaves = shared_ids(nodes, "AccumulateGrad"), shared_ids(nodes, "w [3]")
    # Ids derive from the ids the AccumulateGrad and its leaf would have had, numbered from 1.
    assert accs == [f"n1_{k}" for k in range(1, 51)]
    assert leaves == [f"n2_{k}" for k in range(1, 51)]
    assert [nodes[i]["label"] for i in accs] == [
        f"AccumulateGrad\n(shared: {k} of 50 uses)" for k in range(1, 51)]
    assert [nodes[i]["label"] for i in leaves] == [
        f"w [3] float32\n(shared: {k} of 50 uses)" for k in range(1, 51)]
    # Copy k is used by the k-th MulBackward0 drawn (h50 first), and by nothing else.
    users = [(t, h, a) for t, h, a in edges if h in accs]
    assert [(nodes[t]["label"], h, a) for t, h, a in users] == [
        (f"MulBackward0\nh{51 - k} [3] float32", f"n1_{k}", {"weight": "0"})
        for k in range(1, 51)]
    assert [(t, h, a) for t, h, a in edges if h in leaves] == [
        (f"n1_{k}", f"n2_{k}", {"minlen": "0"}) for k in range(1, 51)]
    # One tensor drawn several times: a bold dashed outline over the usual style.
    assert {(nodes[i]["style"], nodes[i]["penwidth"], nodes[i]["fillcolor"]) for i in accs} == \
        {("filled,dashed", "2", "lightgrey")}
    assert {(nodes[i]["style"], nodes[i]["peripheries"]) for i in leaves} == \
        {("filled,dashed", "2")}
    assert nodes["n2_3"]["tooltip"].splitlines()[-2:] == [
        "shared: one tensor drawn 50 times, once for each depth it is used at",
        "this copy: use 3 of 50, by MulBackward0 (m48)"]
    assert nodes["n1_1"]["tooltip"].splitlines() == [
        "AccumulateGrad (accw)", "accumulates into w",
        "shared: one tensor drawn 50 times, once for each depth it is used at",
        "this copy: use 1 of 50, by MulBackward0 (m50)"]
    # h0's AccumulateGrad is used once: drawn once, as before.
    assert [a["label"] for a in nodes.values()].count("AccumulateGrad") == 1
    assert "h0 [3] float32" in by_label(build_dot(r))
    # The count is what is drawn: 50 MulBackward0, h0 and its AccumulateGrad, 2 x 50 copies.
    assert count_nodes(r) == len(nodes) == 152
    assert shared_tensors(r) == {"w": 50}


def test_a_shared_leaf_in_the_forward_view():
    r = chain(50, with_weight=True)
    dot = build_dot(r, view="forward")
    nodes, edges = parse(dot)
    copies = shared_ids(nodes, "w [3]")
    assert copies == [f"n1_{k}" for k in range(1, 51)]
    assert [nodes[i]["label"] for i in copies] == [
        f"w [3] float32\n(shared: {k} of 50 uses)" for k in range(1, 51)]
    # Ops are drawn producers first: copy k feeds the mul that makes h{k}.
    makes = {t: h for t, h, _ in edges if nodes[t]["label"] == "mul"}
    assert [(c, nodes[makes[h]]["label"]) for c, h, _ in edges if c in copies] == [
        (f"n1_{k}", f"h{k} [3] float32") for k in range(1, 51)]
    assert nodes["n1_2"]["tooltip"].splitlines()[-1] == "this copy: use 2 of 50, by mul (m2)"
    assert count_nodes(r, view="forward") == len(nodes) == 50 + 51 + 50
    assert shared_tensors(r, view="forward") == {"w": 50}
    assert '"shared tensor, drawn once per depth of use"' in legend(dot)


def test_shared_copies_are_in_the_legend():
    assert legend(build_dot(chain(50, with_weight=True))) == [
        '"root (nothing consumes it)"', '"leaf (requires grad)"', '"parameter (nn.Parameter)"',
        '"grad_fn node"', '"shared tensor, drawn once per depth of use"']
    assert 'legend4 [label="shared tensor, drawn once per depth of use" penwidth=2 shape=box ' \
           'style=dashed' in build_dot(chain(50, with_weight=True))
    assert "shared tensor" not in build_dot(chain(50, with_weight=True), split_shared=None)


def test_shared_copies_are_the_same_bytes_every_time():
    for view in ("backward", "forward"):
        first = build_dot(rnn(30), view=view)
        assert "(shared: 30 of 30 uses)" in first
        assert build_dot(copy.deepcopy(rnn(30)), view=view) == first
    code = ("import sys; sys.path.insert(0, 'tests'); from test_render_dot import rnn;"
            "from gradviz.render import build_dot;"
            "sys.stdout.write(build_dot(rnn(30)) + build_dot(rnn(30), view='forward'))")
    outputs = []
    for seed_value in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed_value, PYTHONPATH=os.getcwd())
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                              check=True)
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].decode() == build_dot(rnn(30)) + build_dot(rnn(30), view="forward")


def test_only_big_stretches_are_split():
    # w's 50 uses at depths 0..49 cross 49 + 48 + ... + 0 = 1,225 ranks drawn once.
    r = chain(50, with_weight=True)
    assert SHARED_STRETCH < 1225
    assert shared_tensors(r, split_shared=1224) == {"w": 50}
    assert shared_tensors(r, split_shared=1225) == {}
    assert build_dot(r, split_shared=1225) == build_dot(r, split_shared=None)
    assert count_nodes(r, split_shared=None) == 54
    # A short chain stays as it was unless asked (66 ranks).
    assert shared_tensors(chain(12, with_weight=True)) == {}
    assert shared_tensors(chain(12, with_weight=True), split_shared=0) == {"w": 12}
    # w and b of rnn(10) each cross 3 x (9 + 8 + ... + 0) = 135 ranks: as stretched, they are
    # split together or not at all.
    assert shared_tensors(rnn(10), split_shared=270) == {}
    assert shared_tensors(rnn(10), split_shared=269) == {"b": 10, "w": 10}
    assert shared_tensors(rnn(10), split_shared=135) == {"b": 10, "w": 10}


def test_uses_at_one_depth_are_never_split():
    # s = stack(x * 1, ..., x * 50): 50 uses of x, all at one depth, cross no rank.
    muls = [node(f"m{i}", "MulBackward0", made=f"p{i}", next_functions=[["acc", 0], [None, 0]],
                 inputs=["x", None]) for i in range(50)]
    r = report([tensor("x", [], accumulator="acc"),
                tensor("s", [50], grad_fn="StackBackward0", node="s", is_root=True)]
               + [tensor(f"p{i}", [], grad_fn="MulBackward0", node=f"m{i}") for i in range(50)],
               [node("s", "StackBackward0", made="s",
                     next_functions=[[f"m{i}", 0] for i in range(50)],
                     inputs=[f"p{i}" for i in range(50)])] + muls
               + [node("acc", "AccumulateGrad", variable="x")],
               ["s"])
    for view in ("backward", "forward"):
        assert shared_tensors(r, view=view, split_shared=0) == {}
        assert "(shared" not in build_dot(r, view=view, split_shared=0)


def test_uses_at_the_same_depth_share_a_copy():
    # Two chains side by side, z = a50 + b50, both multiplying by w at every step.
    nodes, tensors = [node("z", "AddBackward0", made="z",
                           next_functions=[["a50", 0], ["b50", 0]], inputs=["a50", "b50"])], []
    for side in "ab":
        for i in range(50, 0, -1):
            below = [f"{side}{i - 1}", 0] if i > 1 else [None, 0]
            nodes.append(node(f"{side}{i}", "MulBackward0", made=f"{side}{i}",
                              next_functions=[below, ["accw", 0]],
                              inputs=[f"{side}{i - 1}", "w"]))
            tensors.append(tensor(f"{side}{i}", [3], grad_fn="MulBackward0", node=f"{side}{i}"))
    nodes.append(node("accw", "AccumulateGrad", variable="w"))
    tensors += [tensor("w", [3], accumulator="accw"),
                tensor("z", [3], grad_fn="AddBackward0", node="z", is_root=True)]
    r = report(tensors, nodes, ["z"])
    nodes, edges = parse(build_dot(r))
    accs = shared_ids(nodes, "AccumulateGrad")
    assert [nodes[i]["label"] for i in accs] == [
        f"AccumulateGrad\n(shared: {2 * k - 1}-{2 * k} of 100 uses)" for k in range(1, 51)]
    assert [(nodes[t]["label"], h) for t, h, _ in edges if h == accs[0]] == [
        ("MulBackward0\na50 [3] float32", accs[0]), ("MulBackward0\nb50 [3] float32", accs[0])]
    assert nodes[accs[0]]["tooltip"].splitlines()[-2:] == [
        "shared: one tensor drawn 50 times, once for each depth it is used at",
        "this copy: use 1-2 of 100, by MulBackward0 (a50), MulBackward0 (b50)"]


def test_a_shared_intermediate_variable_in_the_forward_view():
    # h1 = h0 * 2, then g2 = h1 * h1, g{i} = g{i-1} * h1 up to g20: h1 is used at 19 depths.
    nodes = [node("m1", "MulBackward0", made="h1", next_functions=[["acc", 0], [None, 0]],
                  inputs=["h0", None])]
    tensors = [tensor("h0", [3], accumulator="acc"),
               tensor("h1", [3], grad_fn="MulBackward0", node="m1")]
    for i in range(20, 1, -1):
        below = f"c{i - 1}" if i > 2 else "m1"
        nodes.append(node(f"c{i}", "MulBackward0", made=f"g{i}",
                          next_functions=[[below, 0], ["m1", 0]],
                          inputs=[f"g{i - 1}" if i > 2 else "h1", "h1"]))
        tensors.append(tensor(f"g{i}", [3], grad_fn="MulBackward0", node=f"c{i}",
                              is_root=i == 20))
    nodes.append(node("acc", "AccumulateGrad", variable="h0"))
    r = report(tensors, nodes, ["g20"])
    assert shared_tensors(r, view="forward", split_shared=0) == {"h1": 19}
    dot = build_dot(r, view="forward", split_shared=0)
    parsed, edges = parse(dot)
    copies = shared_ids(parsed, "h1 [3]")
    assert len(copies) == 19
    # The op that makes h1 points to the copy used deepest: the one g2 = h1 * h1 uses twice.
    first = copies[0]
    assert parsed[first]["label"] == "h1 [3] float32\n(shared: 1 of 19 uses)"
    into = [t for t, h, _ in edges if h == first]
    assert len(into) == 1 and parsed[into[0]]["tooltip"].startswith("MulBackward0 (m1)")
    out = [h for t, h, _ in edges if t == first]
    assert len(out) == 2 and len(set(out)) == 1
    assert parsed[out[0]]["tooltip"].startswith("MulBackward0 (c2)")
    # The other copies each feed one op and come from nowhere.
    for c in copies[1:]:
        assert not [t for t, h, _ in edges if h == c]
        assert len([h for t, h, _ in edges if t == c]) == 1
    # The backward view copies only AccumulateGrad (and leaves): h1's node stays whole.
    assert "(shared" not in build_dot(r, split_shared=0)


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
