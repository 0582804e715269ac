"""The report's node numbering and roots (report._Builder keeps them in lists by node number):
which outputs an edge consumes, on nodes with several outputs, compared with torch 2.13's
next_functions on the same snippet."""

import pytest

from gradviz.inspect import run_file

SNIPPET = '''\
import gradviz as torch
x = torch.ones(2, 3, requires_grad=True)
q, r = x.unbind(0)
z = r * 2
a, b, c = torch.ones(3, requires_grad=True).unbind(0)
s = c + a
w = s * s
'''


def _run(tmp_path, source):
    path = tmp_path / "f.py"
    path.write_text(source)
    return run_file(str(path), retain_graph=True)


def _torch_roots(source, names):
    """The named tensors no node's next_functions consumes, by torch."""
    torch = pytest.importorskip("torch")
    space = {}
    exec(source.replace("import gradviz as torch", ""), {"torch": torch}, space)
    consumed, seen, stack = set(), set(), [space[n].grad_fn for n in names
                                            if space[n].grad_fn is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for fn, nr in node.next_functions:
            if fn is not None:
                consumed.add((fn, nr))
                stack.append(fn)
    return [n for n in names if space[n].grad_fn is not None
            and (space[n].grad_fn, space[n].output_nr) not in consumed]


def test_roots_of_several_output_nodes_are_torch_s(tmp_path):
    run = _run(tmp_path, SNIPPET)
    report = run.report()
    names = [t["name"] for t in report["tensors"] if not t["generated"]]
    assert report["roots"] == _torch_roots(SNIPPET, names) == ["q", "z", "b", "w"]
    flags = {t["name"]: t["is_root"] for t in report["tensors"]}
    assert not flags["r"] and not flags["a"] and not flags["c"] and not flags["s"]


def test_nodes_are_numbered_from_the_roots_in_preorder(tmp_path):
    # q's node also makes r, which z consumes: the walk starts again from the nodes nothing
    # consumes (z's, w's), then the file's other tensors
    run = _run(tmp_path, SNIPPET)
    nodes = run.report()["nodes"]
    assert [n["id"] for n in nodes] == [f"n{i}" for i in range(len(nodes))]
    assert [(n["name"], n["tensor"]) for n in nodes] == [
        ("MulBackward0", "z"), ("UnbindBackward0", "q"), ("AccumulateGrad", "x"),
        ("MulBackward0", "w"), ("AddBackward0", "s"), ("UnbindBackward0", "a"),
        ("AccumulateGrad", "%6")]
    assert nodes[4]["next_functions"] == [["n5", 2], ["n5", 0]]
