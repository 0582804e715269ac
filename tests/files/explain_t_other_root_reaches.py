import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
p = (x * 2).sum()
q = (x * 3).sum()
q.backward()
