import gradviz as torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a.sigmoid()
d = b.detach()
d.zero_()
