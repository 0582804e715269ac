# d2l.ai's Modern Recurrent Neural Networks (PyTorch tab, d2l 1.0 style), on random token
# sequences: an RNN from scratch with nn.Parameter(torch.randn(*shape) * sigma) and
# tanh(torch.matmul(...)), a StackedRNNScratch (deep RNN) built of those cells, a
# BiRNNScratch running one cell over reversed(inputs) and joining with torch.cat, the concise
# nn.GRU(num_layers=2) and nn.LSTM(bidirectional=True) with their output/state shapes, an
# RNNLM-style output layer trained with gradient clipping via the parameters' grad norm.
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class RNNScratch(nn.Module):  #@save
    """The RNN model implemented from scratch."""
    def __init__(self, num_inputs, num_hiddens, sigma=0.01):
        super().__init__()
        self.num_inputs, self.num_hiddens, self.sigma = num_inputs, num_hiddens, sigma
        self.W_xh = nn.Parameter(
            torch.randn(num_inputs, num_hiddens) * sigma)
        self.W_hh = nn.Parameter(
            torch.randn(num_hiddens, num_hiddens) * sigma)
        self.b_h = nn.Parameter(torch.zeros(num_hiddens))

    def forward(self, inputs, state=None):
        if state is None:
            # Initial state with shape: (batch_size, num_hiddens)
            state = torch.zeros((inputs.shape[1], self.num_hiddens),
                                device=inputs.device)
        else:
            state, = state
        outputs = []
        for X in inputs:  # Shape of inputs: (num_steps, batch_size, num_inputs)
            state = torch.tanh(torch.matmul(X, self.W_xh) +
                               torch.matmul(state, self.W_hh) + self.b_h)
            outputs.append(state)
        return outputs, state


batch_size, num_inputs, num_hiddens, num_steps = 2, 16, 32, 100
rnn = RNNScratch(num_inputs, num_hiddens)
X = torch.ones((num_steps, batch_size, num_inputs))
outputs, state = rnn(X)


def check_len(a, n):  #@save
    """Check the length of a list."""
    assert len(a) == n, f'list\'s length {len(a)} != expected length {n}'


def check_shape(a, shape):  #@save
    """Check the shape of a tensor."""
    assert a.shape == shape, \
            f'tensor\'s shape {a.shape} != expected shape {shape}'


check_len(outputs, num_steps)
check_shape(outputs[0], (batch_size, num_hiddens))
check_shape(state, (batch_size, num_hiddens))
print(len(outputs), outputs[0].shape, state.shape)


class StackedRNNScratch(nn.Module):
    def __init__(self, num_inputs, num_hiddens, num_layers, sigma=0.01):
        super().__init__()
        self.num_inputs, self.num_hiddens, self.num_layers, self.sigma = (
            num_inputs, num_hiddens, num_layers, sigma)
        self.rnns = nn.Sequential(*[RNNScratch(
            num_inputs if i == 0 else num_hiddens, num_hiddens, sigma)
                                    for i in range(num_layers)])

    def forward(self, inputs, Hs=None):
        outputs = inputs
        if Hs is None:
            Hs = [None] * self.num_layers
        for i in range(self.num_layers):
            outputs, Hs[i] = self.rnns[i](outputs, Hs[i])
            outputs = torch.stack(outputs, 0)
        return outputs, Hs


deep = StackedRNNScratch(num_inputs, num_hiddens, num_layers=2)
outputs, Hs = deep(torch.randn(5, batch_size, num_inputs))
print(outputs.shape, [H.shape for H in Hs], outputs.grad_fn)


class BiRNNScratch(nn.Module):
    def __init__(self, num_inputs, num_hiddens, sigma=0.01):
        super().__init__()
        self.num_inputs, self.num_hiddens, self.sigma = num_inputs, num_hiddens, sigma
        self.f_rnn = RNNScratch(num_inputs, num_hiddens, sigma)
        self.b_rnn = RNNScratch(num_inputs, num_hiddens, sigma)
        self.num_hiddens *= 2  # The output dimension will be doubled

    def forward(self, inputs, Hs=None):
        f_H, b_H = Hs if Hs is not None else (None, None)
        f_outputs, f_H = self.f_rnn(inputs, f_H)
        b_outputs, b_H = self.b_rnn(reversed(inputs), b_H)
        outputs = [torch.cat((f, b), -1) for f, b in zip(
            f_outputs, reversed(b_outputs))]
        return outputs, (f_H, b_H)


bi = BiRNNScratch(num_inputs, 8)
outputs, (f_H, b_H) = bi(torch.randn(4, batch_size, num_inputs))
print(len(outputs), outputs[0].shape, f_H.shape, b_H.shape)
print(outputs[-1][0, :4], outputs[0][0, 8:12])

gru = nn.GRU(num_inputs, num_hiddens, num_layers=2, dropout=0.1)
out, state = gru(torch.randn(6, batch_size, num_inputs))
print(out.shape, state.shape, out.grad_fn)
lstm = nn.LSTM(num_inputs, 8, bidirectional=True)
out, (H, C) = lstm(torch.randn(6, batch_size, num_inputs))
print(out.shape, H.shape, C.shape)
print(gru)
print(lstm)
print([name for name, _ in lstm.named_parameters()])


class RNNLM(nn.Module):
    def __init__(self, rnn, vocab_size):
        super().__init__()
        self.rnn, self.vocab_size = rnn, vocab_size
        self.linear = nn.LazyLinear(vocab_size)

    def one_hot(self, X):
        # Output shape: (num_steps, batch_size, vocab_size)
        return F.one_hot(X.T, self.vocab_size).type(torch.float32)

    def output_layer(self, hiddens):
        return self.linear(hiddens).swapaxes(0, 1)

    def forward(self, X, state=None):
        embs = self.one_hot(X)
        rnn_outputs, _ = self.rnn(embs, state)
        return self.output_layer(rnn_outputs)


def clip_gradients(grad_clip_val, model):
    params = [p for p in model.parameters() if p.requires_grad]
    norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
    if norm > grad_clip_val:
        for param in params:
            param.grad[:] *= grad_clip_val / norm
    return norm


vocab_size = 12
model = RNNLM(nn.GRU(vocab_size, 16, num_layers=2), vocab_size)
tokens = torch.randint(0, vocab_size, (4, 9))
X, Y = tokens[:, :-1], tokens[:, 1:]
optimizer = torch.optim.SGD(model.parameters(), lr=1)
for epoch in range(4):
    Y_hat = model(X)
    l = F.cross_entropy(Y_hat.reshape(-1, vocab_size), Y.reshape(-1))
    optimizer.zero_grad()
    l.backward()
    with torch.no_grad():
        norm = clip_gradients(1, model)
    optimizer.step()
    print(f'epoch {epoch}, loss {l:.3f}, grad norm {norm:.3f}')
print(Y_hat.shape, Y_hat.grad_fn)
