"""Answers that differed from torch 2.13, each compared with torch: nansum's gradient at NaN
elements under an inf or nan upstream gradient (first and second order)."""

import pytest

try:
    from .test_core_torch_extra import check
except ImportError:
    from test_core_torch_extra import check

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


# ----- nansum / nanmean: torch multiplies by the not-NaN mask (inf * 0 = nan) -------------

def _all_nan_row(t):
    return t.tensor([[1.0, NAN], [NAN, NAN]], requires_grad=True)


NAN_GRADS = {
    "nanmean_all_nan_row": lambda t, x: t.nanmean(x, 1).sum(),
    "nanmean_all_nan": lambda t, x: t.nanmean(x[1]),
    "nanmean_keepdim": lambda t, x: x.nanmean(1, keepdim=True).sum(),
    "nansum_inf_upstream": lambda t, x: (t.nansum(x, 1) * t.tensor([1.0, INF])).sum(),
    "nansum_nan_upstream": lambda t, x: (x.nansum(0) * t.tensor([NAN, 2.0])).sum(),
    "nansum_all_inf_upstream": lambda t, x: x.nansum() * INF,
}


@pytest.mark.parametrize("name", NAN_GRADS)
def test_nansum_gradient_multiplies_by_the_mask(name):
    def case(t):
        x = _all_nan_row(t)
        out = NAN_GRADS[name](t, x)
        out.backward()
        return [out, x]
    check(case)


@pytest.mark.parametrize("name", NAN_GRADS)
def test_nansum_second_order(name):
    def case(t):
        x = _all_nan_row(t)
        out = NAN_GRADS[name](t, x)
        (g,) = t.autograd.grad(out, x, create_graph=True)
        y = t.tensor([[2.0, 3.0], [4.0, 5.0]], requires_grad=True)
        h = (g * y).sum()
        h.backward()
        return [g, h, x, y]
    check(case)
