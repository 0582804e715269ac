"""backward() on a non-scalar needs a gradient: the vector-Jacobian product.

y = x * 2 has three elements, so y.backward() cannot invent the starting
gradient and raises
    RuntimeError: grad can be implicitly created only for scalar outputs
(caught and printed here). Passing gradient=v computes v^T J, where
J = dy/dx = 2 * identity, so x.grad = 2 * v:

    x = [1., 2., 3.],  y = tensor([2., 4., 6.], grad_fn=<MulBackward0>)
    y.backward(torch.tensor([1.0, 0.1, 0.01]))  ->  x.grad = [2.0000, 0.2000, 0.0200]

The inspector's --gradient ones does the same with v = ones.

Run:
    gradviz run examples/nonscalar_backward.py
This file calls y.backward(v) itself: do not pass --backward.
"""
import gradviz as torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
print(y)                    # tensor([2., 4., 6.], grad_fn=<MulBackward0>)

try:
    y.backward()
except RuntimeError as err:
    print("RuntimeError:", err)   # grad can be implicitly created only for scalar outputs

v = torch.tensor([1.0, 0.1, 0.01])
y.backward(v)
print(x.grad)               # tensor([2.0000, 0.2000, 0.0200])
