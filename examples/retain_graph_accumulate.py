"""retain_graph, and gradients accumulating into .grad.

Seed note 001. Same graph as graph_z_wx_b.py: y = w*x, z = y + b.
MulBackward0 saved x (it needs x for dz/dw = x). Backward frees saved
tensors unless retain_graph=True, so:

    z.backward(retain_graph=True)  -> w.grad = tensor([1.])
    z.backward()                   -> w.grad = tensor([2.])   (accumulated: this is
                                      what AccumulateGrad means; b.grad = [2.] too)
    z.backward() a third time      -> RuntimeError: Trying to backward through the
                                      graph a second time (or directly access saved
                                      tensors after they have already been freed). ...
                                      (caught and printed here)
    w.grad.zero_(); b.grad.zero_() -> both tensor([0.]): how a training loop resets

Run:
    gradviz run examples/retain_graph_accumulate.py
This file calls backward itself (three times): do not pass --backward.
Final state: w.grad = [0.], b.grad = [0.], x.grad None, y and z non-leaves.
"""
import gradviz as torch

x = torch.ones(1)
b = torch.tensor([1.0], requires_grad=True)
w = torch.tensor([2.0], requires_grad=True)
y = w * x
z = y + b

z.backward(retain_graph=True)      # keep the saved tensors for another backward
print(w.grad)                      # tensor([1.])

z.backward()                       # gradients add up; the graph is freed now
print(w.grad, b.grad)              # tensor([2.]) tensor([2.])

try:
    z.backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(" (")[0])   # Trying to backward through the graph a second time

w.grad.zero_()
b.grad.zero_()
print(w.grad, b.grad)              # tensor([0.]) tensor([0.])
