import gradviz as torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 2
p = (h * h).sum()
q = (h + 1).sum()
h.add_(1)
