"""d2l.ai's lazy layers: the optimizer is made before the first batch, and a saved model is
loaded into a new lazy one (the "Lazy Initialization" and "File I/O" sections).

`net` is built from nn.LazyLinear layers: until it sees data, its parameters are torch's
`<UninitializedParameter>` (no shape, nothing drawn). d2l's Trainer calls
`configure_optimizers()` (here `torch.optim.SGD(net.parameters(), ...)`) before the first
batch; the first call then reads the input size and materializes the very parameter objects
the optimizer holds, so training moves them. After training, `net.state_dict()` is saved with
torch.save and loaded into `clone`, another lazy model: load_state_dict gives its parameters
the saved shapes, and clone(X) == net(X).

Expect: exactly what PyTorch 2.13 prints: `<UninitializedParameter>` twice, `SGD` holding the
same objects as the model (True), the loss 2.4184 at step 0 falling to 1.4358 at step 9,
weight shapes [16, 20] and [10, 16], `clone` printed as LazyLinear(in_features=0, ...) (torch
keeps the lazy class until the first call) and the clone's output equal to net's (True).

What to look at: `net.0.weight` is a leaf Parameter with _version 11 (its initialisation at
the first call, then one SGD step each);
`loss` is NllLossBackward0 over LogSoftmaxBackward0.

Run:
    gradviz run examples/lazy_model_optimizer.py
This file calls loss.backward() itself in its loop: do not pass --backward.
"""
import os
import tempfile

import gradviz as torch
from gradviz import nn
from gradviz.nn import functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.LazyLinear(16)
        self.output = nn.LazyLinear(10)

    def forward(self, x):
        return self.output(F.relu(self.hidden(x)))


torch.manual_seed(0)
net = nn.Sequential(nn.LazyLinear(16), nn.ReLU(), nn.LazyLinear(10))
print(net[0].weight)
print(net[2].bias)

optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
print(optimizer.param_groups[0]["params"][0] is net[0].weight)

X = torch.rand(8, 20)
y = torch.randint(0, 10, (8,))
for step in range(10):
    loss = F.cross_entropy(net(X), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step in (0, 9):
        print(f"step {step}: loss {loss.item():.4f}")
print(net[0].weight.shape, net[2].weight.shape, net)

model = MLP()
model(X)
path = os.path.join(tempfile.mkdtemp(), "mlp.params")
torch.save(model.state_dict(), path)
clone = MLP()
print(clone.load_state_dict(torch.load(path)))
print(clone.eval())
Y_clone = clone(X)
print(bool((Y_clone == model(X)).all()), clone.hidden)
