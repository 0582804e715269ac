"""Examples of the neural-network rows: activations, losses, embedding, dropout and
normalization (merged into tests/test_core_table.py's EXAMPLES)."""

import gradviz as torch

A3 = [0.3, -1.2, 2.1]
M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]
M24 = [[0.3, -1.2, 2.1, 0.5], [1.1, 0.4, -0.6, -2.3]]


def _gelu_double(x):
    (g,) = torch.autograd.grad(torch.nn.functional.gelu(x).sum(), x, create_graph=True)
    return g


EXAMPLES = {
    "gelu": (lambda x: torch.nn.functional.gelu(x), (A3,), {}),
    "gelu_backward": (_gelu_double, (A3,), {}),
    "silu": (lambda x: torch.nn.functional.silu(x), (A3,), {}),
    "softplus": (lambda x: torch.nn.functional.softplus(x, beta=2, threshold=3), (A3,), {}),
    "log_sigmoid": (lambda x: torch.nn.functional.logsigmoid(x), (A3,), {}),
    "leaky_relu": (lambda x: torch.nn.functional.leaky_relu(x, 0.2), (A3,), {}),
    "elu": (lambda x: torch.nn.functional.elu(x, 0.5), (A3,), {}),
    "hardtanh": (lambda x: torch.nn.functional.hardtanh(x, -1.0, 2.0), (A3,), {}),
    "glu": (lambda x: torch.nn.functional.glu(x), (M24,), {}),
}
