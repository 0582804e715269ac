"""Row examples for the shape and linear-algebra families (merged by tests/test_core_table.py).

Each example records its row's node; `torch` is rebound to gradviz or the real torch.
"""

import gradviz as torch

M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]
M33 = [[2.0, -1.2, 0.5], [0.4, 1.5, -0.6], [0.3, 0.8, 1.9]]
M34 = [[0.3, -1.2, 2.1, 0.7], [1.1, 0.4, -0.6, -0.2], [0.9, -0.3, 0.5, 1.6]]
A3 = [0.3, -1.2, 2.1]
B3 = [1.4, 0.7, -0.9]
B234 = [[[0.1 * (i + 2 * j - k) + 0.05 * i * k for k in range(4)] for j in range(3)]
        for i in range(2)]
B243 = [[[0.2 * (i - j + k) - 0.03 * j * k for k in range(3)] for j in range(4)]
        for i in range(2)]


def _split_second(x):
    return x.split(2, dim=1)[1]


def _split_sizes_first(x):
    return x.split([1, 2], dim=1)[0]


def _det_grad(x):
    """det's gradient with create_graph=True: torch solves A^T G = det I for it
    (LinalgSolveExBackward0)."""
    (g,) = torch.autograd.grad(torch.det(x), x, create_graph=True)
    return g


EXAMPLES = {
    "tril": (lambda x: x.tril(1), (M34,), {}),
    "triu": (lambda x: torch.triu(x, -1), (M34,), {}),
    "diagonal": (lambda x: x.diagonal(1), (M34,), {}),
    "diagonal_copy": (lambda x: torch.diag(x, -1), (M34,), {}),
    "diag_embed": (lambda x: torch.diag(x, 1), (A3,), {}),
    "trace": (lambda x: x.trace(), (M34,), {}),
    "flip": (lambda x: x.flip(0, 1), (M23,), {}),
    "roll": (lambda x: x.roll((1, -2), (0, 1)), (M34,), {}),
    "rot90": (lambda x: torch.rot90(x, -1, [1, 0]), (M23,), {}),
    "repeat": (lambda x: x.repeat(2, 1, 2), (M23,), {}),
    "split": (_split_second, (M23,), {}),
    "split_with_sizes": (_split_sizes_first, (M23,), {}),
    "baddbmm": (lambda b, x, y: torch.baddbmm(b, x, y, beta=0.5, alpha=2), (A3, B234, B243),
                {}),
    "addbmm": (lambda b, x, y: torch.addbmm(b, x, y, alpha=-1.5), (A3, B234, B243), {}),
    "addmv": (lambda b, m, v: torch.addmv(b, m, v, beta=2), (A3, M34, [0.5, -1.0, 2.0, 0.3]),
              {}),
    "linalg_cross": (lambda x, y: torch.linalg.cross(x, y), (M33, [A3]), {}),
    "cdist": (lambda x, y: torch.cdist(x, y), (M34, [[0.5, 0.1, -0.3, 1.0]]), {"second": False}),
    "euclidean_dist": (lambda x, y: torch.cdist(x, y, compute_mode="use_mm_for_euclid_dist"),
                       (M34, [[0.5, 0.1, -0.3, 1.0], [1.5, -0.4, 0.2, 0.0]]), {}),
    "linalg_inv_ex": (lambda x: torch.linalg.inv(x), (M33,), {}),
    "linalg_det": (lambda x: torch.det(x), (M33,), {}),
    "linalg_solve_ex": (_det_grad, (M33,), {}),
}

def _cdist_grad(x):
    """cdist's gradient under create_graph=True: CdistBackwardBackward0, not differentiable."""
    x1 = x.reshape(3, 1)
    d = torch.cdist(x1, torch.tensor([[0.5], [-1.0]], dtype=x.dtype))
    return torch.autograd.grad(d.sum(), x1, create_graph=True)[0]


NO_DERIVATIVE = {
    "cdist_backward": (_cdist_grad, "the derivative for '_cdist_backward' is not implemented"),
}
