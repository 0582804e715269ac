"""Differential checks against torch 2.13 of nn.functional's activations, losses, embedding,
dropout and normalization, and of their modules: what the row examples cannot show (keyword
forms, reductions, class weights, ignore_index, in-place forms and versions, edge shapes,
errors' first sentences, warnings, running statistics, reprs and state_dict keys).

Each case is a function of the backend module and runs on both; the observables must agree.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

try:
    from . import diffcases as D
    from .test_torch_diff import compare
except ImportError:
    import diffcases as D
    from test_torch_diff import compare

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def observe(t):
    """The autograd-visible state of a tensor, or of each item of a list/tuple/dict."""
    if isinstance(t, dict):
        return {k: observe(v) for k, v in t.items()}
    if isinstance(t, (list, tuple)):
        return [observe(x) for x in t]
    if not hasattr(t, "grad_fn"):
        return t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = t.grad
    return {"value": D.val(t), "requires_grad": t.requires_grad, "is_leaf": t.is_leaf,
            "graph": D.graph(t.grad_fn), "version": t._version, "grad": D.gval(g)}


def run(fn, backend):
    try:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            out = observe(fn(backend))
        return {"out": out, "warnings": [D.Warn(w.category.__name__, str(w.message))
                                         for w in got]}
    except Exception as exc:  # noqa: BLE001 - the error is the observable
        return D.Err(exc)


def check(fn):
    problems = compare(run(fn, torch), run(fn, gradviz))
    assert not problems, "\n".join(problems)


M23 = [[0.3, -1.2, 2.1], [1.1, 0.0, -0.6]]
M24 = [[0.3, -1.2, 2.1, 0.5], [1.1, 0.4, -0.6, -2.3]]
P23 = [[0.2, 0.7, 0.4], [0.9, 0.35, 0.6]]
T23 = [[0.1, 0.8, 0.5], [1.0, 0.0, 0.3]]


def _x(t, data=M23, dtype=None, rg=True):
    return D.leaf(t, data, rg, dtype)


def _backward(t, out, *leaves):
    """out, and the grads of the leaves after a non-uniform backward."""
    if out.requires_grad:
        out.backward(D.upstream(t, out))
    return [out] + list(leaves)


# ----- Activations ---------------------------------------------------------------------------

ACTIVATIONS = {
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta_threshold": lambda F, x: F.softplus(x, beta=3, threshold=2),
    "leaky_relu": lambda F, x: F.leaky_relu(x),
    "leaky_relu_slope": lambda F, x: F.leaky_relu(x, negative_slope=0.3),
    "elu": lambda F, x: F.elu(x),
    "elu_alpha": lambda F, x: F.elu(x, alpha=0.4),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh_bounds_hit": lambda F, x: F.hardtanh(x, min_val=-1.2, max_val=1.1),
    "relu6": lambda F, x: F.relu6(x * 4),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "glu_dim0": lambda F, x: F.glu(x, 0),
    "glu_last": lambda F, x: F.glu(x.t()),
    "softmax_dtype": lambda F, x: F.softmax(x, 1, dtype=x.dtype),
    "log_softmax_neg_dim": lambda F, x: F.log_softmax(x, dim=-1),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation(name, dtype):
    def case(t):
        x = _x(t, dtype=getattr(t, dtype))
        return _backward(t, ACTIVATIONS[name](t.nn.functional, x), x)
    check(case)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_second_order(name):
    def case(t):
        x = _x(t, dtype=t.float64)
        return D.second_order(t, lambda v: ACTIVATIONS[name](t.nn.functional, v), x)
    check(case)


def test_activations_of_large_values_do_not_overflow():
    def case(t):
        x = _x(t, [-800.0, -30.0, 0.0, 30.0, 800.0])
        F = t.nn.functional
        outs = [F.softplus(x), F.logsigmoid(x), F.elu(x), F.silu(x), F.gelu(x)]
        sum(o.sum() for o in outs).backward()
        return outs + [x]
    check(case)


def test_zero_d_and_empty_inputs():
    def case(t):
        F = t.nn.functional
        x = _x(t, 0.7)
        e = t.zeros(0, 3, requires_grad=True)
        outs = [F.gelu(x), F.silu(x), F.softplus(x), F.elu(x), F.leaky_relu(x), F.hardtanh(x),
                F.logsigmoid(x), F.gelu(e), F.glu(e)]
        sum(o.sum() for o in outs).backward()
        return outs + [x, e]
    check(case)


@pytest.mark.parametrize("call", [
    lambda F, x: F.gelu(x.long()),
    lambda F, x: F.gelu(x, approximate="fast"),
    lambda F, x: F.silu(x.long()),
    lambda F, x: F.elu(x.long()),
    lambda F, x: F.softplus(x.long()),
    lambda F, x: F.leaky_relu(x.long()),
    lambda F, x: F.logsigmoid(x.long()),
    lambda F, x: F.hardtanh(x, 2.0, 1.0),
    lambda F, x: F.glu(x),
    lambda F, x: F.glu(x.sum()),
    lambda F, x: F.glu(x, 2),
    lambda F, x: F.glu(x.t().long()),
])
def test_activation_errors(call):
    check(lambda t: call(t.nn.functional, _x(t)))


def test_hardtanh_and_relu6_of_integers_have_no_gradient():
    check(lambda t: [t.nn.functional.hardtanh(t.tensor([-3, 0, 3])),
                     t.nn.functional.relu6(t.tensor([-3, 4, 9]))])


@pytest.mark.parametrize("fn", ["hardtanh", "relu6"])
def test_hardtanh_in_place(fn):
    def case(t):
        x = _x(t)
        y = x * 2
        out = getattr(t.nn.functional, fn)(y, inplace=True)
        out.backward(D.upstream(t, out))
        return [out is y, out, x]
    check(case)


@pytest.mark.parametrize("call", [
    lambda F, y: F.leaky_relu(y, 0.2, inplace=True),
    lambda F, y: F.elu(y, 0.5, inplace=True),
    lambda F, y: F.elu(y, -0.5, inplace=True),
    lambda F, y: F.leaky_relu(y[0], inplace=True),
    lambda F, y: F.leaky_relu_(y, 0.3),
    lambda F, y: F.elu_(y),
    lambda F, y: F.hardtanh_(y, -0.5, 0.5),
])
def test_leaky_relu_and_elu_in_place(call):
    def case(t):
        x = _x(t)
        y = x * 1
        out = call(t.nn.functional, y)
        out.backward(D.upstream(t, out))
        return [out, y, x]
    check(case)


def test_in_place_on_a_leaf_is_refused():
    check(lambda t: t.nn.functional.leaky_relu(_x(t), inplace=True))


@pytest.mark.parametrize("fn", ["silu"])
def test_in_place_forms_not_implemented_say_so(fn):
    x = gradviz.ones(3) * 1
    with pytest.raises(NotImplementedError, match=f"{fn}\\(inplace=True\\) is not implemented "
                                                  "by gradviz's core; run with --backend torch"):
        getattr(gradviz.nn.functional, fn)(x, inplace=True)


def test_saved_values_are_torchs():
    for t in (torch, gradviz):
        x = _x(t)
        y = t.nn.functional.elu(x, alpha=0.5)
        fn = y.grad_fn
        assert (fn._saved_alpha, fn._saved_scale, fn._saved_input_scale) == (0.5, 1, 1)
        z = t.nn.functional.gelu(x, approximate="tanh")
        assert z.grad_fn._saved_approximate == "tanh"
        w = t.nn.functional.softplus(x, beta=2, threshold=5)
        assert (w.grad_fn._saved_beta, w.grad_fn._saved_threshold) == (2, 5)
        s = t.nn.functional.smooth_l1_loss(x, x.detach() + 1, beta=0.5)
        assert (s.grad_fn._saved_beta, s.grad_fn._saved_reduction) == (0.5, 1)


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "softplus", "softplus_beta_threshold",
                                  "leaky_relu", "leaky_relu_slope", "elu", "elu_alpha",
                                  "hardtanh", "hardtanh_bounds_hit", "relu6", "logsigmoid"])
def test_double_backward_records_torchs_backward_nodes(name):
    """Under create_graph=True the gradient is a node of its own (GeluBackwardBackward0,
    SoftplusBackwardBackward0, ...), with torch's edges."""
    def case(t):
        x = _x(t)
        y = ACTIVATIONS[name](t.nn.functional, x)
        (g,) = t.autograd.grad(y, x, D.upstream(t, y), create_graph=True)
        return g
    check(case)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
       seed=st.integers(0, 2 ** 16), approximate=st.sampled_from(["none", "tanh"]))
