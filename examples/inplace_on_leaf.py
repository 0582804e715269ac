"""In-place on a leaf that requires grad is refused; under no_grad it is allowed.

Seed note 004. The note (an old PyTorch) ran a[:] = 0 on a leaf with
requires_grad=True and got a non-leaf with grad_fn CopySlices. PyTorch 2.x
refuses it at once:

    RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.

(caught and printed here). To reset or update a leaf's values, do it
under torch.no_grad(): a stays a leaf, autograd records nothing, and
a._version counts the two edits. The note's computation then works:

    a = [10., 5., 2., 3.] -> (a[:] = 0; a.add_(10.) under no_grad) -> a = [10., 10., 10., 10.]
    a.is_leaf True, a._version 2
    loss3 = (a * a).mean() = tensor(100., grad_fn=<MeanBackward0>)
    after loss3.backward(): a.grad = 2a/4 = [5., 5., 5., 5.]

Run:
    gradviz run examples/inplace_on_leaf.py
    gradviz check-inplace examples/inplace_on_leaf.py   (points at the refused a[:] = 0 line)
This file calls loss3.backward() itself: do not pass --backward. It exits 0
(the refused edit is caught).
"""
import gradviz as torch

a = torch.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
print(a, a.is_leaf)                  # tensor([10.,  5.,  2.,  3.], requires_grad=True) True

try:
    a[:] = 0
except RuntimeError as err:
    print("RuntimeError:", err)      # a leaf Variable that requires grad is being used in an in-place operation.

with torch.no_grad():
    a[:] = 0
    a.add_(10.0)
print(a, a.is_leaf, a._version)      # tensor([10., 10., 10., 10.], requires_grad=True) True 2

loss3 = (a * a).mean()
loss3.backward()
print(loss3, a.grad)                 # tensor(100., grad_fn=<MeanBackward0>) tensor([5., 5., 5., 5.])
