import gradviz as torch


def helper(t):
    return t.view(5)


x = torch.ones(2, 3, requires_grad=True)
y = x * 2
z = helper(y)