def test_gelu_and_softplus_on_any_shape(shape, seed, approximate):
    data = np.random.default_rng(seed).normal(0, 3, shape).tolist()

    def case(t):
        x = _x(t, data, t.float64)
        out = t.nn.functional.gelu(x, approximate=approximate) + t.nn.functional.softplus(x)
        return _backward(t, out, x)
    check(case)


# ----- Losses --------------------------------------------------------------------------------

REDUCTIONS = ["none", "mean", "sum"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_losses(loss, reduction):
    def case(t):
        x, y = _x(t), _x(t, T23)
        return _backward(t, getattr(t.nn.functional, loss)(x, y, reduction=reduction), x, y)
    check(case)


@pytest.mark.parametrize("kwargs", [{"beta": 0.5}, {"beta": 0.0}, {"beta": 5.0}])
def test_smooth_l1_beta(kwargs):
    def case(t):
        x, y = _x(t), _x(t, T23, rg=False)
        return _backward(t, t.nn.functional.smooth_l1_loss(x, y, **kwargs), x)
    check(case)


def test_huber_delta_and_target_broadcast_warns():
    def case(t):
        x, y = _x(t), _x(t, [0.5, 0.0, -1.0])
        return _backward(t, t.nn.functional.huber_loss(x, y, delta=0.3), x, y)
    check(case)


def test_l1_loss_broadcasts_as_torch_does():
    def case(t):
        x, y = _x(t), _x(t, [0.5, 0.0, -1.0])
        return _backward(t, t.nn.functional.l1_loss(x, y), x, y)
    check(case)


@pytest.mark.parametrize("legacy", [{"size_average": False}, {"reduce": False},
                                    {"size_average": True, "reduce": True}])
def test_legacy_reduction_flags(legacy):
    def case(t):
        x, y = _x(t), _x(t, T23)
        return _backward(t, t.nn.functional.mse_loss(x, y, **legacy), x, y)
    check(case)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction, weighted):
    def case(t):
        x, y = _x(t, P23), _x(t, T23)
        w = t.tensor([0.5, 1.0, 2.0]) if weighted else None
        out = t.nn.functional.binary_cross_entropy(x, y, weight=w, reduction=reduction)
        return _backward(t, out, x, y)
    check(case)


