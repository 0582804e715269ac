import torch

w = torch.tensor(0.5, requires_grad=True)
h = torch.tensor(1.0)
hs = []
for i in range(3):
    h = torch.tanh(w * h)
    h.retain_grad()
    hs.append(h)
loss = h.sum()
loss.backward(retain_graph=True)
