"""LeNet with lazy layers, as d2l.ai's CNN chapter writes it.

`nn.LazyConv2d(6, kernel_size=5, padding=2)` and `nn.LazyLinear(120)` leave the input size
open: the first forward reads it (1 channel, then 16 * 5 * 5 = 400 features), creates the
weights and draws them as PyTorch does, and the layers become Conv2d and Linear. Sigmoid
activations and AvgPool2d(2, stride=2), as in LeCun's network; the device comes from
torch.accelerator (the CPU here). Data: 16 random 1x28x28 "images" with labels out of 10.

Numbers to expect (PyTorch 2.13's, draw for draw after torch.manual_seed(0)): the layer shapes
after the dry run (Conv2d output [16, 6, 28, 28], ..., Linear output [16, 10]), then the loss
of 4 SGD steps (lr=0.9): 2.4170, 2.5789, 3.2594, 2.4019 (lr 0.9 is large for random labels).

What the inspector shows: net.0.weight [6, 1, 5, 5], net.7.weight [120, 400] (net.7 is the
first LazyLinear, now a Linear); loss (NllLossBackward0) whose graph runs back through
AddmmBackward0, SigmoidBackward0, AvgPool2DBackward0 and ConvolutionBackward0.

Run:
    gradviz run examples/lazy_lenet.py
    gradviz graph examples/lazy_lenet.py --root loss --svg lenet.svg
This file calls loss.backward() itself: do not pass --backward.
"""
import gradviz as torch
from gradviz import nn

use_accel = torch.accelerator.is_available()
device = torch.accelerator.current_accelerator().type if use_accel else "cpu"
torch.manual_seed(0)

net = nn.Sequential(
    nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.LazyConv2d(16, kernel_size=5), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Flatten(),
    nn.LazyLinear(120), nn.Sigmoid(),
    nn.LazyLinear(84), nn.Sigmoid(),
    nn.LazyLinear(10)).to(device)

X = torch.randn(16, 1, 28, 28, device=device)
y = torch.randint(0, 10, (16,), device=device)

with torch.no_grad():        # a dry run: only the shapes (and the lazy sizes) matter
    out = X
    for layer in net:
        out = layer(out)
        print(layer.__class__.__name__, "output shape:\t", out.shape)

optimizer = torch.optim.SGD(net.parameters(), lr=0.9)
loss_fn = nn.CrossEntropyLoss()
for step in range(4):
    optimizer.zero_grad()
    loss = loss_fn(net(X), y)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
