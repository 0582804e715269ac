"""A custom autograd.Function: forward, backward, ctx.save_for_backward.

Seed note 003 explains that every op stores what its backward needs in ctx
(ctx.save_for_backward) and that a new op needs its own backward. MyMul
does exactly what the built-in multiplication does, so the note's chain
gives the note's numbers:

    c = MyMul.apply(a, b) = 6,  e = MyMul.apply(c, d) = 24
    grad_fn names: MyMulBackward (for both c and e)
    e.grad_fn.next_functions = ((MyMulBackward, 0), (AccumulateGrad, 0))
    after e.backward(): a.grad = 12, b.grad = 8, d.grad = 6

torch.autograd.gradcheck(MyMul.apply, ...) compares the hand-written
backward with finite differences in float64 and prints True.

Run:
    gradviz run examples/custom_function.py --backward e
    gradviz gradcheck examples/custom_function.py --root e
    gradviz graph examples/custom_function.py --svg mymul.svg
This file does not call e.backward(); use --backward e. (gradcheck runs its
own backward passes, on the float64 inputs64 only.)
"""
import gradviz as torch


class MyMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)          # what backward will need
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        grad_x = grad_output * y if ctx.needs_input_grad[0] else None
        grad_y = grad_output * x if ctx.needs_input_grad[1] else None
        return grad_x, grad_y


a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
c = MyMul.apply(a, b)
d = torch.tensor(4.0, requires_grad=True)
e = MyMul.apply(c, d)
print(e, e.grad_fn.name())                  # tensor(24., grad_fn=<MyMulBackward>) MyMulBackward

inputs64 = (torch.tensor([1.5, -2.0, 0.5], dtype=torch.float64, requires_grad=True),
            torch.tensor([0.3, 4.0, -1.0], dtype=torch.float64, requires_grad=True))
print(torch.autograd.gradcheck(MyMul.apply, inputs64))   # True
