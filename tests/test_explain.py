"""explain: one small file per cause, checking the kind and the reported line."""

import os

import pytest

from gradviz.inspect import UsageError
from gradviz.inspect.explain import explain

FILES = os.path.join(os.path.dirname(__file__), "files")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def kinds(result):
    return [(c["kind"], c["line"]) for c in result["causes"]]


@pytest.mark.parametrize("file, name, root, expected", [
    ("explain_not_leaf", "h", None, [("not_leaf", 4)]),
    ("explain_no_requires_grad", "x", None, [("no_requires_grad", 4)]),
    ("explain_inputs_no_grad", "x2", None, [("inputs_no_grad", 5)]),
    ("explain_no_grad", "h", None, [("no_grad", 5)]),
    ("explain_detached", "h", None, [("detached", 4)]),
    ("explain_detached", "d", None, [("detached", 5)]),
    ("explain_not_connected", "a", "r", [("not_connected", 3)]),
    ("explain_other_root", "a", None, [("other_root", 7)]),
    ("explain_zero", "x", None, [("zero_gradient", 4)]),
    ("explain_nan", "x", None, [("nan_gradient", 4)]),
    ("explain_accumulated", "w", None, [("accumulated", 6)]),
    ("explain_hook", "w", None, [("hook", 6)]),
    ("explain_zeroed_after", "w", None, [("grad_edited", 6)]),
])
def test_each_cause(file, name, root, expected):
    r = explain(os.path.join(FILES, file + ".py"), name, root=root)
    assert kinds(r) == expected


def test_backward_not_called_runs_it_afterwards():
    r = explain(os.path.join(FILES, "explain_inputs_no_grad.py"), "w")
    assert [c["kind"] for c in r["causes"]] == ["backward_not_called", "ok"]
    assert r["grad"] is None and r["computed"] == [6.0, 8.0]
    assert [p["node"] for p in r["path"]] == ["SumBackward0", "MulBackward0", "AccumulateGrad"]


def test_not_connected_names_the_nearest_tensor():
    r = explain(os.path.join(FILES, "explain_not_connected.py"), "a", root="r")
    assert "nearest tensor it does feed into is 'p'" in r["causes"][0]["message"]


def test_zero_names_the_node_that_zeroed_it():
    r = explain(os.path.join(FILES, "explain_zero.py"), "x")
    assert "ReluBackward0 (h)" in r["causes"][0]["message"]
    assert r["grad"] == [0.0, 0.0]


def test_partly_zero_relu_example():
    r = explain(os.path.join(EXAMPLES, "relu_zero_grad.py"), "x", root="loss")
    assert [c["kind"] for c in r["causes"]] == ["backward_not_called", "partly_zero"]
    assert "ReluBackward0" in r["causes"][1]["message"]


def test_unknown_name_suggests_close_matches():
    with pytest.raises(UsageError, match="Did you mean h"):
        explain(os.path.join(FILES, "explain_not_leaf.py"), "hh")


def _example_names():
    from gradviz.inspect import run_file
    out = []
    for f in sorted(os.listdir(EXAMPLES)):
        if f.endswith(".py"):
            run = run_file(os.path.join(EXAMPLES, f))
            out += [(f, n) for n in run.names()]
    return out


def test_explain_runs_on_every_named_tensor_of_every_example():
    for f, name in _example_names():
        r = explain(os.path.join(EXAMPLES, f), name)
        assert r["causes"], (f, name)
        for c in r["causes"]:
            assert c["kind"] and c["message"], (f, name, c)
