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


def _conv2d(module, x, w, b):
    # groups, stride, padding and dilation at once
    return module.nn.functional.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                       groups=2)


def _conv2d_grads(module, x, w, b, g):
    """The three gradients of _conv2d for the output gradient g, with create_graph=True: the
    outputs of one ConvolutionBackwardBackward0 node, flattened into one tensor."""
    out = _conv2d(module, x, w, b)
    grads = module.autograd.grad(out, (x, w, b), g.reshape(out.shape), create_graph=True)
    return module.cat([t.reshape(-1) for t in grads])


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


# The forwards below take the module (gradviz or torch) first: the examples are lambdas, whose
# `torch` the differential test rebinds, and pass it on.

def _grad_at(module, f, x, g):
    """The gradient of f at x for the output gradient g (flat, reshaped to f's output), with
    create_graph=True: its graph holds f's backward op (AvgPool2DBackwardBackward0, ...)."""
    out = f(module, x)
    (gx,) = module.autograd.grad(out, x, g.reshape(out.shape), create_graph=True)
    return gx


def _max_pool(module, x):
    return module.nn.functional.max_pool2d(x, (3, 2), stride=2, padding=1, ceil_mode=True)


def _avg_pool(module, x):
    return module.nn.functional.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                           count_include_pad=False)


def _adaptive_pool(module, x):
    return module.nn.functional.adaptive_avg_pool2d(x, (3, 4))


def _reflect1(module, x):
    return module.nn.functional.pad(x, (2, 3), mode="reflect")


def _reflect2(module, x):
    return module.nn.functional.pad(x, (2, 3, 1, 0), mode="reflect")


def _replicate1(module, x):
    return module.nn.functional.pad(x, (2, 3), mode="replicate")


def _replicate2(module, x):
    return module.nn.functional.pad(x, (0, 3, 2, 1), mode="replicate")


EXAMPLES = {
    "convolution": (lambda x, w, b: _conv2d(torch, x, w, b), (X2, W2, B4), {}),
    "convolution_backward": (lambda x, w, b, g: _conv2d_grads(torch, x, w, b, g),
                             (X2, W2, B4, _data(144)), {}),
    "max_pool2d_with_indices": (lambda x: _max_pool(torch, x), (P2,), {}),
    "avg_pool2d": (lambda x: _avg_pool(torch, x), (P2,), {}),
    "adaptive_avg_pool2d": (lambda x: _adaptive_pool(torch, x), (P2,), {}),
    "max_pool2d_with_indices_backward": (lambda x, g: _grad_at(torch, _max_pool, x, g),
                                         (P2, _data(24)), {}),
    "avg_pool2d_backward": (lambda x, g: _grad_at(torch, _avg_pool, x, g), (P2, _data(24)), {}),
    "adaptive_avg_pool2d_backward": (lambda x, g: _grad_at(torch, _adaptive_pool, x, g),
                                     (P2, _data(24)), {}),
    "constant_pad_nd": (lambda x: torch.nn.functional.pad(x, (1, -1, 2, 0), value=0.5),
                        (P2,), {}),
    "reflection_pad1d": (lambda x: _reflect1(torch, x), (X1,), {}),
    "reflection_pad2d": (lambda x: _reflect2(torch, x), (P2,), {}),
    "replication_pad1d": (lambda x: _replicate1(torch, x), (X1,), {}),
    "replication_pad2d": (lambda x: _replicate2(torch, x), (P2,), {}),
    "reflection_pad1d_backward": (lambda x, g: _grad_at(torch, _reflect1, x, g),
                                  (X1, _data(80)), {}),
    "reflection_pad2d_backward": (lambda x, g: _grad_at(torch, _reflect2, x, g),
                                  (P2, _data(132)), {}),
    "replication_pad1d_backward": (lambda x, g: _grad_at(torch, _replicate1, x, g),
                                   (X1, _data(80)), {}),
    "replication_pad2d_backward": (lambda x, g: _grad_at(torch, _replicate2, x, g),
                                   (P2, _data(144)), {}),
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
