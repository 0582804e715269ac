"""Recurrent layers: RNN, LSTM, GRU and their cells RNNCell, LSTMCell, GRUCell.

Parameters have torch's names, shapes and order (weight_ih_l0, weight_hh_l0, bias_ih_l0,
bias_hh_l0, then the `_reverse` ones, layer by layer) and torch's initialisation, draw for
draw: every parameter U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) in that order, so after
the same manual_seed the weights are torch's bit for bit. batch_first, num_layers,
bidirectional, unbatched input and dropout between layers work as in torch.

The forward is composed of ordinary ops in the order of torch's CPU kernels (aten's RNN.cpp:
the input projection of a whole layer as one linear, then per step
`linear(h, w_hh, b_hh).add_(x_proj)` and the gates), so the values and gradients are torch's up
to float rounding. A float32 LSTM is recorded as torch records it on CPU: one fused
MkldnnRnnLayerBackward0 node per layer and direction (gradviz._ops.rnn). Elsewhere the graph
is not always torch's: its unsafe_chunk of the gates (UnsafeSplitBackward0) is chunk here
(SplitBackward0), the gates computed out of place. proj_size and packed sequences are
refused.

>>> import gradviz as torch
>>> rnn = torch.nn.LSTM(3, 5, num_layers=2, batch_first=True)
>>> out, (h, c) = rnn(torch.zeros(4, 7, 3))
>>> tuple(out.shape), tuple(h.shape), tuple(c.shape)
((4, 7, 5), (2, 4, 5), (2, 4, 5))
"""

import math
import numbers
import warnings

from .. import _creation, _dtype
from .._registry import ops as _ops
from .._ops.views import cat, stack
from ..autograd.callsite import user_stacklevel
from . import functional as F
from . import init
from .modules import Module, Parameter

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _refuse(what):
    return NotImplementedError(f"gradviz: {what} is not implemented by gradviz's core; run with "
                               "--backend torch to use PyTorch")


