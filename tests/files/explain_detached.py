import gradviz as torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
h = (w * 2).detach()
d = w.data
loss = (h * w).sum()
