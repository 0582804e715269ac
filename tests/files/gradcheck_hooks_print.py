import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(lambda g: print("x grad:", g))
y = (x * x).sum()
