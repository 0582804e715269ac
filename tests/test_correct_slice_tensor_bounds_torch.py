"""x[a:b:c] with tensor-valued bounds (a 0-d or one-element integer tensor, of any integer
dtype, a NumPy integer), as torch 2.13 records them: SliceBackward0 with `_saved_start` /
`_saved_end` as given, a negative bound read back unsigned (2**64 + b). A negative tensor bound
was saved normalised (x[-t:] read 8 where torch reads 2**64 - 2)."""

import numpy as np
import pytest

import gradviz

torch = pytest.importorskip("torch")

BOUNDS = {
    "int": lambda m, v: v,
    "t0d": lambda m, v: m.tensor(v),
    "t1d": lambda m, v: m.tensor([v]),
    "int32": lambda m, v: m.tensor(v, dtype=m.int32),
    "uint8": lambda m, v: m.tensor(abs(v), dtype=m.uint8),
    "np": lambda m, v: np.int64(v),
}
SLICES = {
    "start": lambda x, b: x[b(2):],
    "neg_start": lambda x, b: x[b(-3):],
    "end": lambda x, b: x[:b(4)],
    "neg_end": lambda x, b: x[:b(-2)],
    "both": lambda x, b: x[b(-7):b(-1)],
    "step": lambda x, b: x[b(1)::b(3)],
    "dim1": lambda x, b: x.view(2, 5)[:, b(-4):b(4)],
    "past_end": lambda x, b: x[b(-20):b(30)],
}


def _run(m, sl, bound):
    x = m.arange(10.0, requires_grad=True)
    y = SLICES[sl](x, lambda v: BOUNDS[bound](m, v))
    g = y.grad_fn
    saved = {a: getattr(g, a) for a in dir(g) if a.startswith("_saved_")}
    y.sum().backward()
    return (g.name(), saved, tuple(y.shape), y.stride(), y.tolist(),
            [type(n).__name__ if n is not None else None for n, _ in g.next_functions],
            x.grad.tolist())


@pytest.mark.parametrize("bound", sorted(BOUNDS))
@pytest.mark.parametrize("sl", sorted(SLICES))
def test_slice_with_tensor_bounds_as_torch(sl, bound):
    want = _run(torch, sl, bound)
    got = _run(gradviz, sl, bound)
    assert got[0] == want[0] and got[1] == want[1] and got[2:5] == want[2:5] and \
        got[6] == want[6]
    assert [n and n.split("::")[-1] for n in got[5]] == \
        [n and n.split("::")[-1] for n in want[5]]
