import gradviz as torch

a = torch.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
c = b + 1
b.add_(1)
loss = c.sum()
