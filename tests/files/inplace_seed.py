import gradviz as torch

a = torch.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
loss = (b * b).mean()
b[0] = 1000.0
