"""The random fills and draws check their arguments as torch 2.13 does, with its errors
(type and first line, numbers printed as its C++ prints a double), and give its values for
the same seed when the arguments are valid: normal's std (nan refused), exponential_'s lambda
(0, negative, nan; an integer dtype), bernoulli's probabilities outside [0, 1] (nan too) and
integer inputs, uniform_'s bounds against the dtype (inf, nan, a range wider than its max),
random_'s bounds (an explicit 0, floats, bools, None)."""

import sys
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

CASES = [
    "t.normal(0., float('nan'), (3,))", "t.normal(0., -1., (3,))", "t.normal(0., -1e-7, (3,))",
    "t.normal(0., 2.5, (3,))", "t.zeros(3).normal_(0, float('nan'))",
    "t.zeros(3).normal_(0, -0.5)", "t.zeros(2, dtype=t.int64).normal_(0, -1)",
    "t.zeros(2).exponential_(-1)", "t.zeros(2).exponential_(0)",
    "t.zeros(2).exponential_(float('nan'))", "t.zeros(2).exponential_(-1e10)",
    "t.zeros(2).exponential_(2)", "t.zeros(2, dtype=t.int64).exponential_()",
    "t.zeros(2, dtype=t.uint8).exponential_()", "t.zeros(2, dtype=t.bool).exponential_()",
    "t.zeros(2, dtype=t.int64).exponential_(-1)", "t.zeros(0).exponential_(-1)",
    "t.zeros(2).bernoulli_(1.5)", "t.zeros(2).bernoulli_(-0.1)",
    "t.zeros(2).bernoulli_(float('nan'))", "t.zeros(2).bernoulli_(0.1234567)",
    "t.bernoulli(t.tensor([1.5]))", "t.bernoulli(t.tensor([-0.5]))",
    "t.bernoulli(t.tensor([float('nan')]))", "t.bernoulli(t.tensor([0.3, 1.0, 0.0]))",
    "t.bernoulli(t.tensor([1, 0]))", "t.bernoulli(t.tensor([True]))",
    "t.bernoulli(t.tensor([0.5]), 1.5)",
    "t.zeros(2).uniform_(2, 1)", "t.zeros(2).uniform_(2.5, 1)", "t.zeros(2).uniform_(1, 1)",
    "t.zeros(2).uniform_(0, float('inf'))", "t.zeros(2).uniform_(float('-inf'), 0)",
    "t.zeros(2).uniform_(float('nan'), 1)", "t.zeros(2).uniform_(-1e39, 0)",
    "t.zeros(2).uniform_(-3e38, 3e38)", "t.zeros(2, dtype=t.float64).uniform_(-1e308, 1e308)",
    "t.zeros(2, dtype=t.float16).uniform_(0, 70000.)",
    "t.zeros(2, dtype=t.float16).uniform_(-60000, 60000)",
    "t.zeros(2, dtype=t.int64).uniform_(2, 1)", "t.zeros(2).uniform_(-2, 3)",
    "t.zeros(2).random_(0)", "t.zeros(2).random_(5, 5)", "t.zeros(2).random_(6, 5)",
    "t.zeros(2).random_(2.5)", "t.zeros(2).random_(True)", "t.zeros(2).random_(0.5, 3)",
    "t.zeros(2).random_(1, 3.5)", "t.zeros(2, dtype=t.int64).random_(None)",
    "t.zeros(2).random_(0, None)", "t.zeros(2).random_(to=3)", "t.zeros(2).random_(np.int64(3))",
    "t.zeros(2).random_()", "t.zeros(2, dtype=t.uint8).random_(0, 300)",
    "t.zeros(2, dtype=t.int64).random_(-5, 5)",
    # torch's parser error names the keywords too (last to first)
    "t.zeros(2).random_(1.5, to=3)", "t.zeros(2).random_(1, to=3.5)",
    "t.zeros(2).random_(from_=1.5, to=3)", "t.zeros(2).random_(to=3.5)",
    "t.zeros(2).random_(from_=1, to=3)", "t.zeros(2).random_(**{'from': 1, 'to': 3})",
    "t.arange(start=1, step=2)",
]


def _outcome(t, case):
    t.manual_seed(0)
    try:
        r = eval(case, {"t": t, "np": np})
    except Exception as exc:
        return type(exc).__name__, str(exc).split("\n")[0]
    return str(r.dtype).split(".")[-1], r.tolist()


@pytest.mark.parametrize("case", CASES)
def test_random_arguments_as_torch(case):
    assert _outcome(gradviz, case) == _outcome(torch, case)


def test_randint_precision_warning_names_the_callers_line():
    import warnings

    import gradviz
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        gradviz.randint(0, 2 ** 25, (2,), dtype=gradviz.float32)
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]
