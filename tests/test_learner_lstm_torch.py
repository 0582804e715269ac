"""nn.LSTM's graph is torch's on CPU: a float32 LSTM runs each layer and direction as one
oneDNN call in torch (mkldnn_rnn_layer), so its output's grad_fn is MkldnnRnnLayerBackward0
with seven inputs (input, weight0..3, hx_, cx_), h_n and c_n are StackBackward0 of its outputs
1 and 2, and the saved values carry torch's names. Compared with torch 2.13: the graph (names
and next_functions, breadth first), the saved scalars and shapes, the values and every
gradient (float32 rounding apart), the gradient of a gradient (create_graph=True), and float64
staying composed as in torch. The PyTorch LSTM tutorial prints `grad_fn=<MkldnnRnnLayerBackward0>`
(tests/learner_files/seq_models_lstm.py)."""

import numpy as np
import pytest

import gradviz
from graphwalk import graph_nodes
from test_learner_surface import _same

CASES = {
    "plain": ({}, (5, 2, 3), None),
    "hx_with_grad": ({}, (5, 2, 3), "grad"),
    "hx_without_grad": ({}, (4, 2, 3), "plain"),
    "two_layers_bidirectional_batch_first": (
        {"num_layers": 2, "bidirectional": True, "batch_first": True}, (2, 5, 3), None),
    "no_bias": ({"bias": False, "num_layers": 2}, (4, 2, 3), None),
    "unbatched": ({}, (5, 3), None),
    "dropout_between_layers": ({"num_layers": 3, "dropout": 0.5}, (4, 2, 3), None),
}


def _walk(root):
    """(name, next_functions' (name, input_nr)) of every node, breadth first."""
    return [(node.name().split("::")[-1], [
        (None if n is None else n.name().split("::")[-1], k) for n, k in node.next_functions])
        for node in graph_nodes(root)]


def _fused_nodes(root):
    return [node for node in graph_nodes(root) if node.name() == "MkldnnRnnLayerBackward0"]


_SCALARS = ("reverse", "batch_sizes", "mode", "hidden_size", "num_layers", "has_biases",
            "bidirectional", "batch_first", "train")
_TENSORS = ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_", "result0",
            "result1", "result2")


def _lstm(case):
    kwargs, shape, hx = CASES[case]

    def run(torch):
        torch.manual_seed(0)
        m = torch.nn.LSTM(3, 4, **kwargs)
        x = torch.randn(*shape, requires_grad=True)
        state = None
        if hx is not None:
            layers = m.num_layers * (2 if m.bidirectional else 1)
            h0 = torch.randn(layers, shape[1], 4, requires_grad=hx == "grad")
            c0 = torch.randn(layers, shape[1], 4, requires_grad=hx == "grad")
            state = (h0, c0)
        out, (h, c) = m(x, state)
        saved = []
        for node in _fused_nodes(out.grad_fn):
            saved.append([getattr(node, "_saved_" + n) for n in _SCALARS] +
                         [(tuple(getattr(node, "_saved_" + n).shape),
                           getattr(node, "_saved_" + n)._version) for n in _TENSORS])
        (out.sum() + (h * 2).sum() + (c * 3).sum()).backward()
        grads = [p.grad for p in m.parameters()] + [x.grad]
        if hx == "grad":
            grads += [state[0].grad, state[1].grad]
        return {"graph": [_walk(t.grad_fn) for t in (out, h, c)], "saved": saved,
                "values": [t.detach().numpy().copy() for t in (out, h, c)],
                "grads": [g.numpy().copy() for g in grads]}
    return run


@pytest.mark.parametrize("case", sorted(CASES))
def test_lstm_graph_saved_values_and_gradients_match_torch(case):
    real = pytest.importorskip("torch")
    ours, theirs = _lstm(case)(gradviz), _lstm(case)(real)
    assert ours["graph"] == theirs["graph"]
    assert ours["graph"][0][-1][0] != "StackBackward0"
    assert ours["saved"] == theirs["saved"] and ours["saved"]
    for key in ("values", "grads"):
        assert len(ours[key]) == len(theirs[key])
        for a, b in zip(ours[key], theirs[key]):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _second_order(torch):
    torch.manual_seed(0)
    m = torch.nn.LSTM(3, 4, bidirectional=True)
    x = torch.randn(5, 2, 3, requires_grad=True)
    out, (h, c) = m(x)
    (gx,) = torch.autograd.grad((out * out).sum() + c.sum(), x, create_graph=True)
    (gw,) = torch.autograd.grad((gx * gx).sum(), m.weight_hh_l0)
    return [np.round(gx.detach().numpy(), 4).tolist(), np.round(gw.numpy(), 4).tolist()]


def test_gradient_of_a_gradient_matches_torch():
    _same(_second_order)


def test_lstm_layer_gradients_match_finite_differences_twice():
    # the layer's formula in float64 (torch has no float64 oneDNN layer to compare with)
    from gradviz._registry import ops
    gradviz.manual_seed(0)
    ts = [gradviz.randn(*s, dtype=gradviz.float64, requires_grad=True)
          for s in ((4, 2, 3), (8, 3), (8, 2), (8,), (8,), (2, 2), (2, 2))]
    for reverse in (False, True):
        for k in range(3):
            def f(*a):
                return ops.mkldnn_rnn_layer(*a, reverse, [], 2, 2, 1, True, False, False,
                                            True)[k]
            assert gradviz.autograd.gradcheck(f, ts)
            assert gradviz.autograd.gradgradcheck(f, ts)


def _float64_and_no_grad(torch):
    torch.manual_seed(0)
    m = torch.nn.LSTM(3, 4).double()
    out, (h, c) = m(torch.randn(5, 2, 3, dtype=torch.float64))
    with torch.no_grad():
        nograd = torch.nn.LSTM(3, 4)(torch.randn(5, 2, 3))[0].grad_fn
    return [out.grad_fn.name(), h.grad_fn.name(), nograd is None]


def test_float64_lstm_stays_composed_as_in_torch():
    assert _same(_float64_and_no_grad)[1][0] == "StackBackward0"