def test_binary_cross_entropy_clamps_its_logs():
    def case(t):
        x, y = _x(t, [0.0, 1.0, 0.5]), _x(t, [1.0, 0.0, 0.5])
        return _backward(t, t.nn.functional.binary_cross_entropy(x, y), x, y)
    check(case)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weights", [(False, False), (True, False), (False, True), (True, True)])
def test_binary_cross_entropy_with_logits(reduction, weights):
    def case(t):
        x, y = _x(t, [[30.0, -2.0, 0.5], [-40.0, 1.5, 0.0]]), _x(t, T23)
        w = t.tensor([[0.5], [2.0]]) if weights[0] else None
        pw = t.tensor([3.0, 1.0, 0.5]) if weights[1] else None
        out = t.nn.functional.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw,
                                                               reduction=reduction)
        return _backward(t, out, x, y)
    check(case)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index", [-100, 1])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(reduction, ignore_index, weighted):
    def case(t):
        x = _x(t, [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6], [0.2, 0.1, -0.3], [1.0, 2.0, 3.0]])
        w = t.tensor([0.5, 1.0, 2.0]) if weighted else None
        out = t.nn.functional.nll_loss(x, t.tensor([2, 1, -100, 0]), weight=w,
                                       ignore_index=ignore_index if ignore_index != 1 else -100,
                                       reduction=reduction) if ignore_index == -100 else \
            t.nn.functional.nll_loss(x, t.tensor([2, 1, 1, 0]), weight=w, ignore_index=1,
                                     reduction=reduction)
        return _backward(t, out, x)
    check(case)


def test_nll_loss_of_only_ignored_targets_is_nan():
    def case(t):
        x = _x(t)
        return _backward(t, t.nn.functional.nll_loss(x, t.tensor([-100, -100])), x)
    check(case)


def test_nll_loss_one_sample():
    def case(t):
        x = _x(t, [0.3, -1.2, 2.1])
        return _backward(t, t.nn.functional.nll_loss(x, t.tensor(2)), x)
    check(case)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 2)])
def test_cross_entropy_images_and_sequences(reduction, shape):
    n = int(np.prod(shape))
    data = (np.sin(np.arange(n)) * 2).reshape(shape).tolist()
    tshape = (shape[0],) + shape[2:]
    target = (np.arange(int(np.prod(tshape))) % 3).reshape(tshape).tolist()

    def case(t):
        x = _x(t, data)
        out = t.nn.functional.cross_entropy(x, t.tensor(target), reduction=reduction,
                                            weight=t.tensor([1.0, 0.5, 2.0]))
        return _backward(t, out, x)
    check(case)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probability_targets(reduction, smoothing, weighted):
    def case(t):
        x, y = _x(t), _x(t, [[0.2, 0.5, 0.3], [0.0, 0.9, 0.1]])
        w = t.tensor([0.5, 1.0, 2.0]) if weighted else None
        out = t.nn.functional.cross_entropy(x, y, weight=w, reduction=reduction,
                                            label_smoothing=smoothing)
        return _backward(t, out, x, y)
    check(case)


