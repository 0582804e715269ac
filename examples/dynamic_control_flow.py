"""Dynamic graphs: a Python loop and an if decide which ops are recorded.

Seed note 001. The graph is rebuilt on every forward pass from the ops that
actually ran. f multiplies together only the positive elements of x, so for
x = [-2, -1, 0, 1, 2, 3] the recorded graph is y = x[3] * x[4] * x[5]:

    y = tensor(6., grad_fn=<MulBackward0>)
    x.grad = [0., 0., 0., 6., 3., 2.]     (dy/dx[3] = x[4]*x[5] = 6, dy/dx[4] = 3, dy/dx[5] = 2;
                                            the other elements never entered the graph)

Iterating over a tensor unbinds it (UnbindBackward0); the first product is
x[3] * 1 with the Python int 1, so that MulBackward0 has (None, 0) as its
second input.

Run:
    gradviz run examples/dynamic_control_flow.py --backward y
    gradviz graph examples/dynamic_control_flow.py --backward y --svg loop.svg
This file does not call backward; use --backward y.
"""
import gradviz as torch


def f(x):
    result = 1
    for ii in x:
        if ii.item() > 0:
            result = ii * result
    return result


x = torch.arange(-2, 4, dtype=torch.float32).requires_grad_()
y = f(x)        # y = x[3] * x[4] * x[5]
print(y)        # tensor(6., grad_fn=<MulBackward0>)
