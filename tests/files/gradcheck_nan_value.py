import torch

x = torch.tensor([-1.0, 4.0], requires_grad=True)
y = x.sqrt().sum()
