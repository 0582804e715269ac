# A training loop updating w and b through .data: moving them as made moves every step, so
# finite differences do not measure the gradient backward computed (it said "mismatch").
import gradviz as torch
torch.manual_seed(0)
x = torch.randn(8)
y = 3 * x + 1
w = torch.randn(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for i in range(20):
    loss = ((w * x + b - y) ** 2).mean()
    loss.backward()
    w.data -= 0.05 * w.grad
    b.data -= 0.05 * b.grad
    w.grad.zero_()
    b.grad.zero_()
