import gradviz as torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * 1
c = b.sin()
v = b[1:]
v.mul_(2)
