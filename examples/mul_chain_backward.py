"""The backward graph of c = a*b, e = c*d: MulBackward0, saved tensors, AccumulateGrad.

Seed note 003 (example 3). a = 2, b = 3, d = 4 are leaves that require grad.
c = a*b = 6 and e = c*d = 24 are non-leaves with grad_fn MulBackward0. When
each multiplication ran, its node saved both inputs (ctx.save_for_backward):
e's node saved c and d, c's node saved a and b (the Graph table's "saved"
column: _saved_self, _saved_other).

    e.grad_fn.next_functions = ((MulBackward0, 0), (AccumulateGrad, 0))   -> c's node, d
    c.grad_fn.next_functions = ((AccumulateGrad, 0), (AccumulateGrad, 0)) -> a, b

Backward from e: de/dc = d = 4 flows into c's MulBackward0, which multiplies
by dc/da = b = 3 and dc/db = a = 2:
    a.grad = 12, b.grad = 8, d.grad = 6 (= c); c.grad stays None (non-leaf),
    with --retain-grad: c.grad = 4, e.grad = 1.

Run:
    gradviz run examples/mul_chain_backward.py --backward e
    gradviz run examples/mul_chain_backward.py --backward e --retain-grad --hooks
        (hooks fire from the root down: e first, c before a and b)
    gradviz graph examples/mul_chain_backward.py --backward e --show-saved --svg mul.svg
This file does not call backward; use --backward e.
"""
import gradviz as torch


def names(next_functions):
    # node.name() of AccumulateGrad is "torch::autograd::AccumulateGrad"; keep the last part
    return [(None if fn is None else fn.name().split("::")[-1], i) for fn, i in next_functions]


a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
c = a * b
d = torch.tensor(4.0, requires_grad=True)
e = c * d

print(e)                                   # tensor(24., grad_fn=<MulBackward0>)
print(names(e.grad_fn.next_functions))     # [('MulBackward0', 0), ('AccumulateGrad', 0)]
print(names(c.grad_fn.next_functions))     # [('AccumulateGrad', 0), ('AccumulateGrad', 0)]
print(c.grad_fn.next_functions[0][0].variable is a)   # True: AccumulateGrad.variable is the leaf
