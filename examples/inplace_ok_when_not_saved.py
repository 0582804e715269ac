"""An in-place edit that backward does not mind: nothing saved the old value.

Companion to inplace_version_error.py. Every in-place op bumps _version,
but backward only fails when a node saved the edited tensor. c = b + 1 is
an AddBackward0, and addition saves nothing (d(b+1)/db = 1 needs no
values), so b.add_(1) afterwards is fine. The edit does rewrite b's own
history: b.grad_fn becomes a new AddBackward0 whose input is the old b node.

    b = a + 2 = [3., 5.]  -> b.add_(1) -> b = [4., 6.], b._version 1
    c = [4., 6.] (computed before the edit; c._version 0)
    loss = c.sum() = tensor(10., grad_fn=<SumBackward0>)
    after --backward loss: a.grad = [1., 1.]     (no error)

Run:
    gradviz check-inplace examples/inplace_ok_when_not_saved.py   (clean, exit 0: no false alarm)
    gradviz run examples/inplace_ok_when_not_saved.py --backward loss
This file does not call backward; use --backward loss.
"""
import gradviz as torch

a = torch.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
c = b + 1          # AddBackward0 saves no tensors
b.add_(1)          # in place: b._version 0 -> 1
loss = c.sum()

print(b, b._version)   # tensor([4., 6.], grad_fn=<AddBackward0>) 1
print(c, c._version)   # tensor([4., 6.], grad_fn=<AddBackward0>) 0
