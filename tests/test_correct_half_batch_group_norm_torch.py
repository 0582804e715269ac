"""float16 batch_norm and group_norm against torch 2.13's CPU kernels, which compute a float16
input in float32: the statistics (batch_norm saves them in the parameters' dtype and builds
alpha = invstd * weight, beta = bias - mean * alpha from the saved ones; group_norm uses them
unrounded), then y = x * alpha + beta as one fused multiply-add, rounded to float16 once. The
core computed every step in float16 (about half of the outputs differed by an ulp or more).
Outputs, running statistics and the saved statistics' dtypes are compared bit for bit, but for
the cases in ONE_ULP: there torch's statistics (group_norm's Welford moments, batch_norm's
float32 running variance) are summed in another order, and a value may differ by an ulp or
two."""

import numpy as np
import pytest

import gradviz

torch = pytest.importorskip("torch")

SHAPES = [(4, 3), (4, 3, 5), (2, 4, 3, 3), (8, 2, 7)]
# (the (4, 3) case differs from torch only when torch runs on one thread, as it does after a
# test that set torch.set_num_threads(1): torch's order of summation follows its thread count)
ONE_ULP = {("batch_norm", (4, 3), 30.0, True, "float32"),
           ("batch_norm", (4, 3, 5), 30.0, True, "float32"),
           ("batch_norm", (2, 4, 3, 3), 1.0, True, "float32"),
           ("batch_norm", (8, 2, 7), 30.0, True, "float32"),
           ("group_norm", (4, 2, 5), 0.01, 1, "float32"),
           ("group_norm", (4, 2, 5), 0.01, 2, "float32"),
           ("group_norm", (2, 4, 3, 3), 0.01, 1, "float16"),
           ("group_norm", (2, 4, 3, 3), 0.01, 2, "float32"),
           ("group_norm", (3, 2), 0.01, 1, "float32"), ("group_norm", (3, 2), 30.0, 1, "float16"),
           ("group_norm", (3, 2), 30.0, 2, "float16"),
           ("group_norm", (8, 2, 7), 0.01, 1, "float16"),
           ("group_norm", (8, 2, 7), 0.01, 1, "none")}


def _same(a, b, key):
    """Equal; for a case in ONE_ULP, each number within two float16 ulps (dtypes equal)."""
    if key not in ONE_ULP:
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, key) for x, y in zip(a, b))
    return abs(a - b) <= 2.0 ** -9 * max(abs(a), abs(b), 2.0 ** -14)
SCALES = [0.01, 1.0, 30.0]


def _data(shape, scale, c):
    rng = np.random.default_rng(sum(shape) + int(scale * 100))
    return (rng.normal(size=shape) * scale + 0.5, rng.normal(size=c), rng.normal(size=c))


def _batch_norm(m, shape, scale, training, params):
    x, w, b = _data(shape, scale, shape[1])
    x = m.tensor(x, dtype=m.float16, requires_grad=True)
    pdt = m.float32 if params == "float32" else m.float16
    w = None if params == "none" else m.tensor(w, dtype=pdt, requires_grad=True)
    b = None if params == "none" else m.tensor(b, dtype=pdt, requires_grad=True)
    sdt = m.float32 if params == "float32" else m.float16
    rm = m.full((shape[1],), 0.25, dtype=sdt)
    rv = m.full((shape[1],), 1.5, dtype=sdt)
    y = m.nn.functional.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3)
    saved = [str(y.grad_fn._saved_result1.dtype), str(y.grad_fn._saved_result2.dtype)]
    return y.detach().double().tolist(), rm.double().tolist(), rv.double().tolist(), saved


def _group_norm(m, shape, scale, groups, params):
    x, w, b = _data(shape, scale, shape[1])
    x = m.tensor(x, dtype=m.float16, requires_grad=True)
    pdt = m.float32 if params == "float32" else m.float16
    w = None if params == "none" else m.tensor(w, dtype=pdt, requires_grad=True)
    b = None if params == "none" else m.tensor(b, dtype=pdt, requires_grad=True)
    y = m.nn.functional.group_norm(x, groups, w, b)
    saved = [str(y.grad_fn._saved_result1.dtype), str(y.grad_fn._saved_result2.dtype)]
    return y.detach().double().tolist(), saved


@pytest.mark.parametrize("params", ["float16", "float32", "none"])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_half_batch_norm_as_torch(shape, scale, training, params):
    assert _same(_batch_norm(gradviz, shape, scale, training, params),
                 _batch_norm(torch, shape, scale, training, params),
                 ("batch_norm", shape, scale, training, params))


@pytest.mark.parametrize("params", ["float16", "float32", "none"])
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("shape", [(4, 2, 5), (2, 4, 3, 3), (3, 2), (8, 2, 7)], ids=str)
def test_half_group_norm_as_torch(shape, scale, groups, params):
    assert _same(_group_norm(gradviz, shape, scale, groups, params),
                 _group_norm(torch, shape, scale, groups, params),
                 ("group_norm", shape, scale, groups, params))
