"""Every kind of hook, on one Linear layer, in the order they fire.

y = lin(x) with lin = Linear(2, 1) (weight [[0.5, -1]], bias 0.25), x = [[1, 2]] and
loss = (y ** 2).sum(). Registered: a forward pre-hook (doubles the input), a forward hook
(adds 1 to the output), a full backward pre-hook (triples the gradient reaching lin's
output), a full backward hook (only looks), a post-accumulate-grad hook on x (multiplies
x.grad by 10 in place; such a hook must return None), a tensor hook on y (doubles its
gradient), retain_grad on y, a pre-hook on y's grad_fn and a post-hook on loss's grad_fn
(both only look).

Expect (PyTorch 2.13 prints the same): y = [[-1.75]] (0.5*2 - 4 + 0.25 + 1: the pre-hook
doubled x, the forward hook added 1); y.grad = [[-7.]] (2y = -3.5, doubled by y's hook);
x.grad = [[-210., 420.]]: -7 tripled by the backward pre-hook, times the weight [0.5, -1],
doubled through the pre-hook's x * 2, then times 10 by the post-accumulate hook. On
backward the hooks fire: loss's post-hook, y's tensor hook, retain_grad, y's node pre-hook,
lin's backward pre-hook, lin's backward hook, x's post-accumulate hook.

What the inspector shows: `--hooks` lists each of them with its line, what it got and what
it returned; x.grad is marked "changed by hook" with the numbers of the hooks that changed it.

Run:
    gradviz run examples/every_hook_kind.py --hooks
This file calls backward() itself: do not pass --backward.
"""
import gradviz as torch
from gradviz import nn

lin = nn.Linear(2, 1)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[0.5, -1.0]]))
    lin.bias.fill_(0.25)

lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
lin.register_forward_hook(lambda m, args, out: out + 1)
lin.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 3,))
lin.register_full_backward_hook(lambda m, grad_input, grad_output: None)

x = torch.tensor([[1.0, 2.0]], requires_grad=True)


def times_ten(t):
    t.grad.mul_(10)


x.register_post_accumulate_grad_hook(times_ten)
y = lin(x)
y.retain_grad()
y.register_hook(lambda g: g * 2)
y.grad_fn.register_prehook(lambda grad_outputs: None)
loss = (y ** 2).sum()
loss.grad_fn.register_hook(lambda grad_inputs, grad_outputs: None)
loss.backward()
print("y", y.tolist(), "y.grad", y.grad.tolist())
print("x.grad", x.grad.tolist())
