"""Rows marked `exact` (their formulas give each input's gradient in its own shape and dtype):
their nodes keep no shapes and dtypes to fit gradients to, and the gradients still have the
shapes and dtypes torch gives, for every dtype and argument that changes a formula's path."""

import numpy as np
import pytest

import gradviz
from gradviz._derivatives import DERIVATIVES

torch = pytest.importorskip("torch")

EXACT = ["mm", "view", "embedding", "nll_loss", "nll_loss2d", "log_softmax", "softmax", "tanh"]


def test_the_exact_rows():
    assert sorted(op for op, row in DERIVATIVES.items() if row.exact) == sorted(EXACT)


def _cases(t):
    F = t.nn.functional
    gen = np.random.default_rng(0)

    def leaf(*shape, dtype="float32"):
        return t.tensor(gen.standard_normal(shape).astype(dtype), requires_grad=True)

    idx = t.tensor(gen.integers(0, 5, (4, 3)))
    target = t.tensor(gen.integers(0, 5, 4))
    for dt in ("float16", "float32", "float64"):
        yield f"mm {dt}", lambda dt=dt: (leaf(4, 3, dtype=dt), leaf(3, 5, dtype=dt)), \
            lambda a, b: a @ b
        yield f"mm t {dt}", lambda dt=dt: (leaf(4, 3, dtype=dt), leaf(5, 3, dtype=dt)), \
            lambda a, b: a @ b.t()
        yield f"view {dt}", lambda dt=dt: (leaf(4, 3, 2, dtype=dt),), lambda a: a.view(4, -1)
        yield f"log_softmax {dt}", lambda dt=dt: (leaf(4, 5, dtype=dt),), \
            lambda a: F.log_softmax(a, 1)
        yield f"softmax {dt}", lambda dt=dt: (leaf(4, 5, dtype=dt),), lambda a: F.softmax(a, 0)
        yield f"tanh {dt}", lambda dt=dt: (leaf(4, 5, dtype=dt),), lambda a: t.tanh(a)
    for dt in ("float32", "float64"):
        yield f"embedding {dt}", lambda dt=dt: (leaf(5, 2, dtype=dt),), \
            lambda w: F.embedding(idx, w)
        yield f"embedding padding {dt}", lambda dt=dt: (leaf(5, 2, dtype=dt),), \
            lambda w: F.embedding(idx, w, padding_idx=1, scale_grad_by_freq=True)
        yield f"nll {dt}", lambda dt=dt: (leaf(4, 5, dtype=dt),), lambda a: F.nll_loss(a, target)
        yield f"nll 1-D {dt}", lambda dt=dt: (leaf(5, dtype=dt),), \
            lambda a: F.nll_loss(a, target[0])
        yield f"nll weight none {dt}", lambda dt=dt: (leaf(4, 5, dtype=dt),), \
            lambda a: F.nll_loss(a, target, weight=t.rand(5, dtype=a.dtype), reduction="none",
                                 ignore_index=2)
        yield f"nll2d {dt}", lambda dt=dt: (leaf(2, 5, 3, 2, dtype=dt),), \
            lambda a: F.nll_loss(a, t.tensor(gen.integers(0, 5, (2, 3, 2))))


def _run(t, make, fn):
    inputs = make()
    out = fn(*inputs)
    out.backward(t.ones_like(out))
    return out, [(tuple(x.grad.shape), str(x.grad.dtype).split(".")[-1]) for x in inputs]


@pytest.mark.parametrize("name", [name for name, _, _ in _cases(gradviz)])
def test_gradients_keep_torch_shapes_and_dtypes(name):
    (_, gv_make, gv_fn), = [c for c in _cases(gradviz) if c[0] == name]
    (_, t_make, t_fn), = [c for c in _cases(torch) if c[0] == name]
    out, got = _run(gradviz, gv_make, gv_fn)
    _, want = _run(torch, t_make, t_fn)
    assert got == want
    node = out.grad_fn
    assert node.__dict__.get("_meta") is None      # nothing kept to fit the gradients to
