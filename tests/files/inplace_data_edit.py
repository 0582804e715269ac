import gradviz as torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a * 1
loss = (b * b).sum()
b.data.mul_(10)
