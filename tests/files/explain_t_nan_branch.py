import torch

x = torch.tensor([0.0, 4.0], requires_grad=True)
a = x * 2
b = x.sqrt()
loss = (a + b).sum()
loss.backward()
