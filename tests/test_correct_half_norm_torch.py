"""float16 layer_norm against torch 2.13's CPU kernel, which computes a float16 input in float32
(the moments, x * rstd - rstd * mean, the weight and the bias) and rounds once: the output bit
for bit (within one ulp where the moments' summation order differs), the saved mean and rstd's
dtype (float32 when the parameters are: mixed types), and
the gradients' dtypes, their values within float16 rounding."""

import numpy as np
import pytest

import gradviz

torch = pytest.importorskip("torch")

_SHAPES = [(6, 2), (5, 7), (3, 4, 16), (2, 2, 24)]


def _run(m, shape, w_dt):
    rng = np.random.default_rng(sum(shape))
    x = m.tensor(rng.normal(size=shape) * 3 + 1, dtype=m.float16, requires_grad=True)
    params = [None if w_dt is None else
              m.tensor(rng.normal(size=shape[-1:]), dtype=getattr(m, w_dt), requires_grad=True)
              for _ in range(2)]
    y = m.nn.functional.layer_norm(x, shape[-1:], *params)
    saved = [str(y.grad_fn._saved_result1.dtype), str(y.grad_fn._saved_result2.dtype)]
    weight = m.arange(y.numel(), dtype=m.float32).reshape(y.shape) / y.numel()
    inputs = [x] + [p for p in params if p is not None]
    grads = m.autograd.grad((y.float() * weight).sum(), inputs)
    return y.detach().numpy(), saved, [(str(g.dtype), g.double().numpy()) for g in grads]


@pytest.mark.parametrize("shape", _SHAPES)
@pytest.mark.parametrize("w_dt", [None, "float16", "float32"])
def test_float16_layer_norm_is_torchs(shape, w_dt):
    y, saved, grads = _run(gradviz, shape, w_dt)
    ty, t_saved, t_grads = _run(torch, shape, w_dt)
    # bit for bit but where the row moments' summation order moves rstd by one float32 ulp
    # (about 3 elements in 10,000): then one float16 ulp
    ulps = np.abs(y.view(np.int16).astype(int) - ty.view(np.int16).astype(int))
    assert ulps.max() <= 1 and (ulps == 0).mean() >= 0.98
    assert saved == t_saved
    assert [g[0] for g in grads] == [g[0] for g in t_grads]
    for (_, g), (_, tg) in zip(grads, t_grads):
        np.testing.assert_allclose(g, tg, rtol=4e-3, atol=1e-3)
