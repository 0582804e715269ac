import torch

x = torch.tensor([0.0, 1.0], requires_grad=True)
y = torch.relu(x).sum()