def test_cross_entropy_of_one_sample():
    def case(t):
        x = _x(t, [0.3, -1.2, 2.1])
        return _backward(t, t.nn.functional.cross_entropy(x, t.tensor(1)), x)
    check(case)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_label_smoothing(reduction, weighted):
    if not hasattr(gradviz.Tensor, "masked_fill_"):
        with pytest.raises(NotImplementedError, match="label_smoothing=.*run with --backend "
                                                      "torch to use PyTorch"):
            gradviz.nn.functional.cross_entropy(gradviz.ones(2, 3), gradviz.tensor([0, 1]),
                                                label_smoothing=0.1)
        return

    def case(t):
        x = _x(t, [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6], [0.2, 0.1, -0.3]])
        w = t.tensor([0.5, 1.0, 2.0]) if weighted else None
        out = t.nn.functional.cross_entropy(x, t.tensor([2, -100, 0]), weight=w,
                                            reduction=reduction, label_smoothing=0.2)
        return _backward(t, out, x)
    check(case)


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
@pytest.mark.parametrize("log_target", [True, False])
def test_kl_div(reduction, log_target):
    if not log_target and not hasattr(gradviz, "xlogy"):
        with pytest.raises(NotImplementedError, match="kl_div.*torch.xlogy"):
            gradviz.nn.functional.kl_div(gradviz.ones(2), gradviz.ones(2))
        return

    def case(t):
        x, y = _x(t, [[-1.2, -0.4, -2.0], [-0.1, -3.0, -0.7]]), _x(t, P23)
        out = t.nn.functional.kl_div(x, y, reduction=reduction, log_target=log_target)
        return _backward(t, out, x, y)
    check(case)


@pytest.mark.parametrize("call", [
    lambda F, t, x: F.mse_loss(x, x, reduction="avg"),
    lambda F, t, x: F.l1_loss(x, x, reduction="avg"),
    lambda F, t, x: F.binary_cross_entropy(x, x.detach()),
    lambda F, t, x: F.binary_cross_entropy(x.sigmoid(), x.detach()[0]),
    lambda F, t, x: F.binary_cross_entropy(x.sigmoid(), x.sigmoid().detach(), weight=t.ones(
        3, requires_grad=True)),
    lambda F, t, x: F.binary_cross_entropy_with_logits(x, x.detach()[0]),
    lambda F, t, x: F.binary_cross_entropy_with_logits(x, x.detach(), weight=t.ones(
        3, requires_grad=True)),
    lambda F, t, x: F.nll_loss(x, t.tensor([1.0, 0.0])),
    lambda F, t, x: F.nll_loss(x, t.tensor([1, 7])),
    lambda F, t, x: F.nll_loss(x, t.tensor([1, 0, 2])),
    lambda F, t, x: F.nll_loss(x, t.tensor([1, 0]), weight=t.ones(2)),
    lambda F, t, x: F.nll_loss(x, t.tensor([1, 0]), weight=t.ones(3, requires_grad=True)),
    lambda F, t, x: F.cross_entropy(x, t.tensor([1, 0]).int()),
    lambda F, t, x: F.cross_entropy(x, t.tensor([1, 0]), label_smoothing=1.5),
    lambda F, t, x: F.cross_entropy(x, x.detach()[:, :2]),
    lambda F, t, x: F.smooth_l1_loss(x, x, beta=-1.0),
    lambda F, t, x: F.huber_loss(x, x, delta=0.0),
    lambda F, t, x: F.kl_div(x, x, reduction="avg", log_target=True),
])
def test_loss_errors(call):
    check(lambda t: call(t.nn.functional, t, _x(t)))


def test_loss_weights_are_not_accepted_and_ignored():
    for fn in ("mse_loss", "l1_loss", "huber_loss"):
        with pytest.raises(NotImplementedError, match=f"{fn}\\(weight=...\\) is not "
                                                      "implemented by gradviz's core"):
            getattr(gradviz.nn.functional, fn)(gradviz.ones(2), gradviz.ones(2),
                                               weight=gradviz.ones(2))


def test_loss_nodes_save_torchs_reduction_enum():
    for t in (torch, gradviz):
        x = _x(t)
        for reduction, enum in (("none", 0), ("mean", 1), ("sum", 2)):
            out = t.nn.functional.smooth_l1_loss(x, x.detach() + 1, reduction=reduction)
            assert out.grad_fn._saved_reduction == enum
        out = t.nn.functional.nll_loss(x, t.tensor([1, 0]), weight=t.tensor([1.0, 2.0, 3.0]))
        assert float(out.grad_fn._saved_total_weight) == 3.0
    # torch shows a negative int64_t as its unsigned 64-bit pattern, and so does gradviz
    shown = [t.nn.functional.nll_loss(_x(t), t.tensor([1, 0])).grad_fn._saved_ignore_index
             for t in (gradviz, torch)]
    assert shown == [2**64 - 100] * 2


