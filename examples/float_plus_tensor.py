"""A Python float plus a 0-d tensor is a tensor.

Seed note 000. squeeze() turns the shape-[1] tensor a into a 0-d tensor
(shape []); then `x = 1.0; x += a` rebinds the float x to a new 0-d tensor:
float + Tensor goes through Tensor.__radd__.

Expect:
    a = tensor([0.1747])  Size([1])  ->  a = tensor(0.1747)  Size([])
    x starts as a float; after x += a, x = tensor(1.1747), a Tensor of shape []
    s = 1.0 + w with w requiring grad: s = tensor(3., grad_fn=<AddBackward0>)

(The note used torch.randn(1); a literal is used here so the numbers repeat.)

Run:
    gradviz run examples/float_plus_tensor.py
    gradviz run examples/float_plus_tensor.py --backward s     (w.grad = 1.)
This file does not call backward.
"""
import gradviz as torch

a = torch.tensor([0.1747])
print(a, a.shape)                     # tensor([0.1747]) torch.Size([1])
a = a.squeeze()
print(a, a.shape)                     # tensor(0.1747) torch.Size([])

x = 1.0
print(type(x).__name__)               # float
x += a
print(x, type(x).__name__)            # tensor(1.1747) Tensor

# The same with a tensor that requires grad: the float side is just a constant.
w = torch.tensor(2.0, requires_grad=True)
s = 1.0
s += w
print(s)                              # tensor(3., grad_fn=<AddBackward0>)
