# PyTorch's Learn the Basics, Tensors (tensorqs_tutorial): tensors from data, from NumPy arrays
# and from other tensors, shapes with rand/ones/zeros, attributes, NumPy-like indexing and
# slicing, torch.cat, arithmetic (@, matmul with out=, *, mul with out=), single-element
# tensors and .item(), in-place add_, and the tensor <-> NumPy bridge sharing memory.
import numpy as np
import torch

torch.manual_seed(0)

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print(x_data)

np_array = np.array(data)
x_np = torch.from_numpy(np_array)
print(x_np)

x_ones = torch.ones_like(x_data)  # retains the properties of x_data
print(f"Ones Tensor: \n {x_ones} \n")

x_rand = torch.rand_like(x_data, dtype=torch.float)  # overrides the datatype of x_data
print(f"Random Tensor: \n {x_rand} \n")

shape = (2, 3,)
rand_tensor = torch.rand(shape)
ones_tensor = torch.ones(shape)
zeros_tensor = torch.zeros(shape)

print(f"Random Tensor: \n {rand_tensor} \n")
print(f"Ones Tensor: \n {ones_tensor} \n")
print(f"Zeros Tensor: \n {zeros_tensor}")

tensor = torch.rand(3, 4)

print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")

# We move our tensor to the current accelerator if available
if torch.accelerator.is_available():
    tensor = tensor.to(torch.accelerator.current_accelerator())

tensor = torch.ones(4, 4)
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor[:, 1] = 0
print(tensor)

t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1)

# This computes the matrix multiplication between two tensors. y1, y2, y3 will have the same value
# ``tensor.T`` returns the transpose of a tensor
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)

y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
print(y1, y2, y3, sep="\n")

# This computes the element-wise product. z1, z2, z3 will have the same value
z1 = tensor * tensor
z2 = tensor.mul(tensor)

z3 = torch.rand_like(tensor)
torch.mul(tensor, tensor, out=z3)
print(z1, z2, z3, sep="\n")

agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))

print(f"{tensor} \n")
tensor.add_(5)
print(tensor)

t = torch.ones(5)
print(f"t: {t}")
n = t.numpy()
print(f"n: {n}")

t.add_(1)
print(f"t: {t}")
print(f"n: {n}")

n = np.ones(5)
t = torch.from_numpy(n)

np.add(n, 1, out=n)
print(f"t: {t}")
print(f"n: {n}")

# A few more reprs the tutorial's readers print while experimenting
print(torch.stack([x_data, x_data]))
print(x_rand.dtype, x_np.dtype, x_data.float().mean())
print(torch.arange(12).reshape(3, 4)[1:, ::2])
print(torch.rand(2, 3, dtype=torch.float64))
print(torch.tensor([1.5, float("nan"), float("inf")]), torch.tensor([True, False]))
print(torch.zeros(2, 0), torch.tensor(3.25), torch.tensor([1e-8, 1e8]))
print(torch.randn(3, 3) * 1000, torch.randint(0, 10, (2, 5)))
print(tensor.T.is_contiguous(), tensor.T.contiguous().stride(), tensor.size(1), tensor.ndim)
