import torch
x = torch.zeros(0, requires_grad=True)
w = torch.tensor([1.0], requires_grad=True)
y = x.sum() + (w * 2).sum()
