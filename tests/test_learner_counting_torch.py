"""unique, histc, histogram, the bitwise functions and the in-place forms torch exposes
(torch.sin_, Tensor.abs_, ...), against torch 2.13: values, dtypes, shapes, grad_fn names,
saved names, _version and the first sentence of each error."""

import functools

import numpy as np
import pytest

import gradviz
from test_learner_surface import _same as same_on_both


def _obs(x):
    """Plain data of a result: tensors as (dtype, shape, values, grad_fn name)."""
    if hasattr(x, "detach"):
        fn = x.grad_fn.name() if x.grad_fn is not None else None
        return (str(x.dtype), tuple(x.shape), str(np.round(x.detach().numpy(), 5).tolist()), fn)
    if isinstance(x, (tuple, list)):
        return type(x).__name__, [_obs(v) for v in x]
    return x


def _same(snippet):
    return same_on_both(snippet, _obs)


def _v(t):
    return t.tensor([3.0, 1.0, 2.0, 3.0, 1.0, float("nan"), float("nan")])


def _rows(t):
    return t.tensor([[1, 2], [1, 2], [0, 5]])


def _relu_in_place(t, x):
    return t.relu_(x) is x, x._version


def _grad_of(t, fn):
    x = t.tensor([0.5, -1.5, 2.0], requires_grad=True)
    fn(x * 1).sum().backward()
    return x.grad


UNIQUE = {
    "plain": lambda t: t.unique(_v(t)),
    "requires_grad": lambda t: t.unique(_v(t).requires_grad_()),
    "inverse_counts": lambda t: t.unique(_v(t), return_inverse=True, return_counts=True),
    "counts_only": lambda t: _v(t).unique(return_counts=True),
    "unsorted_sorts": lambda t: t.unique(t.tensor([3, 1, 2, 3]), sorted=False),
    "inverse_2d": lambda t: t.unique(_rows(t), return_inverse=True),
    "dim0": lambda t: t.unique(_rows(t), dim=0, return_inverse=True, return_counts=True),
    "dim1": lambda t: t.unique(_rows(t), dim=1, return_inverse=True, return_counts=True),
    "dim_negative": lambda t: t.unique(_rows(t).float().requires_grad_(), dim=-2),
    "dim_out_of_range": lambda t: t.unique(t.tensor([1, 2]), dim=3),
    "zero_dim": lambda t: t.unique(t.tensor(5), return_inverse=True),
    "bool": lambda t: t.unique(t.tensor([True, False, True])),
    "empty_dim": lambda t: t.unique(t.zeros(2, 0), dim=1, return_counts=True),
    "backward": lambda t: t.unique(_v(t).requires_grad_() * 2).sum().backward(),
    "backward_dim": lambda t: (_rows(t).float().requires_grad_() * 2).unique(dim=0).sum()
    .backward(),
}

HISTOGRAMS = {
    "histc": lambda t: t.histc(t.tensor([1.0, 2.0, 1.0, 0.3, 5.0]), bins=4),
    "histc_range": lambda t: t.histc(t.tensor([1.0, 2.0, 1.0, -1.0, 3.0]), bins=4, min=0, max=3),
    "histc_method": lambda t: t.randn(100, generator=t.Generator().manual_seed(0)).histc(7),
    "histc_float64": lambda t: t.histc(t.tensor([1.0, 2.0], dtype=t.float64), bins=3),
    "histc_one_value": lambda t: t.histc(t.tensor([2.0, 2.0]), bins=4),
    "histc_empty": lambda t: t.histc(t.tensor([]), bins=3),
    "histc_requires_grad": lambda t: t.histc(t.tensor([1.0, 2.0], requires_grad=True), bins=2),
    "histc_long": lambda t: t.histc(t.tensor([1, 2, 1]), bins=4),
    "histc_zero_bins": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=0),
    "histc_min_above_max": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=3, min=3, max=1),
    "histc_inf": lambda t: t.histc(t.tensor([1.0, float("inf")]), bins=3),
    "histogram": lambda t: tuple(t.histogram(t.tensor([1.0, 2.0, 1.0]), bins=4,
                                             range=(0.0, 3.0))),
    "histogram_names": lambda t: t.histogram(t.tensor([1.0, 2.0, 1.0]), 3).bin_edges,
    "histogram_edges": lambda t: t.histogram(t.tensor([1.0, 2.0, 1.0, 9.0]),
                                             bins=t.tensor([0.0, 1.0, 2.0, 3.0])).hist,
    "histogram_weight_density": lambda t: tuple(t.histogram(
        t.tensor([1.0, 2.0, 1.0]), bins=3, weight=t.tensor([1.0, 2.0, 3.0]), density=True)),
    "histogram_random": lambda t: tuple(t.histogram(
        t.randn(200, generator=t.Generator().manual_seed(1)), bins=9)),
    "histogram_one_value": lambda t: tuple(t.histogram(t.tensor([2.0, 2.0]), bins=2)),
    "histogram_long": lambda t: t.histogram(t.tensor([1, 2]), bins=3),
    "histogram_bad_range": lambda t: t.histogram(t.tensor([1.0, 2.0]), bins=3, range=(2.0, 1.0)),
}

