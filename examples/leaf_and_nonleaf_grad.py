"""Leaves and non-leaves: after backward only leaves keep a .grad.

Seed notes 001 (and 004). a and b are leaves the user made with
requires_grad=True; c = a + b is computed, so it is a non-leaf that requires
grad (AddBackward0). d = c.sum() is the scalar root. After d.backward():

    a.grad = all ones [3, 4]      b.grad = all ones [3, 4]
    c.grad is None                 (non-leaf; PyTorch also warns, "The .grad
                                    attribute of a Tensor that is not a leaf
                                    Tensor is being accessed"; use retain_grad())
    d = tensor(7.7286, grad_fn=<SumBackward0>)   d still requires grad
    (a, b, c).requires_grad = (True, True, True); is_leaf = (True, True, False)

The values of a are the ones printed in the note (it used randn); the note's
d = 7.7287 came from the unrounded random values, these four-digit ones sum
to 7.7286.

Run:
    gradviz run examples/leaf_and_nonleaf_grad.py
    gradviz explain examples/leaf_and_nonleaf_grad.py c      (why is c.grad None?)
This file calls d.backward() itself: do not pass --backward.
"""
import gradviz as torch

a = torch.tensor([[0.4048, 1.8911, 0.2317, -0.9364],
                  [0.0653, 1.6988, -1.3301, 0.6945],
                  [1.1976, 2.1658, -0.3343, 1.9798]], requires_grad=True)
b = torch.zeros(3, 4).requires_grad_()
c = a.add(b)              # or c = a + b
d = c.sum()
d.backward()

print(d)                                              # tensor(7.7286, grad_fn=<SumBackward0>)
print(a.grad)                                         # all ones
print(a.requires_grad, b.requires_grad, c.requires_grad)   # True True True
print(a.is_leaf, b.is_leaf, c.is_leaf)                # True True False
print(c.grad is None)                                 # True (with a UserWarning)
