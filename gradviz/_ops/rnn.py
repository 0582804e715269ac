"""The fused LSTM layer of torch's CPU path: mkldnn_rnn_layer (MkldnnRnnLayerBackward0).

On CPU, torch runs a float32 nn.LSTM through oneDNN: each layer and direction is one
mkldnn_rnn_layer call, whose node has the inputs (input, weight0..3, hx_, cx_) and the
outputs (output, hy, cy, workspace). The values here are the ones of the step-by-step
composition in gradviz.nn.rnn (aten's RNN.cpp order), computed without recording; the node's
backward is the LSTM's backpropagation through time (gradviz._derivatives.lstm_layer_grads).
torch's workspace (output 3, `_saved_result3`: oneDNN's private buffer) has no counterpart.
"""

from .._derivatives import DERIVATIVES as D
from .._registry import records
from ..autograd.formula import record_outputs
from ..autograd.grad_mode import no_grad
from ._common import _needs


@records("mkldnn_rnn_layer")
def mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes,
                     mode, hidden_size, num_layers, has_biases, bidirectional, batch_first,
                     train):
    """One LSTM layer over time-major input (T, B, I) from (hx_, cx_), both (B, H):
    (output (T, B, H), hy, cy). weight2 and weight3 are the biases (zeros when the
    layer has none)."""
    from ..nn.rnn import _lstm_step
    from ..nn import functional as F
    with no_grad():
        x_proj = F.linear(input, weight0, weight2 if has_biases else None).unbind(0)
        state = (hx_, cx_)
        steps = [None] * len(x_proj)
        order = range(len(x_proj) - 1, -1, -1) if reverse else range(len(x_proj))
        for t in order:
            state = _lstm_step(x_proj[t], state, weight1, weight3 if has_biases else None)
            steps[t] = state[0]
        if not steps:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        from .views import stack
        output = stack(steps, 0)
        # fresh outputs, version 0 as torch's (cy was made by an in-place add_)
        hy, cy = state[0], state[1].clone()
    if _needs(input, weight0, weight1, weight2, weight3, hx_, cx_):
        record_outputs(D["mkldnn_rnn_layer"], [output, hy, cy],
                       (input, weight0, weight1, weight2, weight3, hx_, cx_),
                       (input, weight0, weight1, weight2, weight3, hx_, cx_, reverse,
                        tuple(batch_sizes), mode, hidden_size, num_layers, has_biases,
                        bidirectional, batch_first, train, output, hy, cy))
    return output, hy, cy
