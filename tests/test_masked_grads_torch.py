"""Backward rows that keep the incoming gradient at some places and 0 elsewhere, fed a
gradient holding inf or nan, against torch 2.13.

torch selects (where, masked_fill, threshold_backward) in clamp, where, maximum/minimum, max/min,
median, relu, hardtanh, softplus and elu, so an inf or nan at a dropped place gives 0 there; a
multiplication by the 0/1 mask would give nan. amax/amin and the inf-norm multiply in torch
(scale_grad_by_count), and give nan there: gradviz matches both.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

X = [[1.0, -2.0, 3.0], [0.5, 3.0, -1.0]]


def _full(t, value):
    return t.full((2, 3), value, dtype=t.float64)


CASES = {
    "clamp": lambda t, x: t.clamp(x, -1.5, 2.0),
    "clamp_min": lambda t, x: t.clamp(x, min=0.0),
    "clamp_max": lambda t, x: t.clamp(x, max=0.0),
    "clamp_tensor": lambda t, x: t.clamp(x, _full(t, 0.0), _full(t, 1.0)),
    "clamp_min_tensor": lambda t, x: t.clamp_min(x, _full(t, 0.0)),
    "clamp_max_tensor": lambda t, x: t.clamp_max(x, _full(t, 0.0)),
    "Tensor.clip": lambda t, x: x.clip(min=-1.0),
    "where_input": lambda t, x: t.where(x > 0, x, _full(t, 0.0)),
    "where_other": lambda t, x: t.where(x > 0, _full(t, 0.0), x),
    "maximum": lambda t, x: t.maximum(x, _full(t, 1.0)),
    "minimum": lambda t, x: t.minimum(x, _full(t, 1.0)),
    "maximum_ties": lambda t, x: t.maximum(x, _full(t, 3.0)),
    "amax": lambda t, x: t.amax(x, 1),
    "amin": lambda t, x: t.amin(x, 0),
    "amax_all": lambda t, x: t.amax(x),
    "max": lambda t, x: t.max(x),
    "min": lambda t, x: t.min(x),
    "max_dim": lambda t, x: t.max(x, 1)[0],
    "min_dim": lambda t, x: t.min(x, 0)[0],
    "median": lambda t, x: t.median(x),
    "relu": lambda t, x: t.relu(x),
    "hardtanh": lambda t, x: t.nn.functional.hardtanh(x),
    "relu6": lambda t, x: t.nn.functional.relu6(x),
    "softplus": lambda t, x: t.nn.functional.softplus(x, threshold=1.0),
    "elu": lambda t, x: t.nn.functional.elu(x),
    "inf_norm": lambda t, x: t.linalg.vector_norm(x, math.inf),
}


def _grads(t, case, fill, create_graph=False):
    x = t.tensor(X, dtype=t.float64, requires_grad=True)
    y = CASES[case](t, x)
    g, = t.autograd.grad(y, x, t.full(y.shape, fill, dtype=t.float64), create_graph=create_graph)
    return g.tolist()


@pytest.mark.parametrize("fill", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("case", sorted(CASES))
def test_an_inf_or_nan_gradient_where_the_row_drops_it_is_torchs(case, fill):
    np.testing.assert_array_equal(_grads(gradviz, case, fill), _grads(torch, case, fill))


@pytest.mark.parametrize("fill", [math.inf, math.nan])
@pytest.mark.parametrize("case", ["relu", "hardtanh", "relu6", "elu", "clamp"])
def test_under_create_graph_a_dropped_inf_or_nan_gradient_is_torchs(case, fill):
    ours, theirs = _grads(gradviz, case, fill, True), _grads(torch, case, fill, True)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_dropped_negative_gradient_gives_torchs_signed_zero(case):
    ours, theirs = _grads(gradviz, case, -1.0), _grads(torch, case, -1.0)
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))


def _broadcast_clamp(t, bounds):
    x = t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True)
    lo = t.zeros(3, 2, dtype=t.float64, requires_grad=True)
    hi = t.full((3, 1), 1.5, dtype=t.float64, requires_grad=True)
    kwargs = {"both": {"min": lo, "max": hi}, "min": {"min": lo}, "max": {"max": hi}}[bounds]
    y = t.clamp(x, **kwargs)
    y.backward(t.arange(6, dtype=t.float64).reshape(3, 2))
    return [v.grad.tolist() if v.grad is not None else None for v in (x, lo, hi)]


@pytest.mark.parametrize("bounds", ["both", "min", "max"])
def test_clamp_with_bounds_broadcasting_beyond_the_input_differentiates_as_torch(bounds):
    assert _broadcast_clamp(gradviz, bounds) == _broadcast_clamp(torch, bounds)


@pytest.mark.parametrize("call", [
    "t.clamp(t.ones(2), t.zeros(3), t.ones(2))", "t.clamp(t.ones(2, 3), t.zeros(4))",
    "t.clamp(t.ones(2, 3), max=t.zeros(2))", "t.clamp(t.ones(2, 3), t.zeros(2, 1), t.ones(4))",
    "t.ones(2, 3).clamp_(t.zeros(5))", "t.ones(2).clamp_(t.zeros(3, 2))",
    "t.clamp_min(t.ones(2, 3), t.zeros(4))",
])
def test_clamp_bounds_that_do_not_broadcast_get_torchs_error(call):
    def error(t):
        with pytest.raises(Exception) as caught:
            eval(call, {"t": t})        # noqa: S307 - the cases above
        return type(caught.value).__name__, str(caught.value).splitlines()[0]
    assert error(gradviz) == error(torch)


NAN_CASES = {
    "relu": lambda t, x: t.relu(x),
    "relu_": lambda t, x: t.nn.functional.relu(x * 1, inplace=True),
    "relu6": lambda t, x: t.nn.functional.relu6(x),
    "hardtanh": lambda t, x: t.nn.functional.hardtanh(x),
    "elu": lambda t, x: t.nn.functional.elu(x),
    "elu_": lambda t, x: t.nn.functional.elu_(x * 1),
    "leaky_relu": lambda t, x: t.nn.functional.leaky_relu(x, 0.1),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", sorted(NAN_CASES))
def test_a_nan_input_keeps_the_gradient_as_torchs_kernels(case, create_graph):
    """torch's kernels drop where x <= threshold (x <= 0 for elu): a nan x keeps the
    gradient."""
    def grads(t):
        x = t.tensor([math.nan, -1.0, 2.0, 0.0], dtype=t.float64, requires_grad=True)
        y = NAN_CASES[case](t, x)
        g, = t.autograd.grad(y, x, t.full((4,), 3.0, dtype=t.float64),
                             create_graph=create_graph)
        return g.tolist()
    np.testing.assert_array_equal(grads(gradviz), grads(torch))