def _reset_uniform(module):
    """torch's reset_parameters of the recurrent layers: every parameter, in order,
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    stdv = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)


# ----- One step of each cell, as aten's RNN.cpp computes it ---------------------------------

# x_proj is the step's input projection, x W_ih^T + b_ih; the in-place edits are torch's, on
# fresh results (a chunk is a view here, so the gates are computed out of place)

def _tanh_step(x_proj, h, w_hh, b_hh):
    return F.linear(h, w_hh, b_hh).add_(x_proj).tanh()


def _relu_step(x_proj, h, w_hh, b_hh):
    return F.linear(h, w_hh, b_hh).add_(x_proj).relu()


def _lstm_step(x_proj, hc, w_hh, b_hh):
    h, c = hc
    i, f, g, o = F.linear(h, w_hh, b_hh).add_(x_proj).chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = (f * c).add_(i * g)
    return o * cy.tanh(), cy


def _gru_step(x_proj, h, w_hh, b_hh):
    ir, iz, in_ = x_proj.chunk(3, 1)
    hr, hz, hn = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = (hr + ir).sigmoid()
    z = (hz + iz).sigmoid()
    n = (in_ + hn * r).tanh()
    return (h - n).mul_(z).add_(n)


_STEPS = {"RNN_TANH": _tanh_step, "RNN_RELU": _relu_step, "LSTM": _lstm_step, "GRU": _gru_step}


# ----- Layers -------------------------------------------------------------------------------

class RNNBase(Module):
    """What RNN, LSTM and GRU share: torch's parameters, argument checks and layer loop."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None,
                 dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}",
                          stacklevel=user_stacklevel())
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size:
            raise _refuse(f"{type(self).__name__}(proj_size=...)")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for suffix in ("", "_reverse")[:1 + bool(bidirectional)]:
                layer_input = input_size if layer == 0 else hidden_size * self._directions()
                shapes = {"weight_ih": (gate_size, layer_input),
                          "weight_hh": (gate_size, hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                names = [f"{kind}_l{layer}{suffix}" for kind in shapes]
                for name, shape in zip(names, shapes.values()):
                    setattr(self, name, Parameter(_creation.empty(tuple(shape), dtype=dtype,
                                                                  device=device)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def _directions(self):
        return 2 if self.bidirectional else 1

    def reset_parameters(self):
        _reset_uniform(self)

    def flatten_parameters(self):
        """A no-op, as torch's on CPU (it packs the weights for cuDNN)."""

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- forward --

    def _check_input(self, input):
        if not hasattr(input, "dim"):
            raise _refuse(f"{type(self).__name__} on a {type(input).__name__} (packed "
                          "sequences)")
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D tensor instead")
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}).")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def _batched(self, input):
        """(input, is_batched): an unbatched input gets a batch dim of 1."""
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        return input, is_batched

    def _expected_hidden(self, input):
        batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * self._directions(), batch, self.hidden_size)

    def _check_hidden(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _run(self, input, states):
        """The layers over (T, B, I) or (B, T, I) input from the initial states (one list per
        state kind, one (B, H) tensor per layer and direction): (output, final states)."""
        if self.batch_first:
            input = input.transpose(0, 1)
        step = _STEPS[self.mode]
        weights = self.all_weights
        layer_input = input
        finals = []
        fused = self._fused(input)
        if fused:
            layer_input = input.contiguous()     # mkldnn_impl's (CloneBackward0 after batch_first)
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self._directions()):
                k = layer * self._directions() + direction
                w = weights[k]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                if fused:
                    out, hy, cy = self._fused_layer(layer_input, w_ih, w_hh, b_ih, b_hh,
                                                    states, k, direction == 1)
                    outputs.append(out)
                    finals.append((hy, cy))
                    continue
                state = tuple(s[k] for s in states)
                state = state[0] if len(state) == 1 else state
                x_proj = F.linear(layer_input, w_ih, b_ih).unbind(0)
                order = range(len(x_proj)) if direction == 0 else range(len(x_proj) - 1, -1, -1)
                steps = [None] * len(x_proj)
                for t in order:
                    state = step(x_proj[t], state, w_hh, b_hh)
                    steps[t] = state[0] if isinstance(state, tuple) else state
                if not steps:
                    raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
                outputs.append(stack(steps, 0))
                finals.append(state if isinstance(state, tuple) else (state,))
            layer_input = outputs[0] if len(outputs) == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        output = layer_input.transpose(0, 1) if self.batch_first else layer_input
        return output, [stack([f[i] for f in finals], 0) for i in range(len(finals[0]))]

    def _fused(self, input):
        """torch's use_mkldnn (aten's RNN.cpp): on CPU a float32 LSTM with a non-empty input
        runs each layer and direction as one oneDNN call, mkldnn_rnn_layer, whose node is
        MkldnnRnnLayerBackward0 (float64, RNN and GRU are composed of the step ops)."""
        return self.mode == "LSTM" and input.dtype == _dtype.float32 and input.numel() > 0

    def _fused_layer(self, layer_input, w_ih, w_hh, b_ih, b_hh, states, k, reverse):
        """(output, hy, cy) of layer-and-direction k by mkldnn_rnn_layer, as torch's
        mkldnn_impl calls it: the initial states are hx[k] and cx[k] (SelectBackward0), the
        biases zeros when the layer has none."""
        if b_ih is None:
            # torch's stand-ins, shaped as the weights (its _saved_weight2 and 3); aten's
            # zeros_like is empty_like(...).zero_(), so their _version is 1
            b_ih, b_hh = _creation.empty_like(w_ih).zero_(), _creation.empty_like(w_hh).zero_()
        return _ops.mkldnn_rnn_layer(layer_input, w_ih, w_hh, b_ih, b_hh, states[0][k],
                                     states[1][k], reverse, [], 2, self.hidden_size,
                                     self.num_layers, self.bias, self.bidirectional,
                                     self.batch_first, self.training)


class RNN(RNNBase):
    """An Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu), layer by
    layer; returns (output, h_n).

    >>> import gradviz as torch
    >>> torch.nn.RNN(10, 20, 2)
    RNN(10, 20, num_layers=2)
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)

    def forward(self, input, hx=None):
        self._check_input(input)
        input, is_batched = self._batched(input)
        if hx is not None:
            if not is_batched and hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                   f"{hx.dim()}-D tensor")
            if is_batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
            if not is_batched:
                hx = hx.unsqueeze(1)
        expected = self._expected_hidden(input)
        if hx is None:
            hx = _creation.zeros(tuple(expected), dtype=input.dtype)
        self._check_hidden(hx, expected)
        output, (h_n,) = self._run(input, [hx.unbind(0)])
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            h_n = h_n.squeeze(1)
        return output, h_n


class GRU(RNN):
    """A gated recurrent unit layer (torch's gate order r, z, n); returns (output, h_n).

    >>> import gradviz as torch
    >>> torch.nn.GRU(10, 20, batch_first=True)
    GRU(10, 20, batch_first=True)
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        RNNBase.__init__(self, "GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    """A long short-term memory layer (torch's gate order i, f, g, o); returns
    (output, (h_n, c_n)).

    >>> import gradviz as torch
    >>> torch.nn.LSTM(10, 20, bidirectional=True)
    LSTM(10, 20, bidirectional=True)
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)

    def forward(self, input, hx=None):
        self._check_input(input)
        input, is_batched = self._batched(input)
        if hx is not None:
            dims = (hx[0].dim(), hx[1].dim())
            if not is_batched and dims != (2, 2):
                raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but "
                                   f"got ({dims[0]}-D, {dims[1]}-D) tensors")
            if is_batched and dims != (3, 3):
                raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but "
                                   f"got ({dims[0]}-D, {dims[1]}-D) tensors")
            if not is_batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        expected = self._expected_hidden(input)
        if hx is None:
            zeros = _creation.zeros(tuple(expected), dtype=input.dtype)
            hx = (zeros, zeros)
        self._check_hidden(hx[0], expected, "Expected hidden[0] size {}, got {}")
        self._check_hidden(hx[1], expected, "Expected hidden[1] size {}, got {}")
        if self._fused(input):
            states = [hx[0], hx[1]]     # hx[0][k]: torch's select of each layer's state
        else:
            states = [hx[0].unbind(0), hx[1].unbind(0)]
        output, (h_n, c_n) = self._run(input, states)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


# ----- Cells --------------------------------------------------------------------------------

class RNNCellBase(Module):
    """What RNNCell, LSTMCell and GRUCell share: torch's parameters and input checks."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_creation.empty(num_chunks * hidden_size, input_size,
                                                   dtype=dtype, device=device))
        self.weight_hh = Parameter(_creation.empty(num_chunks * hidden_size, hidden_size,
                                                   dtype=dtype, device=device))
        for name in ("bias_ih", "bias_hh"):
            if bias:
                setattr(self, name, Parameter(_creation.empty(num_chunks * hidden_size,
                                                              dtype=dtype, device=device)))
            else:
                self.register_parameter(name, None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_uniform(self)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batched(self, input, hx):
        """(input, hx, is_batched) with a batch dim of 1 added to unbatched input; torch's
        checks of the dims and sizes."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        for h in (hx if isinstance(hx, tuple) else (hx,)):
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.dim()}D "
                                 "instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        return input, is_batched

    def _state(self, h, input, is_batched, index):
        """The state h (zeros when None) with the batch dim, checked as torch checks it."""
        if h is None:
            return _creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        if not is_batched:
            h = h.unsqueeze(0)
        if input.size(0) != h.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{index} "
                               f"batch size {h.size(0)}")
        if h.size(1) != self.hidden_size:
            raise RuntimeError(f"hidden{index} has inconsistent hidden_size: got {h.size(1)}, "
                               f"expected {self.hidden_size}")
        return h

    def _input_projection(self, input):
        return F.linear(input, self.weight_ih, self.bias_ih)


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu).

    >>> import gradviz as torch
    >>> torch.nn.RNNCell(10, 20, nonlinearity="relu")
    RNNCell(10, 20, nonlinearity=relu)
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, is_batched = self._batched(input, hx)
        hx = self._state(hx, input, is_batched, "0")
        if self.nonlinearity == "tanh":
            step = _tanh_step
        elif self.nonlinearity == "relu":
            step = _relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = step(self._input_projection(input), hx, self.weight_hh, self.bias_hh)
        return h if is_batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h', c') from input and (h, c).

    >>> import gradviz as torch
    >>> torch.nn.LSTMCell(10, 20)
    LSTMCell(10, 20)
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        input, is_batched = self._batched(input, hx)
        if hx is None:
            hx = (None, None)
        hc = (self._state(hx[0], input, is_batched, "0"),
              self._state(hx[1], input, is_batched, "1"))
        h, c = _lstm_step(self._input_projection(input), hc, self.weight_hh, self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: h' from input and h.

    >>> import gradviz as torch
    >>> torch.nn.GRUCell(10, 20)
    GRUCell(10, 20)
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, is_batched = self._batched(input, hx)
        hx = self._state(hx, input, is_batched, "0")
        h = _gru_step(self._input_projection(input), hx, self.weight_hh, self.bias_hh)
        return h if is_batched else h.squeeze(0)
