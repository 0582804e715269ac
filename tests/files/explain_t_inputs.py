import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], requires_grad=True)
loss = (x * w).sum()
loss.backward(inputs=[w], retain_graph=True)
