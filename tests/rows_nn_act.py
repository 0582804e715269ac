"""Examples of the neural-network rows: activations, losses, embedding, dropout and
normalization (merged into tests/test_core_table.py's EXAMPLES)."""

import gradviz as torch

A3 = [0.3, -1.2, 2.1]
M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]
M24 = [[0.3, -1.2, 2.1, 0.5], [1.1, 0.4, -0.6, -2.3]]


def _gelu_double(x):
    (g,) = torch.autograd.grad(torch.nn.functional.gelu(x).sum(), x, create_graph=True)
    return g


def _glu_double(x, g):
    (gx,) = torch.autograd.grad(torch.nn.functional.glu(x), x, g, create_graph=True)
    return gx


P23 = [[0.2, 0.7, 0.4], [0.9, 0.35, 0.6]]      # probabilities
T23 = [[0.1, 0.8, 0.5], [1.0, 0.0, 0.3]]


def _bce(x, t):
    w = torch.tensor([0.5, 1.0, 2.0], dtype=x.dtype)
    return torch.nn.functional.binary_cross_entropy(x, t, weight=w, reduction="sum")


def _bce_grad(wrt):
    """binary_cross_entropy's gradient w.r.t. input (0) or target (1) with create_graph=True:
    a BinaryCrossEntropyBackwardBackward0 node, or -logit(input) (LogitBackward0)."""
    def example(x, t):
        w = torch.tensor([0.5, 1.0, 2.0], dtype=x.dtype)
        loss = torch.nn.functional.binary_cross_entropy(x, t, weight=w)
        return torch.autograd.grad(loss, (x, t), create_graph=True)[wrt]
    return example


def _bce_logits(x, t):
    w = torch.tensor([0.5, 1.0, 2.0], dtype=x.dtype)
    pw = torch.tensor([3.0, 1.0, 0.5], dtype=x.dtype)
    return torch.nn.functional.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw)


def _nll_weighted(x):
    w = torch.tensor([0.5, 1.0, 2.0], dtype=x.dtype)
    return torch.nn.functional.nll_loss(x, torch.tensor([2, -100]), weight=w, ignore_index=-100)


def _nll2d(x):
    t = torch.tensor([[[1, 0], [2, 1]]])
    return torch.nn.functional.nll_loss(x.reshape(1, 3, 2, 2), t, reduction="none")


def _loss_grads(loss, **kwargs):
    """Both gradients of a loss with create_graph=True: each its backward op's own node
    (HuberLossBackwardBackward0, ...)."""
    def example(x, y):
        out = getattr(torch.nn.functional, loss)(x, y, **kwargs)
        return torch.stack(torch.autograd.grad(out, (x, y), create_graph=True))
    return example


def _nll_grad(x):
    """nll_loss's gradient with create_graph=True: its backward op's own node."""
    w = torch.tensor([0.5, 1.0, 2.0], dtype=x.dtype)
    loss = torch.nn.functional.nll_loss(x, torch.tensor([2, -100]), weight=w)
    (g,) = torch.autograd.grad(loss, x, create_graph=True)
    return g * x


def _nll2d_grad(x, gout):
    """With the incoming gradient gout differentiable too (its formula is nll_loss itself)."""
    t = torch.tensor([[[1, 0], [2, 1]]])
    loss = torch.nn.functional.nll_loss(x.reshape(1, 3, 2, 2), t, reduction="none")
    (g,) = torch.autograd.grad(loss, x, gout.reshape(1, 2, 2), create_graph=True)
    return g * x


X234 = [[[0.3, -1.2, 2.1, 0.5], [1.1, 0.4, -0.6, -2.3], [0.2, 0.9, -0.4, 1.6]],
        [[-0.7, 1.3, 0.8, -0.1], [0.6, -1.5, 0.25, 1.9], [-0.3, 0.45, 1.2, -0.8]]]