@pytest.mark.parametrize("call", [
    lambda t, x, y: t.nn.functional.normalize(x),
    lambda t, x, y: t.nn.functional.normalize(x, p=1.0, dim=0, eps=0.5),
    lambda t, x, y: t.nn.functional.normalize(x * 0),
    lambda t, x, y: t.nn.functional.cosine_similarity(x, y),
    lambda t, x, y: t.nn.functional.cosine_similarity(x, y[0], dim=-1),
    lambda t, x, y: t.nn.functional.cosine_similarity(x, y * 0),
])
def test_normalize_and_cosine_similarity(call):
    if not hasattr(gradviz.Tensor, "norm"):
        with pytest.raises(NotImplementedError, match="needs Tensor.norm"):
            call(gradviz, gradviz.ones(2, 3), gradviz.ones(2, 3))
        return

    def case(t):
        x, y = _x(t), _x(t, T23)
        return _backward(t, call(t, x, y), x, y)
    check(case)


# ----- Embedding, one_hot, dropout -----------------------------------------------------------

W43 = [[0.5, -0.2, 1.0], [1.3, 0.8, -0.4], [-0.7, 0.9, 0.1], [0.2, 0.3, -1.1]]


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 0}, {"padding_idx": -1},
                                    {"scale_grad_by_freq": True},
                                    {"padding_idx": 2, "scale_grad_by_freq": True}])
def test_embedding(kwargs):
    def case(t):
        w = _x(t, W43)
        out = t.nn.functional.embedding(t.tensor([[2, 0, 2], [3, 3, 2]]), w, **kwargs)
        return _backward(t, out, w)
    check(case)


@pytest.mark.parametrize("kwargs", [{"padding_idx": 2}, {"padding_idx": 2,
                                                         "scale_grad_by_freq": True}])
def test_embedding_double_backward(kwargs):
    """The table's gradient is an op (EmbeddingDenseBackwardBackward0) whose own gradient
    zeroes the padding row's lookups and, as torch's, ignores scale_grad_by_freq."""
    def case(t):
        w = _x(t, W43)
        out = t.nn.functional.embedding(t.tensor([[2, 0, 2], [3, 3, 2]]), w, **kwargs)
        v = t.arange(1.0, 19.0, dtype=w.dtype).reshape(2, 3, 3).requires_grad_()
        (gw,) = t.autograd.grad(out, w, v, create_graph=True)
        (gv,) = t.autograd.grad((gw * gw).sum(), v, create_graph=True)
        return [gw, gv]
    check(case)


def test_embedding_int32_and_0d_indices_and_torch_level():
    def case(t):
        w = _x(t, W43)
        a = t.nn.functional.embedding(t.tensor([1, 3], dtype=t.int32), w)
        b = t.nn.functional.embedding(t.tensor(2), w)
        c = t.embedding(w, t.tensor([[0, 1]]), 1)
        (a.sum() + b.sum() * 2 + c.sum() * 3).backward()
        return [a, b, c, w]
    check(case)


@pytest.mark.parametrize("call", [
    lambda t, w: t.nn.functional.embedding(t.tensor([1.0]), w),
    lambda t, w: t.nn.functional.embedding(t.tensor([4]), w),
    lambda t, w: t.nn.functional.embedding(t.tensor([-1]), w),
    lambda t, w: t.nn.functional.embedding(t.tensor([1]), w, padding_idx=4),
    lambda t, w: t.nn.functional.embedding(t.tensor([1]), w, padding_idx=-5),
    lambda t, w: t.nn.functional.embedding(t.tensor([1]), w[0]),
])
def test_embedding_errors(call):
    check(lambda t: call(t, _x(t, W43)))


def test_embedding_max_norm_is_not_ignored():
    with pytest.raises(NotImplementedError, match="max_norm"):
        gradviz.nn.functional.embedding(gradviz.tensor([0]), gradviz.ones(2, 2), max_norm=1.0)


@pytest.mark.parametrize("call", [
    lambda t: t.nn.functional.one_hot(t.tensor([2, 0, 1])),
    lambda t: t.nn.functional.one_hot(t.tensor([[2], [0]]), 4),
    lambda t: t.nn.functional.one_hot(t.tensor([], dtype=t.int64), 3),
    lambda t: t.nn.functional.one_hot(t.tensor(1), num_classes=2),
    lambda t: t.nn.functional.one_hot(t.tensor([-1, 2])),
    lambda t: t.nn.functional.one_hot(t.tensor([3]), 2),
    lambda t: t.nn.functional.one_hot(t.tensor([1.0])),
    lambda t: t.nn.functional.one_hot(t.tensor([], dtype=t.int64)),
])
def test_one_hot(call):
    check(call)


