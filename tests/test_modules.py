"""Graphs by module: which nn.Module call made each node (core and torch), the report's module
keys, clusters and folded boxes in DOT, and `run --by-module`."""

import gc
import json
import os

import pytest
from click.testing import CliRunner

import gradviz
from gradviz import nn
from gradviz.inspect import run_file
from gradviz.inspect.modules import ModuleCalls
from gradviz.inspect.tracer import Tracer, tracing
from gradviz.render import build_dot
from gradviz.render.module_graph import ModuleOptionError, module_layout
from gradviz_cli.main import cli

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "nested_modules.py")


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def report():
    return run_file(EXAMPLE).report()


def _block(nn_mod):
    class Block(nn_mod.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn_mod.Linear(4, 4)
            self.norm = nn_mod.LayerNorm(4)

        def forward(self, x):
            return x + self.norm(self.linear(x)).relu()
    return Block


# ----- the recorder --------------------------------------------------------------------------

def test_module_calls_in_report(report):
    calls = [(c["index"], c["module"], c["class"], c["call"], c["parent"], c["inputs"],
              c["outputs"], c["parameters"]) for c in report["module_calls"]]
    assert calls == [
        (0, "", "Net", 1, None, [[3, 4]], [[3, 1]], 61),
        (1, "encoder", "Encoder", 1, 0, [[3, 4]], [[3, 4]], 56),
        (2, "encoder.blocks.0", "Block", 1, 1, [[3, 4]], [[3, 4]], 28),
        (3, "encoder.blocks.0.linear", "Linear", 1, 2, [[3, 4]], [[3, 4]], 20),
        (4, "encoder.blocks.0.norm", "LayerNorm", 1, 2, [[3, 4]], [[3, 4]], 8),
        (5, "encoder.blocks.1", "Block", 1, 1, [[3, 4]], [[3, 4]], 28),
        (6, "encoder.blocks.1.linear", "Linear", 1, 5, [[3, 4]], [[3, 4]], 20),
        (7, "encoder.blocks.1.norm", "LayerNorm", 1, 5, [[3, 4]], [[3, 4]], 8),
        (8, "head", "Linear", 1, 0, [[3, 4]], [[3, 1]], 5),
    ]


def test_each_node_has_its_innermost_module(report):
    by_name = {}
    for n in report["nodes"]:
        by_name.setdefault(n["name"], []).append(n["module"])
    assert by_name["MeanBackward0"] == [None] and by_name["PowBackward0"] == [None]
    assert by_name["AddmmBackward0"] == ["head", "encoder.blocks.0.linear",
                                         "encoder.blocks.1.linear"]
    assert by_name["NativeLayerNormBackward0"] == ["encoder.blocks.0.norm",
                                                   "encoder.blocks.1.norm"]
    # x + ...relu() is the Block's own work
    assert by_name["AddBackward0"] == ["encoder.blocks.1", "encoder.blocks.0"]
    for call in report["module_calls"]:
        for nid in call["nodes"]:
            node = next(n for n in report["nodes"] if n["id"] == nid)
            assert node["module_call"] == call["index"] and node["module"] == call["module"]


def test_parameters_keep_qualified_names_and_their_owner(report):
    params = {t["name"]: t["module"] for t in report["tensors"] if t["is_parameter"]}
    assert params["model.encoder.blocks.0.linear.weight"] == "encoder.blocks.0.linear"
    assert params["model.encoder.blocks.1.norm.bias"] == "encoder.blocks.1.norm"
    assert params["model.head.bias"] == "head"
    accs = {n["variable"]: (n["module"], n["module_call"]) for n in report["nodes"]
            if n["name"] == "AccumulateGrad"}
    assert accs["model.head.weight"] == ("head", None)
    assert {t["name"]: t["module"] for t in report["tensors"]}["x"] is None


def test_module_tree(report):
    (tree,) = report["modules"]
    assert (tree["name"], tree["class"], tree["parameters"], tree["calls"]) == ("", "Net", 61, 1)
    encoder, head = tree["children"]
    (blocks,) = encoder["children"]
    # a ModuleList is never called: no shapes, 0 calls, its parameters counted all the same
    assert (blocks["name"], blocks["class"], blocks["calls"], blocks["inputs"],
            blocks["parameters"]) == ("encoder.blocks", "ModuleList", 0, None, 56)
    assert [c["name"] for c in blocks["children"][0]["children"]] == \
        ["encoder.blocks.0.linear", "encoder.blocks.0.norm"]
    assert (head["inputs"], head["outputs"]) == ([[3, 4]], [[3, 1]])
    json.dumps(report["modules"])


def test_a_module_called_twice_is_numbered():
    gradviz.manual_seed(0)
    lin = nn.Linear(2, 2)
    net = nn.Sequential(lin, nn.ReLU(), lin)
    tracer = Tracer()
    with tracing(tracer):
        y = net(gradviz.ones(1, 2))
    calls = list(tracer.modules.recent)
    assert [(c.name, c.cls, c.number) for c in calls] == \
        [("", "Sequential", 1), ("0", "Linear", 1), ("1", "ReLU", 1), ("0", "Linear", 2)]
    assert tracer.modules.call_of(y.grad_fn) is calls[3]


def test_a_forward_that_raises_closes_its_call():
    class Bad(nn.Module):
        def forward(self, x):
            raise RuntimeError("boom")
    tracer = Tracer()
    with tracing(tracer):
        with pytest.raises(RuntimeError):
            nn.Sequential(Bad())(gradviz.ones(1))
        nn.Linear(1, 1)(gradviz.ones(1))
    assert tracer.modules.stack == []
    assert [(c.name, c.outputs) for c in tracer.modules.recent] == \
        [("", None), ("0", None), ("", [[1]])]


def test_memory_stays_bounded_in_a_loop():
    calls = ModuleCalls(kept=8)
    lin = nn.Linear(2, 2)
    tracer = Tracer()
    tracer.modules = calls
    with tracing(tracer):
        for _ in range(200):
            lin(gradviz.ones(1, 2)).sum().backward()
    gc.collect()
    assert len(calls.recent) == 8 and calls.recent[-1].number == 200
    # the nodes of earlier steps are gone, and so are their entries: the last two steps'
    # addmm and t (the tracer names the last generations' outputs)
    assert len(calls._of) <= 4


def test_report_without_modules_has_empty_keys():
    report = run_file(os.path.join(os.path.dirname(EXAMPLE), "mul_chain_backward.py")).report()
    assert report["modules"] == [] and report["module_calls"] == []
    assert all(n["module"] is None for n in report["nodes"])
    assert all(t["module"] is None for t in report["tensors"])


# ----- torch's global hooks ------------------------------------------------------------------

def test_torch_hooks_record_what_the_core_records():
    torch = pytest.importorskip("torch")
    from gradviz.inspect.modules import install_torch_hooks

    out = {}
    for backend in (gradviz, torch):
        block = _block(backend.nn)
        net = backend.nn.Sequential(block(), block(), backend.nn.Linear(4, 1))
        x = backend.ones(3, 4)
        if backend is torch:
            with install_torch_hooks() as handle:
                y = net(x).sum()
            calls = handle.calls
        else:
            tracer = Tracer()
            with tracing(tracer):
                y = net(x).sum()
            calls = tracer.modules
        add1 = y.grad_fn.next_functions[0][0].next_functions[1][0]   # block 1's x + ...
        path = [y.grad_fn, y.grad_fn.next_functions[0][0], add1,
                add1.next_functions[0][0], add1.next_functions[1][0]]
        out[backend.__name__] = (
            [(type(n).__name__, getattr(calls.call_of(n), "name", None)) for n in path],
            [(c.name, c.cls, c.inputs, c.outputs, c.parameters, c.nodes)
             for c in calls.recent])
    assert out["torch"] == out["gradviz"]
    assert out["torch"][0] == [("SumBackward0", None), ("AddmmBackward0", "2"),
                               ("AddBackward0", "1"), ("AddBackward0", "0"),
                               ("ReluBackward0", "1")]
    # each call made as many nodes on both (Block: add and relu; Linear: addmm and t)
    assert [c[-1] for c in out["torch"][1]] == [0, 2, 2, 1, 2, 2, 1, 2]
    # the report's keys from torch's nodes: a parameter's AccumulateGrad under its owner
    from gradviz.inspect.modules import add_modules
    head = y.grad_fn.next_functions[0][0]
    nodes = [y.grad_fn, head, head.next_functions[0][0]]
    doc = add_modules({"nodes": [{"id": f"n{i}"} for i in range(3)], "tensors": []},
                      handle.calls, nodes)
    assert [(e["module"], e["module_call"]) for e in doc["nodes"]] == \
        [(None, None), ("2", 7), ("2", None)]
    assert [c["module"] for c in doc["module_calls"]][:3] == ["", "0", "0.linear"]
    # removed: torch's hooks no longer feed it
    before = len(handle.calls.recent)
    net(x)
    assert len(handle.calls.recent) == before


# ----- DOT: clusters and folded boxes --------------------------------------------------------

def _small_report():
    """loss <- head (Linear: addmm <- t <- weight) <- block (mul, add) ; by hand."""
    node = {"tensor": None, "variable": None, "inputs": None, "saved": [], "grad": None,
            "anomaly": None, "hooks": [], "file": None, "line": None}
    nodes = [
        dict(node, id="n0", name="SumBackward0", tensor="loss", next_functions=[["n1", 0]],
             module=None, module_call=None),
        dict(node, id="n1", name="AddmmBackward0", next_functions=[["n2", 0], ["n3", 0]],
             module="head", module_call=2),
        dict(node, id="n2", name="MulBackward0", next_functions=[["n4", 0]],
             module="block", module_call=1),
        dict(node, id="n3", name="AddBackward0", next_functions=[["n4", 0]],
             module="block", module_call=1),
        dict(node, id="n4", name="AccumulateGrad", variable="w", next_functions=[],
             module="block", module_call=None),
    ]
    tensors = [{"name": "loss", "shape": [], "dtype": "float32", "requires_grad": True,
                "is_leaf": False, "is_root": True, "node": "n0", "version": 0},
               {"name": "w", "shape": [2], "dtype": "float32", "requires_grad": True,
                "is_leaf": True, "is_root": False, "node": None, "is_parameter": True,
                "version": 0}]
    calls = [{"index": 0, "module": "", "class": "Net", "call": 1, "parent": None, "root": 0,
              "inputs": [[2]], "outputs": [[1]], "parameters": 5},
             {"index": 1, "module": "block", "class": "Block", "call": 1, "parent": 0,
              "root": 0, "inputs": [[2]], "outputs": [[2], [2]], "parameters": 2},
             {"index": 2, "module": "head", "class": "Linear", "call": 1, "parent": 0,
              "root": 0, "inputs": [[2], [2]], "outputs": [[1]], "parameters": 3}]
    return {"tensors": tensors, "nodes": nodes, "roots": ["loss"], "module_calls": calls}


_HEAD = [
    "digraph backward {",
    "\tgraph [ordering=out]",
    "\tnode [fontsize=10]",
    "\tedge [fontsize=10]",
    '\tn0 [label="SumBackward0\\nloss [] float32" fillcolor=darkolivegreen1 penwidth=2 '
    'shape=box style=filled]',
]


def _lines(dot):
    """The DOT source without tooltips (asserted elsewhere), line by line."""
    import re
    return [re.sub(r' tooltip="[^"]*"', "", line) for line in dot.splitlines()]


def test_dot_clusters_nest_by_module_call():
    dot = build_dot(_small_report(), legend=False, modules={})
    assert _lines(dot) == _HEAD + [
        "\tn4 -> n5",
        "\tn0 -> n1",
        "\tn1 -> n2",
        "\tn1 -> n3",
        "\tn2 -> n4",
        "\tn3 -> n4",
        "\tsubgraph cluster_m0 {",
        "\t\tcolor=gray50 fontsize=10 label=Net labeljust=l style=rounded",
        "\t\tsubgraph cluster_m1 {",
        '\t\t\tcolor=gray50 fontsize=10 label="block: Block" labeljust=l style=rounded',
        "\t\t\tn2 [label=MulBackward0 fillcolor=lightgrey shape=box style=filled]",
        "\t\t\tn3 [label=AddBackward0 fillcolor=lightgrey shape=box style=filled]",
        "\t\t\tn4 [label=AccumulateGrad fillcolor=lightgrey shape=box style=filled]",
        '\t\t\tn5 [label="w [2] float32" fillcolor=lightblue peripheries=2 shape=ellipse '
        'style=filled]',
        "\t\t}",
        "\t\tsubgraph cluster_m2 {",
        '\t\t\tcolor=gray50 fontsize=10 label="head: Linear" labeljust=l style=rounded',
        "\t\t\tn1 [label=AddmmBackward0 fillcolor=lightgrey shape=box style=filled]",
        "\t\t}",
        "\t}",
        "}",
    ]


def test_dot_folds_modules_deeper_than_depth_into_boxes():
    dot = build_dot(_small_report(), legend=False, modules={"depth": 0})
    assert _lines(dot) == _HEAD + [
        "\tn0 -> n1",
        "\tn1 -> n2",
        "\tsubgraph cluster_m0 {",
        "\t\tcolor=gray50 fontsize=10 label=Net labeljust=l style=rounded",
        '\t\tn1 [label="head: Linear\\nin: [2], [2]\\nout: [1]\\nparams: 3" '
        'fillcolor=lightyellow shape=box style="filled,rounded"]',
        '\t\tn2 [label="block: Block\\nin: [2]\\nout: [2], [2]\\nparams: 2" '
        'fillcolor=lightyellow shape=box style="filled,rounded"]',
        "\t}",
        "}",
    ]
    assert 'tooltip="block: Block\\nin: [2]\\nout: [2], [2]\\nparams: 2\\nBlock folded: ' \
        '3 autograd nodes inside"' in dot


def test_expand_opens_one_module():
    dot = build_dot(_small_report(), legend=False, modules={"depth": 0, "expand": ["head"]})
    lines = _lines(dot)
    assert "\t\t\tn1 [label=AddmmBackward0 fillcolor=lightgrey shape=box style=filled]" in lines
    # addmm's two edges into the block are drawn once
    assert [line for line in lines if "->" in line] == ["\tn0 -> n1", "\tn1 -> n2"]
    with pytest.raises(ModuleOptionError, match="no module call named 'haed'; did you mean "
                                                "'head'"):
        module_layout(_small_report(), 0, ["haed"])


def test_folded_edges_are_real_and_deduplicated():
    layout = module_layout(_small_report(), depth=0)
    assert layout.alias == {"n1": "m2", "n2": "m1", "n3": "m1", "n4": "m1"}
    assert layout.nodes["n0"]["next_functions"] == [["m2", 0]]
    # addmm's two edges into the block become one; the block's edges inside it are gone
    assert layout.nodes["m2"]["next_functions"] == [["m1", 0]]
    assert layout.nodes["m1"]["next_functions"] == []


def test_example_folds_at_depth_one(report):
    dot = build_dot(report, legend=False, modules={"depth": 1})
    labels = [line.split('label="')[1].split('"')[0] for line in dot.splitlines()
              if 'label="encoder.blocks' in line and "lightyellow" in line]
    assert labels == ["encoder.blocks.1: Block\\nin: [3, 4]\\nout: [3, 4]\\nparams: 28",
                      "encoder.blocks.0: Block\\nin: [3, 4]\\nout: [3, 4]\\nparams: 28"]
    assert dot.count("->") == 9


# ----- command line -------------------------------------------------------------------------

def test_graph_cli_module_options():
    r = invoke("graph", EXAMPLE, "--depth-modules", "1", "--expand", "encoder.blocks.0",
               "--no-legend", "-o", "-")
    assert r.exit_code == 0, r.stderr
    assert 'label="encoder.blocks.0: Block" labeljust=l' in r.stdout
    assert 'label="encoder.blocks.1: Block\\nin: [3, 4]' in r.stdout
    r = invoke("graph", EXAMPLE, "--no-modules", "-o", "-")
    assert r.exit_code == 0 and "subgraph cluster_m" not in r.stdout
    r = invoke("graph", EXAMPLE, "--depth-modules", "0", "--expand", "encoder.block", "-o", "-")
    assert r.exit_code == 2
    assert "--expand: no module call named 'encoder.block'; did you mean " in r.stderr
    r = invoke("graph", EXAMPLE, "--expand", "encoder", "-o", "-")
    assert r.exit_code == 2 and "give N too" in r.stderr


def test_run_by_module_groups_tensors():
    r = CliRunner(env={"COLUMNS": "100"}).invoke(
        cli, ["run", EXAMPLE, "--by-module", "--no-color"], catch_exceptions=False)
    assert r.exit_code == 0
    lines = [line.rstrip() for line in r.stdout.splitlines()]
    part = lines[lines.index("Tensors by module"):lines.index("Graph") + 1]
    headings = [line for line in part if line and not line.startswith(" ")]
    assert headings == [
        "Tensors by module",
        "(no module)",
        "encoder.blocks.0: Block  in [3, 4]  out [3, 4]  28 params",
        "encoder.blocks.0.linear: Linear  in [3, 4]  out [3, 4]  20 params",
        "encoder.blocks.0.norm: LayerNorm  in [3, 4]  out [3, 4]  8 params",
        "encoder.blocks.1: Block  in [3, 4]  out [3, 4]  28 params",
        "encoder.blocks.1.linear: Linear  in [3, 4]  out [3, 4]  20 params",
        "encoder.blocks.1.norm: LayerNorm  in [3, 4]  out [3, 4]  8 params",
        "head: Linear  in [3, 4]  out [3, 1]  5 params",
        "Graph",
    ]
    i = lines.index("head: Linear  in [3, 4]  out [3, 1]  5 params")
    assert [line.split()[0] for line in lines[i + 3:i + 7]] == \
        ["model.head.weight", "model.head.bias", "t(model.head.weight)",
         "head(Encoder.forward.x)"]


def test_a_big_model_graph_suggests_folding():
    from gradviz.render.drawing import GraphDrawing
    report = _small_report()
    report["nodes"] += [dict(report["nodes"][2], id=f"x{i}", next_functions=[])
                        for i in range(600)]
    report["nodes"][0]["next_functions"] += [[f"x{i}", 0] for i in range(600)]
    notes = [str(n) for n in GraphDrawing(report, legend=False, modules={}).notes]
    assert notes == ["warning: 606 nodes: the drawing will be hard to read; try "
                     "--depth-modules N, --collapse, --max-depth N or --root NAME"]
    assert GraphDrawing(report, legend=False, modules={"depth": 0}).notes == []
