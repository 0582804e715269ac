import gradviz as torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
x = torch.tensor([3.0, 4.0])
loss = (w * w).sum()
loss.backward()
with torch.no_grad():
    w -= 0.1 * w.grad
pending = (w * w).sum()
with torch.no_grad():
    w.mul_(2)
