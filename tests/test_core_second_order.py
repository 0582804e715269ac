"""Second-order graphs against torch 2.13: for every row example of the derivative table, the
gradient built with create_graph=True has the same grad_fn names and next_functions as torch's
(`TanhBackwardBackward0`, `SigmoidBackwardBackward0`, a composed `MulBackward0`, ...).

The examples are test_core_table's (its own and every tests/rows_<family>.py). The rows whose
second-order graph still differs from torch's are listed in KNOWN_DIFFERENT: a new difference
fails, and a row that comes to match must be removed from the list.
"""

import numpy as np
import pytest

import gradviz
from test_core_table import EXAMPLES, _on, _walk_names, example_dtype

# Rows whose first-order gradient graph (create_graph=True) is built from other ops than
# torch's: the values and first/second derivatives are right (test_core_table checks them),
# only the nodes of the gradient's graph differ.
KNOWN_DIFFERENT = frozenset({
    # torch builds the LSTM layer's gradient with mkldnn_rnn_layer_differentiable_backward's
    # ops, the core with its own (tests/test_learner_lstm_torch.py compares the values)
    "mkldnn_rnn_layer",
})


def _graph_names(module, root):
    """grad_fn names in test_core_table's breadth-first order, with next_functions."""
    return [entry[:2] for entry in _walk_names(module, root)]


def second_order_graphs(module, op):
    """The graphs of d(sum(out * weight))/d(inputs) with create_graph=True, one per input."""
    fn, data, _ = EXAMPLES[op]
    xs = [module.tensor(d, dtype=example_dtype(module, op), requires_grad=True)
          for d in data]
    out = _on(module, fn)(*xs)
    weight = module.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
    grads = module.autograd.grad((out * weight).sum(), xs, create_graph=True, allow_unused=True)
    return [None if g is None else _graph_names(module, g.grad_fn) for g in grads]


def _compare_with_torch(op, graphs, known):
    """graphs(module, op) on gradviz and torch: equal, or different where op is in known."""
    real = pytest.importorskip("torch")
    ours, theirs = graphs(gradviz, op), graphs(real, op)
    if op in known:
        assert ours != theirs, f"{op} now matches torch: remove it from the list"
    else:
        assert ours == theirs


@pytest.mark.parametrize("op", sorted(EXAMPLES))
def test_second_order_graph_matches_torch(op):
    _compare_with_torch(op, second_order_graphs, KNOWN_DIFFERENT)


def test_known_differences_are_rows_of_the_table():
    assert KNOWN_DIFFERENT <= set(EXAMPLES)


def test_the_comparison_sees_a_different_node():
    """The walk compares names: a tanh gradient composed of mul/sub is not torch's
    TanhBackwardBackward0 graph."""
    real = pytest.importorskip("torch")
    x = real.tensor([0.3, -0.2], dtype=real.float64, requires_grad=True)
    (g,) = real.autograd.grad(x.tanh().sum(), x, create_graph=True)
    y = real.tensor([0.3, -0.2], dtype=real.float64, requires_grad=True)
    t = y.tanh()
    composed = 1 - t * t
    assert _graph_names(real, g.grad_fn)[0][0] == "TanhBackwardBackward0"
    assert _graph_names(real, g.grad_fn) != _graph_names(real, composed.grad_fn)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_graphs_to_third_order_match_torch(training, affine):
    """The table's example is training with weight and bias; eval mode and no weight take
    other branches of torch's batchnorm_double_backward."""
    real = pytest.importorskip("torch")

    def graphs(module):
        x = module.tensor([[[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]], [[-0.7, 1.3, 0.8],
                           [0.6, -1.5, 0.25]]], dtype=module.float64, requires_grad=True)
        g = module.tensor([[[0.5, 0.2, -1.3], [-0.7, 0.9, 0.1]], [[1.3, -0.4, 0.6],
                           [-1.1, 0.3, 0.9]]], dtype=module.float64, requires_grad=True)
        w = module.tensor([0.5, 1.5], dtype=module.float64, requires_grad=True)
        b = module.tensor([0.1, -0.2], dtype=module.float64, requires_grad=True)
        inputs = [x, w, b] if affine else [x]
        stats = module.tensor([0.1, -0.2], dtype=module.float64), module.tensor(
            [0.5, 2.0], dtype=module.float64)
        out = module.nn.functional.batch_norm(x, *stats, *inputs[1:], training=training)
        firsts = module.autograd.grad(out, inputs, g, create_graph=True)
        flat = module.cat([f.reshape(-1) for f in firsts])
        weight = module.arange(1, flat.numel() + 1, dtype=flat.dtype)
        seconds = module.autograd.grad((flat * weight).sum(), inputs + [g], create_graph=True,
                                       allow_unused=True)
        return [_graph_names(module, flat.grad_fn)] + [
            None if s is None else _graph_names(module, s.grad_fn) for s in seconds]

    assert graphs(gradviz) == graphs(real)


def test_det_gradient_with_create_graph_at_a_singular_matrix_is_refused():
    """torch switches to an SVD formula there; the core says so rather than guess."""
    a = gradviz.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    (g,) = gradviz.autograd.grad(gradviz.det(a), a)        # without create_graph: 0, as torch
    assert g.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(NotImplementedError, match="--backend torch"):
        gradviz.autograd.grad(gradviz.det(a), a, create_graph=True)


