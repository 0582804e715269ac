"""requires_grad propagation, and the corrected rule for non-leaf tensors.

Seed note 000. The PyTorch autograd notes once said "all non-leaf tensors will
automatically have requires_grad=True". That is wrong: a result requires grad
if and only if at least one of its inputs does (and grad mode is on).

    x1 requires grad, x2 does not
    y1 = x1 ** x1   -> requires_grad True,  grad_fn PowBackward1 (tensor exponent)
    y2 = x2 ** x2   -> requires_grad False, grad_fn None, and is_leaf True:
                       every tensor that does not require grad counts as a leaf
    z  = y1 + y2    -> requires_grad True,  grad_fn AddBackward0

What to look at: the requires_grad / is_leaf / grad_fn columns, and that the
graph of z only reaches x1 (z's next_functions: (PowBackward1, 0), (None, 0)).

Run:
    gradviz run examples/requires_grad_propagation.py
    gradviz run examples/requires_grad_propagation.py --backward z --gradient ones
        x1.grad = x1**x1 * (ln(x1) + 1) = [1.0000, 6.7726, 18.9370]   (x2.grad stays None)
    gradviz graph examples/requires_grad_propagation.py --svg z.svg

This file does not call backward; use --backward z (z is not a scalar, hence
--gradient ones).
"""
import gradviz as torch

x1 = torch.tensor([1.0, 2.0, 2.5], requires_grad=True)
x2 = torch.tensor([0.5, 1.5, 3.0])

y1 = x1.pow(x1)
y2 = x2.pow(x2)

z = y1 + y2

print("x1 requires_grad:", x1.requires_grad)   # True
print("x2 requires_grad:", x2.requires_grad)   # False
print("y1 requires_grad:", y1.requires_grad)   # True
print("y2 requires_grad:", y2.requires_grad)   # False: computed, yet no input requires grad
print("z requires_grad:", z.requires_grad)     # True
print("y2 is_leaf:", y2.is_leaf, "y2.grad_fn:", y2.grad_fn)   # True None
