"""Hand-written inspection reports (docs/report-schema.md) shared by the render tests.

The renderers read only this plain data, so their tests need no autograd core. The test at the
bottom keeps these reports honest against the schema's keys.
"""

def tensor(name, shape, *, requires_grad=True, grad_fn=None, node=None, accumulator=None,
           next_functions=(), data=None, grad=None, version=0, is_root=False,
           is_parameter=False, retains_grad=False, line=None):
    return {
        "name": name, "shape": list(shape), "dtype": "float32",
        "requires_grad": requires_grad, "is_leaf": grad_fn is None,
        "grad_fn": grad_fn, "node": node, "accumulator": accumulator,
        "next_functions": [list(nf) for nf in next_functions],
        "version": version, "retains_grad": retains_grad,
        "is_parameter": is_parameter, "is_root": is_root,
        "data": data, "grad": grad,
        "file": "example.py" if line else None, "line": line,
    }


def node(nid, name, *, made=None, variable=None, next_functions=(), inputs=(), saved=(),
         grad=None, anomaly=None, line=None):
    return {
        "id": nid, "name": name, "tensor": made, "variable": variable,
        "next_functions": [list(nf) for nf in next_functions], "inputs": list(inputs),
        "saved": list(saved), "grad": grad, "anomaly": anomaly,
        "file": "example.py" if line else None, "line": line,
    }


def saved(name, made, shape, saved_version=0, version=0, value=None):
    return {"name": name, "tensor": made, "shape": None if shape is None else list(shape),
            "dtype": None if shape is None else "float32",
            "saved_version": saved_version, "version": version, "value": value}


def report(tensors, nodes, roots, **extra):
    result = {"file": "example.py", "backend": "gradviz", "tensors": tensors, "nodes": nodes,
              "roots": roots, "hooks": [], "anomalies": [], "stdout": "", "error": None}
    result.update(extra)
    return result


def zwxb():
    """z = w*x + b: w, b leaves requiring grad, x a leaf that doesn't."""
    return report(
        [
            tensor("w", [2], accumulator="n2", data=[1.0, 2.0], line=1),
            tensor("x", [2], requires_grad=False, data=[3.0, 4.0], line=2),
            tensor("b", [2], accumulator="n3", data=[0.5, 0.5], line=3),
            tensor("y", [2], grad_fn="MulBackward0", node="n1", data=[3.0, 8.0], line=4,
                   next_functions=[["AccumulateGrad", 0], [None, 0]]),
            tensor("z", [2], grad_fn="AddBackward0", node="n0", data=[3.5, 8.5], line=5,
                   is_root=True, next_functions=[["MulBackward0", 0], ["AccumulateGrad", 0]]),
        ],
        [
            node("n0", "AddBackward0", made="z", next_functions=[["n1", 0], ["n3", 0]],
                 inputs=["y", "b"], saved=[saved("_saved_alpha", None, None, value=1)], line=5),
            node("n1", "MulBackward0", made="y", next_functions=[["n2", 0], [None, 0]],
                 inputs=["w", "x"], saved=[saved("_saved_other", "x", [2])], line=4),
            node("n2", "AccumulateGrad", variable="w"),
            node("n3", "AccumulateGrad", variable="b"),
        ],
        ["z"],
    )


def seed():
    """The seed notes' example after e.backward(): a=2, b=3, c=a*b, d=4, e=c*d."""
    return report(
        [
            tensor("a", [], accumulator="n3", data=2.0, grad=12.0, line=1),
            tensor("b", [], accumulator="n4", data=3.0, grad=8.0, line=2),
            tensor("c", [], grad_fn="MulBackward0", node="n1", data=6.0, line=3,
                   next_functions=[["AccumulateGrad", 0], ["AccumulateGrad", 0]]),
            tensor("d", [], accumulator="n2", data=4.0, grad=6.0, line=4),
            tensor("e", [], grad_fn="MulBackward0", node="n0", data=24.0, line=5, is_root=True,
                   next_functions=[["MulBackward0", 0], ["AccumulateGrad", 0]]),
        ],
        [
            node("n0", "MulBackward0", made="e", next_functions=[["n1", 0], ["n2", 0]],
                 inputs=["c", "d"], grad=1.0, line=5,
                 saved=[saved("_saved_other", "d", []), saved("_saved_self", "c", [])]),
            node("n1", "MulBackward0", made="c", next_functions=[["n3", 0], ["n4", 0]],
                 inputs=["a", "b"], grad=4.0, line=3,
                 saved=[saved("_saved_other", "b", []), saved("_saved_self", "a", [])]),
            node("n2", "AccumulateGrad", variable="d", grad=6.0),
            node("n3", "AccumulateGrad", variable="a", grad=12.0),
            node("n4", "AccumulateGrad", variable="b", grad=8.0),
        ],
        ["e"],
    )


def square():
    """s = a * a: one leaf used twice, so next_functions holds a duplicate."""
    return report(
        [
            tensor("a", [], accumulator="n1", data=3.0),
            tensor("s", [], grad_fn="MulBackward0", node="n0", data=9.0, is_root=True,
                   next_functions=[["AccumulateGrad", 0], ["AccumulateGrad", 0]]),
        ],
        [
            node("n0", "MulBackward0", made="s", next_functions=[["n1", 0], ["n1", 0]],
                 inputs=["a", "a"]),
            node("n1", "AccumulateGrad", variable="a"),
        ],
        ["s"],
    )


