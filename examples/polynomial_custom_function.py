"""Fitting sin(x) with a custom autograd.Function: y = a + b * P3(c + d * x).

PyTorch's "learning PyTorch with examples" tutorial, unchanged but for the
printing and the number of steps: P3(x) = (5x^3 - 3x) / 2 is the Legendre
polynomial of degree 3, a custom autograd.Function (LegendrePolynomial3)
whose backward is written by hand, 3/2 (5x^2 - 1). Four 0-d parameters
a, b, c, d start at 0, -1, 0, 0.3 and follow plain gradient descent (lr 5e-6,
updates under torch.no_grad(), .grad set back to None) on the sum of squared
errors over 2000 points of [-pi, pi].

Numbers (PyTorch 2.13 prints the same, to the digits shown):
    step   49  loss 253.77
    step   99  loss 209.96   (the loss falls at every print)
    step  299  loss 100.70
    Result: y = 0.0000 + -1.5471 * P3(0.0000 + 0.2498 x)
The tutorial runs 2000 steps (set steps = 2000): step 1999 loss 8.94 and
y = 0.0000 + -2.2085 * P3(0.0000 + 0.2555 x), on both backends; 300 keep
`gradviz run` quick.

What to look at: y_pred's graph contains the custom node
LegendrePolynomial3Backward between MulBackward0 and AddBackward0; the four
leaves have .grad None at the end (set to None after each update).

Run:
    gradviz run examples/polynomial_custom_function.py
    gradviz graph examples/polynomial_custom_function.py --root loss --svg p3.svg
This file calls loss.backward() itself in the loop: do not pass --backward.
"""
import math

import gradviz as torch


class LegendrePolynomial3(torch.autograd.Function):
    """P3(x) = (5x^3 - 3x) / 2, with its derivative written by hand."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
steps = 300        # the tutorial runs 2000 (see the header); 300 keeps `gradviz run` quick
for t in range(steps):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 50 == 49:
        print(f"step {t:4d}  loss {loss.item():.2f}")
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None


def shown(v):
    """v to 4 places. a and c stay within float32 rounding of 0 (sin is odd and x symmetric):
    their sign is rounding noise (float32 sums round differently from one library to the next),
    so a value that rounds to zero prints as 0.0000, never -0.0000 (-0.0 + 0.0 is 0.0)."""
    return f"{round(v.item(), 4) + 0.0:.4f}"


print(f"Result: y = {shown(a)} + {shown(b)} * P3({shown(c)} + {shown(d)} x)")
