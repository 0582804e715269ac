"""Module hooks: look at activations on the way forward and gradients on the way back.

A two-layer MLP (Linear(3, 4) -> Tanh -> Linear(4, 2)). A forward hook on each child
records its output's shape; a full backward hook on each Linear prints the shapes of
grad_input and grad_output as they arrive (the last layer first), and a backward pre-hook
on the first Linear doubles the gradient flowing into it, which doubles every gradient
below it (x.grad and the first layer's parameters' grads).

Expect (PyTorch 2.13 prints the same):
    forward: ['0', '1', '2'] -> [(5, 4), (5, 4), (5, 2)]
    backward: 2 grad_input [(5, 4)] grad_output [(5, 2)]
    backward: 0 grad_input [(5, 3)] grad_output [(5, 4)]
With the hooks, the module's input and output pass through BackwardHookFunctionBackward
nodes: out's graph starts with one.

What the inspector shows: out [5, 2] (BackwardHookFunctionBackward), x.grad [5, 3].

Run:
    gradviz run examples/module_hooks.py
This file calls backward() itself: do not pass --backward.
"""
import gradviz as torch
from gradviz import nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
seen = []
for name, layer in net.named_children():
    layer.register_forward_hook(lambda mod, args, output, name=name:
                                seen.append((name, tuple(output.shape))))


def show(name):
    def hook(module, grad_input, grad_output):
        print(f"backward: {name} grad_input {[tuple(g.shape) for g in grad_input]} "
              f"grad_output {[tuple(g.shape) for g in grad_output]}")
    return hook


net[0].register_full_backward_hook(show("0"))
net[2].register_full_backward_hook(show("2"))
net[0].register_full_backward_pre_hook(lambda module, grad_output: (grad_output[0] * 2,))

x = torch.randn(5, 3, requires_grad=True)
out = net(x)
print("forward:", [n for n, _ in seen], "->", [s for _, s in seen])
out.sum().backward()
print("x.grad[0]:", [round(v, 4) for v in x.grad[0].tolist()])
