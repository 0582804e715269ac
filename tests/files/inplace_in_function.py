import gradviz as torch


def scale(t):
    t.mul_(3)
    return t


x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x.exp()
y = scale(h)
