import torch
a = torch.ones(2, requires_grad=True)
b = a + 1
b[0] = 1000
b.mul_(2)
with torch.no_grad():
    b.add_(1)
c = (b * 2).sum()
c.backward()
