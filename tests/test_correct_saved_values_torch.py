"""Saved values as torch 2.13's nodes keep them: every `_saved_*` name torch's node has, with
torch's value and Python type, for DivBackward2 (self, other and rounding_mode; other edited in
place is torch's error in backward), MmBackward0 (the sizes of both inputs, the strides of
those needing a gradient, () for the others), MeanBackward1 (self_sym_numel), the Scalars
torch saves as ints (softplus's default beta and threshold, relu6's bounds, hardtanh_'s
defaults) or floats (linalg.norm's ord), alpha whichever input of add/sub needs a gradient,
and embedding's sparse. Each snippet runs on both; the whole graph is compared."""

import pytest

import gradviz

torch = pytest.importorskip("torch")


def _value(v):
    if hasattr(v, "shape"):
        return ("tensor", str(v.dtype), tuple(v.shape), v.detach().tolist())
    if isinstance(v, tuple):
        return tuple(_value(x) for x in v)
    return (type(v).__name__, v)


def _names(node):
    return sorted(a for a in dir(node) if a.startswith("_saved_")
                  and a not in ("_saved_items", "_saved_lookup"))   # gradviz's helpers


def _saved(node):
    return [(a, _value(getattr(node, a))) for a in _names(node)]


def _graph(y):
    out, seen, queue = [], set(), [y.grad_fn]
    while queue:
        n = queue.pop(0)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if "AccumulateGrad" not in n.name():
            out.append((n.name(), _saved(n)))
        queue.extend(m for m, _ in n.next_functions)
    return out


def _leaf(m, shape, rg=True, t=False):
    x = (m.arange(float(shape[0] * shape[1])).reshape(*shape) * 0.5 - 1).requires_grad_(rg)
    return x


def _mm_cases():
    lefts = {"plain": lambda m, r: _leaf(m, (2, 3), r),
             "transposed": lambda m, r: _leaf(m, (3, 2)).detach().t().requires_grad_(r),
             "sliced": lambda m, r: _leaf(m, (2, 5)).detach()[:, 1:4].requires_grad_(r),
             "empty": lambda m, r: m.ones(0, 3, requires_grad=r)}
    rights = {"plain": lambda m, r: _leaf(m, (3, 4), r),
              "transposed": lambda m, r: _leaf(m, (4, 3)).detach().t().requires_grad_(r),
              "column": lambda m, r: m.ones(3, 1, requires_grad=r),
              "empty": lambda m, r: m.ones(3, 0, requires_grad=r)}
    cases = {}
    for ln, lf in lefts.items():
        for rn, rf in rights.items():
            for ra, rb in ((True, True), (True, False), (False, True)):
                cases[f"mm_{ln}_{rn}_{int(ra)}{int(rb)}"] = (
                    lambda m, lf=lf, rf=rf, ra=ra, rb=rb: lf(m, ra).mm(rf(m, rb)))
    return cases


