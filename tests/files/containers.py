import gradviz as torch
from gradviz import nn

model = nn.Linear(3, 2)
xs = [torch.ones(3), torch.zeros(3)]
params = {"w": torch.tensor([1.0], requires_grad=True)}
out = model(xs[0]).sum() + params["w"].sum()
hidden = (out * 2).exp()
