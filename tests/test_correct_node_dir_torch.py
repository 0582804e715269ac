"""dir(grad_fn) as torch 2.13's: for every node of every case of tests/surface_cases.py whose
graph matches torch's node for node, the public names and the `_saved_*` names of dir() are
torch's (gradviz's helpers `_saved_items` / `_saved_lookup` and its other private fields stay
out of it). torch's `_raw_saved_*`, `_input_metadata`, `_register_hook_dict` and
`_set_sequence_nr` are left out of the comparison: gradviz refuses them by name
(test_correct_raw_saved_torch.py). The cases torch makes no graph for (optimizers, inits,
state_dict, hooks' errors) are left out at collection, and a case whose graph differs from
torch's fails, unless gradviz refuses it naming `--backend torch`."""

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


def _graph(m, case, refused=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = case(m)
        except Exception as exc:  # noqa: BLE001 - failing cases are compared elsewhere
            if refused is not None and "--backend torch" in str(exc):
                refused.append(exc)
            return []
    if isinstance(res, dict):
        return []
    outs = res[0] if isinstance(res[0], (list, tuple)) else [res[0]]
    return graph_nodes(*[getattr(o, "grad_fn", None) for o in outs])


def _names(node):
    return sorted(a for a in dir(node) if not a.startswith("__")
                  and not a.startswith("_raw_saved_") and a not in _TORCH_ONLY)


# the cases torch makes a graph for, and which of those gradviz refuses by name
CASES, REFUSED = [], []
for _name, _case in ITEMS:
    _refused = []
    if _graph(torch, _case) and (_graph(gradviz, _case, _refused) or not _refused):
        CASES.append((_name, _case))
    elif _refused:
        REFUSED.append(_name)


def test_cases_left_out_make_no_torch_graph_or_are_refused():
    assert len(CASES) > 200 and REFUSED == ["scatter_reduce_arg"]


@pytest.mark.parametrize("name,case", CASES, ids=[n for n, _ in CASES])
def test_dir_of_each_node_as_torch(name, case):
    ours, theirs = _graph(gradviz, case), _graph(torch, case)
    assert [n.name() for n in ours] == [n.name() for n in theirs]
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
