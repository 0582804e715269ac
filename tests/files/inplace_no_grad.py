import gradviz as torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a * 1
loss = (b * b).sum()
with torch.no_grad():
    b.add_(1)
