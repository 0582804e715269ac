import gradviz as torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
w.add_(1)
