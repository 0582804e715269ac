"""Anomaly mode finds the backward node that produced NaN.

x holds a negative number; sqrt(-1) is nan in the forward pass, and
SqrtBackward0 (grad / (2 * sqrt(x))) turns the gradient into nan too.
Without anomaly mode x.grad would silently be [0.2500, nan]. Inside
torch.autograd.detect_anomaly(), every backward node's output is checked
for nan, and the error names the node; the accompanying warning shows the
forward line that created it (y = x.sqrt()).

THIS FILE IS EXPECTED TO FAIL: loss.backward() raises

    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.

and `gradviz run` exits 1. Before that it prints y = tensor([2., nan],
grad_fn=<SqrtBackward0>) and loss = tensor(nan, grad_fn=<SumBackward0>).
PyTorch also warns on stderr that anomaly detection is enabled and prints
the forward traceback of the failing node.

Run:
    gradviz run examples/anomaly_nan.py
        (the error report points at the line y = x.sqrt())
For a NaN gradient whose forward values are all finite, see nan_grad_where.py.
"""
import gradviz as torch

x = torch.tensor([4.0, -1.0], requires_grad=True)

with torch.autograd.detect_anomaly():
    y = x.sqrt()
    loss = y.sum()
    print(y)            # tensor([2., nan], grad_fn=<SqrtBackward0>)
    print(loss)         # tensor(nan, grad_fn=<SumBackward0>)
    loss.backward()     # RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
