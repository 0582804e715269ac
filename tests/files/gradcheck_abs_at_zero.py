import torch

x = torch.tensor([0.0, -2.0], requires_grad=True)
y = x.abs().sum()
