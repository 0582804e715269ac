import gradviz as torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
x = torch.tensor([3.0, 4.0])
x2 = x * 2
loss = (w * x2).sum()
