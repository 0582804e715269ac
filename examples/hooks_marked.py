"""Hooks the file registers, marked: what each received and returned, and which .grad it changed.

    x = 3, w = 2:  y = w * x = 6,  loss = y ** 2 = 36
    d loss / d y = 2y = 12
    The hook on y multiplies the gradient flowing through y by 10: 12 -> 120, so
    w.grad = 120 * x = 360 instead of 36, and x.grad = 120 * w = 240 instead of 24.
    The hook on w only prints: it returns None, so w's gradient goes on unchanged.

Expect after loss.backward():
    w.grad = 360., x.grad = 240.   (both "changed by hook" in the Tensors table)

Run:
    gradviz run examples/hooks_marked.py --hooks --step
"""
import gradviz as torch


def scale_by_10(grad):
    return grad * 10


x = torch.tensor(3.0, requires_grad=True)
w = torch.tensor(2.0, requires_grad=True)
y = w * x
loss = y ** 2

y.register_hook(scale_by_10)
w.register_hook(lambda grad: print("w receives", grad))

loss.backward()
print(w.grad, x.grad)                         # tensor(360.) tensor(240.)
