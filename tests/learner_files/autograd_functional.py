# torch.autograd.functional as its documentation's examples and the "Jacobians, Hessians, hvp,
# vhp, and more" tutorial use it: jacobian (create_graph, vectorize), hessian of a
# power sum and of a function of two inputs, vjp / jvp / vhp / hvp, and torch.autograd.grad
# with create_graph for a second derivative, checked against the functional API.
import torch
from torch.autograd.functional import jacobian, hessian, vjp, jvp, vhp, hvp

torch.manual_seed(0)


def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.rand(2, 2)
print(jacobian(exp_reducer, inputs))
print(jacobian(exp_reducer, inputs, create_graph=True))


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.rand(2), torch.rand(2))
print(jacobian(exp_adder, inputs))
print(jacobian(exp_adder, inputs, vectorize=True))


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.rand(2, 2)
print(hessian(pow_reducer, inputs))
print(hessian(pow_reducer, inputs, create_graph=True))


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


inputs = (torch.rand(2), torch.rand(2))
print(hessian(pow_adder_reducer, inputs))

inputs = torch.rand(4, 4)
v = torch.ones(4)
print(vjp(exp_reducer, inputs, v))
print(vjp(exp_reducer, inputs, v, create_graph=True))


def adder(x, y):
    return 2 * x + 3 * y


inputs = (torch.rand(2), torch.rand(2))
v = torch.ones(2)
print(vjp(adder, inputs, v))

inputs = torch.rand(4, 4)
v = torch.ones(4, 4)
print(jvp(exp_reducer, inputs, v))
print(jvp(exp_reducer, inputs, v, create_graph=True))

inputs = (torch.rand(2), torch.rand(2))
v = (torch.ones(2), torch.ones(2))
print(jvp(adder, inputs, v))

inputs = torch.rand(2, 2)
v = torch.ones(2, 2)
print(vhp(pow_reducer, inputs, v))
print(vhp(pow_reducer, inputs, v, create_graph=True))
print(hvp(pow_reducer, inputs, v))
print(hvp(pow_reducer, inputs, v, create_graph=True))

inputs = (torch.rand(2), torch.rand(2))
v = (torch.zeros(2), torch.ones(2))
print(vhp(pow_adder_reducer, inputs, v))
print(hvp(pow_adder_reducer, inputs, v))

# the tutorial's predict(weight, bias, x) and its jacobian with respect to the input
D = 4
weight = torch.randn(D, D)
bias = torch.randn(D)
x = torch.randn(D)


def predict(weight, bias, x):
    return torch.nn.functional.linear(x, weight, bias).tanh()


jacobian_rows = [torch.autograd.grad(predict(weight, bias, x), x, vec)[0]
                 for vec in torch.eye(D)] if x.requires_grad else None
print(jacobian_rows)
x.requires_grad_()
unit_vectors = torch.eye(D)


def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                     for vec in unit_vectors]
    return torch.stack(jacobian_rows)


jacobian_manual = compute_jac(x)
ft_jacobian = jacobian(lambda x: predict(weight, bias, x), x)
print(jacobian_manual.shape, torch.allclose(ft_jacobian, jacobian_manual))
print(jacobian(predict, (weight, bias, x))[1])

# a second derivative through autograd.grad(create_graph=True)
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
dy_dx, = torch.autograd.grad(y, x, create_graph=True)
print(dy_dx, dy_dx.grad_fn)
d2y_dx2, = torch.autograd.grad(dy_dx, x)
print(d2y_dx2)
print(hessian(lambda x: x ** 3, x))
