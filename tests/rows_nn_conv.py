"""Row examples for convolution, pooling, padding and attention (merged by
tests/test_core_table.py; the lambdas' `torch` is rebound to gradviz or the real torch)."""

import numpy as np

import gradviz as torch

_rng = np.random.default_rng(11)


def _data(*shape):
    return _rng.uniform(-1, 1, shape).round(3).tolist()


X1 = _data(2, 4, 5)
W1 = _data(3, 2, 2)
X2 = _data(2, 2, 5, 4)
W2 = _data(4, 1, 3, 2)
B4 = _data(4)
P2 = _data(1, 2, 5, 6)
Q = _data(1, 2, 3, 4)
K = _data(1, 2, 5, 4)
V = _data(1, 2, 5, 4)


def _conv2d(x, w, b):
    # groups, stride, padding and dilation at once
    return torch.nn.functional.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                      groups=2)


def _attention(q, k, v):
    mask = torch.tensor([[True, True, False, True, True]] * 3)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                            scale=0.7)


def _attention_double_backward(x):
    q = x.reshape(1, 1, 3, 1)
    k = q.detach() * 2
    out = torch.nn.functional.scaled_dot_product_attention(q, k, k)
    (g,) = torch.autograd.grad((out * out).sum(), q, create_graph=True)
    return g


EXAMPLES = {
    "convolution": (_conv2d, (X2, W2, B4), {}),
    "max_pool2d_with_indices": (
        lambda x: torch.nn.functional.max_pool2d(x, (3, 2), stride=2, padding=1,
                                                 ceil_mode=True),
        (P2,), {}),
    "avg_pool2d": (
        lambda x: torch.nn.functional.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                                 count_include_pad=False),
        (P2,), {}),
    "adaptive_avg_pool2d": (lambda x: torch.nn.functional.adaptive_avg_pool2d(x, (3, 4)),
                            (P2,), {}),
    "constant_pad_nd": (lambda x: torch.nn.functional.pad(x, (1, -1, 2, 0), value=0.5),
                        (P2,), {}),
    "reflection_pad1d": (lambda x: torch.nn.functional.pad(x, (2, 3), mode="reflect"),
                         (X1,), {}),
    "reflection_pad2d": (lambda x: torch.nn.functional.pad(x, (2, 3, 1, 0), mode="reflect"),
                         (P2,), {}),
    "replication_pad1d": (lambda x: torch.nn.functional.pad(x, (2, 3), mode="replicate"),
                          (X1,), {}),
    "replication_pad2d": (lambda x: torch.nn.functional.pad(x, (0, 3, 2, 1),
                                                            mode="replicate"),
                          (P2,), {}),
    "scaled_dot_product_flash_attention_for_cpu": (_attention, (Q, K, V), {"second": False}),
    "trilinear": (lambda a, b, w, c: torch.nn.functional.bilinear(a, b, w, c),
                  (_data(2, 3, 2), _data(2, 3, 3), _data(4, 2, 3), _data(4)), {}),
    # 3-D inputs take torch's math path, composed from ops around _safe_softmax
    "safe_softmax": (lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
        q[0], k[0], v[0], is_causal=True), (Q, K, V), {}),
}

NO_DERIVATIVE = {
    "scaled_dot_product_flash_attention_for_cpu_backward": (
        _attention_double_backward,
        "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not "
        "implemented"),
}
