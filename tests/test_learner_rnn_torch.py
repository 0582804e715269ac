"""nn.RNN, nn.LSTM, nn.GRU and their cells against torch 2.13: parameter names, shapes and
initial values bit for bit after manual_seed, outputs and gradients (float32 rounding apart:
the forward is composed of ops, torch's kernels round in their own order), batch_first,
num_layers, bidirectional, unbatched input, dropout between layers, repr and errors."""

import numpy as np
import pytest

import gradviz
from test_learner_surface import _same


def _results(flat):
    return [flat] if not isinstance(flat, (tuple, list)) else \
        [t for f in flat for t in _results(f)]


def _run(torch, name, kwargs, shape, hx=None):
    torch.manual_seed(0)
    m = getattr(torch.nn, name)(3, 4, **kwargs)
    x = torch.randn(*shape, requires_grad=True)
    out = _results(m(x) if hx is None else m(x, hx(torch)))
    sum((f * (i + 1)).sum() for i, f in enumerate(out)).backward()
    return {"names": [n for n, _ in m.named_parameters()],
            "params": [p.detach().numpy().copy() for p in m.parameters()],
            "out": [f.detach().numpy() for f in out],
            "grads": [p.grad.numpy() for p in m.parameters()] + [x.grad.numpy()],
            "repr": repr(m)}


