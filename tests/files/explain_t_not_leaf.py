import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 3
loss = (h * h).sum()
loss.backward(retain_graph=True)
