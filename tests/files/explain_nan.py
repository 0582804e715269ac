import gradviz as torch

x = torch.tensor([4.0, 0.0], requires_grad=True)
r = x.sqrt()
loss = (r * 0).sum()
loss.backward()
