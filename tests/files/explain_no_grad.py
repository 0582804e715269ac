import gradviz as torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    h = w * 2
loss = (h * w).sum()