G234 = [[[0.5, 0.2, -1.3, 0.7], [-0.7, 0.9, 0.1, 1.2], [0.4, -0.6, 1.1, -0.2]],
        [[1.3, -0.4, 0.6, 0.8], [-1.1, 0.3, 0.9, -0.5], [0.2, 1.4, -0.9, 0.35]]]


def _layer_norm_grads(x, w, b, g):
    """The three gradients of layer_norm for the output gradient g, with create_graph=True:
    the outputs of one NativeLayerNormBackwardBackward0 node, flattened into one tensor."""
    out = torch.nn.functional.layer_norm(x, (4,), w, b)
    grads = torch.autograd.grad(out, (x, w, b), g, create_graph=True)
    return torch.cat([t.reshape(-1) for t in grads])


def _group_norm_grad(x, w, b):
    """group_norm's input gradient with create_graph=True: torch's formula unsqueeze_s its
    sums (UnsqueezeBackward1)."""
    out = torch.nn.functional.group_norm(x, 1, w, b)
    (g,) = torch.autograd.grad((out * out).sum(), x, create_graph=True)
    return g


def _batch_norm(x, w, b):
    return torch.nn.functional.batch_norm(x, None, None, w, b, training=True)


def _batch_norm_grads(x, w, b, g):
    """The three gradients of batch_norm for the output gradient g, with create_graph=True:
    the outputs of one NativeBatchNormBackwardBackward0 node, flattened into one tensor."""
    out = torch.nn.functional.batch_norm(x, None, None, w, b, training=True)
    grads = torch.autograd.grad(out, (x, w, b), g, create_graph=True)
    return torch.cat([t.reshape(-1) for t in grads])


def _embedding(w):
    # padding_idx and scale_grad_by_freq are not the derivative of the lookup (finite
    # differences cannot check them): tests/test_nn_act.py compares them with torch.
    return torch.nn.functional.embedding(torch.tensor([[2, 0], [2, 1]]), w)


def _embedding_grad(w, g):
    """The table's gradient with create_graph=True: an EmbeddingDenseBackwardBackward0 node."""
    out = torch.nn.functional.embedding(torch.tensor([[2, 0], [2, 1]]), w)
    (gw,) = torch.autograd.grad(out, w, g, create_graph=True)
    return gw


def _leaky_relu_double(x):
    y = torch.nn.functional.leaky_relu(x, 0.2)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    return g * x


def _hardtanh_double(x):
    y = torch.nn.functional.hardtanh(x, -1.0, 2.0)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    return g * x


def _softplus_double(x):
    y = torch.nn.functional.softplus(x, beta=2, threshold=3)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    return g


def _log_sigmoid_double(x):
    (g,) = torch.autograd.grad(torch.nn.functional.logsigmoid(x).sum(), x, create_graph=True)
    return g


