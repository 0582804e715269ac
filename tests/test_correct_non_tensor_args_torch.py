"""A non-tensor (None, a str, a list, a NumPy array, a number) given to torch.nn.functional
where a tensor is taken, on gradviz and on torch 2.13: torch's error, the parser's TypeError
("relu(): argument 'input' (position 1) must be Tensor, not NoneType"; without the position
for an argument passed by keyword to one of torch's builtins) for the functions torch writes
in C, the AttributeError of the first method its Python code calls for the others
("'NoneType' object has no attribute 'size'"). Before, gradviz's ops failed deeper with
"'NoneType' object has no attribute '_data'", and dropout in eval mode or kl_div on an array
returned a result."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

BAD = {"None": None, "str": "a", "list": [1.0, 2.0], "ndarray": np.ones(3, dtype=np.float32),
       "int": 1}


def _t(t):
    return t.arange(6.0).reshape(2, 3)


CALLS = {
    "relu": lambda t, F, b: F.relu(b),
    "relu_input=": lambda t, F, b: F.relu(input=b),
    "relu_inplace": lambda t, F, b: F.relu(b, inplace=True),
    "tanh": lambda t, F, b: F.tanh(b),
    "sigmoid": lambda t, F, b: F.sigmoid(b),
    "softmax": lambda t, F, b: F.softmax(b, 0),
    "log_softmax": lambda t, F, b: F.log_softmax(b, dim=1),
    "gelu": lambda t, F, b: F.gelu(b),
    "silu": lambda t, F, b: F.silu(b),
    "softplus": lambda t, F, b: F.softplus(b),
    "leaky_relu": lambda t, F, b: F.leaky_relu(b),
    "leaky_relu_inplace": lambda t, F, b: F.leaky_relu(b, inplace=True),
    "leaky_relu_": lambda t, F, b: F.leaky_relu_(b),
    "elu": lambda t, F, b: F.elu(b),
    "hardtanh": lambda t, F, b: F.hardtanh(b),
    "relu6": lambda t, F, b: F.relu6(b),
    "logsigmoid": lambda t, F, b: F.logsigmoid(b),
    "glu": lambda t, F, b: F.glu(b),
    "linear_input": lambda t, F, b: F.linear(b, _t(t)),
    "linear_weight": lambda t, F, b: F.linear(_t(t), b),
    "linear_bias": lambda t, F, b: F.linear(_t(t), _t(t), b),
    "mse_loss_input": lambda t, F, b: F.mse_loss(b, _t(t)),
    "mse_loss_target": lambda t, F, b: F.mse_loss(_t(t), b),
    "l1_loss": lambda t, F, b: F.l1_loss(b, _t(t)),
    "smooth_l1_loss": lambda t, F, b: F.smooth_l1_loss(_t(t), b),
    "huber_loss": lambda t, F, b: F.huber_loss(b, _t(t)),
    "binary_cross_entropy": lambda t, F, b: F.binary_cross_entropy(b, _t(t)),
    "binary_cross_entropy_with_logits": lambda t, F, b: F.binary_cross_entropy_with_logits(
        _t(t), b),
    "kl_div_input": lambda t, F, b: F.kl_div(b, _t(t), reduction="sum"),
    "kl_div_target": lambda t, F, b: F.kl_div(_t(t), b, reduction="sum"),
    "cross_entropy_input": lambda t, F, b: F.cross_entropy(b, t.zeros(2, dtype=t.long)),
    "cross_entropy_target": lambda t, F, b: F.cross_entropy(_t(t), b),
    "cross_entropy_weight": lambda t, F, b: F.cross_entropy(_t(t), t.zeros(2, dtype=t.long),
                                                            weight=b),
    "nll_loss_input": lambda t, F, b: F.nll_loss(b, t.zeros(2, dtype=t.long)),
    "nll_loss_target": lambda t, F, b: F.nll_loss(_t(t), b),
    "embedding_input": lambda t, F, b: F.embedding(b, _t(t)),
    "embedding_weight": lambda t, F, b: F.embedding(t.zeros(2, dtype=t.long), b),
    "one_hot": lambda t, F, b: F.one_hot(b),
    "dropout": lambda t, F, b: F.dropout(b),
    "dropout_eval": lambda t, F, b: F.dropout(b, training=False),
    "dropout_inplace": lambda t, F, b: F.dropout(b, inplace=True),
    "layer_norm_input": lambda t, F, b: F.layer_norm(b, (3,)),
    "layer_norm_weight": lambda t, F, b: F.layer_norm(_t(t), (3,), b),
    "layer_norm_bias": lambda t, F, b: F.layer_norm(_t(t), (3,), None, b),
    "group_norm": lambda t, F, b: F.group_norm(b, 1),
    "batch_norm_training": lambda t, F, b: F.batch_norm(b, None, None, training=True),
    "batch_norm_eval": lambda t, F, b: F.batch_norm(b, t.zeros(3), t.ones(3)),
    "adaptive_avg_pool2d": lambda t, F, b: F.adaptive_avg_pool2d(b, 1),
    # torch's builtins name an argument given by keyword without its position
    "gelu_input=": lambda t, F, b: F.gelu(input=b),
    "linear_input=": lambda t, F, b: F.linear(input=b, weight=_t(t)),
    "linear_weight=": lambda t, F, b: F.linear(_t(t), weight=b),
    "linear_bias=": lambda t, F, b: F.linear(_t(t), _t(t), bias=b),
    "softplus_input=": lambda t, F, b: F.softplus(input=b, beta=2),
    "logsigmoid_input=": lambda t, F, b: F.logsigmoid(input=b),
    "one_hot_input=": lambda t, F, b: F.one_hot(input=b),
    "leaky_relu_input=": lambda t, F, b: F.leaky_relu(input=b),
    "selu": lambda t, F, b: F.selu(b),
    "selu_inplace": lambda t, F, b: F.selu(input=b, inplace=True),
    "celu": lambda t, F, b: F.celu(b),
    "celu_": lambda t, F, b: F.celu_(input=b),
    "prelu_input": lambda t, F, b: F.prelu(b, t.ones(1)),
    "prelu_weight=": lambda t, F, b: F.prelu(_t(t), weight=b),
    "mish": lambda t, F, b: F.mish(b),
    "hardswish_inplace": lambda t, F, b: F.hardswish(b, inplace=True),
    "hardsigmoid": lambda t, F, b: F.hardsigmoid(input=b),
    "softshrink_input=": lambda t, F, b: F.softshrink(input=b),
    "hardshrink": lambda t, F, b: F.hardshrink(b),
    "threshold": lambda t, F, b: F.threshold(b, 0.1, 0.0),
    "threshold_": lambda t, F, b: F.threshold_(input=b, threshold=0.1, value=0.0),
    "relu_": lambda t, F, b: F.relu_(b),
    "relu__input=": lambda t, F, b: F.relu_(input=b),
    "pad": lambda t, F, b: F.pad(b, (1, 1)),
    "pad_input=": lambda t, F, b: F.pad(input=b, pad=(1, 1), mode="reflect"),
    "max_pool2d": lambda t, F, b: F.max_pool2d(b, 2),
    "max_pool2d_input=": lambda t, F, b: F.max_pool2d(input=b, kernel_size=2),
    "max_pool2d_indices": lambda t, F, b: F.max_pool2d(b, 2, return_indices=True),
    "avg_pool2d": lambda t, F, b: F.avg_pool2d(b, 2),
    "avg_pool2d_input=": lambda t, F, b: F.avg_pool2d(input=b, kernel_size=2),
    "conv1d_input": lambda t, F, b: F.conv1d(b, t.ones(1, 1, 2)),
    "conv2d_weight=": lambda t, F, b: F.conv2d(t.ones(1, 1, 3, 3), weight=b),
    "conv2d_bias": lambda t, F, b: F.conv2d(t.ones(1, 1, 3, 3), t.ones(1, 1, 2, 2), b),
    "conv_transpose2d_bias": lambda t, F, b: F.conv_transpose2d(
        t.ones(1, 1, 3, 3), t.ones(1, 1, 2, 2), b),
    "conv_transpose1d_input=": lambda t, F, b: F.conv_transpose1d(input=b,
                                                                  weight=t.ones(1, 1, 2)),
    "bilinear": lambda t, F, b: F.bilinear(_t(t), _t(t), b),
    "unfold": lambda t, F, b: F.unfold(b, 2),
    "fold": lambda t, F, b: F.fold(b, (3, 3), 2),
    "normalize": lambda t, F, b: F.normalize(b),
    "cosine_similarity_x1=": lambda t, F, b: F.cosine_similarity(x1=b, x2=_t(t)),
    "cosine_similarity_x2": lambda t, F, b: F.cosine_similarity(_t(t), b),
    "sdpa_query=": lambda t, F, b: F.scaled_dot_product_attention(query=b, key=_t(t),
                                                                   value=_t(t)),
    "sdpa_attn_mask": lambda t, F, b: F.scaled_dot_product_attention(_t(t), _t(t), _t(t), b),
    "group_norm_weight": lambda t, F, b: F.group_norm(t.ones(2, 2, 3), 1, b),
    "batch_norm_running_mean": lambda t, F, b: F.batch_norm(_t(t), b, t.ones(3)),
    "binary_cross_entropy_weight": lambda t, F, b: F.binary_cross_entropy(
        t.ones(2, 3) / 2, t.ones(2, 3), b),
    "binary_cross_entropy_with_logits_pos_weight": lambda t, F, b: (
        F.binary_cross_entropy_with_logits(_t(t), _t(t), pos_weight=b)),
}


def _outcome(t, call, bad):
    try:
        out = CALLS[call](t, t.nn.functional, BAD[bad])
    except Exception as exc:        # noqa: BLE001 (the error is what is compared)
        return type(exc).__name__, str(exc).split("\n")[0]
    return "returned", type(out).__name__


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("call", list(CALLS))
def test_a_non_tensor_for_a_tensor_gets_torchs_error(call, bad):
    assert _outcome(gradviz, call, bad) == _outcome(torch, call, bad)


LISTS = {
    "cat_second": lambda t, b: t.cat([_t(t), b]),
    "cat_first": lambda t, b: t.cat([b, _t(t)], dim=1),
    "stack_second": lambda t, b: t.stack([_t(t), b]),
    "stack_first": lambda t, b: t.stack((b, _t(t))),
}


def _list_outcome(t, call, bad):
    try:
        out = LISTS[call](t, BAD[bad])
    except Exception as exc:        # noqa: BLE001 (the error is what is compared)
        return type(exc).__name__, str(exc).split("\n")[0]
    return "returned", out.tolist()


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("call", list(LISTS))
def test_a_non_tensor_in_cats_list_gets_torchs_error(call, bad):
    # before, gradviz made a tensor of it: torch.cat([t, [[1., 2., 3.]]]) concatenated a list
    assert _list_outcome(gradviz, call, bad) == _list_outcome(torch, call, bad)


KEYWORD_CALLS = {
    "avg_pool2d": lambda t, F, x: F.avg_pool2d(input=x, kernel_size=2),
    "max_pool2d": lambda t, F, x: F.max_pool2d(input=x, kernel_size=2, return_indices=True)[1],
    "conv2d": lambda t, F, x: F.conv2d(input=x, weight=t.ones(1, 1, 2, 2), bias=t.ones(1)),
    "pad": lambda t, F, x: F.pad(input=x, pad=(1, 0), value=2.0),
    "unfold": lambda t, F, x: F.unfold(input=x, kernel_size=3),
    "one_hot": lambda t, F, x: F.one_hot(input=x.long().flatten()[:3], num_classes=12),
    "sdpa": lambda t, F, x: F.scaled_dot_product_attention(query=x, key=x, value=x),
    "relu_": lambda t, F, x: F.relu_(input=x - 3),
}


@pytest.mark.parametrize("call", list(KEYWORD_CALLS))
def test_keyword_calls_are_taken_as_torch_takes_them(call):
    def run(t):
        return KEYWORD_CALLS[call](t, t.nn.functional, t.arange(16.0).reshape(1, 1, 4, 4))
    assert run(gradviz).tolist() == run(torch).tolist()
