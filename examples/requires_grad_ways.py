"""Three ways to make a tensor require grad; grad_fn of user-made vs computed tensors.

Seed notes 001, 002 and 004.
  1. a keyword at creation:      x2 = torch.ones(2, 2, requires_grad=True)
  2. requires_grad_() in place:  b = torch.zeros(2, 2).requires_grad_()   (returns the tensor)
  3. set the attribute:          c = torch.full((2, 2), 3.0); c.requires_grad = True

grad_fn is None for tensors you create and names the op for computed ones:
    x1.grad_fn None, x2.grad_fn None
    y  = x1 * x2  -> tensor([[1., 1.], [1., 1.]], grad_fn=<MulBackward0>)
    x3 = x2 + 1   -> tensor([[2., 2.], [2., 2.]], grad_fn=<AddBackward0>)
    t_exp = t.exp() with t = 2 -> tensor(7.3891, grad_fn=<ExpBackward0>)
        (note 004 printed ExpBackward, from an older PyTorch)

m = (m * 3) / (m - 1) is computed from a tensor that does not require grad,
so it is a leaf without grad_fn and m.requires_grad_(True) is allowed;
s = (m * m).sum() = tensor(67.5000, grad_fn=<SumBackward0>).
Only leaves may change the flag: s.requires_grad = False raises
"RuntimeError: you can only change requires_grad flags of leaf variables. ..."
(caught and printed here).

Run:
    gradviz run examples/requires_grad_ways.py
    gradviz run examples/requires_grad_ways.py --backward s   (m.grad = 2m = [[12., 9.], [3., -6.]])
This file does not call backward.
"""
import gradviz as torch

x2 = torch.ones(2, 2, requires_grad=True)        # 1. at creation
b = torch.zeros(2, 2).requires_grad_()          # 2. in place, returns b
c = torch.full((2, 2), 3.0)
c.requires_grad = True                          # 3. the attribute
print(x2.requires_grad, b.requires_grad, c.requires_grad)   # True True True

x1 = torch.ones(2, 2)
y = x1 * x2
x3 = x2 + 1
print(x1.grad_fn, x2.grad_fn, y.grad_fn.name(), x3.grad_fn.name())   # None None MulBackward0 AddBackward0
print(y)
print(x3)

t = torch.tensor(2.0, requires_grad=True)
t_exp = t.exp()
print(t_exp)                                    # tensor(7.3891, grad_fn=<ExpBackward0>)

m = torch.tensor([[2.0, 3.0], [-1.0, 0.5]])
m = (m * 3) / (m - 1)                           # [[6., 4.5], [1.5, -3.]]
print(m.requires_grad, m.is_leaf)               # False True
m.requires_grad_(True)
print(m.requires_grad)                          # True
s = (m * m).sum()
print(s)                                        # tensor(67.5000, grad_fn=<SumBackward0>)

try:
    s.requires_grad = False
except RuntimeError as err:
    print("RuntimeError:", str(err).split(".")[0])   # you can only change requires_grad flags of leaf variables
