"""Row examples for reductions, scans, sorting, gather, scatter and masks (merged into
tests/test_core_table.py: each drives the node check, first and second order finite
differences and the comparison with torch 2.13). The examples use the global name `torch`,
which the comparison rebinds to the real torch; index tensors are built inside them."""

import gradviz as torch

A3 = [0.3, -1.2, 2.1]
B3 = [1.4, 0.7, -0.9]
M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]
M22 = [[0.5, -0.2], [1.3, 0.8]]


def _var_mean(x):
    v, m = torch.var_mean(x, 1)
    return v * m


def _std_mean(x):
    s, m = torch.std_mean(x, dim=0, keepdim=True)
    return s * m


def _masked_select_grad(x, g):
    """x's gradient through masked_select with create_graph=True: zeros.masked_scatter_(mask,
    g), a MaskedScatterBackward0 node with g as its differentiable source."""
    mask = torch.tensor([[True, False, True], [False, True, True]])
    (gx,) = torch.autograd.grad(x.masked_select(mask), x, g, create_graph=True)
    return gx



def _masked_select_grad_grad(x, g, h):
    """g's gradient through _masked_select_grad: a MaskedScatterBackwardBackward0 node."""
    mask = torch.tensor([[True, False, True], [False, True, True]])
    (gx,) = torch.autograd.grad(x.masked_select(mask), x, g, create_graph=True)
    (gg,) = torch.autograd.grad(gx, g, h, create_graph=True)
    return gg


EXAMPLES = {
    "var": (lambda x: x.var(1, keepdim=True), (M23,), {}),
    "std": (lambda x: x.std(), (M23,), {}),
    "var_mean": (_var_mean, (M23,), {}),
    "std_mean": (_std_mean, (M23,), {}),
    "linalg_vector_norm": (lambda x: torch.linalg.vector_norm(x, ord=3, dim=1), (M23,), {}),
    "cumsum": (lambda x: x.cumsum(1), (M23,), {}),
    "cumprod": (lambda x: x.cumprod(0), (M23,), {}),
    "logsumexp": (lambda x: x.logsumexp(1), (M23,), {}),
    "amax": (lambda x: x.amax(0), (M23,), {}),
    "amin": (lambda x: x.amin((0, 1)), (M23,), {}),
    "sort": (lambda x: x.sort(1, descending=True)[0], (M23,), {}),
    "sort_stable": (lambda x: x.sort(dim=0, stable=True).values, (M23,), {}),
    "topk": (lambda x: x.topk(2).values, (M23,), {}),
    "median": (lambda x: x.median(), (M23,), {}),
    "median_dim": (lambda x: x.median(1).values, (M23,), {}),
    "nanmedian": (lambda x: x.masked_fill(torch.tensor([False, True, False]), float("nan"))
                  .nanmedian(), (M23,), {}),
    "nanmedian_dim": (lambda x: x.nanmedian(0, keepdim=True).values, (M23,), {}),
    "gather": (lambda x: x.gather(1, torch.tensor([[0, 2, 2], [1, 0, 1]])), (M23,), {}),
    "scatter": (lambda x, y: x.scatter(1, torch.tensor([[2, 0], [1, 2]]), y), (M23, M22), {}),
    "scatter_value": (lambda x: torch.scatter(x, 0, torch.tensor([[1, 0, 1]]), 2.5), (M23,), {}),
    "scatter_add": (lambda x, y: x.scatter_add(1, torch.tensor([[2, 2], [0, 1]]), y),
                    (M23, M22), {}),
    "index_select": (lambda x: x.index_select(1, torch.tensor([2, 0, 2])), (M23,), {}),
    "index_add": (lambda x, y: x.index_add(1, torch.tensor([2, 2]), y, alpha=2), (M23, M22),
                  {}),
    "index_copy": (lambda x, y: x.index_copy(1, torch.tensor([2, 0]), y), (M23, M22), {}),
    "index_fill": (lambda x: x.index_fill(1, torch.tensor([0, 2]), -1.5), (M23,), {}),
    "index_fill_tensor": (lambda x, v: x.index_fill(0, torch.tensor([1]), v), (M23, 0.5), {}),
    "masked_fill": (lambda x: x.masked_fill(x.detach() > 0.5, 0.25), (M23,), {}),
    "masked_fill_tensor": (lambda x, v: x.masked_fill(torch.tensor([True, False, True]), v),
                           (M23, 0.5), {}),
    "masked_select": (lambda x: x.masked_select(torch.tensor([[True], [False]])), (A3,), {}),
    "masked_scatter": (_masked_select_grad, (M23, [0.5, -0.7, 0.9, 1.3]), {}),
    "masked_scatter_backward": (_masked_select_grad_grad,
                                (M23, [0.5, -0.7, 0.9, 1.3], M23), {}),
}
