"""The fast paths of nn ops on makemore-, attention- and CNN-sized inputs take the same
decisions as the general code: compared with torch 2.13 (values, grads, graph, errors) on the
cases where a fast path must step aside.
"""

import pytest

try:
    from .test_nn_act import _backward, _x, check
except ImportError:
    from test_nn_act import _backward, _x, check

torch = pytest.importorskip("torch")

X43 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6], [0.2, 0.1, -0.3], [1.0, 2.0, 3.0]]


@pytest.mark.parametrize("target", [[2, 1, 3, 0], [2, -1, 1, 0], [2, -100, 1, 0],
                                    [2, 1, 1, 0]])
@pytest.mark.parametrize("ignore_index", [-100, 1, 3, -1])
def test_nll_loss_targets_out_of_range_or_ignored(target, ignore_index):
    def case(t):
        x = _x(t, X43)
        out = t.nn.functional.nll_loss(x, t.tensor(target), ignore_index=ignore_index)
        return _backward(t, out, x)
    check(case)


@pytest.mark.parametrize("target", [[2, 1, 0, 0], [2, 1, 7, 0]])
def test_nll_loss_byte_targets(target):
    def case(t):
        x = _x(t, X43)
        out = t.nn.functional.nll_loss(x, t.tensor(target, dtype=t.uint8))
        return _backward(t, out, x)
    check(case)


@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5), (2, 4, 3, 3)])
@pytest.mark.parametrize("affine", [None, "weight", "both"])
@pytest.mark.parametrize("needs", ["input", "params", "all"])
def test_batch_norm_training_gradients(shape, affine, needs):
    """The training gradients (computed per channel first, as torch's kernel) and the running
    statistics, for each input needing a gradient or not."""
    import numpy as np

    data = np.random.default_rng(3).standard_normal(shape).tolist()
    c = shape[1]

    def case(t):
        x = _x(t, data, rg=needs != "params")
        w = t.linspace(0.5, 1.5, c).requires_grad_(needs != "input") if affine else None
        b = t.linspace(-0.2, 0.3, c).requires_grad_(needs != "input") \
            if affine == "both" else None
        rm, rv = t.zeros(c), t.ones(c)
        out = t.nn.functional.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2)
        leaves = [v for v in (x, w, b) if v is not None and v.requires_grad]
        if not leaves:
            return [out, rm, rv]
        return _backward(t, out, *leaves) + [rm, rv]
    check(case)
