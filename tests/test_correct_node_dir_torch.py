"""dir(grad_fn) as torch 2.13's: for every node of every case of tests/surface_cases.py whose
graph matches torch's node for node, the public names and the `_saved_*` names of dir() are
torch's (gradviz's helpers `_saved_items` / `_saved_lookup` and its other private fields stay
out of it). torch's `_raw_saved_*`, `_input_metadata`, `_register_hook_dict` and
`_set_sequence_nr` are left out of the comparison: gradviz does not have them."""

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

_TORCH_ONLY = {"_input_metadata", "_register_hook_dict", "_set_sequence_nr"}


def _graph(m, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = case(m)
        except Exception:  # noqa: BLE001 - failing cases are compared elsewhere
            return []
    if isinstance(res, dict):
        return []
    outs = res[0] if isinstance(res[0], (list, tuple)) else [res[0]]
    return graph_nodes(*[getattr(o, "grad_fn", None) for o in outs])


def _names(node):
    return sorted(a for a in dir(node) if not a.startswith("__")
                  and not a.startswith("_raw_saved_") and a not in _TORCH_ONLY)


CASES = [(name, case) for name, case in ITEMS]


@pytest.mark.parametrize("name,case", CASES, ids=[n for n, _ in CASES])
def test_dir_of_each_node_as_torch(name, case):
    ours, theirs = _graph(gradviz, case), _graph(torch, case)
    if [n.name() for n in ours] != [n.name() for n in theirs] or not theirs:
        pytest.skip("graphs differ or none: compared by test_issue11_surface_torch")
    assert [(n.name(), _names(n)) for n in ours] == [(n.name(), _names(n)) for n in theirs]


def test_helpers_stay_reachable():
    x = gradviz.ones(2, requires_grad=True)
    node = (x * x).grad_fn
    assert "_saved_lookup" not in dir(node) and "_saved_items" not in dir(node)
    assert [n for n, _, _ in node._saved_items()] == ["self", "other"]


def test_custom_function_ctx_keeps_python_dir():
    class F(gradviz.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx._mine = 1
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = F.apply(gradviz.ones(2, requires_grad=True))
    assert "_mine" in dir(y.grad_fn)