@pytest.mark.parametrize("call", [
    lambda t, x: t.nn.functional.dropout(x, 0.5, training=False),
    lambda t, x: t.nn.functional.dropout(x, 0.0),
    lambda t, x: t.nn.functional.dropout(x, 1.0),
    lambda t, x: t.dropout(x, 0.3, False),
    lambda t, x: t.nn.functional.dropout(x, 1.5),
    lambda t, x: t.nn.functional.dropout(x, -0.1),
    lambda t, x: t.nn.functional.dropout(t.tensor([1, 2]), 0.5),
    lambda t, x: t.nn.functional.dropout(x * 1, 1.0, inplace=True),
])
def test_dropout_deterministic_cases(call):
    def case(t):
        x = _x(t)
        out = call(t, x)
        return _backward(t, out, x) + [out is x]
    check(case)


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("p", [0.25, 0.5])
def test_dropout_masks_are_torchs(inplace, p):
    """After the same seed, the mask's draws are torch's (bernoulli_(1 - p), one call)."""
    def case(t):
        t.manual_seed(7)
        x = _x(t, [[1.0, -2.0, 3.0, 0.5, 4.0, -1.5, 2.5]] * 3)
        y = x * 1
        out = t.nn.functional.dropout(y, p, inplace=inplace)
        return _backward(t, out, x) + [out is y, t.rand(2)]
    check(case)


def test_dropout_module_trains_and_evaluates():
    def case(t):
        t.manual_seed(3)
        m = t.nn.Dropout(0.4)
        x = _x(t, M23)
        a = m(x)
        m.eval()
        b = m(x)
        return [a, b is x, x]
    check(case)


# ----- Normalization -------------------------------------------------------------------------

X234 = [[[0.3, -1.2, 2.1, 0.5], [1.1, 0.4, -0.6, -2.3], [0.2, 0.9, -0.4, 1.6]],
        [[-0.7, 1.3, 0.8, -0.1], [0.6, -1.5, 0.25, 1.9], [-0.3, 0.45, 1.2, -0.8]]]


@pytest.mark.parametrize("shape", [(4,), (3, 4), [3, 4], 4])
@pytest.mark.parametrize("affine", [(True, True), (True, False), (False, False)])
def test_layer_norm(shape, affine):
    def case(t):
        x = _x(t, X234)
        ns = (shape,) if isinstance(shape, int) else tuple(shape)
        w = _x(t, (np.arange(np.prod(ns)).reshape(ns) * 0.3 + 0.5).tolist()) if affine[0] \
            else None
        b = _x(t, (np.arange(np.prod(ns)).reshape(ns) * -0.2).tolist()) if affine[1] else None
        out = t.nn.functional.layer_norm(x, shape, w, b, eps=1e-3)
        return _backward(t, out, *[v for v in (x, w, b) if v is not None])
    check(case)


def test_layer_norm_second_order():
    def case(t):
        x, w = _x(t, X234, t.float64), _x(t, [0.5, 1.5, -1.0, 2.0], t.float64)
        return D.second_order(t, lambda a, b: t.layer_norm(a, (4,), b) ** 2, x, w)
    check(case)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", ["2d", "3d", "4d"])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm(training, shape, affine):
    four_d = [[[[v, -v] for v in row] for row in s] for s in X234]
    data = {"2d": np.reshape(X234, (-1, 3)).tolist(), "3d": X234, "4d": four_d}[shape]

    def case(t):
        x = _x(t, data)
        rm, rv = t.tensor([0.1, -0.2, 0.3]), t.tensor([1.5, 0.5, 2.0])
        w = _x(t, [0.5, 1.5, -1.0]) if affine else None
        b = _x(t, [0.1, -0.2, 0.3]) if affine else None
        out = t.nn.functional.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3,
                                         eps=1e-3)
        return _backward(t, out, *[v for v in (x, w, b) if v is not None]) + [rm, rv]
    check(case)


def test_batch_norm_without_running_statistics_and_torch_level():
    def case(t):
        x = _x(t, X234[0])
        a = t.nn.functional.batch_norm(x, None, None, training=True)
        c = t.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False)
        (a.sum() + (c * c).sum()).backward()
        return [a, c, x]
    check(case)


def test_batch_norm_second_order():
    def case(t):
        x, w = _x(t, X234, t.float64), _x(t, [0.5, 1.5, -1.0], t.float64)
        return D.second_order(t, lambda a, b: t.nn.functional.batch_norm(
            a, None, None, b, training=True) ** 2, x, w)
    check(case)


@pytest.mark.parametrize("call", [
    lambda t, x: t.nn.functional.batch_norm(x[:1], None, None, training=True),
    lambda t, x: t.nn.functional.batch_norm(x, t.zeros(2), t.ones(2), training=True),
    lambda t, x: t.nn.functional.batch_norm(x.long(), None, None, training=True),
    lambda t, x: t.nn.functional.layer_norm(x, (3,)),
    lambda t, x: t.nn.functional.layer_norm(x, (4,), t.ones(3)),
    lambda t, x: t.nn.functional.layer_norm(x.long(), (4,)),
    lambda t, x: t.nn.functional.group_norm(x, 2),
])
def test_normalization_errors(call):
    check(lambda t: call(t, _x(t, X234)))


