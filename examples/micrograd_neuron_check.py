"""The micrograd lecture's check in PyTorch: one tanh neuron in float64, o = tanh(x1*w1 + x2*w2 + b).

The lecture builds this neuron in its own tiny autograd engine, derives every gradient by hand,
and then checks them against PyTorch with the same numbers. `torch.Tensor([2.0])` makes a
float32 tensor and `.double()` a float64 copy, which is a leaf again: requires_grad is set
on it afterwards.

Expect (PyTorch 2.13's output, digit for digit): o = 0.7071066904050358 (b was chosen so that
n = 0.8814, tanh(n) = 1/sqrt(2)); do/dn = 1 - o**2 = 0.5, so x2.grad = w2 * 0.5 =
0.5000001283844369, w2.grad = x2 * 0.5 = 0.0, x1.grad = w1 * 0.5 = -1.5000003851533106,
w1.grad = x1 * 0.5 = 1.0000002567688737.

What to look at: `o` is a TanhBackward0 whose input `n` is AddBackward0 of (x1*w1 + x2*w2)
and the leaf b (AccumulateGrad); x2.grad is 0.5 while w2.grad is 0 (x2 is 0).

Run:
    gradviz run examples/micrograd_neuron_check.py
    gradviz graph examples/micrograd_neuron_check.py --root o --svg neuron.svg
This file calls o.backward() itself: do not pass --backward.
"""
import gradviz as torch

x1 = torch.Tensor([2.0]).double();                x1.requires_grad = True
x2 = torch.Tensor([0.0]).double();                x2.requires_grad = True
w1 = torch.Tensor([-3.0]).double();               w1.requires_grad = True
w2 = torch.Tensor([1.0]).double();                w2.requires_grad = True
b = torch.Tensor([6.8813735870195432]).double();  b.requires_grad = True
n = x1*w1 + x2*w2 + b
o = torch.tanh(n)

print(o.data.item())
o.backward()

print('---')
print('x2', x2.grad.item())
print('w2', w2.grad.item())
print('x1', x1.grad.item())
print('w1', w1.grad.item())

print(torch.Tensor([[1, 2, 3], [4, 5, 6]]).shape, torch.Tensor([2.0]).dtype, x1.dtype)
print(o)
print(o.grad_fn.name(), [(f.name(), i) for f, i in o.grad_fn.next_functions])
print(n.grad_fn.name(), [(f.name(), i) for f, i in n.grad_fn.next_functions])
