"""Dynamic graphs: an if on the data picks the op, so the gradient follows.

Seed note 001. abs() returns x itself for a positive x and -x otherwise:

    x_pos = [1.]   -> y_pos = x_pos (same tensor, no new node);  x_pos.grad = [1.]
    x_neg = [-1.]  -> y_neg = -x_neg = tensor([1.], grad_fn=<NegBackward0>);  x_neg.grad = [-1.]

(The note, from an older PyTorch, printed NegBackward; PyTorch 2.x says
NegBackward0.) x_neg is made by -1 * torch.ones(1), which does not require
grad, so requires_grad_() can still turn it into a leaf that does.

Run:
    gradviz run examples/dynamic_if_abs.py
This file calls y_pos.backward() and y_neg.backward() itself: do not pass --backward.
"""
import gradviz as torch


def abs(x):
    if x.data[0] > 0:
        return x
    else:
        return -x


x_pos = torch.ones(1, requires_grad=True)
y_pos = abs(x_pos)
y_pos.backward()
print(x_pos.grad)       # tensor([1.])

x_neg = -1 * torch.ones(1)
x_neg = x_neg.requires_grad_()
y_neg = abs(x_neg)
y_neg.backward()
print(x_neg.grad)       # tensor([-1.])
print(y_neg)            # tensor([1.], grad_fn=<NegBackward0>)
print(x_neg)            # tensor([-1.], requires_grad=True)