@pytest.mark.parametrize("groups", [1, 3])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("four_d", [False, True])
def test_group_norm(groups, affine, four_d):
    data = [[[[v, -v * 0.5] for v in row] for row in s] for s in X234] if four_d else X234

    def case(t):
        x = _x(t, data)
        w = _x(t, [0.5, 1.5, -1.0]) if affine else None
        b = _x(t, [0.1, -0.2, 0.3]) if affine else None
        out = t.group_norm(x, groups, w, b, 1e-4)
        return _backward(t, out, *[v for v in (x, w, b) if v is not None])
    check(case)


@settings(max_examples=20, deadline=None)
@given(lead=st.lists(st.integers(1, 3), min_size=1, max_size=2),
       last=st.lists(st.integers(2, 4), min_size=1, max_size=2), seed=st.integers(0, 2 ** 16))
def test_layer_norm_on_any_shape(lead, last, seed):
    data = np.random.default_rng(seed).normal(0, 2, lead + last).tolist()

    def case(t):
        x = _x(t, data, t.float64)
        return _backward(t, t.nn.functional.layer_norm(x, last), x)
    check(case)


# ----- Modules -------------------------------------------------------------------------------

MODULES = [
    lambda nn, t: nn.GELU(), lambda nn, t: nn.GELU("tanh"), lambda nn, t: nn.SiLU(),
    lambda nn, t: nn.LeakyReLU(0.2), lambda nn, t: nn.ELU(0.5), lambda nn, t: nn.Softplus(2, 10),
    lambda nn, t: nn.Hardtanh(-2, 2), lambda nn, t: nn.ReLU6(), lambda nn, t: nn.ReLU(),
    lambda nn, t: nn.LogSigmoid(), lambda nn, t: nn.GLU(0), lambda nn, t: nn.Softmax(dim=1),
    lambda nn, t: nn.LogSoftmax(1), lambda nn, t: nn.Tanh(), lambda nn, t: nn.Sigmoid(),
    lambda nn, t: nn.Dropout(0.1), lambda nn, t: nn.LayerNorm(3),
    lambda nn, t: nn.LayerNorm(3, elementwise_affine=False), lambda nn, t: nn.GroupNorm(1, 3),
    lambda nn, t: nn.GroupNorm(1, 2),
    lambda nn, t: nn.BatchNorm1d(3),
]


@pytest.mark.parametrize("k", range(len(MODULES)))
def test_module_forward_repr_and_state(k):
    def case(t):
        m = MODULES[k](t.nn, t)
        m.eval() if isinstance(m, t.nn.Dropout) else m.train()
        x = _x(t, M23)
        out = m(x)
        return {"repr": repr(m), "state": list(m.state_dict()),
                "params": [n for n, _ in m.named_parameters()],
                "out": _backward(t, out, x)}
    check(case)


@pytest.mark.parametrize("make", [
    lambda nn, t: nn.GELU(approximate="tanh"), lambda nn, t: nn.SiLU(inplace=True),
    lambda nn, t: nn.LeakyReLU(0.2, True), lambda nn, t: nn.ELU(0.5, True),
    lambda nn, t: nn.Hardtanh(-2, 2, True), lambda nn, t: nn.ReLU6(True),
    lambda nn, t: nn.ReLU(True), lambda nn, t: nn.Softmax(),
    lambda nn, t: nn.Embedding(10, 3), lambda nn, t: nn.Embedding(10, 3, padding_idx=-2,
                                                                  scale_grad_by_freq=True),
    lambda nn, t: nn.LayerNorm((3, 4), eps=1e-3, bias=False),
    lambda nn, t: nn.BatchNorm1d(4), lambda nn, t: nn.BatchNorm2d(4, momentum=None,
                                                                  affine=False,
                                                                  track_running_stats=False),
    lambda nn, t: nn.BatchNorm1d(4, bias=False), lambda nn, t: nn.GroupNorm(2, 4),
    lambda nn, t: nn.GroupNorm(2, 4, affine=False), lambda nn, t: nn.Dropout(p=0.2, inplace=True),
    lambda nn, t: nn.MSELoss(), lambda nn, t: nn.L1Loss(reduction="sum"),
    lambda nn, t: nn.SmoothL1Loss(beta=0.5), lambda nn, t: nn.HuberLoss(delta=2.0),
    lambda nn, t: nn.BCELoss(weight=t.ones(3)), lambda nn, t: nn.BCEWithLogitsLoss(
        pos_weight=t.ones(2)),
    lambda nn, t: nn.NLLLoss(weight=t.ones(3)), lambda nn, t: nn.CrossEntropyLoss(
        label_smoothing=0.1), lambda nn, t: nn.KLDivLoss(reduction="batchmean"),
    lambda nn, t: nn.Hardtanh(1, 1), lambda nn, t: nn.GroupNorm(3, 4),
    lambda nn, t: nn.Dropout(2.0), lambda nn, t: nn.Embedding(3, 2, padding_idx=3),
])
def test_module_construction(make):
    def case(t):
        m = make(t.nn, t)
        return {"repr": repr(m), "state": list(m.state_dict()),
                "params": [(n, list(p.shape), p._version) for n, p in m.named_parameters()],
                "buffers": [(n, D.val(b), b._version) for n, b in m.named_buffers()]}
    check(case)


