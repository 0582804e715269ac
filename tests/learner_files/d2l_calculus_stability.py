# d2l.ai: Calculus (the numerical limit of f(x) = 3x^2 - 4x, the tangent's values) and
# Numerical Stability and Initialization (sigmoid's vanishing gradient, the product of 100
# random matrices). Plots are replaced by printed values.
import numpy as np
import torch

torch.manual_seed(0)


def f(x):
    return 3 * x ** 2 - 4 * x


for h in 10.0**np.arange(-1, -6, -1):
    print(f'h={h:.5f}, numerical limit={(f(1+h)-f(1))/h:.5f}')

x = np.arange(0, 3, 0.1)
print(f(x)[:5], (2 * x - 3)[:5])

xt = torch.tensor(x, requires_grad=True)
f(xt).sum().backward()
print(xt.grad[:5], xt.grad.dtype)

x = torch.arange(-8.0, 8.0, 0.1, requires_grad=True)
y = torch.sigmoid(x)
y.backward(torch.ones_like(x))
print(x.grad.max(), x.grad.argmax(), x.grad[::20])
print(x.detach().numpy()[:3], y.detach().numpy()[-3:], x.grad.numpy()[78:82])

M = torch.normal(0, 1, size=(4, 4))
print('a single matrix \n', M)
for i in range(100):
    M = M @ torch.normal(0, 1, size=(4, 4))
print('after multiplying 100 matrices\n', M)