BITWISE = {
    "xor": lambda t: t.bitwise_xor(t.tensor([5, 6]), t.tensor([3, 3])),
    "xor_scalar": lambda t: t.bitwise_xor(t.tensor([5]), 3),
    "and_method": lambda t: t.tensor([5, 6]).bitwise_and(t.tensor([4, 4])),
    "or_bool": lambda t: t.bitwise_or(t.tensor([True, False]), t.tensor([False, False])),
    "not_int": lambda t: t.bitwise_not(t.tensor([5, 0])),
    "not_uint8": lambda t: t.bitwise_not(t.tensor([5], dtype=t.uint8)),
    "not_bool": lambda t: t.tensor([True, False]).bitwise_not(),
    "not_float": lambda t: t.bitwise_not(t.tensor([1.0])),
    "invert_int": lambda t: ~t.tensor([1, 2]),
    "invert_bool": lambda t: ~t.tensor([True, False]),
    "invert_float": lambda t: ~t.tensor([1.0]),
    "not_inplace": lambda t: t.tensor([5, 0]).bitwise_not_(),
    "not_inplace_float": lambda t: t.tensor([1.0]).bitwise_not_(),
    "xor_operator_bool_int": lambda t: t.tensor([True]) ^ t.tensor([1]),
    "shift": lambda t: t.bitwise_left_shift(t.tensor([1, 2]), 3),
    "shift_right": lambda t: t.bitwise_right_shift(t.tensor([16]), t.tensor([2])),
    "and_float": lambda t: t.bitwise_and(t.tensor([1]), t.tensor([1.0])),
}

def _method_grad(m, t):
    return _grad_of(t, lambda y: getattr(y, m)())


def _method_node(m, t):
    return getattr(t.tensor([0.5, -1.5], requires_grad=True) * 1, m)()


def _torch_form(m, t):
    return getattr(t, m)(t.tensor([0.5, -1.5]))


INPLACE = {f"{m}_grad": functools.partial(_method_grad, m)
           for m in ("sin_", "cos_", "abs_", "absolute_", "floor_", "ceil_", "trunc_", "fix_",
                     "reciprocal_", "square_", "negative_")}
INPLACE.update({f"{m}_node": functools.partial(_method_node, m)
                for m in ("sin_", "reciprocal_", "square_", "abs_")})
INPLACE.update({f"torch_{m}": functools.partial(_torch_form, m)
                for m in ("sin_", "cos_", "relu_", "sigmoid_", "tanh_", "exp_", "abs_", "zero_",
                          "floor_", "neg_", "sqrt_", "log_")})
INPLACE.update({
    "torch_relu_is_input": lambda t: _relu_in_place(t, t.ones(2)),
    "torch_clamp_": lambda t: t.clamp_(t.tensor([0.5, -1.5]), min=0),
    "torch_fill_": lambda t: t.fill_(t.zeros(2), 3.0),
    "floor_int": lambda t: t.tensor([3]).floor_(),
    "sin_int": lambda t: t.tensor([3]).sin_(),
    "reciprocal_int": lambda t: t.tensor([3]).reciprocal_(),
    "abs_bool": lambda t: t.tensor([True]).abs_(),
    "sin_leaf": lambda t: t.tensor([1.0], requires_grad=True).sin_(),
})


@pytest.mark.parametrize("case", sorted(UNIQUE))
def test_unique(case):
    _same(UNIQUE[case])


