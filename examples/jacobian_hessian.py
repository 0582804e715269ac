"""Jacobians, Hessians and vector products with torch.autograd.functional.

f(x) = x**2 * sum(x) at x = [1, 2]: the Jacobian has d f_i / d x_j = 2 x_i sum(x) on the
diagonal plus x_i**2 in row i, so J = [[7, 1], [4, 16]]. For the scalar
g(x) = sum(x**3), the Hessian is diag(6 x) = [[6, 0], [0, 12]]; hvp with v = [1, 1] is
H v = [6, 12]; vjp(f, x, v) is v^T J = [11, 17]; jvp(f, x, v) is J v = [8, 20].
Without create_graph=True the results are plain tensors (no grad_fn).

Run:
    gradviz run examples/jacobian_hessian.py
"""
import gradviz as torch

AF = torch.autograd.functional

x = torch.tensor([1.0, 2.0])
v = torch.ones(2)


def f(x):
    return x ** 2 * x.sum()


def g(x):
    return (x ** 3).sum()


J = AF.jacobian(f, x)
H = AF.hessian(g, x)
_, Hv = AF.hvp(g, x, v)
_, vJ = AF.vjp(f, x, v)
_, Jv = AF.jvp(f, x, v)
print(J)     # tensor([[ 7.,  1.], [ 4., 16.]])
print(H)     # tensor([[ 6.,  0.], [ 0., 12.]])
print(Hv, vJ, Jv)    # tensor([ 6., 12.]) tensor([11., 17.]) tensor([ 8., 20.])
