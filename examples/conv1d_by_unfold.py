"""Convolution as sliding windows: Tensor.unfold, then one dot product per window.

A 1-D convolution (as PyTorch and d2l.ai define it: a cross-correlation) slides
a filter along the signal. `x.unfold(2, 3, 1)` makes every window of 3
samples, one step apart, as a view of x (no copy): the 8 samples give 6
windows. Multiplying each window by the filter gives F.conv1d's numbers:

    y = y_ref = [[[14., 20., 26., 32., 38., 44.]]]
    windows.grad_fn: UnfoldBackward0 (it saves dimension=2, size=3, step=1)

The windows overlap, so backward adds each window's gradient back into the
samples it read: an inner sample sits in 3 windows and gets w0 + w1 + w2,
the samples at the ends fewer.

    x.grad = [[[1., 3., 6., 6., 6., 6., 5., 3.]]]
    w.grad = [[[21., 27., 33.]]]   (the sums of the samples each weight met)

and F.conv1d gives the same gradients (x_ref.grad, w_ref.grad).

Run:
    gradviz run examples/conv1d_by_unfold.py
    gradviz graph examples/conv1d_by_unfold.py --root loss --svg unfold.svg
This file calls loss.backward() itself.
"""
import gradviz as torch
import gradviz.nn.functional as F

x = torch.arange(1.0, 9.0).reshape(1, 1, 8).requires_grad_()    # (batch, channels, length)
w = torch.tensor([[[1.0, 2.0, 3.0]]], requires_grad=True)       # one filter of width 3

windows = x.unfold(2, 3, 1)         # (1, 1, 6, 3): every window of 3 samples
y = windows @ w.reshape(3)          # (1, 1, 6): one dot product per window
print("windows:", tuple(windows.shape), windows.grad_fn.name())
print("y:", y)

x_ref = x.detach().clone().requires_grad_()
w_ref = w.detach().clone().requires_grad_()
y_ref = F.conv1d(x_ref, w_ref)
print("y_ref:", y_ref)
print("same as conv1d:", torch.equal(y, y_ref))

loss = y.sum()
loss.backward()
y_ref.sum().backward()
print("x.grad:", x.grad)
print("w.grad:", w.grad)
print("same gradients:", torch.equal(x.grad, x_ref.grad), torch.equal(w.grad, w_ref.grad))
