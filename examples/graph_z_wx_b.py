"""The computation graph of z = w*x + b, and grad_fn.next_functions.

Seed note 001 (figures 3-3 and 3-4). z = w*x + b splits into y = w*x and
z = y + b. In the forward view, variables are ellipses and operators (MUL,
ADD) are boxes; in the backward view, each op has a grad_fn node:

    z.grad_fn = AddBackward0, next_functions ((MulBackward0, 0), (AccumulateGrad, 0))
        -> y's MulBackward0 and b's AccumulateGrad;  next_functions[0][0] is y.grad_fn
    y.grad_fn = MulBackward0, next_functions ((AccumulateGrad, 0), (None, 0))
        -> w needs grad (AccumulateGrad), x does not: (None, 0)
    x, b, w are leaves (grad_fn None); y and z are not
    requires_grad: x False, b True, w True, y True

Values: x = [1.], w = [2.], b = [1.] -> y = [2.], z = [3.]
(the note used torch.rand for w and b; literals keep the numbers fixed).
After backward from z: w.grad = x = [1.], b.grad = [1.], x.grad None.

Run:
    gradviz graph examples/graph_z_wx_b.py --view forward --svg z.svg
    gradviz graph examples/graph_z_wx_b.py --svg z_backward.svg
    gradviz run examples/graph_z_wx_b.py --backward z
This file does not call backward; use --backward z.
"""
import gradviz as torch


def names(next_functions):
    # node.name() of AccumulateGrad is "torch::autograd::AccumulateGrad"; keep the last part
    return [(None if fn is None else fn.name().split("::")[-1], i) for fn, i in next_functions]


x = torch.ones(1)
b = torch.tensor([1.0], requires_grad=True)
w = torch.tensor([2.0], requires_grad=True)
y = w * x                  # y = w.mul(x)
z = y + b                  # z = y.add(b)

print(x.requires_grad, b.requires_grad, w.requires_grad)   # False True True
print(y.requires_grad)                                     # True
print(x.is_leaf, w.is_leaf, b.is_leaf)                     # True True True
print(y.is_leaf, z.is_leaf)                                # False False
print(z.grad_fn.name())                                    # AddBackward0
print(names(z.grad_fn.next_functions))                     # [('MulBackward0', 0), ('AccumulateGrad', 0)]
print(z.grad_fn.next_functions[0][0] == y.grad_fn)         # True
print(names(y.grad_fn.next_functions))                     # [('AccumulateGrad', 0), (None, 0)]
print(w.grad_fn, x.grad_fn)                                # None None