def _elu_double(x):
    (g,) = torch.autograd.grad(torch.nn.functional.elu(x, 0.5).sum(), x, create_graph=True)
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
    "softplus_backward": (_softplus_double, (A3,), {}),
    "log_sigmoid_backward": (_log_sigmoid_double, (A3,), {}),
    "elu_backward": (_elu_double, (A3,), {}),
    "leaky_relu_": (lambda x: torch.nn.functional.leaky_relu(x * 1, 0.2, inplace=True), (A3,),
                    {}),
    "elu_": (lambda x: torch.nn.functional.elu(x * 1, 0.5, inplace=True), (A3,), {}),
    "leaky_relu_backward": (_leaky_relu_double, (A3,), {}),
    "hardtanh_backward": (_hardtanh_double, (A3,), {}),
    "glu": (lambda x: torch.nn.functional.glu(x), (M24,), {}),
    "glu_backward": (_glu_double, (M24, [[0.5, -1.3], [0.8, 0.2]]), {}),
    "nll_loss": (_nll_weighted, (M23,), {}),
    "nll_loss2d": (_nll2d, ([0.3, -1.2, 2.1, 0.5, 1.1, 0.4, -0.6, -2.3, 0.2, 0.9, -0.4, 1.6],),
                   {}),
    "nll_loss_backward": (_nll_grad, (M23,), {}),
    "nll_loss2d_backward": (_nll2d_grad, ([0.3, -1.2, 2.1, 0.5, 1.1, 0.4, -0.6, -2.3, 0.2, 0.9,
                                           -0.4, 1.6], [0.7, -0.3, 1.2, 0.4]), {}),
    "binary_cross_entropy": (_bce, (P23, T23), {}),
    "binary_cross_entropy_backward": (_bce_grad(0), (P23, T23), {}),
    "logit": (_bce_grad(1), (P23, T23), {}),
    "binary_cross_entropy_with_logits": (_bce_logits, (M23, T23), {}),
    "smooth_l1_loss": (lambda x, y: torch.nn.functional.smooth_l1_loss(x, y, beta=0.5),
                       (M23, T23), {}),
    "huber_loss": (lambda x, y: torch.nn.functional.huber_loss(x, y, delta=0.5), (M23, T23),
                   {}),
    "smooth_l1_loss_backward": (_loss_grads("smooth_l1_loss", beta=0.5), (M23, T23), {}),
    "huber_loss_backward": (_loss_grads("huber_loss", delta=0.5, reduction="sum"), (M23, T23),
                            {}),
    "native_layer_norm": (lambda x, w, b: torch.nn.functional.layer_norm(x, (4,), w, b),
                          (X234, [0.5, 1.5, -1.0, 2.0], [0.1, -0.2, 0.3, 0.0]), {}),
    # Not twice: torch's double backward holds mean and rstd constant (it has no derivative
    # for them), so the third derivative of layer_norm is not exact in torch either.
    "native_layer_norm_backward": (_layer_norm_grads, (X234, [0.5, 1.5, -1.0, 2.0],
                                                       [0.1, -0.2, 0.3, 0.0], G234),
                                   {"second": False}),
    "native_batch_norm": (_batch_norm, (X234, [0.5, 1.5, -1.0], [0.1, -0.2, 0.3]), {}),
    # Not twice, as native_layer_norm_backward.
    "native_batch_norm_backward": (_batch_norm_grads, (X234, [0.5, 1.5, -1.0],
                                                       [0.1, -0.2, 0.3], G234),
                                   {"second": False}),
    "native_group_norm": (lambda x, w, b: torch.nn.functional.group_norm(x, 1, w, b),
                          (X234, [0.5, 1.5, -1.0], [0.1, -0.2, 0.3]), {}),
    "unsqueeze_": (_group_norm_grad, (X234, [0.5, 1.5, -1.0], [0.1, -0.2, 0.3]), {}),
    "embedding": (_embedding, ([[0.5, -0.2], [1.3, 0.8], [-0.7, 0.9]],), {}),
    "embedding_dense_backward": (_embedding_grad, ([[0.5, -0.2], [1.3, 0.8], [-0.7, 0.9]],
                                                   [[[0.3, -1.2], [2.1, 0.4]],
                                                    [[-0.6, 1.1], [0.7, -0.9]]]), {}),
    "div_scalar": (lambda x, t: torch.nn.functional.cross_entropy(x, t), (M23, T23), {}),
}


def _lstm_layer(x, h0, c0):
    """nn.LSTM in float32 on CPU: torch's oneDNN layer, one MkldnnRnnLayerBackward0 node (its
    weights from the same seed on both backends; their gradients: test_learner_lstm_torch)."""
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(2, 3)
    out, (h, c) = lstm(x, (h0, c0))
    return out


X322 = [[[0.3, -1.2], [2.1, 0.5]], [[1.1, 0.4], [-0.6, -2.3]], [[0.7, -0.9], [1.3, 0.2]]]
H123 = [[[0.1, -0.4, 0.6], [0.5, 0.2, -0.3]]]
EXAMPLES["mkldnn_rnn_layer"] = (_lstm_layer, (X322, H123, H123),
                                {"dtype": torch.float32, "eps": 1e-2, "atol": 1e-2,
                                 "rtol": 1e-2, "second": False})
