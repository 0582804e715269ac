# The 60-minute blitz's older "What is PyTorch?" tensor page, as learners still copy it:
# torch.zeros(5, 3, dtype=torch.long), x.new_ones(5, 3, dtype=torch.double),
# torch.randn_like(x, dtype=torch.float), x.size(), torch.add(x, y, out=result), y.add_(x),
# NumPy-style indexing, view(-1, 8), .item(), the NumPy bridge, and .to("cpu", torch.double).
import numpy as np
import torch

torch.manual_seed(0)

x = torch.rand(5, 3)
print(x)
x = torch.zeros(5, 3, dtype=torch.long)
print(x)
x = torch.tensor([5.5, 3])
print(x)
x = x.new_ones(5, 3, dtype=torch.double)      # new_* methods take in sizes
print(x)

x = torch.randn_like(x, dtype=torch.float)    # override dtype!
print(x)                                      # result has the same size
print(x.size())
y = torch.rand(5, 3)
print(x + y)
print(torch.add(x, y))
result = torch.empty(5, 3)
torch.add(x, y, out=result)
print(result)
# adds x to y
y.add_(x)
print(y)
print(x[:, 1])
x = torch.randn(4, 4)
y = x.view(16)
z = x.view(-1, 8)  # the size -1 is inferred from other dimensions
print(x.size(), y.size(), z.size())
x = torch.randn(1)
print(x)
print(x.item())
a = torch.ones(5)
print(a)
b = a.numpy()
print(b)
a.add_(1)
print(a)
print(b)
a = np.ones(5)
b = torch.from_numpy(a)
np.add(a, 1, out=a)
print(a)
print(b)
x = torch.randn(2, 2)
y = torch.ones_like(x, device="cpu")  # directly create a tensor on the device
x = x.to("cpu")                       # or just use strings ``.to("cpu")``
z = x + y
print(z)
print(z.to("cpu", torch.double))       # ``.to`` can also change dtype together!
print(torch.tensor([[1, 2], [3, 4]]).new_zeros(2), x.new_tensor([1, 2]), x.new_full((2,), 7))
print(torch.empty(2, 3).shape, x.type(), x.double().type(), x.long().dtype, torch.is_tensor(x))
