import gradviz as torch

w = torch.tensor([1.0, 2.0], requires_grad=True)


def double(grad):
    return grad * 2


handle = w.register_hook(double)
loss = (w * 3).sum()
loss.backward()
