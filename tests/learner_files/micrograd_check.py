# Karpathy's micrograd: the README's example and test_engine.py's two checks run on PyTorch
# (double tensors made with torch.Tensor([...]).double(), requires_grad set afterwards,
# retain_grad, .data.item() and .grad.item()), and the "spelled-out intro" lecture's neuron:
# a tanh of a weighted sum, its gradients, and the torch version of the same expression.
import torch

x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xpt, ypt = x, y
print(ypt.data.item(), xpt.grad.item())

a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b ** 3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e ** 2
g = f / 2.0
g = g + 10.0 / f
g.backward()
apt, bpt, gpt = a, b, g
tol = 1e-6
print(f'{gpt.data.item():.4f}')  # prints 24.7041, the outcome of this forward pass
print(f'{apt.grad.item():.4f}')  # prints 138.8338, i.e. the numerical value of dg/da
print(f'{bpt.grad.item():.4f}')  # prints 645.5773, i.e. the numerical value of dg/db
print(abs(gpt.data.item() - 24.70408163265306) < tol)
print(g.grad_fn, g.grad_fn.next_functions)

# the lecture's neuron, in PyTorch
x1 = torch.Tensor([2.0]).double(); x1.requires_grad = True
x2 = torch.Tensor([0.0]).double(); x2.requires_grad = True
w1 = torch.Tensor([-3.0]).double(); w1.requires_grad = True
w2 = torch.Tensor([1.0]).double(); w2.requires_grad = True
b = torch.Tensor([6.8813735870195432]).double(); b.requires_grad = True
n = x1 * w1 + x2 * w2 + b
o = torch.tanh(n)

print(o.data.item())
o.backward()

print('---')
print('x2', x2.grad.item())
print('w2', w2.grad.item())
print('x1', x1.grad.item())
print('w1', w1.grad.item())
print(o, n.grad_fn)

# the lecture's "exp" version of tanh, with retain_grad on the intermediates
n = x1 * w1 + x2 * w2 + b
n.retain_grad()
e = (2 * n).exp()
e.retain_grad()
o = (e - 1) / (e + 1)
for t in (x1, x2, w1, w2, b):
    t.grad = None
o.backward()
print(o.item(), n.grad.item(), e.grad.item(), x1.grad.item(), w1.grad.item())
print(torch.Tensor([2.0]).dtype, torch.Tensor([2.0]).double().dtype, torch.Tensor(2, 3).shape)
