"""A view shares its base's version counter: editing the view breaks backward.

Companion to inplace_version_error.py. head = b[:1] is a view of b (same
storage). loss = (b * b).mean() saves b at version 0. head.mul_(10) writes
into b through the view, and b._version and head._version both become 1,
so a backward from loss would fail with the same "modified by an inplace
operation ... is at version 1; expected version 0 instead." error.

    b = a + 2 = [3., 5.] -> after head.mul_(10): b = [30., 5.], head = [30.]
    b._version = head._version = 1; b.grad_fn is now CopySlices
    loss = tensor(17., grad_fn=<MeanBackward0>)  (computed before the edit: (9 + 25) / 2)

This file does not call backward, so it runs to the end (exit 0).
`gradviz check-inplace` finds the problem without running backward:
it names b (edited through head at the mul_ line), the MulBackward0 that
saved it at version 0, and the root loss; exit 1.

Run:
    gradviz check-inplace examples/inplace_view_shares_version.py
    gradviz run examples/inplace_view_shares_version.py
    gradviz run examples/inplace_view_shares_version.py --backward loss   (exit 1: the RuntimeError)
"""
import gradviz as torch

a = torch.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
head = b[:1]              # a view: shares b's storage and version counter
loss = (b * b).mean()     # MulBackward0 saves b (version 0)
head.mul_(10)             # edits b through the view

print(b, b._version, head._version)   # tensor([30.,  5.], grad_fn=<CopySlices>) 1 1
print(loss)                            # tensor(17., grad_fn=<MeanBackward0>)
