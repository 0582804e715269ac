import torch

x = torch.tensor(0.0, requires_grad=True)
if x > 0:
    y = x * 2
else:
    y = x * 3
