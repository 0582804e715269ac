import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
e = x.exp()
e.add_(1)
y = e.sum()
