"""Broadcasting: a gradient is summed back to its input's shape.

x has shape [2, 3], w has shape [3] and b is a 0-d tensor. In y = x * w + b,
w is broadcast over the 2 rows and b over all 6 elements, so in backward
their gradients are summed over the broadcast dimensions: w.grad has
shape [3] (column sums of x) and b.grad is 0-d (the count, 6).

    y = [[2.5, 2.5, 2.0], [8.5, 5.5, 3.5]],  loss = y.sum() = tensor(24.5000, grad_fn=<SumBackward0>)
    after --backward loss:
        w.grad = [5., 7., 9.]   (x[0] + x[1], shape [3])
        b.grad = 6.             (shape [])
        x.grad None             (x does not require grad)

Run:
    gradviz run examples/broadcast_grad_shape.py --backward loss
    gradviz gradcheck examples/broadcast_grad_shape.py --root loss
This file does not call backward; use --backward loss.
"""
import gradviz as torch

x = torch.tensor([[1.0, 2.0, 3.0],
                  [4.0, 5.0, 6.0]])
w = torch.tensor([2.0, 1.0, 0.5], requires_grad=True)
b = torch.tensor(0.5, requires_grad=True)

y = x * w + b
loss = y.sum()
print(y)                # grad_fn=<AddBackward0>
print(loss)             # tensor(24.5000, grad_fn=<SumBackward0>)
