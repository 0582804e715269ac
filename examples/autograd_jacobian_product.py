"""PyTorch's "Learn the Basics" autograd page: z = x @ w + b with a binary cross entropy, no_grad and
detach, then backward of a non-scalar output (a vector-Jacobian product) called three times.

`loss = F.binary_cross_entropy_with_logits(z, y)` is one node
(BinaryCrossEntropyWithLogitsBackward0) whose gradient is (sigmoid(z) - y) / 3. For `out =
(inp + 1).pow(2).t()` with inp = eye(4, 5), `out.backward(torch.ones_like(out),
retain_graph=True)` puts 2 * (inp + 1) into inp.grad: 4 on the diagonal, 2 elsewhere; the
second call adds it again (8 and 4) because gradients accumulate; after `inp.grad.zero_()` a
third call gives 4 and 2 again.

Expect (PyTorch 2.13's output after torch.manual_seed(0)): w.grad has five equal rows
[0.2661, 0.1179, 0.0027], b.grad the same row; z.requires_grad True, then False under no_grad
and for z.detach(); the three inp.grad matrices above.

What to look at: `out`'s grad_fn is TBackward0 over PowBackward0 over AddBackward0; inp.grad
after the file is the third call's; `z_det` has no grad_fn.

Run:
    gradviz run examples/autograd_jacobian_product.py
    gradviz graph examples/autograd_jacobian_product.py --root out --svg jacobian_product.svg
This file calls backward itself: do not pass --backward.
"""
import gradviz as torch

torch.manual_seed(0)
x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

print(f"Gradient function for z = {z.grad_fn.name()}")
print(f"Gradient function for loss = {loss.grad_fn.name()}")

loss.backward()
print(w.grad)
print(b.grad)

z = torch.matmul(x, w) + b
print(z.requires_grad)

with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)

z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad)

inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")
