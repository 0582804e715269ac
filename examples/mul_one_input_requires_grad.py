"""c = a*b when only a requires grad: (None, 0) in next_functions.

Seed note 003 (examples 1 and 2). If neither input requires grad, the
product is recorded nowhere (c0.grad_fn is None). With a requiring grad and
b not, c = a*b requires grad and its MulBackward0 has two next_functions:
(AccumulateGrad, 0) for a and (None, 0) for b, which takes no part in
backward. dc/da = b:

    c0 = tensor(6.)                          requires_grad False, grad_fn None
    c  = tensor(6., grad_fn=<MulBackward0>)
    c.grad_fn.next_functions = ((AccumulateGrad, 0), (None, 0))
    after c.backward(): a.grad = 3, b.grad = None

Run:
    gradviz run examples/mul_one_input_requires_grad.py --backward c
    gradviz explain examples/mul_one_input_requires_grad.py b --root c   (b does not require grad)
This file does not call backward; use --backward c.
"""
import gradviz as torch


def names(next_functions):
    # node.name() of AccumulateGrad is "torch::autograd::AccumulateGrad"; keep the last part
    return [(None if fn is None else fn.name().split("::")[-1], i) for fn, i in next_functions]


a0 = torch.tensor(2.0)
b0 = torch.tensor(3.0)
c0 = a0 * b0
print(c0, c0.requires_grad, c0.grad_fn)    # tensor(6.) False None

a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0)
c = a * b
print(c)                                   # tensor(6., grad_fn=<MulBackward0>)
print(names(c.grad_fn.next_functions))     # [('AccumulateGrad', 0), (None, 0)]
