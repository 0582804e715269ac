"""Saved-tensor hooks: see what backward keeps alive, and when it reads it back.

Every node saves the tensors its backward formula needs: y = x * w saves both x and w
(MulBackward0: _saved_self, _saved_other), z = y.exp() saves its own result
(ExpBackward0: _saved_result), and loss = z.sum() saves nothing but a shape. Inside
torch.autograd.graph.saved_tensors_hooks(pack, unpack), pack runs once for each saved
tensor as the node is made, and unpack runs when backward reads it back, node by node:

    packed:   [2.0, 1.0, 7.3891]     (w, x for MulBackward0, by saved name; then exp's result)
    unpacked: [7.3891, 2.0, 1.0]     (ExpBackward0 runs first in backward, then MulBackward0)
    x.grad = w * exp(x * w) = [14.7781],  w.grad = x * exp(x * w) = [7.3891]

Run:
    gradviz run examples/saved_tensors_hooks.py          (calls backward)
"""
import gradviz as torch

packed = []
unpacked = []


def pack(t):
    packed.append(round(t.item(), 4))
    return t


def unpack(t):
    unpacked.append(round(t.item(), 4))
    return t


x = torch.tensor([1.0], requires_grad=True)
w = torch.tensor([2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * w
    z = y.exp()
    loss = z.sum()

loss.backward()
print("packed:  ", packed)      # [2.0, 1.0, 7.3891]
print("unpacked:", unpacked)    # [7.3891, 2.0, 1.0]
print(x.grad, w.grad)           # tensor([14.7781]) tensor([7.3891])
