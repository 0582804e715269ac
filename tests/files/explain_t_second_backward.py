"""explain: x.grad comes from g.backward() (the second derivative, 6x = 18), not from y = x**3
whose gradient autograd.grad returned (27): explain must read it from g."""
import gradviz as torch

x = torch.tensor(3.0, requires_grad=True)
y = x ** 3
g, = torch.autograd.grad(y, x, create_graph=True)
g.backward()
