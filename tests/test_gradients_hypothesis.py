"""Gradients against central finite differences in float64, over hypothesis-generated shapes:
broadcasting pairs, 0-d tensors, reductions over any dim, every matmul shape; and, when torch
is installed, the same values and gradients as torch for the same inputs."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradviz as torch
from gradviz.autograd import gradcheck

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def values(shape, low=0.3, high=2.0, signed=True):
    """float64 arrays away from 0 (and from kinks): |x| in [low, high], random signs."""
    mags = hnp.arrays(np.float64, shape, elements=st.floats(low, high))
    if not signed:
        return mags
    signs = hnp.arrays(np.float64, shape, elements=st.sampled_from([-1.0, 1.0]))
    return st.tuples(mags, signs).map(lambda ms: ms[0] * ms[1])


def leaf(a):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def check(fn, *arrays):
    inputs = tuple(leaf(a) for a in arrays)
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-4)
    return inputs


def against_torch(fn, *arrays):
    """Same forward values and gradients of sum(fn(...)) as torch (skipped without torch)."""
    real = pytest.importorskip("torch")
    mine = [leaf(a) for a in arrays]
    theirs = [real.tensor(a, dtype=real.float64, requires_grad=True) for a in arrays]
    out_m = fn(torch, *mine)
    out_t = fn(real, *theirs)
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), rtol=1e-10)
    out_m.sum().backward()
    out_t.sum().backward()
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)
    assert type(out_m.grad_fn).__name__ == type(out_t.grad_fn).__name__


BINARY = {
    "add": lambda t, a, b: a + b,
    "sub": lambda t, a, b: a - b,
    "mul": lambda t, a, b: a * b,
    "div": lambda t, a, b: a / b,
    "maximum": lambda t, a, b: t.maximum(a, b),
    "minimum": lambda t, a, b: t.minimum(a, b),
    "where": lambda t, a, b: t.where(a > 0, a, b),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(data=st.data(), shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3,
                                                               max_side=3))
def test_binary_broadcasting(name, data, shapes):
    sa, sb = shapes.input_shapes
    a = data.draw(values(sa))
    b = data.draw(values(sb))
    if name in ("maximum", "minimum"):
        b = b + 0.01          # no ties: the derivative is not defined there
    fn = BINARY[name]
    check(lambda x, y: fn(torch, x, y), a, b)
    against_torch(fn, a, b)


@SETTINGS
@given(data=st.data(), shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3,
                                                               max_side=3))
def test_pow_tensor_exponent_broadcasting(data, shapes):
    sa, sb = shapes.input_shapes
    a = data.draw(values(sa, signed=False))
    b = data.draw(values(sb))
    check(lambda x, y: x ** y, a, b)
    against_torch(lambda t, x, y: x ** y, a, b)


UNARY = {
    "exp": (lambda t, x: x.exp(), True),
    "log": (lambda t, x: x.log(), False),
    "sqrt": (lambda t, x: x.sqrt(), False),
    "sin": (lambda t, x: x.sin(), True),
    "cos": (lambda t, x: x.cos(), True),
    "tanh": (lambda t, x: x.tanh(), True),
    "sigmoid": (lambda t, x: x.sigmoid(), True),
    "relu": (lambda t, x: x.relu(), True),
    "abs": (lambda t, x: x.abs(), True),
    "neg": (lambda t, x: -x, True),
    "reciprocal": (lambda t, x: 1 / x, True),
    "pow_scalar": (lambda t, x: x ** 3, True),
    "rpow": (lambda t, x: 2 ** x, True),
    "clamp": (lambda t, x: x.clamp(-1.0, 1.0), True),
    "square_of_sum": (lambda t, x: (x + 1.5) * (x + 1.5), True),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
def test_unary_any_shape(name, data, shape):
    fn, signed = UNARY[name]
    x = data.draw(values(shape, signed=signed))
    if name == "clamp":
        x = np.where(np.abs(np.abs(x) - 1) < 0.05, x * 1.2, x)    # away from the bounds
    check(lambda t: fn(torch, t), x)
    against_torch(fn, x)


REDUCTIONS = {
    "sum": lambda t, x, d, k: x.sum(d, keepdim=k),
    "mean": lambda t, x, d, k: x.mean(d, keepdim=k),
    "prod": lambda t, x, d, k: x.prod(d, keepdim=k),
    "max": lambda t, x, d, k: x.max(d, keepdim=k)[0],
    "min": lambda t, x, d, k: x.min(d, keepdim=k)[0],
    "softmax": lambda t, x, d, k: x.softmax(d),
    "log_softmax": lambda t, x, d, k: x.log_softmax(d),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
       keepdim=st.booleans())
def test_reductions_over_any_dim(name, data, shape, keepdim):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = data.draw(values(shape))
    if name in ("max", "min"):
        # distinct values, so the chosen element is unique
        x = x + np.arange(x.size).reshape(shape) * 1e-3
    fn = REDUCTIONS[name]
    check(lambda t: fn(torch, t, dim, keepdim), x)
    against_torch(lambda t, a: fn(t, a, dim, keepdim), x)


@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
def test_whole_tensor_reductions(data, shape):
    x = data.draw(values(shape)) + np.arange(int(np.prod(shape))).reshape(shape) * 1e-3
    for fn in (lambda t: t.sum(), lambda t: t.mean(), lambda t: t.max(), lambda t: t.min(),
               lambda t: t.prod()):
        check(fn, x)
        against_torch(lambda t, a, fn=fn: fn(a), x)


MATMUL_SHAPES = st.sampled_from([
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)),
    ((2, 2, 3), (3,)), ((3,), (2, 3, 4)), ((2, 2, 3), (2, 3, 4)), ((1, 2, 3), (4, 3, 2)),
    ((2, 1, 2, 3), (3, 3, 2)),
])


@SETTINGS
@given(data=st.data(), shapes=MATMUL_SHAPES)
def test_matmul_every_shape(data, shapes):
    a = data.draw(values(shapes[0]))
    b = data.draw(values(shapes[1]))
    check(lambda x, y: x @ y, a, b)
    against_torch(lambda t, x, y: x @ y, a, b)


VIEWS = {
    "reshape": lambda t, x: x.reshape(-1),
    "transpose": lambda t, x: x.transpose(0, -1) if x.dim() else x,
    "permute": lambda t, x: x.permute(*reversed(range(x.dim()))),
    "unsqueeze": lambda t, x: x.unsqueeze(0),
    "expand": lambda t, x: x.unsqueeze(0).expand(2, *x.shape),
    "index_first": lambda t, x: x[0] if x.dim() else x,
    "slice": lambda t, x: x[..., ::2],
    "mask": lambda t, x: x[x > 0],
    "cat": lambda t, x: t.cat([x.reshape(-1), x.reshape(-1) * 2]),
    "stack": lambda t, x: t.stack([x, x * 3]),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
def test_views_and_indexing(name, data, shape):
    x = data.draw(values(shape))
    fn = VIEWS[name]
    check(lambda t: fn(torch, t), x)
    against_torch(fn, x)


def test_the_checker_catches_a_wrong_derivative(monkeypatch):
    # The finite-difference check above is not vacuous: break tanh's rule and it fails.
    entry = torch._derivatives.DERIVATIVES["tanh"]
    idx = entry.formulas[0][1]
    monkeypatch.setattr(entry, "formulas", [(lambda grad, result: grad * result, idx)])
    monkeypatch.setattr(entry, "_plans", {})
    x = leaf(np.array([0.3, -0.7]))
    assert not gradcheck(lambda t: t.tanh(), (x,), raise_exception=False)
