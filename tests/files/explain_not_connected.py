import gradviz as torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
p = (a * 2).sum()
q = (b * 3).sum()
r = q * 2
