"""torch's `_raw_saved_<name>` (the SavedVariable of each saved tensor: unpack(), register_hooks,
data) and `_input_metadata` (each input gradient's shape, dtype, device): gradviz keeps neither
object. For every node of every case of tests/surface_cases.py whose graph matches torch's node
for node, each `_raw_saved_*` torch has, and `_input_metadata`, raise an AttributeError that
names `--backend torch`; a `_raw_saved_*` torch lacks (a saved int, a saved size) raises
Python's own AttributeError, as on torch. Before, all of them read as Python's "object has no
attribute", as if torch had no such thing."""

import warnings

import pytest

try:
    from .graphwalk import graph_nodes
    from .surface_cases import ITEMS
except ImportError:
    from graphwalk import graph_nodes
    from surface_cases import ITEMS

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _graph(m, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = case(m)
        except Exception:  # noqa: BLE001 - failing cases are compared elsewhere
            return []
    if isinstance(res, dict) or not isinstance(res, (list, tuple)) or not res:
        return []
    outs = res[0] if isinstance(res[0], (list, tuple)) else [res[0]]
    return graph_nodes(*[getattr(o, "grad_fn", None) for o in outs])


def _pairs():
    out = []
    for name, case in ITEMS:
        ours, theirs = _graph(gradviz, case), _graph(torch, case)
        if theirs and [n.name() for n in ours] == [n.name() for n in theirs]:
            out.extend((name, a, b) for a, b in zip(ours, theirs))
    return out


PAIRS = _pairs()


def _refused(node, attr):
    with pytest.raises(AttributeError) as info:
        getattr(node, attr)
    return "--backend torch" in str(info.value)


def test_some_nodes_compared():
    assert len(PAIRS) > 200


@pytest.mark.parametrize("i", range(0, len(PAIRS), 1), ids=lambda i: f"{PAIRS[i][0]}-{i}")
def test_raw_saved_and_input_metadata_refused_by_name(i):
    _, ours, theirs = PAIRS[i]
    raw = [a for a in dir(theirs) if a.startswith("_raw_saved_")]
    saved = [a[len("_saved_"):] for a in dir(theirs) if a.startswith("_saved_")]
    for s in saved:
        attr = "_raw_saved_" + s
        if s.startswith("_") or not hasattr(ours, "_saved_" + s):
            continue
        assert _refused(ours, attr) == (attr in raw), (ours.name(), attr)
    if hasattr(theirs, "_input_metadata"):
        assert _refused(ours, "_input_metadata")
    assert not _refused(ours, "_no_such_name")


def _custom_node(m):
    class Twice(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Twice.apply(m.ones(2, requires_grad=True)).grad_fn


@pytest.mark.parametrize("attr", ["_raw_saved_tensors", "_input_metadata",
                                  "_register_hook_dict", "_set_sequence_nr"])
def test_custom_function_node_refuses_torch_only_names(attr):
    assert hasattr(_custom_node(torch), attr)
    assert _refused(_custom_node(gradviz), attr)
    assert attr in dir(_custom_node(gradviz))       # listed as by torch's dir(), refused by name
