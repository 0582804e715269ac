"""Examples of the "Higher-order nodes" rows: each takes a gradient with create_graph=True,
so that the result's graph holds the backward op's own node (TanhBackwardBackward0, ...), with
the incoming gradient `g` as a differentiable input of its own."""

import gradviz as torch     # rebound to real torch by the differential test

A3 = [0.3, -1.2, 2.1]
B3 = [1.4, 0.7, -0.9]
M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]
N23 = [[0.5, 0.2, -1.3], [-0.7, 0.9, 0.1]]


def _grad_of(f):
    def example(x, g):
        (gx,) = torch.autograd.grad(f(x), x, g, create_graph=True)
        return gx
    return example


def _mse_grads(x, y):
    """Both gradients of mse_loss, each a MseLossBackwardBackward0 node."""
    loss = torch.nn.functional.mse_loss(x, y)
    gx, gy = torch.autograd.grad(loss, (x, y), create_graph=True)
    return torch.stack([gx, gy])


EXAMPLES = {
    "tanh_backward": (_grad_of(lambda x: x.tanh()), (A3, B3), {}),
    "sigmoid_backward": (_grad_of(lambda x: x.sigmoid()), (A3, B3), {}),
    "threshold_backward": (_grad_of(lambda x: x.relu() * x), (A3, B3), {}),
    "_softmax_backward_data": (_grad_of(lambda x: x.softmax(1)), (M23, N23), {}),
    "_log_softmax_backward_data": (_grad_of(lambda x: x.log_softmax(0)), (M23, N23), {}),
    "mse_loss_backward": (_mse_grads, (A3, B3), {}),
    "select_backward": (_grad_of(lambda x: x[1]), (M23, A3), {}),
    "diagonal_backward": (_grad_of(lambda x: x.diagonal(1)), (M23, [0.5, -0.7]), {}),
    "slice_backward": (_grad_of(lambda x: x[:, 1:]), (M23, [[0.5, 0.2], [-0.7, 0.9]]), {}),
}
