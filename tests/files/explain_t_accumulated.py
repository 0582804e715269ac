import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
h = w * 3
h.retain_grad()
loss = (h * h).sum()
loss.backward(retain_graph=True)
loss.backward(retain_graph=True)
loss.backward(retain_graph=True)
