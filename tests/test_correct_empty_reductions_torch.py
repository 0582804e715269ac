"""Reductions over no elements answer as torch 2.13 does, without NumPy's warnings: the mean of
an empty tensor (or of empty rows) is nan, and NumPy's "Mean of empty slice" RuntimeWarning,
which torch does not give, no longer reaches the user (var's warning is torch's own)."""

import warnings

import pytest

import gradviz

torch = pytest.importorskip("torch")

CASES = {
    "mean_rows": lambda m: m.empty(3, 0).mean(1, keepdim=True),
    "mean_all": lambda m: m.empty(0, 3).mean(),
    "mean_float16": lambda m: m.empty(0, 3, dtype=m.float16).mean(1),
    "mean_columns": lambda m: m.empty(0, 3).mean(0),
    "var": lambda m: m.empty(3, 0).var(1),
    "std_mean": lambda m: m.std_mean(m.empty(3, 0), 1)[1],
    "nanmean": lambda m: m.empty(3, 0).nanmean(1),
    "mse_loss": lambda m: m.nn.functional.mse_loss(m.empty(3, 0), m.empty(3, 0)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_empty_reduction_is_torchs_without_warnings(name):
    def run(m):
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # a warning: its type and text are compared
            try:
                r = CASES[name](m)
            except Warning as w:
                return type(w).__name__, str(w).split(" (Triggered internally")[0]
        return str(r.dtype), list(r.shape), [str(v) for v in r.reshape(-1).tolist()]
    assert run(gradviz) == run(torch)
