"""A gradient that is zero on purpose: relu blocks negative inputs.

h = x * w, out = relu(h), loss = out.sum(). relu passes the gradient only
where its input was positive, so the elements whose h was negative get a
zero gradient (a "dead" unit), although they are connected to loss.

    x = [-2.0, -0.5, 1.0, 3.0],  w = 1.5 (0-d)
    h = [-3.0, -0.75, 1.5, 4.5],  out = [0., 0., 1.5, 4.5],  loss = tensor(6., grad_fn=<SumBackward0>)
    after --backward loss:
        x.grad = [0.0, 0.0, 1.5, 1.5]   (w where h > 0, else 0)
        w.grad = 4.0                    (1.0 + 3.0: only the positive positions count)

Run:
    gradviz run examples/relu_zero_grad.py --backward loss
    gradviz explain examples/relu_zero_grad.py x --root loss   (names ReluBackward0 as the node that zeroed it)
This file does not call backward; use --backward loss.
"""
import gradviz as torch
import gradviz.nn.functional as F

x = torch.tensor([-2.0, -0.5, 1.0, 3.0], requires_grad=True)
w = torch.tensor(1.5, requires_grad=True)
h = x * w
out = F.relu(h)
loss = out.sum()
print(out)        # tensor([0.0000, 0.0000, 1.5000, 4.5000], grad_fn=<ReluBackward0>)
