"""A NaN gradient with finite forward values: the torch.where trap.

y = where(x > 0, sqrt(x), 0) looks safe: the forward values are all finite
(y = [2., 0., 1.]). But where() sends a zero gradient into the branch it did
not pick, and sqrt's backward at x = 0 computes 0 / (2 * sqrt(0)) = 0 / 0 = nan,
so backward gives x.grad = [0.2500, nan, 0.5000].

    r = x.sqrt() = [2., 0., 1.]           grad_fn SqrtBackward0   <- produces the nan
    y = torch.where(x > 0, r, zeros)      grad_fn WhereBackward0
    loss = y.sum() = tensor(3., grad_fn=<SumBackward0>)

With --anomaly, backward stops at SqrtBackward0 ("Function 'SqrtBackward0'
returned nan values in its 0th output.") and reports the line r = x.sqrt().
Fix: take the sqrt of a safe input, e.g. x.clamp(min=1e-12).sqrt().

Run:
    gradviz run examples/nan_grad_where.py --backward loss            (x.grad = [0.25, nan, 0.5])
    gradviz run examples/nan_grad_where.py --backward loss --anomaly  (exit 1, names SqrtBackward0)
    gradviz explain examples/nan_grad_where.py x --root loss
This file does not call backward; use --backward loss.
"""
import gradviz as torch

x = torch.tensor([4.0, 0.0, 1.0], requires_grad=True)
zeros = torch.zeros_like(x)
r = x.sqrt()
y = torch.where(x > 0, r, zeros)
loss = y.sum()
print(y)        # tensor([2., 0., 1.], grad_fn=<WhereBackward0>)
