"""Differential checks against torch 2.13 for reductions, scans, sorting, gather/scatter and
masks: keyword and positional forms, dims (negative, tuples, keepdim), dtypes, edge shapes,
errors (first sentence), in-place forms and their versions and CopySlices on views, plus
gradients against finite differences where a row example cannot show them (ties, zeros,
every norm order). Each case is a function of the backend module, run on both.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

try:
    from . import diffcases as D
    from .test_torch_diff import compare
except ImportError:
    import diffcases as D
    from test_torch_diff import compare

import gradviz

torch = pytest.importorskip("torch")

# One element per reduced slice: both backends warn (compared in
# test_too_few_degrees_of_freedom_warn_as_torch), the other tests need not show it.
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")

INF = math.inf
M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]
TIES = [[2.0, -1.0, 2.0], [0.5, 0.5, -3.0]]
Z23 = [[0.3, 0.0, 2.1], [0.0, 0.0, -0.6]]


def observe(t):
    """The autograd-visible state of a tensor (or of each item of a list/tuple)."""
    if isinstance(t, (list, tuple)):
        return [type(t).__name__ if type(t) not in (list, tuple) else None] + \
            [observe(x) for x in t]
    if not hasattr(t, "grad_fn"):
        return t
    return {"value": D.val(t), "requires_grad": t.requires_grad, "is_leaf": t.is_leaf,
            "graph": D.graph(t.grad_fn), "version": t._version,
            "is_view": t._base is not None, "grad": D.gval(D.quiet_grad(t))}


def run(fn, backend):
    try:
        return observe(fn(backend))
    except Exception as exc:  # noqa: BLE001 - the error is the observable
        return D.Err(exc)


def check(fn):
    ref, got = run(fn, torch), run(fn, gradviz)
    problems = compare(ref, got)
    assert not problems, "\n".join(problems)


def gradgradcheck(fn, xs):
    """Second derivatives against finite differences: gradcheck of x -> d(sum(w * fn(x)))/dx
    with create_graph=True (as tests/test_core_table.py does)."""
    def first(*inputs):
        out = fn(*inputs)
        weight = gradviz.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
        return gradviz.autograd.grad((out * weight).sum(), inputs, create_graph=True)
    return gradviz.autograd.gradcheck(first, xs)


def _leaf(t, data=M23, dtype=None):
    return t.tensor(data, dtype=dtype or t.float64, requires_grad=True)


def _grads(t, op, data=M23):
    """[output, grad of x] for op(x), backward with a non-uniform upstream gradient."""
    x = _leaf(t, data)
    out = op(t, x)
    first = out[0] if isinstance(out, tuple) else out
    if first.requires_grad:
        first.backward(D.upstream(t, first))
    return [first, D.gval(x.grad)]      # (a gradient's _version is torch-internal)


# ----- Spread: var, std, var_mean, std_mean ------------------------------------------------

SPREAD = {
    "var": lambda t, x: x.var(),
    "var_dim": lambda t, x: x.var(1),
    "var_neg_dim": lambda t, x: x.var(-1, keepdim=True),
    "var_dims": lambda t, x: t.var(x, dim=(0, 1), keepdim=True),
    "var_unbiased_false": lambda t, x: x.var(1, unbiased=False),
    "var_unbiased_positional": lambda t, x: x.var(False),
    "var_positional_all": lambda t, x: t.var(x, 1, True, True),
    "var_correction": lambda t, x: x.var(dim=0, correction=0),
    "var_correction_2": lambda t, x: x.var(correction=2),
    "var_int": lambda t, x: t.tensor([1, 2, 3]).var(),
    "var_single": lambda t, x: x[:1, :1].var(),
    "var_0d": lambda t, x: x[0, 0].var(),
    "std": lambda t, x: x.std(),
    "std_dim": lambda t, x: x.std(0, keepdim=True),
    "std_unbiased": lambda t, x: t.std(x, 1, False),
    "std_zero_spread": lambda t, x: (x * 0).std(1),
    "var_mean": lambda t, x: t.var_mean(x, 1)[0] + t.var_mean(x, 1)[1],
    "std_mean_dims": lambda t, x: t.std_mean(x, (0, 1), correction=0)[0],
    "std_mean_mean_only": lambda t, x: t.std_mean(x, 0)[1],
}


@pytest.mark.parametrize("name", sorted(SPREAD))
def test_spread(name):
    check(lambda t: _grads(t, SPREAD[name]))


def test_unbiased_and_correction_together_are_refused():
    with pytest.raises(TypeError, match=r"^var\(\) received an invalid combination of arguments"):
        _leaf(gradviz).var(1, unbiased=False, correction=1)


def test_var_mean_returns_both_outputs_of_one_node():
    def case(t):
        x = _leaf(t)
        v, m = t.var_mean(x, 0)
        (v * 2 + m * 3).sum().backward()
        return [type(t.var_mean(x)).__name__, v, m, x.grad, v.grad_fn is m.grad_fn,
                v.output_nr, m.output_nr]
    check(case)


# ----- Norms -------------------------------------------------------------------------------

NORMS = {
    "norm": lambda t, x: x.norm(),
    "norm_p1": lambda t, x: x.norm(p=1),
    "norm_inf": lambda t, x: x.norm(p=INF),
    "norm_neg_inf": lambda t, x: x.norm(-INF, dim=1),
    "norm_p0": lambda t, x: x.norm(0),
    "norm_p3": lambda t, x: t.norm(x, 3),
    "norm_half": lambda t, x: x.norm(0.5, 1),
    "norm_fro": lambda t, x: x.norm(p="fro"),
    "norm_fro_dims": lambda t, x: t.norm(x, "fro", (0, 1), True),
    "norm_fro_3dims": lambda t, x: x.unsqueeze(0).norm("fro", (0, 1, 2)),
    "norm_bad_p": lambda t, x: x.norm(p="abc"),
    "norm_dim": lambda t, x: t.norm(x, dim=1),
    "norm_positional": lambda t, x: t.norm(x, 2, 1, True),
    "norm_dtype": lambda t, x: x.float().norm(dtype=t.float64),
    "norm_int": lambda t, x: t.tensor([3, 4]).norm(),
    "norm_zero": lambda t, x: (x * 0).norm(dim=1),
    "norm_ties_inf": lambda t, x: (x * 0 + 1).norm(INF, 1),
    "vector_norm": lambda t, x: t.linalg.vector_norm(x),
    "vector_norm_ord": lambda t, x: t.linalg.vector_norm(x, 1.5, dim=(-1,), keepdim=True),
    "vector_norm_int_dim": lambda t, x: t.linalg.vector_norm(x, ord=INF, dim=0),
    "vector_norm_str_ord": lambda t, x: t.linalg.vector_norm(x, ord="fro"),
    "vector_norm_int": lambda t, x: t.linalg.vector_norm(t.tensor([1, 2])),
    "vector_norm_empty_inf": lambda t, x: t.linalg.vector_norm(t.zeros(0), INF),
    "linalg_norm": lambda t, x: t.linalg.norm(x),
    "linalg_norm_vector": lambda t, x: t.linalg.norm(x[0]),
    "linalg_norm_vector_ord": lambda t, x: t.linalg.norm(x[1], 3),
    "linalg_norm_fro": lambda t, x: t.linalg.norm(x, "fro"),
    "linalg_norm_1": lambda t, x: t.linalg.norm(x, 1),
    "linalg_norm_minus_1": lambda t, x: t.linalg.norm(x, -1, keepdim=True),
    "linalg_norm_inf": lambda t, x: t.linalg.norm(x, INF),
    "linalg_norm_minus_inf": lambda t, x: t.linalg.norm(x, -INF, dim=(1, 0)),
    "linalg_norm_dim": lambda t, x: t.linalg.norm(x, dim=1),
    "linalg_norm_ord_dims": lambda t, x: t.linalg.norm(x, ord=1, dim=(0, 1)),
    "linalg_norm_3d": lambda t, x: t.linalg.norm(x.unsqueeze(0)),
    "linalg_norm_3d_ord": lambda t, x: t.linalg.norm(x.unsqueeze(0), 2),
    "linalg_norm_fro_1d": lambda t, x: t.linalg.norm(x[0], "fro"),
    "linalg_norm_bad_ord": lambda t, x: t.linalg.norm(x, 3),
}


@pytest.mark.parametrize("name", sorted(NORMS))
def test_norms(name):
    check(lambda t: _grads(t, NORMS[name]))


@pytest.mark.parametrize("call", [
    lambda x: x.norm(p="nuc"),
    lambda x: gradviz.linalg.norm(x, "nuc"),
    lambda x: gradviz.linalg.norm(x, 2),
    lambda x: gradviz.linalg.norm(x, -2),
    lambda x: gradviz.norm(x, out=gradviz.zeros(())),
    lambda x: gradviz.linalg.vector_norm(x, out=gradviz.zeros(())),
])
def test_norms_needing_an_svd_or_out_raise(call):
    with pytest.raises(NotImplementedError, match="run with --backend torch to use PyTorch"):
        call(_leaf(gradviz))


@pytest.mark.parametrize("ord", [0.5, 1, 1.5, 2, 3, INF, -INF])
@pytest.mark.parametrize("dim", [None, 0, (0, 1)])
def test_norm_gradients_match_finite_differences(ord, dim):
    x = _leaf(gradviz, [[0.3, -1.2, 2.1], [1.1, 0.4, -0.65]])
    f = lambda x: gradviz.linalg.vector_norm(x, ord, dim)  # noqa: E731
    assert gradviz.autograd.gradcheck(f, (x,))
    if ord not in (INF, -INF):
        assert gradgradcheck(f, (x,))


# ----- Scans, logsumexp, amax and amin -----------------------------------------------------

SCANS = {
    "cumsum_neg_dim": lambda t, x: x.cumsum(-1),
    "cumsum_torch": lambda t, x: t.cumsum(x, dim=0),
    "cumsum_dtype": lambda t, x: x.float().cumsum(0, dtype=t.float64),
    "cumsum_int32": lambda t, x: t.tensor([1, 2], dtype=t.int32).cumsum(0),
    "cumsum_bool": lambda t, x: t.tensor([True, False, True]).cumsum(0),
    "cumsum_0d": lambda t, x: x[0, 0].cumsum(0),
    "cumsum_bad_dim": lambda t, x: x.cumsum(2),
    "cumprod_dim1": lambda t, x: x.cumprod(1),
    "cumprod_one_zero": lambda t, x: (x * t.tensor([1.0, 0.0, 1.0])).cumprod(1),
    "cumprod_two_zeros": lambda t, x: x.masked_fill(t.tensor([[False, True, True],
                                                              [True, False, False]]), 0)
                                       .cumprod(1),
    "cumprod_int": lambda t, x: t.tensor([2, 3, 4]).cumprod(0),
    "cumsum_inplace": lambda t, x: (x * 1).cumsum_(1),
    "cumsum_inplace_view": lambda t, x: (x * 1)[1:].cumsum_(1),
    "cumprod_inplace": lambda t, x: (x * 1).cumprod_(0),
    "cumprod_inplace_leaf": lambda t, x: x.cumprod_(0),
    "cumprod_inplace_view": lambda t, x: (x * 1).t().cumprod_(1),
    "cumsum_inplace_dtype": lambda t, x: (x * 1).cumsum_(0, dtype=t.float32),
    "cumprod_inplace_same_dtype": lambda t, x: (x * 1).cumprod_(0, dtype=t.float64),
    "logsumexp": lambda t, x: x.logsumexp(1),
    "logsumexp_dims": lambda t, x: t.logsumexp(x, (0, 1), keepdim=True),
    "logsumexp_neg_inf": lambda t, x: x.masked_fill(t.tensor([True, False, False]), -INF)
                                       .logsumexp(-1),
    "logsumexp_all_neg_inf": lambda t, x: (x * 0 - INF).logsumexp(1),
    "logsumexp_int": lambda t, x: t.tensor([1, 2]).logsumexp(0),
    "amax": lambda t, x: x.amax(),
    "amax_dim": lambda t, x: x.amax(-1, keepdim=True),
    "amax_ties": lambda t, x: (x * 0 + t.tensor(TIES, dtype=t.float64)).amax(1),
    "amin_ties_all": lambda t, x: (x * 0 + t.tensor(TIES, dtype=t.float64)).amin((0, 1)),
    "amin_torch": lambda t, x: t.amin(x, dim=0),
    "amax_int": lambda t, x: t.tensor([[1, 5], [7, 2]]).amax(0),
    "amax_empty": lambda t, x: t.zeros(0).amax(),
    "amax_empty_dim": lambda t, x: t.zeros(0, 3).amax(1),
    "amax_empty_reduced_dim": lambda t, x: t.zeros(0, 3).amax(0),
    "amax_dup_dims": lambda t, x: x.amax((1, 1)),
    "max_kwargs": lambda t, x: t.max(x, dim=1, keepdim=True),
    "min_kwargs": lambda t, x: x.min(dim=-1),
    "max_other": lambda t, x: t.max(x, t.tensor(TIES, dtype=t.float64)),
}


@pytest.mark.parametrize("name", sorted(SCANS))
def test_scans_and_extremes(name):
    check(lambda t: _grads(t, SCANS[name]))


@pytest.mark.parametrize("data", [M23, Z23, [[0.0, 0.0, 0.0], [1.5, 0.0, 2.0]]])
@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_gradients_with_zeros_match_finite_differences(data, dim):
    x = _leaf(gradviz, data)
    assert gradviz.autograd.gradcheck(lambda x: x.cumprod(dim), (x,))
    assert gradgradcheck(lambda x: x.cumprod(dim), (x,))


def test_cumprod_second_order_with_zeros_matches_torch():
    def case(t):
        return D.second_order(t, lambda x: x.cumprod(1), _leaf(t, Z23))
    check(case)


def test_max_min_out_is_not_silently_ignored():
    x = _leaf(gradviz)
    for fn in (gradviz.max, gradviz.min):
        with pytest.raises(NotImplementedError, match=r"torch\.(max|min)\(out=\.\.\.\)"):
            fn(x, 1, out=(gradviz.zeros(2), gradviz.zeros(2, dtype=gradviz.int64)))


# ----- Sorting and order statistics --------------------------------------------------------

SORTS = {
    "sort": lambda t, x: x.sort(),
    "sort_dim0_desc": lambda t, x: t.sort(x, 0, True),
    "sort_kwargs": lambda t, x: x.sort(dim=-1, descending=True),
    "sort_stable_ties": lambda t, x: (x * 0 + t.tensor(TIES, dtype=t.float64))
                                     .sort(stable=True, descending=True),
    "sort_stable_asc": lambda t, x: (x * 0 + t.tensor(TIES, dtype=t.float64))
                                    .sort(dim=1, stable=True),
    "sort_nan": lambda t, x: (x * t.tensor([1.0, math.nan, 1.0])).sort(1),
    "sort_nan_desc": lambda t, x: (x * t.tensor([1.0, math.nan, 1.0])).sort(1, True),
    "sort_int": lambda t, x: t.tensor([3, 1, 2]).sort(),
    "sort_0d": lambda t, x: x[0, 0].sort(),
    "argsort": lambda t, x: x.argsort(),
    "argsort_kwargs": lambda t, x: t.argsort(x, dim=0, descending=True),
    "argsort_stable": lambda t, x: t.tensor(TIES).argsort(stable=True, descending=True),
    "topk": lambda t, x: x.topk(2),
    "topk_dim0_smallest": lambda t, x: t.topk(x, 1, dim=0, largest=False),
    "topk_kwargs": lambda t, x: x.topk(k=3, dim=1, largest=True, sorted=True),
    "topk_zero": lambda t, x: x.topk(0),
    "topk_too_big": lambda t, x: x.topk(4),
    "topk_int": lambda t, x: t.tensor([3, 1, 2]).topk(2),
    "median": lambda t, x: x.median(),
    "median_even": lambda t, x: x[:, :2].median(),
    "median_nan": lambda t, x: (x * t.tensor([1.0, math.nan, 1.0])).median(),
    "median_dim": lambda t, x: x.median(0),
    "median_dim_keepdim": lambda t, x: t.median(x, dim=-1, keepdim=True),
    "median_dim_even": lambda t, x: x[:, :2].median(1),
    "median_int": lambda t, x: t.tensor([3, 1, 2, 4]).median(),
    "median_empty": lambda t, x: t.zeros(0).median(),
    "median_0d_dim": lambda t, x: x[1, 1].median(0),
    "msort": lambda t, x: t.msort(x),
    "nanmedian": lambda t, x: x.masked_fill(t.tensor([True, False, False]), math.nan).nanmedian(),
    "nanmedian_all_nan": lambda t, x: (x * math.nan).nanmedian(),
    "nanmedian_dim": lambda t, x: x.masked_fill(t.tensor([True, False, False]), math.nan)
                                   .nanmedian(1),
    "nanmedian_dim_all_nan": lambda t, x: x.masked_fill(t.tensor([[True, True, True],
                                                                  [False, True, False]]),
                                                        math.nan).nanmedian(-1, keepdim=True),
    "nanmedian_int": lambda t, x: t.tensor([[3, 1, 2]]).nanmedian(1),
}


@pytest.mark.parametrize("name", sorted(SORTS))
def test_sorting(name):
    def case(t):
        out = SORTS[name](t, _leaf(t))
        if isinstance(out, tuple):
            return [type(out).__name__, *observe(list(out))[1:]]
        return observe(out)
    check(case)
    check(lambda t: _grads(t, SORTS[name]))


def test_median_ties_share_the_gradient_evenly():
    def case(t):
        return _grads(t, lambda t, x: (x * 0 + t.tensor([[1.0, 2.0, 2.0], [2.0, 5.0, 0.0]],
                                                        dtype=t.float64)).median())
    check(case)


# ----- Predicates: all, any, count_nonzero, isclose, nonzero -------------------------------

PREDICATES = {
    "all": lambda t: t.tensor([[1.0, 0.0], [2.0, 3.0]]).all(),
    "all_dim": lambda t: t.all(t.tensor([[1.0, 0.0], [2.0, 3.0]]), dim=1),
    "all_dims_keepdim": lambda t: t.tensor([[1, 0], [2, 3]]).all(dim=(0, 1), keepdim=True),
    "all_uint8": lambda t: t.tensor([1, 2], dtype=t.uint8).all(),
    "all_empty": lambda t: t.zeros(0).all(),
    "any": lambda t: t.tensor([[0.0, 0.0], [0.0, 3.0]]).any(),
    "any_dim": lambda t: t.tensor([[True, False], [False, False]]).any(0),
    "any_0d": lambda t: t.tensor(0.0).any(0),
    "count_nonzero": lambda t: t.count_nonzero(t.tensor([[1.0, 0.0], [2.0, 0.0]])),
    "count_nonzero_dim": lambda t: t.tensor([[1.0, 0.0], [2.0, 0.0]]).count_nonzero(0),
    "count_nonzero_dims": lambda t: t.count_nonzero(t.tensor([[1, 0], [2, 0]]), dim=(0, 1)),
    "isclose": lambda t: t.isclose(t.tensor([1.0, 2.0, math.nan]),
                                   t.tensor([1.0 + 1e-9, 2.1, math.nan])),
    "isclose_kwargs": lambda t: t.tensor([1.0, math.nan]).isclose(
        t.tensor([1.05, math.nan]), rtol=0.1, atol=0.0, equal_nan=True),
    "isclose_scalar_shapes": lambda t: t.isclose(t.tensor([[1.0], [2.0]]), t.tensor([1.0, 2.0])),
    "isclose_int": lambda t: t.isclose(t.tensor([1, 2]), t.tensor([1, 3])),
    "isclose_mixed": lambda t: t.isclose(t.tensor([1, 2]), t.tensor([1.0, 3.0])),
    "nonzero": lambda t: t.tensor([[0.0, 1.5], [2.0, 0.0]]).nonzero(),
    "nonzero_tuple": lambda t: t.nonzero(t.tensor([[0.0, 1.5], [2.0, 0.0]]), as_tuple=True),
    "nonzero_none": lambda t: t.zeros(2, 2).nonzero(),
    "nonzero_0d": lambda t: t.tensor(1.0).nonzero(),
    "nonzero_0d_zero": lambda t: t.tensor(0.0).nonzero(),
    "nonzero_0d_tuple": lambda t: t.tensor(1.0).nonzero(as_tuple=True),
    "argwhere": lambda t: t.argwhere(t.tensor([[0.0, 1.5], [2.0, 0.0]])),
    "argwhere_method": lambda t: t.tensor([0, 3]).argwhere(),
}


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_predicates(name):
    # Values only: torch's results carry internal versions (isclose) and views (as_tuple).
    def case(t):
        r = PREDICATES[name](t)
        return [D.val(x) for x in r] if isinstance(r, tuple) else D.val(r)
    check(case)


# ----- Gather, scatter, index_select, index_add, index_fill --------------------------------

def _i(t, data):
    return t.tensor(data)


GATHERS = {
    "gather": lambda t, x: x.gather(1, _i(t, [[0, 2, 2], [1, 0, 1]])),
    "gather_neg_dim": lambda t, x: t.gather(x, -2, _i(t, [[1, 0, 1]])),
    "gather_kw": lambda t, x: t.gather(x, dim=1, index=_i(t, [[0], [2]])),
    "gather_wider_along_dim": lambda t, x: x.gather(1, _i(t, [[0, 1, 2, 0], [1, 1, 1, 1]])),
    "gather_int32": lambda t, x: x.gather(1, _i(t, [[0], [2]]).int()),
    "gather_bad_ndim": lambda t, x: x.gather(1, _i(t, [0])),
    "gather_bad_dtype": lambda t, x: x.gather(1, t.tensor([[0.0]])),
    "gather_oob": lambda t, x: x.gather(1, _i(t, [[5]])),
    "gather_too_big": lambda t, x: x.gather(1, _i(t, [[0], [1], [0]])),
    "gather_empty": lambda t, x: x.gather(1, t.zeros(2, 0, dtype=t.int64)),
    "scatter_src": lambda t, x: x.scatter(1, _i(t, [[2, 0], [1, 2]]), x[:, :2] * 3),
    "scatter_value": lambda t, x: x.scatter(0, _i(t, [[1, 0, 1]]), 2.5),
    "scatter_value_kw": lambda t, x: t.scatter(x, 1, _i(t, [[1], [0]]), value=-1.0),
    "scatter_int_value": lambda t, x: t.zeros(2, 3, dtype=t.int64).scatter(1, _i(t, [[1]]), 7),
    "scatter_dtype": lambda t, x: x.float().scatter(1, _i(t, [[0]]), x),
    "scatter_too_big": lambda t, x: x.scatter(1, _i(t, [[0, 1, 2, 0]]), x),
    "scatter_oob": lambda t, x: x.scatter(1, _i(t, [[3]]), x),
    "scatter_negative_index": lambda t, x: x.scatter(1, _i(t, [[-1]]), x),
    "scatter_float_index": lambda t, x: x.scatter(1, t.tensor([[0.0]]), x),
    "scatter_add": lambda t, x: x.scatter_add(1, _i(t, [[0, 0], [2, 2]]), x[:, 1:] * 2),
    "scatter_add_torch": lambda t, x: t.scatter_add(x, 0, _i(t, [[1, 1, 0]]), x[:1] + 1),
    "scatter_add_number": lambda t, x: x.scatter_add(1, _i(t, [[0]]), 2.0),
    "index_select": lambda t, x: x.index_select(1, _i(t, [2, 0, 2])),
    "index_select_torch_neg": lambda t, x: t.index_select(x, -1, _i(t, [1])),
    "index_select_0d_index": lambda t, x: x.index_select(0, _i(t, 1)),
    "index_select_2d_index": lambda t, x: x.index_select(1, _i(t, [[0]])),
    "index_select_float": lambda t, x: x.index_select(1, t.tensor([0.0])),
    "index_select_oob": lambda t, x: x.index_select(1, _i(t, [3])),
    "index_add": lambda t, x: x.index_add(1, _i(t, [2, 0]), x[:, :2] * 2),
    "index_add_alpha_dup": lambda t, x: t.index_add(x, 1, _i(t, [2, 2]), x[:, 1:], alpha=-0.5),
    "index_add_count": lambda t, x: x.index_add(1, _i(t, [0]), x[:, :2]),
    "index_add_dtype": lambda t, x: x.index_add(1, _i(t, [0]), x[:, :1].float()),
    "index_fill": lambda t, x: x.index_fill(1, _i(t, [0, 2]), 1.5),
    "index_fill_tensor_value": lambda t, x: x.index_fill(0, _i(t, [1]), x[0, 0] * 2),
    "index_fill_1d_value": lambda t, x: x.index_fill(0, _i(t, [1]), t.tensor([1.0])),
    "take_along_dim": lambda t, x: t.take_along_dim(x, _i(t, [[0, 2], [1, 0]]), 1),
    "take_along_dim_none": lambda t, x: t.take_along_dim(x, _i(t, [0, 5])),
    "take_along_dim_broadcast": lambda t, x: t.take_along_dim(x, _i(t, [[2], [0]]), dim=-1),
    "take_along_dim_broadcast_rows": lambda t, x: t.take_along_dim(x, _i(t, [[1, 0, 1]]), 0),
    "take_along_dim_argsort": lambda t, x: t.take_along_dim(x, x.argsort(1), 1),
    "take_along_dim_method": lambda t, x: x.take_along_dim(_i(t, [[1], [2]]), dim=1),
    "take_along_dim_bad_ndim": lambda t, x: t.take_along_dim(x, _i(t, [0, 2]), 1),
}


@pytest.mark.parametrize("name", sorted(GATHERS))
def test_gather_scatter_index(name):
    check(lambda t: _grads(t, GATHERS[name]))


def test_scatter_with_a_source_larger_than_the_index_fails_in_backward_as_torch():
    def case(t):
        x = _leaf(t)
        src = _leaf(t, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        out = x.scatter(1, _i(t, [[0], [2]]), src)
        out.sum().backward()
    check(case)


@pytest.mark.parametrize("call", [
    lambda x: x.scatter(1, gradviz.tensor([[0]]), x, reduce="add"),
    lambda x: x.detach().scatter_(1, gradviz.tensor([[0]]), 2.0, reduce="multiply"),
    lambda x: x.gather(1, gradviz.tensor([[0]]), sparse_grad=True),
    # torch.sort takes out= (Tensor.sort does not: a TypeError there, as in torch)
    lambda x: gradviz.sort(x, out=(gradviz.zeros(2, 3), gradviz.zeros(2, 3, dtype=gradviz.long))),
])
def test_arguments_gradviz_does_not_implement_raise(call):
    with pytest.raises(NotImplementedError, match="run with --backend torch to use PyTorch"):
        call(_leaf(gradviz))


# ----- Masks -------------------------------------------------------------------------------

MASKS = {
    "masked_fill": lambda t, x: x.masked_fill(x > 0.5, 0.25),
    "masked_fill_torch": lambda t, x: t.masked_fill(x, t.tensor([True, False, True]), -2),
    "masked_fill_0d_tensor": lambda t, x: x.masked_fill(x < 0, t.tensor(9.0, dtype=t.float64)),
    "masked_fill_value_grad": lambda t, x: x.masked_fill(x < 0, x[0, 0] * 3),
    "masked_fill_broadcast_self": lambda t, x: x[0].masked_fill(t.tensor([[True], [False]]), 1.0),
    "masked_fill_float_mask": lambda t, x: x.masked_fill(t.ones(2, 3), 1.0),
    "masked_fill_int_mask": lambda t, x: x.masked_fill(t.ones(2, 3, dtype=t.int64), 1.0),
    "masked_fill_bad_shape": lambda t, x: x.masked_fill(t.tensor([True, False]), 1.0),
    "masked_fill_1d_value": lambda t, x: x.masked_fill(x > 0, t.tensor([1.0])),
    "masked_fill_int_self": lambda t, x: t.tensor([1, 2]).masked_fill(t.tensor([True, False]),
                                                                     1.5),
    "masked_select": lambda t, x: x.masked_select(x > 0),
    "masked_select_torch": lambda t, x: t.masked_select(x, t.tensor([False, True, True])),
    "masked_select_broadcast": lambda t, x: x[0].masked_select(t.tensor([[True], [False]])),
    "masked_select_float": lambda t, x: x.masked_select(t.ones(2, 3)),
    "masked_select_none": lambda t, x: x.masked_select(x > 100),
}


@pytest.mark.parametrize("name", sorted(MASKS))
def test_masks(name):
    check(lambda t: _grads(t, MASKS[name]))


# ----- In-place forms: versions, leaf checks, CopySlices on views --------------------------

INPLACE = {
    "masked_fill_": lambda t, y: y.masked_fill_(y > 0.5, 0.0),
    "masked_fill_tensor_": lambda t, y: y.masked_fill_(t.tensor([True, False, True]),
                                                       t.tensor(2.0, dtype=t.float64)),
    "scatter_": lambda t, y: y.scatter_(1, _i(t, [[2], [0]]), y.detach()[:, :1] * 2),
    "scatter_value_": lambda t, y: y.scatter_(1, _i(t, [[2], [0]]), 4.0),
    "scatter_add_": lambda t, y: y.scatter_add_(1, _i(t, [[2], [0]]), y.detach()[:, :1] * 1),
    "index_add_": lambda t, y: y.index_add_(1, _i(t, [0, 0]), y.detach()[:, :2] * 1, alpha=2),
    "index_fill_": lambda t, y: y.index_fill_(1, _i(t, [1]), -1.0),
}


def _inplace_on(where):
    def case(t, op):
        x = _leaf(t)
        base = x * 1
        if where == "whole":
            target = base
        elif where == "row":
            target = base[1:]
            if op in ("masked_fill_tensor_",):
                target = base[:, 1:] if False else base
        else:
            target = base.t()
        before = target._version
        r = INPLACE[op](t, target)
        out = (base * D.upstream(t, base)).sum()
        out.backward()
        return [r is target, before, target._version, base._version, base, target,
                D.gval(x.grad)]
    return case


@pytest.mark.parametrize("where", ["whole", "row", "transposed"])
@pytest.mark.parametrize("op", sorted(INPLACE))
def test_inplace_forms(op, where):
    case = _inplace_on(where)
    check(lambda t: case(t, op))


@pytest.mark.parametrize("op", sorted(INPLACE))
def test_inplace_on_a_leaf_or_its_view_is_refused(op):
    check(lambda t: INPLACE[op](t, _leaf(t)))
    check(lambda t: INPLACE[op](t, _leaf(t)[0:2]))


@pytest.mark.parametrize("op", sorted(INPLACE))
def test_inplace_without_grad(op):
    def case(t):
        y = t.tensor(M23, dtype=t.float64)
        r = INPLACE[op](t, y)
        return [r is y, y._version, y]
    check(case)


def test_masked_fill_inplace_cannot_broadcast_self():
    check(lambda t: (_leaf(t)[0] * 1).masked_fill_(t.tensor([[True], [False]]), 1.0))


# ----- Saved values stay readable after backward -------------------------------------------

def test_saved_non_tensors_stay_readable_after_backward():
    def case(t):
        x = _leaf(t)
        outs = [x.sort(1).values, x.var(1, keepdim=True), x.gather(1, _i(t, [[0], [1]])),
                x.index_add(1, _i(t, [0]), x[:, :1] * 2, alpha=3), x.cumprod(1),
                t.linalg.vector_norm(x, 3, 1), x.median(0).values, x.amax(1)]
        nodes = [o.grad_fn for o in outs]
        sum(o.sum() for o in outs).backward()
        sort, var, gather, index_add, cumprod, norm, median, amax = nodes
        return [sort._saved_dim, sort._saved_self_sym_sizes, var._saved_correction,
                var._saved_dim, var._saved_keepdim, gather._saved_dim,
                gather._saved_sparse_grad, index_add._saved_alpha, index_add._saved_dim,
                index_add._saved_source_dim, cumprod._saved_dim, norm._saved_ord,
                norm._saved_dim, norm._saved_keepdim, median._saved_dim, median._saved_keepdim,
                median._saved_self_sym_sizes, amax._saved_dim, amax._saved_keepdim,
                D.outcome(lambda: sort._saved_indices), D.outcome(lambda: var._saved_self),
                D.outcome(lambda: gather._saved_index), D.outcome(lambda: cumprod._saved_result)]
    check(case)


def test_saved_tensors_are_freed_after_backward():
    x = _leaf(gradviz)
    y = x.gather(1, gradviz.tensor([[0], [1]]))
    node = y.grad_fn
    assert node._saved_dim == 1 and node._saved_sparse_grad is False
    y.sum().backward()
    assert node._saved_dim == 1
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        node._saved_index  # noqa: B018


# ----- Shapes and dims from hypothesis, against torch --------------------------------------

REDUCERS = {
    "var": lambda t, x, d, k: x.var(d, keepdim=k),
    "std": lambda t, x, d, k: x.std(d, keepdim=k, correction=0),
    "logsumexp": lambda t, x, d, k: x.logsumexp(d, keepdim=k),
    "amax": lambda t, x, d, k: x.amax(d, keepdim=k),
    "norm": lambda t, x, d, k: x.norm(dim=d, keepdim=k),
    "norm3": lambda t, x, d, k: t.linalg.vector_norm(x, 3, d, k),
    "cumsum": lambda t, x, d, k: x.cumsum(d),
    "cumprod": lambda t, x, d, k: x.cumprod(d),
    "cumprod_zeros": lambda t, x, d, k: x.masked_fill(x.detach().abs() < 1.2, 0.0).cumprod(d),
    "sort": lambda t, x, d, k: x.sort(d, descending=k).values,
    "median": lambda t, x, d, k: x.median(d, keepdim=k).values,
    "topk": lambda t, x, d, k: x.topk(1, d, largest=k).values,
    "gather_argsort": lambda t, x, d, k: x.gather(d, x.argsort(d)),
    "index_select": lambda t, x, d, k: x.index_select(d, t.tensor([0, 0])),
}


def _distinct(shape):
    """Distinct values (no ties: the sort-like ops have one gradient), not near 0."""
    n = int(np.prod(shape)) if shape else 1
    vals = (np.arange(n, dtype=np.float64) * 0.37 + 0.3) * np.where(np.arange(n) % 3, 1, -1)
    return np.random.default_rng(n).permutation(vals).reshape(shape)


@pytest.mark.parametrize("name", sorted(REDUCERS))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
       keepdim=st.booleans())
def test_reductions_over_any_dim_match_torch(name, data, shape, keepdim):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    values = _distinct(shape).tolist()

    def case(t):
        x = t.tensor(values, dtype=t.float64, requires_grad=True)
        out = REDUCERS[name](t, x, dim, keepdim)
        out.backward(D.upstream(t, out))
        return [out, D.gval(x.grad)]
    check(case)


def test_saved_numbers_of_any_row_stay_readable_and_wrapped_numbers_are_freed():
    def case(t):
        x = _leaf(t, [1.0, 2.0])
        p = x ** 3
        m = x * 2.0
        (p.sum() + m.sum()).backward()
        return [p.grad_fn._saved_exponent, D.outcome(lambda: p.grad_fn._saved_self),
                D.outcome(lambda: m.grad_fn._saved_other)]
    check(case)


@pytest.mark.parametrize("call", ["var(0)", "std(0)", "var_mean(0)", "std_mean(0)",
                                  "var(1, correction=3)"])
def test_too_few_degrees_of_freedom_warn_as_torch(call):
    def case(t):
        x = t.ones(1, 2)
        fn = {"var_mean(0)": lambda: t.var_mean(x, 0), "std_mean(0)": lambda: t.std_mean(x, 0),
              "var(0)": lambda: x.var(0), "std(0)": lambda: x.std(0),
              "var(1, correction=3)": lambda: x.var(1, correction=3)}[call]
        result, warns = D.caught_warnings(fn)
        return [D.val(result[0] if isinstance(result, tuple) else result), warns]
    check(case)


MASKERS = {
    "masked_fill": lambda t, x, m: x.masked_fill(m, -2.5),
    "masked_fill_tensor": lambda t, x, m: x.masked_fill(m, x.sum() * 0.5),
    "masked_select": lambda t, x, m: x.masked_select(m),
    "where_like_scatter": lambda t, x, m: x.masked_fill(m, 0.0).cumsum(-1) if x.dim() else x * 1,
}


@pytest.mark.parametrize("name", sorted(MASKERS))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3,
                                                                 max_side=3))
def test_masks_broadcast_as_torch(name, data, shapes):
    xs, ms = shapes.input_shapes
    values = _distinct(xs).tolist() if xs else 0.7
    mask = data.draw(hnp.arrays(np.bool_, ms)).tolist()

    def case(t):
        x = t.tensor(values, dtype=t.float64, requires_grad=True)
        out = MASKERS[name](t, x, t.tensor(mask, dtype=t.bool))
        out.backward(D.upstream(t, out))
        return [out, D.gval(x.grad)]
    check(case)


@pytest.mark.parametrize("module", ["gradviz._ops.reductions", "gradviz._ops.sorting",
                                    "gradviz._ops.scatter", "gradviz._ops.comparison",
                                    "gradviz.linalg", "gradviz._ops.linalg"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


PROD_ZEROS = [[[0.0, 2.0, 3.0], [0.0, 0.0, 5.0]], [[1.5, 0.0, -2.0], [0.5, 3.0, 0.0]]]


@pytest.mark.parametrize("data", PROD_ZEROS)
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_with_zeros_first_and_second_order(data, dim):
    f = (lambda x: x.prod()) if dim is None else (lambda x: x.prod(dim))
    x = _leaf(gradviz, data)
    assert gradviz.autograd.gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))
    check(lambda t: D.second_order(t, f, _leaf(t, data)))


@pytest.mark.parametrize("op", sorted(INPLACE))
def test_inplace_edit_of_a_saved_tensor_fails_in_backward_as_torch(op):
    def case(t):
        y = _leaf(t) * 1
        z = y.exp()                 # saves its result...
        w = y.sin()                 # ...and this saves y itself
        INPLACE[op](t, y)
        return [D.outcome(lambda: w.sum().backward()), D.outcome(lambda: z.sum().backward()),
                y._version]
    check(case)


def test_version_error_names_a_backward1_node_as_torch():
    def case(t):
        x, y = _leaf(t, [1.0, 2.0]), _leaf(t, [0.5, 1.5])
        b = (x * 1) ** (y * 1)      # PowBackward1, which saves its result
        r = b.exp()
        b.add_(1)
        return D.outcome(lambda: r.sum().backward())
    check(case)
