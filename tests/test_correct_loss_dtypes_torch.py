"""The losses of nn.functional with input, target and weights of mixed dtypes, against torch 2.13:
the loss's dtype, the gradients' dtypes and torch's errors exactly, the values within a few
units in the last place (torch's SIMD log1p/exp and summation order differ from NumPy's by
one ulp at most)."""

import itertools
import warnings

import numpy as np
import pytest

import gradviz

torch = pytest.importorskip("torch")

_DTYPES = ["float32", "float64", "float16"]
_X = np.random.default_rng(0).normal(size=(4, 5)) * 3
_T = np.random.default_rng(1).uniform(size=(4, 5))
_W = np.random.default_rng(2).uniform(size=(5,)) * 2


def _outcome(m, run):
    """(loss dtype, loss values, [(gradient dtype, values)]) or (error type, first line)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss, grads = run(m)
    except Exception as exc:  # noqa: BLE001 - the error is the observable
        return type(exc).__name__, str(exc).split("\n")[0]
    return (str(loss.dtype), loss.detach().double().numpy(),
            [(str(g.dtype), g.double().numpy()) for g in grads])


def _same(run, rtol):
    ours, theirs = _outcome(gradviz, run), _outcome(torch, run)
    if isinstance(theirs[1], str):
        assert ours == theirs
        return
    assert isinstance(ours[1], np.ndarray), ours
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=rtol, atol=rtol)
    assert [g[0] for g in ours[2]] == [g[0] for g in theirs[2]]
    for (_, g), (_, tg) in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(g, tg, rtol=rtol, atol=rtol)


def _tensor(m, data, dt, **kw):
    return m.tensor(data if dt != "int64" else np.round(data), dtype=getattr(m, dt), **kw)


_BCE_CASES = [c for c in itertools.product(_DTYPES, _DTYPES + ["int64"], [None] + _DTYPES,
                                           [None, "float32", "float64", "int64"], ["none", "mean"])
              if c[2] is None or c[3] is None or c[2] == c[3]]


@pytest.mark.parametrize("x_dt, t_dt, w_dt, pw_dt, reduction", _BCE_CASES)
def test_binary_cross_entropy_with_logits(x_dt, t_dt, w_dt, pw_dt, reduction):
    """torch computes (1 - target).mul_(input).sub_(log_sigmoid(input)), so the loss takes the
    target's dtype (a float64 target makes a float32 input's loss float64, an integer target
    is refused); its gradients take their inputs' dtypes."""
    def run(m):
        x = _tensor(m, _X, x_dt, requires_grad=True)
        t = _tensor(m, _T, t_dt, requires_grad=t_dt != "int64")
        w = None if w_dt is None else _tensor(m, _W, w_dt)
        pw = None if pw_dt is None else _tensor(m, _W * 2, pw_dt)
        loss = m.nn.functional.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw,
                                                                reduction=reduction)
        inputs = [x] if t_dt == "int64" else [x, t]
        return loss, m.autograd.grad(loss.sum(), inputs)
    _same(run, 2e-3 if "float16" in (x_dt, t_dt, w_dt, pw_dt) else 1e-6)


@pytest.mark.parametrize("t_dt", ["bool", "int64"])
def test_binary_cross_entropy_with_logits_refuses_an_integer_or_bool_target(t_dt):
    def run(m):
        x = m.zeros(2, 3, requires_grad=True)
        loss = m.nn.functional.binary_cross_entropy_with_logits(
            x, m.ones(2, 3, dtype=getattr(m, t_dt)), pos_weight=m.ones(3))
        return loss, []
    ours = _outcome(gradviz, run)
    assert ours == _outcome(torch, run) and ours[0] == "RuntimeError"


@pytest.mark.parametrize("where", ["weight", "pos_weight"])
def test_binary_cross_entropy_with_logits_weights_that_broadcast_past_the_loss(where):
    def run(m):
        loss = m.nn.functional.binary_cross_entropy_with_logits(
            m.zeros(2, 3), m.zeros(2, 3), **{where: m.ones(4, 2, 3)})
        return loss, []
    ours = _outcome(gradviz, run)
    assert ours == _outcome(torch, run) and ours[0] == "RuntimeError"


@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("x_dt, w_dt", [(x, w) for x in _DTYPES for w in _DTYPES + ["int64"]])
def test_class_weights_of_another_dtype(loss, x_dt, w_dt):
    """torch: "expected scalar type Float but found Double" (gradviz computed the loss)."""
    def run(m):
        x = _tensor(m, _X[:, :3], x_dt, requires_grad=True)
        out = getattr(m.nn.functional, loss)(x, m.tensor([0, 2, 1, 2]),
                                             weight=_tensor(m, _W[:3], w_dt))
        return out, m.autograd.grad(out, x)
    _same(run, 2e-3 if "float16" in (x_dt, w_dt) else 1e-6)


@pytest.mark.parametrize("x_dt, t_dt", [(x, t) for x in _DTYPES + ["int64"]
                                        for t in _DTYPES + ["int64"] if x != t])
@pytest.mark.parametrize("grad", ["input", "target", "none"])
def test_huber_loss_of_mixed_dtypes(x_dt, t_dt, grad):
    """torch computes the loss in the promoted dtype and writes it in the input's; only its
    backward refuses the mixed dtypes (gradviz refused the forward)."""
    def run(m):
        x = _tensor(m, _X, x_dt, requires_grad=grad == "input")
        t = _tensor(m, _T * 4, t_dt, requires_grad=grad == "target")
        out = m.nn.functional.huber_loss(x, t, reduction="sum", delta=1.5)
        return out, m.autograd.grad(out, [x if grad == "input" else t]) if grad != "none" else []
    _same(run, 2e-3 if "float16" in (x_dt, t_dt) else 1e-6)
