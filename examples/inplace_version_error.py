"""In-place edit of a tensor saved for backward: _version and the RuntimeError.

Seed note 004. THIS FILE IS EXPECTED TO FAIL: loss.backward() on the last
line raises RuntimeError, and `gradviz run` exits 1.

b = a + 2 starts at version 0. loss = (b * b).mean() makes a MulBackward0
that saves b at version 0 (it needs b for d(b*b)/db). b[0] = 1000.0 edits b
in place: b._version becomes 1 (and b.grad_fn becomes CopySlices). At
backward the saved b no longer holds the value that was multiplied, so:

    RuntimeError: one of the variables needed for gradient computation has been
    modified by an inplace operation: [torch.FloatTensor [2]], which is output 0
    of torch::autograd::CopySlices, is at version 1; expected version 0 instead. Hint: ...

(The note's older PyTorch said "output 0 of AddBackward0"; 2.13 names CopySlices.)

Expect: prints 0, then 1, then the error. b = [1000., 5.], a.grad None.

Run:
    gradviz run examples/inplace_version_error.py
        (exit 1; the Tensors table still shows b at version 1, saved at version 0)
    gradviz check-inplace examples/inplace_version_error.py
        (names b, the line of b[0] = 1000.0, MulBackward0 that saved it, root loss)
Fix: edit a copy (c = b.clone(); c[0] = 1000.0), or make the edit before b is used.
"""
import gradviz as torch

a = torch.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
print(b._version)      # 0

loss = (b * b).mean()
b[0] = 1000.0
print(b._version)      # 1

loss.backward()        # RuntimeError: ... modified by an inplace operation ...
