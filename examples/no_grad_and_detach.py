"""Turning recording off: no_grad, set_grad_enabled, detach() and .data.

Seed notes 001 and 002. y = x * w is recorded because w requires grad. The
same product under torch.no_grad() or after torch.set_grad_enabled(False)
is not: requires_grad False, grad_fn None, even though w requires grad
(torch.enable_grad() inside a no_grad block turns recording back on).
y.detach() gives y's values cut from the graph (a leaf that does not
require grad). Outside the block, grad mode is on again.

Then the two ways to change a leaf's value without recording it:
    with torch.no_grad(): w -= 0.1 * w.grad   -> w = [0.4], w._version 1 (autograd counts it)
    w.data -= 0.1 * w.grad                     -> w = [0.3], w._version still 1
                                                  (.data edits are invisible to autograd)

Expect:
    x, w, y requires_grad: True True True;  y = [0.5], grad_fn MulBackward0
    y_enabled = x * 2 (enable_grad inside no_grad): requires_grad True, MulBackward0
    y_no_grad, y_off, y_detached: requires_grad False, grad_fn None
    after y.backward(): x.grad = [0.5000] (= w), w.grad = [1.] (= x)
    at the end: w = tensor([0.3000], requires_grad=True), w._version 1, w.is_leaf True

Run:
    gradviz run examples/no_grad_and_detach.py
    gradviz explain examples/no_grad_and_detach.py y_no_grad     (made under no_grad)
This file calls y.backward() itself: do not pass --backward.
"""
import gradviz as torch

x = torch.ones(1, requires_grad=True)
w = torch.tensor([0.5], requires_grad=True)
y = x * w
print(x.requires_grad, w.requires_grad, y.requires_grad)    # True True True

with torch.no_grad():
    y_no_grad = x * w
    print(torch.is_grad_enabled())                          # False
    with torch.enable_grad():
        y_enabled = x * 2                                   # recorded again inside enable_grad
print(y_enabled.requires_grad)                              # True
print(y_no_grad.requires_grad, y_no_grad.grad_fn)           # False None
print((x ** 2).requires_grad)                               # True: recording is back on

torch.set_grad_enabled(False)
y_off = x * w
torch.set_grad_enabled(True)
print(y_off.requires_grad)                                  # False

y_detached = y.detach()
print(y_detached.requires_grad, y_detached.is_leaf)         # False True

y.backward()
print(x.grad, w.grad)                                       # tensor([0.5000]) tensor([1.])

with torch.no_grad():
    w -= 0.1 * w.grad
print(w, w._version)                                        # tensor([0.4000], requires_grad=True) 1
w.data -= 0.1 * w.grad
print(w, w._version, w.is_leaf)                             # tensor([0.3000], requires_grad=True) 1 True
