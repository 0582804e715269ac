"""Saving and loading a checkpoint: a model's and an optimizer's state, torch.save / torch.load.

The way PyTorch's "Saving and loading models" tutorial writes it: train a small
MLP (Linear(2, 16) -> ReLU -> Linear(16, 1)) with Adam for 20 epochs on a fixed
batch, save a dict holding the epoch, model.state_dict(), optimizer.state_dict()
and the loss, then build a new model and optimizer, load the checkpoint into
them and train both copies 10 more epochs, side by side. torch.manual_seed(0)
fixes the data and the weights; the file is PyTorch's own zip format, so a
checkpoint written by gradviz loads in PyTorch and the other way round. The
printed numbers are PyTorch 2.13's:

    saved at epoch 20, loss 0.0399
    state_dict keys: ['0.weight', '0.bias', '2.weight', '2.bias']
    optimizer state: step 20.0, keys ['step', 'exp_avg', 'exp_avg_sq']; lr 0.05
    loaded: same weights True, same Adam state True
    epoch 25: original 0.0255, restored 0.0255
    epoch 30: original 0.0181, restored 0.0181

What to look at: the restored copy goes on exactly as the original (the same
losses), because the optimizer's state (Adam's exp_avg and exp_avg_sq, and the
lr 0.05 that replaces the new optimizer's 0.01) came back with the checkpoint.
A loaded tensor has _version 1, as in torch (torch.load rebuilds it in place);
new_model.0.weight has _version 12 (filled by its initialisation, copied into
by load_state_dict, then 10 Adam steps); checkpoint['loss'] is a leaf (a saved
tensor keeps no graph).

Run:
    gradviz run examples/save_load_checkpoint.py
This file calls loss.backward() itself in the loop: do not pass --backward.
"""
import os
import tempfile

import gradviz as torch
from gradviz import nn

torch.manual_seed(0)

X = torch.randn(32, 2)
Y = (X[:, :1] * X[:, 1:]).tanh()
loss_fn = nn.MSELoss()

model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(20):
    optimizer.zero_grad()
    loss = loss_fn(model(X), Y)
    loss.backward()
    optimizer.step()

PATH = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
torch.save({
    "epoch": epoch + 1,
    "model_state_dict": model.state_dict(),
    "optimizer_state_dict": optimizer.state_dict(),
    "loss": loss,
}, PATH)
print(f"saved at epoch {epoch + 1}, loss {loss.item():.4f}")

new_model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
new_optimizer = torch.optim.Adam(new_model.parameters(), lr=0.01)
checkpoint = torch.load(PATH)
new_model.load_state_dict(checkpoint["model_state_dict"])
new_optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
new_model.train()

state = new_optimizer.state_dict()
print(f"state_dict keys: {list(checkpoint['model_state_dict'])}")
print(f"optimizer state: step {state['state'][0]['step'].item()}, keys "
      f"{list(state['state'][0])}; lr {state['param_groups'][0]['lr']}")
same_weights = all(torch.equal(a, b) for a, b in zip(model.parameters(),
                                                     new_model.parameters()))
same_state = all(torch.equal(optimizer.state[p][key], new_optimizer.state[q][key])
                 for p, q in zip(model.parameters(), new_model.parameters())
                 for key in ("exp_avg", "exp_avg_sq"))
print(f"loaded: same weights {same_weights}, same Adam state {same_state}")

# both copies go on from the checkpoint, epoch for epoch
for epoch in range(checkpoint["epoch"], checkpoint["epoch"] + 10):
    losses = []
    for net, opt in ((model, optimizer), (new_model, new_optimizer)):
        opt.zero_grad()
        loss = loss_fn(net(X), Y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if (epoch + 1) % 5 == 0:
        print(f"epoch {epoch + 1}: original {losses[0]:.4f}, restored {losses[1]:.4f}")
os.remove(PATH)
