"""Autograd against a hand-derived derivative: y = x**2 * exp(x).

Seed note 001. dy/dx = 2x e^x + x^2 e^x. The root y is not a scalar, so
backward needs a gradient argument: y.backward(torch.ones(y.size())) gives,
element by element, dy_i/dx_i (the vector-Jacobian product with ones).

Expect, for x = [-2, -1, 0, 1, 2]:
    y        = [0.5413, 0.3679, 0.0000, 2.7183, 29.5562]   grad_fn MulBackward0
    x.grad   = [0.0000, -0.3679, 0.0000, 8.1548, 59.1124]
    expected = grad_f(x), the same numbers (made under no_grad, so no graph)
    max |x.grad - expected| is 0 or a float32 rounding error (< 1e-5)

Run:
    gradviz run examples/manual_derivative_x2_exp.py
    gradviz gradcheck examples/manual_derivative_x2_exp.py --root y
        (central finite differences in float64: the same check, for any file)
This file calls y.backward(...) itself: do not pass --backward.
"""
import gradviz as torch


def f(x):
    return x ** 2 * torch.exp(x)


def grad_f(x):
    return 2 * x * torch.exp(x) + f(x)     # 2x e^x + x^2 e^x


x = torch.tensor([-2.0, -1.0, 0.0, 1.0, 2.0], requires_grad=True)
y = f(x)
y.backward(torch.ones(y.size()))

with torch.no_grad():
    expected = grad_f(x)

print(y)
print(x.grad)
print(expected)
print("max abs difference < 1e-5:", (x.grad - expected).abs().max().item() < 1e-5)   # True