# The double backward of a convolution is made of convolutions, its input gradient a transposed
# one: torch.convolution(transposed=True) against torch, to third order.
_TRANSPOSED = [
    # input, weight, stride, padding, dilation, output_padding, groups
    ((2, 4, 4, 5), (4, 3, 3, 2), (2, 1), (1, 0), (1, 2), (1, 0), 2),
    ((1, 2, 5), (2, 3, 3), (3,), (1,), (1,), (2,), 1),
    ((2, 3, 3, 3), (3, 2, 2, 2), (1, 1), (0, 0), (1, 1), (0, 0), 1),
]


def _transposed_run(module, case):
    xs, ws, st, pd, dl, op, groups = case
    rng = np.random.default_rng(0)
    x = module.tensor(rng.normal(size=xs), requires_grad=True)
    w = module.tensor(rng.normal(size=ws), requires_grad=True)
    b = module.tensor(np.linspace(-1, 1, ws[1] * groups), requires_grad=True)
    y = module.convolution(x, w, b, st, pd, dl, True, op, groups)
    g = module.tensor(rng.normal(size=tuple(y.shape)), requires_grad=True)
    firsts = module.autograd.grad(y, (x, w, b), g, create_graph=True)
    seconds = module.autograd.grad(sum((f * f * f).sum() for f in firsts), (x, w, b, g),
                                   create_graph=True, allow_unused=True)
    if any(op):     # torch's own third derivative then fails (a plain convolution gets
        return y, firsts, seconds, ()       # the output_padding)
    thirds = module.autograd.grad(sum((s * s).sum() for s in seconds if s is not None),
                                  (x, w, b), allow_unused=True)
    return y, firsts, seconds, thirds


@pytest.mark.parametrize("case", _TRANSPOSED)
def test_transposed_convolution_matches_torch(case):
    real = pytest.importorskip("torch")
    ours, theirs = _transposed_run(gradviz, case), _transposed_run(real, case)
    assert ours[0].grad_fn.name() == theirs[0].grad_fn.name() == "ConvolutionBackward0"
    assert ours[0].grad_fn._saved_transposed is True
    assert [_graph_names(gradviz, f.grad_fn) for f in ours[1]] == [
        _graph_names(real, f.grad_fn) for f in theirs[1]]
    for a, b in zip([ours[0], *ours[1], *ours[2], *ours[3]],
                    [theirs[0], *theirs[1], *theirs[2], *theirs[3]]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9,
                                       atol=1e-9)


@pytest.mark.parametrize("bad", [
    dict(x=(1, 3, 4, 4), w=(2, 3, 2, 2), b=3),                      # input channels
    dict(x=(1, 2, 4, 4), w=(2, 3, 2, 2), b=4),                      # bias size
    dict(x=(1, 2, 4, 4), w=(2, 3, 2, 2), b=3, op=(2, 0)),           # output padding
])
def test_transposed_convolution_errors_match_torch(bad):
    real = pytest.importorskip("torch")
    messages = []
    for module in (gradviz, real):
        x, w = module.ones(bad["x"]), module.ones(bad["w"])
        with pytest.raises(RuntimeError) as err:
            module.convolution(x, w, module.ones(bad["b"]), (1, 1), (0, 0), (1, 1), True,
                               bad.get("op", (0, 0)), 1)
        messages.append(str(err.value).split(". ")[0].split("\n")[0])
    assert messages[0] == messages[1]


# The same comparison with grad_outputs that require grad: the graph then shows how each row's
# formula treats the incoming gradient itself (a linear op's gradient graph is otherwise empty:
# t's used to record TransposeBackward0 where torch records TBackward0, unseen above). These
# rows still build it from other ops than torch's (masked_fill zeroes with a where where torch
# masked_fills, add scales by alpha with a tensor, ...).
KNOWN_DIFFERENT_THROUGH_GRAD_OUTPUTS = frozenset("""
    add as_strided as_strided_storage mkldnn_rnn_layer
""".split())


def graphs_through_grad_outputs(module, op):
    """The graphs of the gradients of every output, weighted by a leaf v (requires grad)."""
    fn, data, _ = EXAMPLES[op]
    xs = [module.tensor(d, dtype=example_dtype(module, op), requires_grad=True)
          for d in data]
    out = _on(module, fn)(*xs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if o.requires_grad]
    vs = [module.arange(1, o.numel() + 1, dtype=o.dtype).reshape(o.shape).requires_grad_()
          for o in outs]
    grads = module.autograd.grad(outs, xs, grad_outputs=vs, create_graph=True,
                                 allow_unused=True)
    return [None if g is None or g.grad_fn is None else _graph_names(module, g.grad_fn)
            for g in grads]


@pytest.mark.parametrize("op", sorted(EXAMPLES))
def test_graph_through_grad_outputs_matches_torch(op):
    _compare_with_torch(op, graphs_through_grad_outputs, KNOWN_DIFFERENT_THROUGH_GRAD_OUTPUTS)


def test_known_differences_through_grad_outputs_are_rows_of_the_table():
    assert KNOWN_DIFFERENT_THROUGH_GRAD_OUTPUTS <= set(EXAMPLES)
