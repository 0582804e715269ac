# x's values change through .data, which autograd does not count: the graph used 3, not 1
import gradviz as torch
x = torch.ones(2, requires_grad=True)
x.data.mul_(3)
loss = (x * x).sum()
