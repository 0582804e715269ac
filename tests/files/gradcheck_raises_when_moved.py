import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
if x[0].item() > 1.0:
    raise ValueError("x[0] must be at most 1")
y = (x * x).sum()
