"""Tensors the way PyTorch's "Tensors" tutorial and d2l.ai's preliminaries write them.

The NumPy spellings torch accepts work unchanged: `A.sum(axis=0)`, `A.sum(axis=1,
keepdims=True)`, `A.cumsum(axis=0)`, `torch.sum(input=A)`; and `out=`: `torch.matmul(tensor,
tensor.T, out=y3)` writes into y3 and returns it (y3._version goes from 0 to 1, as an in-place
edit). Values to expect: y1 = y2 = y3 = 3 everywhere (4x4 of ones with column 1 zeroed, times
its transpose); agg = 12.0; A.sum(axis=0) = [3., 5., 7.]; A.sum(axis=1, keepdims=True) =
[[3.], [12.]]; A / A.sum(axis=1, keepdims=True) rows sum to 1; n follows t.add_(1) (the NumPy
bridge shares memory).

Run:
    gradviz run examples/tensor_basics_tutorial.py
The tensors table lists y3 with version 1 and z3 with version 1 (written through out=).
"""
import numpy as np

import gradviz as torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
x_np = torch.from_numpy(np.array(data))
x_ones = torch.ones_like(x_data)
print(f"Ones Tensor: \n {x_ones} \n")

shape = (2, 3,)
ones_tensor = torch.ones(shape)
print(f"Shape of tensor: {ones_tensor.shape}")
print(f"Datatype of tensor: {ones_tensor.dtype}")
print(f"Device tensor is stored on: {ones_tensor.device}")

use_accel = torch.accelerator.is_available()
device = torch.accelerator.current_accelerator().type if use_accel else "cpu"
print(f"Using {device} device")

tensor = torch.ones(4, 4)
print("First row: ", tensor[0])
print("Last column:", tensor[..., -1])
tensor[:, 1] = 0
t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1.shape)

y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
y3 = torch.zeros_like(tensor)
torch.matmul(tensor, tensor.T, out=y3)
z3 = torch.zeros_like(tensor)
torch.mul(tensor, tensor, out=z3)
print(y3, y3._version, torch.equal(y1, y3), torch.equal(z3, tensor * tensor))

agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))

tensor.add_(5)
print(tensor)

t = torch.ones(5)
n = t.numpy()
t.add_(1)
print(f"t: {t}")
print(f"n: {n}")

A = torch.arange(6, dtype=torch.float32).reshape(2, 3)
print(A.sum(axis=0), A.sum(axis=[0, 1]), A.mean(axis=0))
sum_A = A.sum(axis=1, keepdims=True)
print(sum_A, A / sum_A)
print(A.cumsum(axis=0), torch.sum(input=A), A.argmax(axis=1))
