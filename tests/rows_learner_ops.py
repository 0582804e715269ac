"""Row examples for kthvalue, cummax, cummin, nansum (merged by tests/test_core_table.py), and
the counting ops torch records without a derivative. The lambdas use the global `torch`."""

import gradviz as torch

NO_DERIVATIVE = {
    "unique_consecutive": (lambda x: torch.unique_consecutive(x * 2),
                           "the derivative for 'unique_consecutive' is not implemented"),
    "bincount": (lambda x: torch.bincount(torch.tensor([0, 2, 2]), x * 2),
                 "derivative for aten::bincount is not implemented"),
}

M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]
N23 = [[0.3, float("nan"), 2.1], [1.1, 0.4, -0.6]]

A5 = [0.3, -1.2, 2.1, 1.1, 0.4]
W42 = [[0.5, -0.2], [1.3, 0.8], [-0.7, 0.9], [0.1, 1.6]]


def _unfold_double_backward(x, y):
    (g,) = torch.autograd.grad((x.unfold(0, 2, 1) * y).sum(), x, create_graph=True)
    return g


IMG = [[[[0.3, -1.2, 2.1], [1.1, 0.4, -0.6], [0.5, 1.7, -0.9]]]]        # (1, 1, 3, 3)
COLS = [[[0.3, -1.2, 2.1, 1.1], [0.4, -0.6, 0.5, 1.7], [-0.9, 0.2, 1.3, 0.8],
         [-0.7, 0.9, 0.1, 1.6]]]                                         # (1, 4, 4)

EXAMPLES = {
    # overlapping blocks, with padding: F.unfold and F.fold are each other's gradient
    "im2col": (lambda x: torch.nn.functional.unfold(x, 2, padding=1), (IMG,), {}),
    "col2im": (lambda x: torch.nn.functional.fold(x, (3, 3), 2), (COLS,), {}),
    # overlapping windows: each element's gradient is the sum over the windows reading it
    "unfold": (lambda x: x.unfold(1, 2, 1) * 1, (M23,), {}),
    "unfold_backward": (_unfold_double_backward, (A5, W42), {}),
    # overlapping reads of a view of the storage (of a view, offset 1): the gradients sum
    "as_strided_storage": (lambda x: x[1:].as_strided((2, 2), (1, 1)) * 1, (A5,), {}),
    "kthvalue": (lambda x: x.kthvalue(2, 1).values, (M23,), {}),
    "cummax": (lambda x: x.cummax(1).values, (M23,), {}),
    "cummin": (lambda x: torch.cummin(x, 0)[0], (M23,), {}),
    # the NaN stays out of the gradient, which finite differences cannot see
    "nansum": (lambda x: x.nansum(1), (M23,), {}),
}
