"""A character-level LSTM language model, written the way char-RNN tutorials write it.

A short text is read one character at a time: nn.Embedding(vocab, 16) -> nn.LSTM(16, 32,
batch_first=True) -> nn.Linear(32, vocab) predicts the next character at every position of
8 random windows of 12 characters. Cross entropy, Adam (lr=0.01), and
nn.utils.clip_grad_norm_(..., 0.3) before each step, for 30 steps; then 40 characters are
sampled with torch.multinomial, feeding the LSTM's (h, c) state back in one character at a
time. torch.manual_seed(0) fixes the windows, the weights and the samples, and gradviz draws
the same numbers as PyTorch: the LSTM's weights are PyTorch's bit for bit.

Expect: exactly what PyTorch 2.13 prints: 7723 parameters; the loss falls from 3.2589 at
step 0 (about log(27) = 3.2958: the predictions start near uniform) to 1.7461 at step 29;
the gradient norm clip_grad_norm_ returns (before clipping) is above 0.3 from step 10 on, so
those steps are scaled down to 0.3; and the sample is 'th ee lj cu f ue dun cn jtheywh foc
wrur ' on both (30 steps of a small LSTM do not spell yet).

What the inspector shows after the run: model.rnn.weight_ih_l0 [128, 16] and
model.rnn.weight_hh_l0 [128, 32] (4 gates of 32 stacked, in torch's order i, f, g, o), every
parameter at _version 31 (its initialisation, then 30 Adam updates in place); loss from the
last step (NllLossBackward0, 1.7461) and norm (0.3014); state[0] and state[1] [1, 1, 32], the
(h, c) of the sampling loop, made under no_grad. The graph of loss shows each LSTM step
composed of ops (SigmoidBackward0, TanhBackward0, MulBackward0, ...), where PyTorch records
one fused MkldnnRnnLayerBackward0.

Run:
    gradviz run examples/char_rnn_lstm.py
    gradviz graph examples/char_rnn_lstm.py --root loss --svg char_rnn.svg
This file calls loss.backward() itself in the loop: do not pass --backward.
"""
import gradviz as torch
from gradviz import nn
import gradviz.nn.functional as F

text = ("the quick brown fox jumps over the lazy dog while the small cat sleeps in the warm "
        "sun and the birds sing in the tall trees by the quiet river ")
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for ch, i in stoi.items()}
data = torch.tensor([stoi[ch] for ch in text])
vocab_size = len(chars)


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, embed=16, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed)
        self.rnn = nn.LSTM(embed, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, x, state=None):
        out, state = self.rnn(self.embed(x), state)
        return self.head(out), state


torch.manual_seed(0)
model = CharLSTM(vocab_size)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
print("vocabulary:", vocab_size, "characters;", sum(p.numel() for p in model.parameters()),
      "parameters")

for step in range(30):
    starts = torch.randint(0, len(data) - 13, (8,))
    windows = torch.stack([data[s:s + 13] for s in starts.tolist()])
    x, y = windows[:, :-1], windows[:, 1:]
    logits, _ = model(x)
    loss = F.cross_entropy(logits.reshape(-1, vocab_size), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 0.3)
    optimizer.step()
    if step % 5 == 0 or step == 29:
        print(f"step {step:2d}: loss {loss.item():.4f}, grad norm {norm.item():.4f}")

with torch.no_grad():
    ix = torch.tensor([[stoi["t"]]])
    state = None
    sample = "t"
    for _ in range(40):
        logits, state = model(ix, state)
        probs = F.softmax(logits[0, -1], dim=0)
        ix = torch.multinomial(probs, num_samples=1).view(1, 1)
        sample += itos[ix.item()]
print("sample:", repr(sample))
