"""Missing targets: nanmean gives the right loss but a NaN gradient; mask first.

Real regression data has holes: a target that was never measured is NaN.
`F.mse_loss` then returns nan. `torch.nanmean` skips the NaN terms, so the
loss is right, yet its gradient is not: backward goes through the square of
(pred - target) at the missing place too, and 0 * nan is nan (nansum's
gradient is 0 there, the square's derivative 2 * (pred - target) is nan).
Selecting the measured places before any arithmetic gives the same loss and
a clean gradient.

    loss_mse = nan
    loss_nan = loss_masked = 0.6250 (the mean of 0.25 and 1.0)
    p.grad after loss_nan:    [-0.5000, nan, 1.0000]
    q.grad after loss_masked: [-0.5000, 0.0000, 1.0000]
    loss_nan.grad_fn: DivBackward0 over NansumBackward0 (torch composes nanmean)

Run:
    gradviz run examples/missing_targets_nanmean.py
    gradviz explain examples/missing_targets_nanmean.py p --root loss_nan
This file calls backward itself.
"""
import gradviz as torch
import gradviz.nn.functional as F

target = torch.tensor([1.5, float("nan"), 2.0])      # the second target is missing
p = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
q = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)

loss_mse = F.mse_loss(p, target)
print("mse_loss:", loss_mse)

loss_nan = ((p - target) ** 2).nanmean()
print("nanmean:", loss_nan, [n.name() for n, _ in loss_nan.grad_fn.next_functions if n])
loss_nan.backward()
print("p.grad:", p.grad)

measured = ~target.isnan()
loss_masked = ((q[measured] - target[measured]) ** 2).mean()
print("masked:", loss_masked)
loss_masked.backward()
print("q.grad:", q.grad)
