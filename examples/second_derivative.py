"""A second derivative with create_graph=True.

y = x**3 at x = 4. torch.autograd.grad(y, x, create_graph=True) returns
dy/dx = 3x^2 = 48 as a tensor that is itself part of a graph (it has a
grad_fn), so it can be differentiated again: d2y/dx2 = 6x = 24.
Without create_graph the first derivative would be a plain constant.

    y       = tensor(64., grad_fn=<PowBackward0>)
    dy_dx   = tensor(48., grad_fn=<MulBackward0>)    (the backward of pow, recorded)
    d2y_dx2 = tensor(24.)                             (no create_graph: no grad_fn)
    x.grad stays None: autograd.grad returns gradients instead of storing them.

Run:
    gradviz run examples/second_derivative.py
    gradviz graph examples/second_derivative.py --root dy_dx --svg dydx.svg
        (the graph of the derivative: the ops that computed 3 * x**2)
This file calls autograd.grad itself: do not pass --backward.
"""
import gradviz as torch

x = torch.tensor(4.0, requires_grad=True)
y = x ** 3

(dy_dx,) = torch.autograd.grad(y, x, create_graph=True)
(d2y_dx2,) = torch.autograd.grad(dy_dx, x)

print(y)          # tensor(64., grad_fn=<PowBackward0>)
print(dy_dx)      # tensor(48., grad_fn=<MulBackward0>)
print(d2y_dx2)    # tensor(24.)
print(x.grad)     # None
