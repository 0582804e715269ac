import torch

y = (torch.ones(2, requires_grad=True) * 2).sum()
