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


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("kernel", [1, 3])
def test_conv2d_results_survive_the_next_convolution(batch, bias, kernel):
    """2-D stride-1 convolutions reuse their work arrays from call to call: outputs and
    gradients of one call (forward, backward, transposed) must not change with the next.
    (A 1x1 kernel on one image makes the results contiguous views of those arrays.)"""
    import numpy as np

    rng = np.random.default_rng(5)
    data = [rng.standard_normal((batch, 2, 5, 5)).tolist() for _ in range(2)]
    weight = rng.standard_normal((3, 2, kernel, kernel)).tolist()
    pad = kernel // 2

    def case(t):
        F = t.nn.functional
        w = t.tensor(weight, requires_grad=True)
        b = t.tensor([0.1, -0.2, 0.3], requires_grad=True) if bias else None
        xs = [t.tensor(d, requires_grad=True) for d in data]
        outs = [F.conv2d(x, w, b, padding=pad) for x in xs]
        firsts = [outs[0].detach().clone()]
        outs[0].sum().backward()
        firsts.append(xs[0].grad.clone())
        (outs[1] * 2).sum().backward()
        geometry = ([1, 1], [pad, pad], [1, 1], True, [0, 0], 1)
        back = t.convolution(outs[0].detach(), w.detach(), None, *geometry)
        t.convolution(outs[1].detach(), w.detach(), None, *geometry)
        return [outs[0], firsts[0], xs[0].grad, firsts[1], xs[1].grad, w.grad.clone(), back]
    check(case)


@pytest.mark.parametrize("indices", [[[0, 4], [2, 2]], [[0, 5]], [[-1, 2]], [[3, 1], [0, 4]]])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("strided", [False, True])
def test_embedding_index_bounds(indices, dtype, strided):
    def case(t):
        weight = t.arange(15.0).reshape(5, 3).requires_grad_()
        idx = t.tensor(indices, dtype=getattr(t, dtype))
        if strided:
            idx = idx.t()
        out = t.nn.functional.embedding(idx, weight)
        return _backward(t, out, weight)
    check(case)