CASES = {
    **_mm_cases(),
    "matmul_2d": lambda m: _leaf(m, (2, 3)).matmul(_leaf(m, (3, 2))),
    "mean_dim": lambda m: _leaf(m, (2, 3)).mean(1),
    "mean_dims_keepdim": lambda m: _leaf(m, (2, 6)).reshape(2, 3, 2).mean((0, 2), keepdim=True),
    "mean_all_dims": lambda m: _leaf(m, (2, 3)).mean((0, 1)),
    "mean_empty": lambda m: m.ones(0, 3, requires_grad=True).mean(0),
    "mean": lambda m: _leaf(m, (2, 3)).mean(),
    "softplus_default": lambda m: m.nn.functional.softplus(_leaf(m, (2, 3))),
    "softplus_beta": lambda m: m.nn.functional.softplus(_leaf(m, (2, 3)), 2),
    "softplus_floats": lambda m: m.nn.functional.softplus(_leaf(m, (2, 3)), 2.0, 10.0),
    "Softplus_module": lambda m: m.nn.Softplus()(_leaf(m, (2, 3))),
    "relu6": lambda m: m.nn.functional.relu6(_leaf(m, (2, 3))),
    "relu6_inplace": lambda m: m.nn.functional.relu6(_leaf(m, (2, 3)) * 1, inplace=True),
    "ReLU6_module": lambda m: m.nn.ReLU6()(_leaf(m, (2, 3))),
    "hardtanh": lambda m: m.nn.functional.hardtanh(_leaf(m, (2, 3))),
    "hardtanh_ints": lambda m: m.nn.functional.hardtanh(_leaf(m, (2, 3)), -2, 2),
    "hardtanh_": lambda m: m.nn.functional.hardtanh_(_leaf(m, (2, 3)) * 1),
    "linalg_norm_vector": lambda m: m.linalg.norm(_leaf(m, (1, 3))[0]),
    "linalg_norm_matrix": lambda m: m.linalg.norm(_leaf(m, (2, 3))),
    "linalg_norm_ord1": lambda m: m.linalg.norm(_leaf(m, (2, 3)), 1),
    "linalg_norm_ord_inf": lambda m: m.linalg.norm(_leaf(m, (2, 3)), float("inf")),
    "linalg_norm_fro": lambda m: m.linalg.norm(_leaf(m, (2, 3)), "fro"),
    "linalg_norm_dim": lambda m: m.linalg.norm(_leaf(m, (2, 3)), dim=1),
    "linalg_norm_int_ord": lambda m: m.linalg.norm(_leaf(m, (1, 3))[0], 2),
    "sub_self_only": lambda m: _leaf(m, (2, 3)) - _leaf(m, (2, 3), False),
    "sub_other_only": lambda m: _leaf(m, (2, 3), False) - _leaf(m, (2, 3)),
    "sub_alpha": lambda m: _leaf(m, (2, 3)).sub(_leaf(m, (2, 3), False), alpha=2),
    "add_self_only": lambda m: _leaf(m, (2, 3)) + _leaf(m, (2, 3), False),
    "add_alpha_float": lambda m: _leaf(m, (2, 3)).add(_leaf(m, (2, 3), False), alpha=0.5),
    "l1_loss": lambda m: m.nn.functional.l1_loss(_leaf(m, (2, 3)), _leaf(m, (2, 3), False)),
    "embedding_padding": lambda m: m.nn.functional.embedding(m.tensor([0, 1]), _leaf(m, (2, 3)),
                                                             padding_idx=1),
}
for _rm in ("floor", "trunc"):
    CASES.update({
        f"div_{_rm}_both": lambda m, rm=_rm: _leaf(m, (2, 3)).div(_leaf(m, (2, 3)) + 7,
                                                                   rounding_mode=rm),
        f"div_{_rm}_self": lambda m, rm=_rm: _leaf(m, (2, 3)).div(_leaf(m, (2, 3), False) + 7,
                                                                   rounding_mode=rm),
        f"div_{_rm}_other": lambda m, rm=_rm: _leaf(m, (2, 3), False).div(_leaf(m, (2, 3)) + 7,
                                                                           rounding_mode=rm),
        f"div_{_rm}_int": lambda m, rm=_rm: _leaf(m, (2, 3)).div(2, rounding_mode=rm),
        f"div_{_rm}_float": lambda m, rm=_rm: m.div(_leaf(m, (2, 3)), 2.5, rounding_mode=rm),
        f"div_{_rm}_broadcast": lambda m, rm=_rm: _leaf(m, (2, 3)).div(
            m.tensor([2.0, 3.0, 4.0], requires_grad=True), rounding_mode=rm),
    })


@pytest.mark.parametrize("case", sorted(CASES))
def test_saved_values_as_torch(case):
    assert _graph(CASES[case](gradviz)) == _graph(CASES[case](torch))


def _after_backward(m, case):
    y = CASES[case](m)
    node = y.grad_fn
    y.sum().backward()
    out = []
    for a in _names(node):
        try:
            out.append((a, _value(getattr(node, a))))
        except RuntimeError as e:
            out.append((a, str(e).split(".")[0]))
    return out


@pytest.mark.parametrize("case", sorted(c for c in CASES if c.startswith(("mm_", "div_"))))
def test_saved_values_after_backward_as_torch(case):
    assert _after_backward(gradviz, case) == _after_backward(torch, case)


def _edit_then_backward(m, rm, edit):
    a = _leaf(m, (2, 3))
    b = _leaf(m, (2, 3)) + 7
    y = a.div(b, rounding_mode=rm)
    (b if edit == "other" else a.detach()).add_(1)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return str(e).split(":")[0]
    return a.grad.tolist()


@pytest.mark.parametrize("rm", ["floor", "trunc"])
@pytest.mark.parametrize("edit", ["other", "self"])
def test_div_rounded_checks_its_saved_tensors_as_torch(rm, edit):
    """torch's DivBackward2 saves other (and self, for other's gradient): editing one in place
    before backward is torch's error, never a quiet zero gradient."""
    assert _edit_then_backward(gradviz, rm, edit) == _edit_then_backward(torch, rm, edit)
