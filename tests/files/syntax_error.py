import gradviz as torch

x = torch.ones(2, requires_grad=True
y = x * 2