@pytest.mark.parametrize("case", sorted(HISTOGRAMS))
def test_histograms(case):
    _same(HISTOGRAMS[case])


@pytest.mark.parametrize("case", sorted(BITWISE))
def test_bitwise(case):
    _same(BITWISE[case])


@pytest.mark.parametrize("case", sorted(INPLACE))
def test_inplace_forms(case):
    _same(INPLACE[case])


def test_saved_names_of_inplace_forms():
    real = pytest.importorskip("torch")

    def saved(t, m):
        y = getattr(t.tensor([0.5, -1.5], requires_grad=True) * 1, m)()
        return sorted(n for n in dir(y.grad_fn)
                      if n.startswith("_saved_") and n not in ("_saved_items", "_saved_lookup"))
    for m in ("sin_", "cos_", "abs_", "floor_", "reciprocal_", "square_", "negative_"):
        assert saved(gradviz, m) == saved(real, m), m


def test_histogram_repr():
    real = pytest.importorskip("torch")
    assert repr(gradviz.histogram(gradviz.tensor([1.0, 2.0]), 2)) == \
        repr(real.histogram(real.tensor([1.0, 2.0]), 2))


def test_top_level_inplace_list_is_torchs_with_a_core_method():
    """torch.X_ is exported for exactly the torch names whose Tensor.X_ the core has."""
    from gradviz import _registry
    from gradviz._ops.inplace_functions import TOP_LEVEL
    from gradviz._torch_api import TORCH
    expected = sorted(n for n in TORCH if n.endswith("_") and not n.startswith("_")
                      and n in _registry.TENSOR)
    assert sorted(TOP_LEVEL) == [n for n in expected if n not in ("dropout_",)]


REFLECTED = {
    "rand": lambda t: 2 & t.tensor([1, 2, 3]),
    "ror": lambda t: 6 | t.tensor([1, 2, 3]),
    "rxor": lambda t: 6 ^ t.tensor([1, 2, 3]),
    "rlshift": lambda t: 3 << t.tensor([1, 2, 3]),
    "rrshift": lambda t: 100 >> t.tensor([1, 2, 3]),
    "rand_bool": lambda t: True & t.tensor([True, False]),
    "rxor_numpy": lambda t: np.int64(3) ^ t.tensor([1, 2, 3]),
    "function_number_first": lambda t: t.bitwise_xor(3, t.tensor([1, 2, 3])),
    "shift_function_number_first": lambda t: t.bitwise_left_shift(3, t.tensor([1, 2, 3])),
    "two_numbers": lambda t: t.bitwise_and(3, 5),
    "float_number_first": lambda t: 2.5 & t.tensor([1, 2, 3]),
    "str_first": lambda t: "a" | t.tensor([1, 2, 3]),
}


@pytest.mark.parametrize("case", sorted(REFLECTED))
def test_a_number_first_in_bitwise_ops_is_torchs(case):
    # 2 & t and the other reflected operators, and torch.bitwise_xor(3, t) (torch's
    # (Number self, Tensor other) overload): values, dtypes and errors as torch's
    same_on_both(REFLECTED[case])


HISTOGRAM_EDGES = {
    "empty_input": lambda t: t.histogram(t.tensor([]), 3),
    "empty_input_range": lambda t: t.histogram(t.tensor([]), 3, range=(2.0, 5.0)),
    "float64_bins": lambda t: t.histogram(t.tensor([1.0, 2.0]),
                                          bins=t.tensor([0.0, 1.0, 3.0], dtype=t.float64)),
    "weight_shape": lambda t: t.histogram(t.tensor([1.0, 2.0]), 2, weight=t.ones(3)),
    "weight_flat": lambda t: t.histogram(t.ones(2, 3), 2, weight=t.arange(6.0)),
    "weight_dtype": lambda t: t.histogram(t.tensor([1.0, 2.0]), 2,
                                          weight=t.ones(2, dtype=t.float64)),
}


@pytest.mark.parametrize("case", sorted(HISTOGRAM_EDGES))
def test_histogram_edge_cases_are_torchs(case):
    same_on_both(HISTOGRAM_EDGES[case])


@pytest.mark.parametrize("dim", [0, -1, 1])
def test_unique_of_a_0d_tensor_along_a_dim_is_torchs_error(dim):
    same_on_both(lambda t: t.unique(t.tensor(3.0), dim=dim))
