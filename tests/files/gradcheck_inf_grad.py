import torch

x = torch.tensor([0.0, 4.0], requires_grad=True)
y = x.sqrt().sum()
