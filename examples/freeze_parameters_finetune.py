"""PyTorch's blitz "A gentle introduction to torch.autograd": Q = 3a**3 - b**2 with an external
gradient, which results require grad, and fine-tuning by freezing a model's parameters and
replacing its classifier (a small conv net stands in for resnet18).

Expect (PyTorch 2.13's output after torch.manual_seed(0)): the first loss -486.9936; a.grad ==
9*a**2 and b.grad == -2*b ([True, True] each); `a = x + y` does not require grad, `b = x + z`
does; after freezing, only the new model[4] (Linear(8, 10)) gets gradients: the
printed list [False, False, False, False] is `p.grad is None` for conv weight, conv bias
(their grads from the first backward stay), the new linear's weight and bias; the new bias after
one SGD step [0.0245, 0.0537, ...]. The older blitz page follows: x.grad is 4.5 everywhere,
and y doubles until its norm passes 1000 (y = x * 1024).

What to look at: model[0].weight keeps requires_grad False after freezing and its .grad from
the first backward is unchanged by the second; `out`'s graph starts at the new Linear (the
frozen layers make no nodes: AddmmBackward0 has (None, 0) for its input).

Run:
    gradviz run examples/freeze_parameters_finetune.py
    gradviz explain examples/freeze_parameters_finetune.py model.0.weight
This file calls backward itself: do not pass --backward.
"""
import gradviz as torch
from gradviz import nn, optim

torch.manual_seed(0)

model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(8, 1000))
data = torch.rand(1, 3, 64, 64)
labels = torch.rand(1, 1000)
prediction = model(data)
loss = (prediction - labels).sum()
loss.backward()
optim_ = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
optim_.step()
print(loss)
print(model[0].weight.grad.shape, model[0].weight[0, 0])

a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3*a**3 - b**2
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
print(9*a**2 == a.grad)
print(-2*b == b.grad)

x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

for param in model.parameters():
    param.requires_grad = False
model[4] = nn.Linear(8, 10)
optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
out = model(data).sum()
out.backward()
print([p.grad is None for p in model.parameters()])
optimizer.step()
print(model[4].bias)

x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out2 = z.mean()
print(z, out2)
out2.backward()
print(x.grad)

x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)
gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)
print(x.grad)