CASES = {
    "rnn": ("RNN", {}, (5, 2, 3), None),
    "rnn_relu_2_layers": ("RNN", {"nonlinearity": "relu", "num_layers": 2}, (5, 2, 3), None),
    "rnn_no_bias_batch_first": ("RNN", {"bias": False, "batch_first": True}, (2, 5, 3), None),
    "rnn_hx": ("RNN", {"num_layers": 2}, (5, 2, 3), lambda t: t.ones(2, 2, 4) * 0.3),
    "rnn_unbatched": ("RNN", {}, (5, 3), lambda t: t.ones(1, 4) * 0.1),
    "gru": ("GRU", {}, (5, 2, 3), None),
    "gru_bidirectional_unbatched": ("GRU", {"bidirectional": True}, (5, 3), None),
    "lstm": ("LSTM", {}, (5, 2, 3), None),
    "lstm_2_layers_bidirectional_batch_first": (
        "LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}, (2, 5, 3), None),
    "lstm_hx": ("LSTM", {}, (5, 2, 3), lambda t: (t.ones(1, 2, 4) * 0.2, t.ones(1, 2, 4) * -0.1)),
    "lstm_dropout": ("LSTM", {"num_layers": 3, "dropout": 0.5}, (4, 2, 3), None),
    "rnn_cell": ("RNNCell", {}, (2, 3), None),
    "rnn_cell_relu_no_bias": ("RNNCell", {"nonlinearity": "relu", "bias": False}, (2, 3), None),
    "lstm_cell": ("LSTMCell", {}, (2, 3), lambda t: (t.ones(2, 4) * 0.5, t.ones(2, 4))),
    "gru_cell_unbatched": ("GRUCell", {}, (3,), None),
    "gru_cell_hx": ("GRUCell", {}, (2, 3), lambda t: t.ones(2, 4) * 0.5),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_grads_and_initialisation_match_torch(case):
    real = pytest.importorskip("torch")
    ours, theirs = _run(gradviz, *CASES[case]), _run(real, *CASES[case])
    assert ours["names"] == theirs["names"]
    assert ours["repr"] == theirs["repr"]
    for p, q in zip(ours["params"], theirs["params"]):
        assert p.dtype == q.dtype and np.array_equal(p, q)
    for key in ("out", "grads"):
        assert len(ours[key]) == len(theirs[key])
        for p, q in zip(ours[key], theirs[key]):
            assert p.shape == q.shape
            np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-5)


def _names(out):
    """The node names of out's graph, depth first in next_functions order."""
    names, stack = [], [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None:
            names.append(node.name())
            stack.extend(fn for fn, _ in reversed(node.next_functions))
    return names


def _cell_graph(t):
    t.manual_seed(0)
    return _names(t.nn.RNNCell(3, 4)(t.randn(2, 3)))


def _rnn_graph(t):
    t.manual_seed(0)
    out, h = t.nn.RNN(3, 4)(t.randn(2, 1, 3))
    return _names(out), _names(h)


@pytest.mark.parametrize("graph", [_cell_graph, _rnn_graph])
def test_tanh_graph_is_torchs(graph):
    """The Elman cell composes as torch's CPU kernel does (RNN: the input projection of the
    whole sequence, unbound per step, the steps stacked)."""
    _same(graph)


ERRORS = {
    "bad_nonlinearity": lambda t: t.nn.RNN(3, 4, nonlinearity="sigmoid"),
    "bad_dropout": lambda t: t.nn.LSTM(3, 4, dropout=1.5),
    "zero_hidden": lambda t: t.nn.GRU(3, 0),
    "float_hidden": lambda t: t.nn.GRU(3, 4.0),
    "zero_layers": lambda t: t.nn.RNN(3, 4, num_layers=0),
    "proj_size_too_big": lambda t: t.nn.LSTM(3, 4, proj_size=4),
    "input_4d": lambda t: t.nn.RNN(3, 4)(t.zeros(1, 2, 3, 3)),
    "input_size": lambda t: t.nn.LSTM(3, 4)(t.zeros(5, 2, 2)),
    "input_dtype": lambda t: t.nn.GRU(3, 4)(t.zeros(5, 2, 3, dtype=t.float64)),
    "hidden_size": lambda t: t.nn.RNN(3, 4)(t.zeros(5, 2, 3), t.zeros(1, 3, 4)),
    "hidden_dims": lambda t: t.nn.RNN(3, 4)(t.zeros(5, 2, 3), t.zeros(3, 4)),
    "unbatched_hidden_dims": lambda t: t.nn.GRU(3, 4)(t.zeros(5, 3), t.zeros(1, 1, 4)),
    "lstm_cell_state_size": lambda t: t.nn.LSTM(3, 4)(t.zeros(5, 2, 3),
                                                      (t.zeros(1, 2, 4), t.zeros(1, 2, 5))),
    "lstm_hidden_dims": lambda t: t.nn.LSTM(3, 4)(t.zeros(5, 2, 3), (t.zeros(2, 4), t.zeros(2, 4))),
    "cell_input_3d": lambda t: t.nn.RNNCell(3, 4)(t.zeros(1, 2, 3)),
    "cell_hidden_3d": lambda t: t.nn.GRUCell(3, 4)(t.zeros(2, 3), t.zeros(1, 2, 4)),
    "cell_input_size": lambda t: t.nn.RNNCell(3, 4)(t.zeros(2, 5)),
    "cell_batch": lambda t: t.nn.GRUCell(3, 4)(t.zeros(2, 3), t.zeros(3, 4)),
    "cell_hidden_size": lambda t: t.nn.LSTMCell(3, 4)(t.zeros(2, 3), (t.zeros(2, 4), t.zeros(2, 5))),
    "reprs": lambda t: [repr(t.nn.LSTM(3, 4, 2, bias=False, batch_first=True, dropout=0.25,
                                       bidirectional=True)),
                        repr(t.nn.RNN(3, 4, nonlinearity="relu")), repr(t.nn.GRUCell(3, 4, False)),
                        repr(t.nn.RNNCell(3, 4, nonlinearity="relu"))],
    "all_weights": lambda t: [[tuple(w.shape) for w in ws]
                              for ws in t.nn.GRU(3, 4, 2, bidirectional=True).all_weights],
    "state_dict": lambda t: list(t.nn.LSTM(3, 4, bidirectional=True).state_dict()),
    "flatten_parameters": lambda t: t.nn.LSTM(3, 4).flatten_parameters(),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_checks_and_reprs_match_torch(case):
    _same(ERRORS[case])


def test_dropout_with_one_layer_warns_as_torch():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        gradviz.nn.GRU(3, 4, dropout=0.2)


def test_proj_size_is_refused_clearly():
    with pytest.raises(NotImplementedError, match=r"LSTM\(proj_size=...\) is not implemented "
                                                  "by gradviz's core; run with --backend torch"):
        gradviz.nn.LSTM(3, 4, proj_size=2)


def test_training_step_matches_torch():
    """A char-RNN-like step: embedding, LSTM, linear, cross_entropy, Adam; the loss after three
    steps is torch's to 5 decimals."""
    real = pytest.importorskip("torch")

    def losses(t):
        t.manual_seed(1)
        emb, lstm, head = t.nn.Embedding(10, 6), t.nn.LSTM(6, 8, batch_first=True), \
            t.nn.Linear(8, 10)
        params = list(emb.parameters()) + list(lstm.parameters()) + list(head.parameters())
        opt = t.optim.Adam(params, lr=0.01)
        x = t.randint(0, 10, (4, 7))
        out = []
        for _ in range(3):
            h, _ = lstm(emb(x[:, :-1]))
            loss = t.nn.functional.cross_entropy(head(h).reshape(-1, 10), x[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            out.append(round(loss.item(), 5))
        return out
    assert losses(gradviz) == losses(real)
