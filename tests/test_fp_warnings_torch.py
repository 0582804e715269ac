"""inf and nan made by arithmetic, compared with torch 2.13: torch warns nothing and gives the
value, so a gradviz op must not warn either (NumPy's RuntimeWarning), not even for a user who turns
warnings into errors, and must not change the user's NumPy error state or warnings filters."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

CASES = {
    "0/0": "t.tensor([0.]) / t.tensor([0.])",
    "1/0": "t.tensor([1.]) / 0",
    "int/0": "t.tensor([1, 2]) / 0",
    "float32 mul overflow": "t.tensor([1e38]) * 10",
    "float32 add overflow": "t.tensor([3e38]) + t.tensor([3e38])",
    "inf - inf": "t.tensor([float('inf')]) - t.tensor([float('inf')])",
    "rsub inf": "float('inf') - t.tensor([float('inf')])",
    "alpha overflow": "t.add(t.tensor([1.]), t.tensor([1e38]), alpha=10)",
    "pow overflow": "t.tensor([2.]) ** 1000",
    "pow 0 ** -1": "t.tensor([0.]) ** -1",
    "square overflow": "t.tensor([1e20]).square()",
    "0-d overflow": "t.tensor(1e38) * 10",
    "sum overflow": "t.tensor([3e38, 3e38]).sum()",
    "sum dim overflow": "t.tensor([[3e38, 3e38]]).sum(1)",
    "mean overflow": "t.tensor([3e38, 3e38]).mean()",
    "softmax inf": "t.softmax(t.tensor([float('inf'), 1.]), 0)",
    "log_softmax -inf": "t.log_softmax(t.tensor([float('-inf'), float('-inf')]), 0)",
    "cast to float16": "t.tensor([1e38]).to(t.float16)",
    "cast float64 to float32": "t.tensor([1e300], dtype=t.float64).float()",
    "matmul overflow": "t.tensor([[1e20]]) @ t.tensor([[1e20]])",
    "mul_ overflow": "t.tensor([1e38]).mul_(10)",
    "add_ overflow": "t.tensor([3e38]).add_(t.tensor([3e38]))",
    "div_ 0/0": "t.tensor([0.]).div_(0.)",
    "sub_ alpha overflow": "t.tensor([0.]).sub_(t.tensor([1e38]), alpha=10)",
    "floor div by 0.": "t.tensor([1., 0.]) // 0.",
    "float16 mul overflow": "t.tensor([60000.], dtype=t.float16) * 1e300",
    "backward 0/0": "t.tensor([0.], requires_grad=True).div(t.tensor([0.])).sum().backward()",
    "backward sqrt(0)": "t.tensor([0.], requires_grad=True).sqrt().sum().backward()",
}


def _values(r):
    """The values as text (nan equal to nan)."""
    return None if r is None else repr(np.asarray(r.detach().numpy(), dtype=float).tolist())


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_numpy_warning_where_torch_warns_nothing(name):
    def run(t):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = eval(CASES[name], {"t": t})
        return [str(w.message) for w in caught], _values(r)

    assert run(gradviz) == run(torch)


@pytest.mark.parametrize("name", sorted(CASES))
def test_warnings_as_errors_give_torch_values_not_exceptions(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _values(eval(CASES[name], {"t": gradviz}))
        want = _values(eval(CASES[name], {"t": torch}))
    assert got == want


def test_the_users_numpy_state_and_filters_are_left_alone():
    before_err, before_filters = np.geterr(), list(warnings.filters)
    gradviz.tensor([0.0]) / gradviz.tensor([0.0])
    gradviz.tensor([3e38]).sum() * 10
    assert np.geterr() == before_err
    assert list(warnings.filters) == before_filters
    with pytest.warns(RuntimeWarning):
        np.float32(3e38) * np.float32(10)      # the user's own NumPy arithmetic still warns


def test_integer_division_by_zero_raises_as_torch():
    def run(t):
        out = []
        for code in ("t.tensor([1, 2]) // 0", "t.tensor([1, 2]) % 0",
                     "t.div(t.tensor([1, 2]), 0, rounding_mode='trunc')",
                     "t.tensor([4, 2]) // t.tensor([0, 1])"):
            try:
                eval(code, {"t": t})
                out.append(None)
            except RuntimeError as exc:
                out.append(str(exc))
        return out

    assert run(gradviz) == run(torch) == ["ZeroDivisionError"] * 4


def test_an_error_from_the_quiet_function_is_raised_once_not_retried():
    from gradviz._fperr import quietly, quietly2
    calls = []

    def fails(*args):
        calls.append(args)
        raise RuntimeError("from the function")

    for run in (lambda: quietly(fails, 1), lambda: quietly2(fails, 1, 2)):
        with pytest.raises(RuntimeError, match="from the function"):
            run()
    assert len(calls) == 2          # once each: an error of the function is not a busy context


def test_a_nested_quiet_call_falls_back_and_stays_quiet():
    import warnings

    from gradviz._fperr import quietly

    def outer():
        # re-entered while the quiet context is in use: np.errstate instead, still silent
        return quietly(np.divide, np.zeros(1), 0.0)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(quietly(outer)[0])
