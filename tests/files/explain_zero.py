import gradviz as torch

x = torch.tensor([-1.0, -2.0], requires_grad=True)
h = x.relu()
loss = h.sum()
loss.backward()