def modified():
    """y = a * w, then w.add_(1): MulBackward0 saved w at version 0, w is now at version 1."""
    return report(
        [
            tensor("a", [2], accumulator="n1", data=[1.0, 1.0]),
            tensor("w", [2], requires_grad=False, data=[3.0, 3.0], version=1),
            tensor("y", [2], grad_fn="MulBackward0", node="n0", data=[2.0, 2.0], is_root=True,
                   next_functions=[["AccumulateGrad", 0], [None, 0]]),
        ],
        [
            node("n0", "MulBackward0", made="y", next_functions=[["n1", 0], [None, 0]],
                 inputs=["a", "w"], saved=[saved("_saved_other", "w", [2], 0, 1)]),
            node("n1", "AccumulateGrad", variable="a"),
        ],
        ["y"],
    )


def chain(n, *, with_weight=False):
    """h1 = h0 * 2, h2 = h1 * 2, ... n MulBackward0 nodes in a row (h0 a leaf).

    with_weight: h{i} = h{i-1} * w instead, so every node also points to w's AccumulateGrad.
    """
    tensors = [tensor("h0", [3], accumulator="acc")]
    if with_weight:
        tensors.append(tensor("w", [3], accumulator="accw", is_parameter=True))
    nodes = []
    for i in range(n, 0, -1):
        below = f"m{i - 1}" if i > 1 else "acc"
        other = ["accw", 0] if with_weight else [None, 0]
        nodes.append(node(f"m{i}", "MulBackward0", made=f"h{i}",
                          next_functions=[[below, 0], other],
                          inputs=[f"h{i - 1}", "w" if with_weight else None]))
    for i in range(1, n + 1):
        tensors.append(tensor(f"h{i}", [3], grad_fn="MulBackward0", node=f"m{i}",
                              is_root=i == n))
    nodes.append(node("acc", "AccumulateGrad", variable="h0"))
    if with_weight:
        nodes.append(node("accw", "AccumulateGrad", variable="w"))
    return report(tensors, nodes, [f"h{n}"])


HOSTILE = [
    '<b>bold</b>', 'a&b', '&lt;', '&amp;', '&foo;', '&#65;', '"quoted"', "it's", 'x\\', '\\N\\G',
    '{brace}', '];x=1;[', '-> n0', '<<html>>', ']]>', 'tab\tnl\nend', 'ctl\x01x', '</svg>',
    '<script>alert(1)</script>', '\\"', 'w[0]', 'x:y',
]


# zwxb's tensor names in hostile(): each one of HOSTILE.
HOSTILE_TENSORS = {"w": HOSTILE[0], "x": HOSTILE[1], "b": HOSTILE[6], "y": HOSTILE[9],
                   "z": HOSTILE[8]}


def hostile():
    """zwxb with every name, label and file in it made of characters DOT, SVG and HTML treat
    specially: each string of HOSTILE appears somewhere."""
    names = HOSTILE_TENSORS
    result = zwxb()
    for i, t in enumerate(result["tensors"]):
        t["name"] = names[t["name"]]
        t["dtype"] = HOSTILE[2 + i % 4]  # the entity-like strings: &lt; &amp; &foo; &#65;
        t["file"] = "<evil>&.py"
    for i, n in enumerate(result["nodes"]):
        # AccumulateGrad keeps its name: the renderer treats that name specially.
        if n["name"] != "AccumulateGrad":
            n["name"] = HOSTILE[10 + i]
        n["file"] = HOSTILE[12 + i % 2]
        n["line"] = 1
        n["tensor"] = names.get(n["tensor"])
        n["variable"] = names.get(n["variable"])
        n["inputs"] = [names.get(name) for name in n["inputs"]]
        n["anomaly"] = HOSTILE[14 + i]
        n["grad"] = [float("nan"), 1.0]
        for s in n["saved"]:
            s["name"] = HOSTILE[18 + i]
            s["dtype"] = HOSTILE[3]
            s["tensor"] = names.get(s["tensor"])
            s["version"] = 7
    result["tensors"][0]["data"] = [HOSTILE[20], HOSTILE[21]]
    result["roots"] = [names["z"]]
    return result


# ----- The reports follow the schema -----

TENSOR_KEYS = {"name", "shape", "dtype", "requires_grad", "is_leaf", "grad_fn", "node",
               "accumulator", "next_functions", "version", "retains_grad", "is_parameter",
               "is_root", "data", "grad", "file", "line"}
NODE_KEYS = {"id", "name", "tensor", "variable", "next_functions", "inputs", "saved", "grad",
             "anomaly", "file", "line"}
SAVED_KEYS = {"name", "tensor", "shape", "dtype", "saved_version", "version", "value"}
REPORT_KEYS = {"file", "backend", "tensors", "nodes", "roots", "hooks", "anomalies", "stdout",
               "error"}


def test_sample_reports_follow_the_schema():
    for make in (zwxb, seed, square, modified, hostile, lambda: chain(4, with_weight=True)):
        r = make()
        assert set(r) == REPORT_KEYS
        ids = {n["id"] for n in r["nodes"]}
        names = {t["name"] for t in r["tensors"]}
        assert set(r["roots"]) <= names
        for t in r["tensors"]:
            assert set(t) == TENSOR_KEYS
            assert t["node"] is None or t["node"] in ids
        for n in r["nodes"]:
            assert set(n) == NODE_KEYS
            assert all(nf[0] is None or nf[0] in ids for nf in n["next_functions"])
            assert all(set(s) == SAVED_KEYS for s in n["saved"])
