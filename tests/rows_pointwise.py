"""Row examples for the pointwise and special functions (merged by tests/test_core_table.py).

Each drives: the example records its row's node, first and second derivatives match finite
differences in float64, and values, gradients, grad_fn names, next_functions and saved names
match torch 2.13. The lambdas use the global `torch`, rebound to gradviz or to torch.
"""

import gradviz as torch

A3 = [0.3, -1.2, 2.1]
B3 = [1.4, 0.7, -0.9]
C3 = [0.25, 0.8, -0.4]
P3 = [0.3, 1.2, 2.1]            # positive
U3 = [0.3, -0.6, 0.45]          # inside (-1, 1)
M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]

def _tan_double_backward(x):
    (g,) = torch.autograd.grad(x.tan().sum(), x, create_graph=True)
    return g


EXAMPLES = {
    "add_scalar": (_tan_double_backward, (U3,), {}),
    "rsub_tensor": (lambda x, y: torch.rsub(x, y, alpha=2), (A3, M23), {}),
    "sgn": (lambda x: torch.sgn(x) * x, (A3,), {}),     # torch: sgn alone gives a ZeroTensor
    "clamp_min": (lambda x: torch.clamp_min(x, 0.5), (A3,), {}),
    "clamp_min_tensor": (lambda x, lo: x.clamp_min(lo), (A3, B3), {}),
    "clamp_max": (lambda x: x.clamp_max(0.5), (A3,), {}),
    "clamp_max_tensor": (lambda x, hi: torch.clamp_max(x, hi), (A3, B3), {}),
    "tan": (lambda x: x.tan(), (U3,), {}),
    "atan": (lambda x: torch.arctan(x), (A3,), {}),
    "asin": (lambda x: x.arcsin(), (U3,), {}),
    "acos": (lambda x: torch.acos(x), (U3,), {}),
    "sinh": (lambda x: x.sinh(), (A3,), {}),
    "cosh": (lambda x: torch.cosh(x), (A3,), {}),
    "erf": (lambda x: torch.erf(x), ([0.3, -1.0, 1.6, 3.2, -0.9, 0.02],), {}),
    "erfc": (lambda x: x.erfc(), ([0.3, -1.0, 1.6, 3.2, -0.9, 0.02],), {}),
    "asinh": (lambda x: torch.arcsinh(x), (A3,), {}),
    "acosh": (lambda x: x.acosh(), ([1.3, 2.2, 4.1],), {}),
    "atanh": (lambda x: torch.atanh(x), (U3,), {}),
    "logaddexp2": (lambda x, y: x.logaddexp2(y), (A3, B3), {}),
    "log1p": (lambda x: x.log1p(), (P3,), {}),
    "expm1": (lambda x: torch.expm1(x), (A3,), {}),
    "log2": (lambda x: x.log2(), (P3,), {}),
    "log10": (lambda x: torch.log10(x), (P3,), {}),
    "exp2": (lambda x: x.exp2(), (A3,), {}),
    "rsqrt": (lambda x: torch.rsqrt(x), (P3,), {}),
    "frac": (lambda x: (x * 3).frac(), (A3,), {}),
    "atan2": (lambda y, x: torch.atan2(y, x), (A3, B3), {}),
    "hypot": (lambda x, y: x.hypot(y), (A3, B3), {}),
    "logaddexp": (lambda x, y: torch.logaddexp(x, y), (A3, M23), {}),
    "xlogy": (lambda x, y: torch.xlogy(x, y), (A3, P3), {}),
    "xlogy_scalar_self": (lambda y: torch.xlogy(2.5, y), (P3,), {}),
    "xlogy_scalar_other": (lambda x: x.xlogy(3), (A3,), {}),
    "fmod_scalar": (lambda x: torch.fmod(x, 0.65), (A3,), {"second": False}),
    "fmod": (lambda x, y: x.fmod(y), (A3, B3), {"second": False}),
    "lerp": (lambda x, y: torch.lerp(x, y, 0.3), (A3, M23), {}),
    "lerp_tensor": (lambda x, y, w: x.lerp(y, w), (A3, B3, [0.2, 0.7, -0.1]), {}),
    "addcmul": (lambda x, a, b: torch.addcmul(x, a, b, value=0.5), (A3, B3, C3), {}),
    "addcdiv": (lambda x, a, b: x.addcdiv(a, b, value=-2), (A3, B3, C3), {}),
}
