import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
a = x * x
b = (a * 3).sum()
c = (a * 4).sum()
b.backward()
