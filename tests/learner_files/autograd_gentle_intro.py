# PyTorch's "A Gentle Introduction to torch.autograd": one training step of a small
# convolutional model (resnet18 replaced), Q = 3a^3 - b^2 with external_grad, the collected
# gradients checked against 9a^2 and -2b, exclusion from the DAG (requires_grad flags through
# an addition), frozen parameters with a new classifier head, and the optimizer stepping only
# it. Also "Autograd mechanics": no_grad / inference_mode / eval, and the torch.no_grad()
# decorator.
import torch
from torch import nn, optim

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.BatchNorm2d(8), nn.ReLU(),
                      nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(8, 1000))
data = torch.rand(1, 3, 64, 64)
labels = torch.rand(1, 1000)

prediction = model(data)  # forward pass
loss = (prediction - labels).sum()
loss.backward()  # backward pass
print(prediction.grad_fn, loss)
optim_ = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
optim_.step()  # gradient descent
print(model[0].weight.grad.shape, f"{model[-1].bias.grad.sum().item():.1f}")

a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3 * a ** 3 - b ** 2
print(Q)
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
# check if collected gradients are correct
print(9 * a ** 2 == a.grad)
print(-2 * b == b.grad)
print(a.grad, b.grad)
print(Q.grad_fn, Q.grad_fn.next_functions)
print(Q.grad_fn.next_functions[0][0].next_functions)

x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)

a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.BatchNorm2d(8), nn.ReLU(),
                      nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(8, 1000))

# Freeze all the parameters in the network
for param in model.parameters():
    param.requires_grad = False

model[-1] = nn.Linear(8, 10)
# Optimize only the classifier
optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
print([p.requires_grad for p in model.parameters()])
out = model(data)
print(out.grad_fn, out.grad_fn.next_functions)
out.sum().backward()
print(model[0].weight.grad, model[-1].weight.grad.shape)
before = model[0].weight.clone()
optimizer.step()
print(torch.equal(before, model[0].weight), model[-1].bias, model[1].weight.grad)

# Autograd mechanics: locally disabling gradient computation
x = torch.ones(3, requires_grad=True)
with torch.no_grad():
    y = x * 2
print(y.requires_grad, y.grad_fn)
with torch.inference_mode():
    y = x * 2
print(y.requires_grad, y.is_inference())


@torch.no_grad()
def doubler(x):
    return x * 2


z = doubler(x)
print(z.requires_grad)
with torch.set_grad_enabled(False):
    print((x * 2).requires_grad)
torch.set_grad_enabled(True)
print((x * 2).requires_grad, torch.is_grad_enabled())
model.eval()
print(model.training, model[1].training)
try:
    y = x.exp()
    y.backward()
except RuntimeError as e:
    print(e)
try:
    y = x * x
    y.sum().backward()
    y.sum().backward()
except RuntimeError as e:
    print(str(e).split('\n')[0])