def test_embedding_module_initialisation_is_torchs():
    def case(t):
        t.manual_seed(0)
        m = t.nn.Embedding(27, 10, padding_idx=0)
        out = m(t.tensor([[1, 0, 5]]))
        return _backward(t, out, m.weight)
    check(case)
    frozen = gradviz.nn.Embedding.from_pretrained(gradviz.ones(3, 2))
    assert not frozen.weight.requires_grad
    assert repr(frozen) == "Embedding(3, 2)"


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("dims", [2, 3])
def test_batch_norm_module_training_then_eval(momentum, dims):
    data = X234[0] + X234[1] if dims == 2 else X234

    def case(t):
        m = t.nn.BatchNorm1d(3, momentum=momentum)
        with t.no_grad():
            m.weight.copy_(t.tensor([0.5, 1.5, -1.0]))
            m.bias.copy_(t.tensor([0.1, -0.2, 0.3]))
        x = _x(t, data)
        outs = [m(x), m(x * 2)]
        m.eval()
        outs.append(m(x))
        sum((o * o).sum() for o in outs).backward()
        return {"outs": outs, "x": x, "weight": m.weight,
                "buffers": [(n, D.val(b), b._version) for n, b in m.named_buffers()],
                "training": m.training}
    check(case)


@pytest.mark.parametrize("call", [
    lambda t, m: m(t.ones(2, 3, 2, 2)),
    lambda t, m: m(t.ones(2)),
])
def test_batch_norm_module_input_dims(call):
    check(lambda t: call(t, t.nn.BatchNorm1d(3)))


def test_loss_modules_with_arguments():
    def case(t):
        nn = t.nn
        x, y = _x(t), _x(t, T23)
        p = _x(t, P23)
        logits = _x(t, [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6], [0.2, 0.1, -0.3]])
        tgt = t.tensor([2, -100, 0])
        outs = [
            nn.MSELoss(reduction="sum")(x, y), nn.L1Loss()(x, y),
            nn.SmoothL1Loss(beta=0.5, reduction="none")(x, y), nn.HuberLoss(delta=0.5)(x, y),
            nn.BCELoss(weight=t.tensor([1.0, 2.0, 0.5]))(p, y.detach()),
            nn.BCEWithLogitsLoss(pos_weight=t.tensor([2.0, 1.0, 0.5]))(x, y.detach()),
            nn.NLLLoss(weight=t.tensor([1.0, 2.0, 0.5]), reduction="sum")(logits, tgt),
            nn.CrossEntropyLoss(weight=t.tensor([1.0, 2.0, 0.5]), ignore_index=2)(
                logits, t.tensor([2, 1, 0])),
            nn.CrossEntropyLoss(reduction="none")(logits, tgt),
            nn.CrossEntropyLoss(label_smoothing=0.1)(x, p.detach()),
            nn.KLDivLoss(reduction="batchmean", log_target=True)(x, y.detach()),
            nn.MSELoss(size_average=False)(x, y),
        ]
        sum(o.sum() for o in outs).backward()
        return outs + [x, y, p, logits]
    check(case)


@pytest.mark.parametrize("call", [
    lambda t, x: t.nn.functional.softmax(x),
    lambda t, x: t.nn.functional.log_softmax(x[0]),
    lambda t, x: t.nn.Softmax()(x),
    lambda t, x: t.nn.functional.softmax(x, 0, dtype=t.float64),
])
def test_softmax_implicit_dim_warns_and_dtype_is_used(call):
    def case(t):
        x = _x(t)
        return _backward(t, call(t, x), x)
    check(case)


@pytest.mark.parametrize("x0", [0.0, 1.0, 0.5])
def test_binary_cross_entropy_gradient_at_the_clamp_is_torchs(x0):
    # torch's kernel clamps (1 - x) x at the float 1e-12f: at x = 0 or 1 a float64 gradient
    # differs from one clamped at the double 1e-12 in the 9th digit
    real = pytest.importorskip("torch")
    grads = []
    for lib in (gradviz, real):
        x = lib.tensor([x0], dtype=lib.float64, requires_grad=True)
        t = lib.tensor([0.3], dtype=lib.float64)
        lib.nn.functional.binary_cross_entropy(x, t, reduction="sum").backward()
        grads.append(x.grad.item())
    assert grads[0] == grads[1]
