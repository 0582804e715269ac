"""Every item of issue #11's surface (tests/surface_cases.py) run on torch 2.13 and on gradviz:
values, dtypes and shapes; grad_fn names and next_functions of the whole graph; the saved names
gradviz shows (each one torch has too); gradients of a weighted sum of the outputs; errors (type
and first line). Random draws and initialisations are compared bit for bit, other float32
values within float32 rounding, float64 ones to 1e-7.

A few items are still refused by the core (REFUSED): gradviz must raise naming --backend torch
while torch answers; implementing one makes its test fail until it leaves the list.
"""

import math

import numpy as np
import pytest

try:
    from .surface_cases import ITEMS
    from .test_core_table import _walk_names
except ImportError:
    from surface_cases import ITEMS
    from test_core_table import _walk_names

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

CASES = dict(ITEMS)

# Items the core refuses (NotImplementedError or the missing-name AttributeError).
REFUSED = {"scatter_reduce_arg"}

# Random draws and initialisations: torch's values bit for bit.
EXACT = {"Generator + generator=", "manual_seed draws", "manual_seed large/dtypes",
         "dropout masks", "nn default inits", "F.dropout_train_seeded", "nn.Dropout_train",
         "TensorDataset/DataLoader", "random_split"} | {
    name for name in CASES if name.startswith("init.") and name != "init.orthogonal_"}

TOL = {"float64": (1e-7, 1e-9), "float32": (2e-5, 1e-6), "float16": (2e-3, 1e-3)}


def _plain(x):
    """Tensors inside lists, tuples and dicts as (dtype, values)."""
    if hasattr(x, "detach"):
        return ("tensor", str(x.dtype), x.detach().tolist())
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def observe(t, case):
    try:
        res = case(t)
    except Exception as exc:  # noqa: BLE001 - the error is the observable
        return ("error", type(exc).__name__, str(exc).split("\n")[0])
    if isinstance(res, dict):
        return ("data", _plain(res))
    outs, leaves = res
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    seen, total = [], None
    for o in outs:
        if not hasattr(o, "grad_fn"):
            seen.append(("python", o))
            continue
        seen.append(("tensor", str(o.dtype), tuple(o.shape), o.detach().tolist(),
                     _walk_names(t, o.grad_fn)))
        if o.requires_grad:
            w = (t.arange(o.numel(), dtype=o.dtype) * 0.5 + 1).reshape(o.shape)
            total = (o * w).sum() if total is None else total + (o * w).sum()
    grads = None
    if total is not None:
        try:
            grads = _plain(list(t.autograd.grad(total, leaves, allow_unused=True)))
        except Exception as exc:  # noqa: BLE001
            grads = ("error", type(exc).__name__, str(exc).split("\n")[0])
    return ("ok", seen, grads)


def _close(a, b, dtype, exact):
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y, dtype, exact) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], dtype, exact) for k in a)
    if isinstance(a, float) and isinstance(b, float) and not exact:
        rtol, atol = TOL.get(dtype.replace("torch.", ""), TOL["float64"])
        return math.isclose(a, b, rel_tol=rtol, abs_tol=atol) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, str) and isinstance(b, str) and a.startswith("torch."):
        return a == b
    return a == b


def _values_close(a, b, exact, dtype="float32"):
    """Recursive comparison where a ("tensor", dtype, values) triple sets the tolerance."""
    if isinstance(a, (list, tuple)) and len(a) == 3 and a[0] == "tensor":
        return (isinstance(b, (list, tuple)) and len(b) == 3 and a[1] == b[1]
                and _close(a[2], b[2], a[1], exact))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_values_close(x, y, exact, dtype) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_values_close(a[k], b[k], exact, dtype) for k in a)
    return _close(a, b, dtype, exact)


def differences(name):
    """What differs between torch's and gradviz's observation of one case, as text."""
    ref, got = observe(torch, CASES[name]), observe(gradviz, CASES[name])
    exact = name in EXACT
    if ref[0] != got[0]:
        return [f"torch {ref[0]}: {str(ref[1:])[:300]}\ngradviz {got[0]}: {str(got[1:])[:300]}"]
    if ref[0] == "error":
        return [] if ref[1:] == got[1:] else [f"errors: torch {ref[1:]}, gradviz {got[1:]}"]
    if ref[0] == "data":
        return [] if _values_close(ref[1], got[1], exact) else [f"data: {ref[1]} vs {got[1]}"]
    problems = []
    if len(ref[1]) != len(got[1]):
        return ["number of outputs"]
    for i, (r, g) in enumerate(zip(ref[1], got[1])):
        if r[0] != g[0] or r[0] == "python" and r != g:
            problems.append(f"output {i}: {r} vs {g}")
            continue
        if r[0] == "python":
            continue
        if r[1:3] != g[1:3]:
            problems.append(f"output {i} dtype/shape: {r[1:3]} vs {g[1:3]}")
        elif not _close(r[3], g[3], r[1], exact):
            problems.append(f"output {i} values: {str(r[3])[:200]} vs {str(g[3])[:200]}")
        if [n[:2] for n in r[4]] != [n[:2] for n in g[4]]:
            problems.append(f"output {i} graph: {[n[:2] for n in r[4]]} vs "
                            f"{[n[:2] for n in g[4]]}")
        else:
            for (node, _, t_saved), (_, _, g_saved) in zip(r[4], g[4]):
                if not set(g_saved) <= set(t_saved):
                    problems.append(f"{node}: saved names torch lacks "
                                    f"{set(g_saved) - set(t_saved)}")
    if not _values_close(ref[2], got[2], exact):
        problems.append(f"gradients: {str(ref[2])[:300]} vs {str(got[2])[:300]}")
    return problems


def test_the_cases_have_unique_names():
    assert len(CASES) == len(ITEMS)


@pytest.mark.parametrize("name", sorted(set(CASES) - REFUSED))
def test_surface_item_matches_torch(name):
    problems = differences(name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_surface_item_names_the_torch_backend(name):
    assert observe(torch, CASES[name])[0] == "ok"
    with pytest.raises((NotImplementedError, AttributeError), match="--backend torch"):
        CASES[name](gradviz)


def test_the_comparison_sees_a_wrong_gradient_graph_and_value():
    """A case computed differently on gradviz (a composed tanh) fails on names and values."""
    def case(t):
        x = t.tensor([0.3, -0.2], dtype=t.float64, requires_grad=True)
        y = x.tanh() if t is torch else (1 - 2 / ((2 * x).exp() + 1)) * 1.001
        return y, [x]
    CASES["_wrong"] = case
    try:
        problems = differences("_wrong")
    finally:
        del CASES["_wrong"]
    assert any("graph" in p for p in problems) and any("values" in p for p in problems)
