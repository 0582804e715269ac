"""A training loop with Adam, a learning-rate schedule and a DataLoader.

The usual shape of a PyTorch training script: a TensorDataset of 64 points
of y = x^3 - x (plus a little noise) on [-2, 2], a DataLoader that shuffles
them into batches of 16, a small MLP (Linear(1, 32) -> Tanh -> Linear(32, 1)),
nn.MSELoss, torch.optim.Adam (lr 0.2) and StepLR halving the learning rate
every 4 epochs; 12 epochs of 4 steps each. torch.manual_seed(0) fixes the
noise, the initial weights and the shuffled order: gradviz draws them as
PyTorch does, and Adam's update is PyTorch's, so the printed numbers are
PyTorch 2.13's:

    epoch  2  loss 2.3583  lr 0.20000
    epoch  4  loss 1.3768  lr 0.10000
    ...
    epoch 12  loss 0.3636  lr 0.02500
    Adam steps per parameter: 48; state keys: ['step', 'exp_avg', 'exp_avg_sq']

What to look at: the loss falls while the learning rate halves at epochs
4, 8 and 12; model.0.weight and the other parameters have _version 49
(filled once by their initialisation, then updated in place by 48 Adam
steps); the optimizer's state tensors have PyTorch's names and versions
(state['step'] 48, state['exp_avg'] 48, state['exp_avg_sq'] 96: mul_ then
addcmul_ at each step).

Run:
    gradviz run examples/adam_scheduler_training.py
    gradviz graph examples/adam_scheduler_training.py --root loss --svg adam.svg
This file calls loss.backward() itself in the loop: do not pass --backward.
"""
import gradviz as torch
from gradviz import nn
from gradviz.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

X = torch.linspace(-2, 2, 64).unsqueeze(1)
Y = X ** 3 - X + 0.1 * torch.randn(64, 1)
dataset = TensorDataset(X, Y)
loader = DataLoader(dataset, batch_size=16, shuffle=True)

model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.2)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)

for epoch in range(1, 13):
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(xb)
    scheduler.step()
    if epoch % 2 == 0:
        print(f"epoch {epoch:2d}  loss {total / len(dataset):.4f}  "
              f"lr {scheduler.get_last_lr()[0]:.5f}")

state = optimizer.state_dict()["state"][0]
print(f"Adam steps per parameter: {int(state['step'])}; state keys: {list(state)}")
