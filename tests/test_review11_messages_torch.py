"""Refusals worded as torch 2.13 words them, compared with torch: split_with_sizes checks the
signs of its sizes before their sum, isin has no bool kernel, F.unfold and F.fold refuse
integer tensors (their CPU kernels take floating and bool ones)."""

import pytest

try:
    from .test_core_torch_extra import check
except ImportError:
    from test_core_torch_extra import check

torch = pytest.importorskip("torch")


SPLITS = {
    "negative_sum_right": lambda t: t.split_with_sizes(t.arange(6.0), [-1, 7]),
    "negative_method": lambda t: t.arange(6.0).split_with_sizes([-1, 7]),
    "negative_split": lambda t: t.arange(6.0).split([-1, 7]),
    "negative_sum_wrong": lambda t: t.arange(6.0).split([-1, 2]),
    "sum_wrong": lambda t: t.split_with_sizes(t.arange(6.0), [1, 7]),
    "sum_right": lambda t: t.arange(6.0).split([2, 4]),
}


@pytest.mark.parametrize("case", SPLITS)
def test_split_with_sizes_checks(case):
    check(SPLITS[case])


ISIN = {
    "bool_elements": lambda t: t.isin(t.tensor([True, False]), t.tensor([True])),
    "bool_test_elements": lambda t: t.isin(t.tensor([1, 0]), t.tensor([True])),
    "bool_number": lambda t: t.isin(t.tensor([1, 0]), True),
    "number_bool": lambda t: t.isin(True, t.tensor([1, 0])),
    "empty_bool": lambda t: t.isin(t.tensor([], dtype=t.bool), t.tensor([1])),
    "long": lambda t: t.isin(t.tensor([1, 0]), t.tensor([1])),
    "long_number": lambda t: t.isin(t.tensor([1, 0]), 1),
    "list": lambda t: t.isin(t.tensor([1, 0]), [1]),
}


@pytest.mark.parametrize("case", ISIN)
def test_isin_inputs(case):
    check(ISIN[case])


DTYPES = ["uint8", "int8", "int16", "int32", "int64", "bool", "float32", "float64"]
WINDOWS = {
    "unfold": lambda t, d: t.nn.functional.unfold(t.ones(1, 1, 3, 3, dtype=d), 2),
    "unfold_unbatched": lambda t, d: t.nn.functional.unfold(t.ones(1, 3, 3, dtype=d), 2),
    "unfold_bad_shape": lambda t, d: t.nn.functional.unfold(t.ones(1, 1, 3, dtype=d), 2),
    "fold": lambda t, d: t.nn.functional.fold(t.ones(1, 4, 4, dtype=d), 3, 2),
    "fold_bad_blocks": lambda t, d: t.nn.functional.fold(t.ones(1, 4, 5, dtype=d), 3, 2),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", WINDOWS)
def test_unfold_and_fold_dtypes(case, dtype):
    check(lambda t: WINDOWS[case](t, getattr(t, dtype)))
