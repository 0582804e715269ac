"""Convolution, pooling, padding, attention and linear against torch 2.13: values, gradients,
graphs (grad_fn names and next_functions), versions, second derivatives, and the first
sentence of each error. Each case runs on both backends (see tests/test_core_torch_extra.py).
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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return observe(fn(backend))
    except Exception as exc:  # noqa: BLE001 - the error is the observable
        return D.Err(exc)


def check(fn):
    ref = run(fn, torch)
    problems = compare(ref, run(fn, gradviz))
    assert not problems, "\n".join(problems)
    return ref


def data(seed, *shape):
    return np.random.default_rng(seed).uniform(-1, 1, shape).round(3).tolist()


def leaf(t, seed, *shape, dtype=None, rg=True):
    return t.tensor(data(seed, *shape), dtype=dtype or t.float32, requires_grad=rg)


def backward(t, out, *inputs):
    """out backward with a non-uniform gradient; returns [out, *inputs] (for their grads)."""
    if out.requires_grad:
        out.backward(D.upstream(t, out))
    return [out, *inputs]


# ----- conv2d / conv1d -----------------------------------------------------------------------

CONV2D = [
    dict(),
    dict(stride=2),
    dict(stride=(2, 1), padding=(1, 2)),
    dict(padding=1, dilation=2),
    dict(groups=2),
    dict(stride=3, padding=2, dilation=(2, 1), groups=2),
    dict(padding="valid"),
    dict(padding="same"),
    dict(padding="same", dilation=2),
]


@pytest.mark.parametrize("kw", CONV2D, ids=[str(k) for k in CONV2D])
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d(kw, bias):
    def case(t):
        x = leaf(t, 1, 2, 4, 7, 6)
        w = leaf(t, 2, 6, 4 // kw.get("groups", 1), 3, 2)
        b = leaf(t, 3, 6) if bias else None
        return backward(t, t.nn.functional.conv2d(x, w, b, **kw), x, w, b)
    check(case)


@pytest.mark.parametrize("kernel", [(2, 2), (3, 2), (4, 1)])
def test_conv2d_same_padding_with_even_kernels_pads_the_high_side(kernel):
    def case(t):
        x = leaf(t, 1, 1, 2, 5, 5)
        w = leaf(t, 2, 3, 2, *kernel)
        return backward(t, t.nn.functional.conv2d(x, w, padding="same"), x, w)
    check(case)


def test_conv2d_unbatched_input_is_unsqueezed_and_squeezed():
    def case(t):
        x = leaf(t, 1, 3, 5, 5)
        w = leaf(t, 2, 2, 3, 3, 3)
        return backward(t, t.conv2d(x, w, padding=1), x, w)
    check(case)


def test_conv2d_only_weight_requires_grad_and_float64():
    def case(t):
        x = leaf(t, 1, 2, 3, 5, 5, dtype=t.float64, rg=False)
        w = leaf(t, 2, 2, 3, 3, 3, dtype=t.float64)
        return backward(t, t.nn.functional.conv2d(x, w, stride=2), x, w)
    check(case)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(dilation=2, groups=2),
                                dict(padding="same")], ids=str)
def test_conv1d(kw):
    def case(t):
        x = leaf(t, 1, 2, 4, 9)
        w = leaf(t, 2, 4, 4 // kw.get("groups", 1), 3)
        b = leaf(t, 3, 4)
        return backward(t, t.nn.functional.conv1d(x, w, b, **kw), x, w, b)
    check(case)


def test_conv1d_unbatched_and_torch_level_name():
    def case(t):
        x = leaf(t, 1, 2, 6)
        w = leaf(t, 2, 3, 2, 2)
        return backward(t, t.conv1d(x, w), x, w)
    check(case)


def test_conv_saved_values():
    def case(t):
        x = leaf(t, 1, 1, 2, 5, 5)
        w = leaf(t, 2, 4, 1, 3, 3)
        b = leaf(t, 3, 4)
        fn = t.nn.functional.conv2d(x, w, b, stride=2, padding=1, dilation=1, groups=2).grad_fn
        valid = t.nn.functional.conv2d(x, w[:, :, :2], padding="valid", groups=2).grad_fn
        names = ["stride", "padding", "dilation", "groups", "transposed", "output_padding",
                 "bias_sym_sizes_opt"]
        return ([tuple(getattr(fn, "_saved_" + n)) if isinstance(getattr(fn, "_saved_" + n),
                                                                 tuple)
                 else getattr(fn, "_saved_" + n) for n in names]
                + [list(fn._saved_input.shape), list(fn._saved_weight.shape),
                   valid._saved_padding, valid._saved_output_padding])
    check(case)


def test_conv2d_second_order():
    def case(t):
        x = leaf(t, 1, 1, 2, 5, 4, dtype=t.float64)
        w = leaf(t, 2, 2, 2, 2, 3, dtype=t.float64)
        return D.second_order(t, lambda a, b: t.nn.functional.conv2d(a, b, stride=(1, 2),
                                                                     padding=1) ** 2, x, w)
    check(case)


CONV_ERRORS = [
    lambda t, x, w: t.nn.functional.conv2d(x, t.ones(4, 2, 3, 3)),
    lambda t, x, w: t.nn.functional.conv2d(x, t.ones(4, 3, 3)),
    lambda t, x, w: t.nn.functional.conv2d(x, t.ones(4, 1, 3, 3), groups=2),
    lambda t, x, w: t.nn.functional.conv2d(x, t.ones(4, 1, 3, 3), groups=3),
    lambda t, x, w: t.nn.functional.conv2d(x.double(), w),
    lambda t, x, w: t.nn.functional.conv2d(x, w, t.zeros(4, dtype=t.float64)),
    lambda t, x, w: t.nn.functional.conv2d(x, w, t.zeros(5)),
    lambda t, x, w: t.nn.functional.conv2d(x, w, stride=2, padding="same"),
    lambda t, x, w: t.nn.functional.conv2d(x, w, padding="full"),
    lambda t, x, w: t.nn.functional.conv2d(x, t.ones(4, 3, 9, 9)),
    lambda t, x, w: t.nn.functional.conv2d(x, w, stride=0),
    lambda t, x, w: t.nn.functional.conv2d(x, w, padding=-1),
    lambda t, x, w: t.nn.functional.conv2d(t.ones(6, 6), w),
    lambda t, x, w: t.nn.functional.conv1d(x, w),
    lambda t, x, w: t.nn.functional.conv2d(x, w, stride=(1, 1, 1)),
]


@pytest.mark.parametrize("k", range(len(CONV_ERRORS)))
def test_conv_errors(k):
    def case(t):
        x = t.ones(2, 3, 6, 6, requires_grad=True)
        w = t.ones(4, 3, 3, 3, requires_grad=True)
        return CONV_ERRORS[k](t, x, w)
    assert isinstance(check(case), D.Err)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 2), c=st.integers(1, 3), o=st.integers(1, 3), g=st.integers(1, 2),
       h=st.integers(3, 7), w=st.integers(3, 7), kh=st.integers(1, 3), kw=st.integers(1, 3),
       s=st.integers(1, 3), p=st.integers(0, 2), d=st.integers(1, 2))
def test_conv2d_any_geometry(n, c, o, g, h, w, kh, kw, s, p, d):
    if d * (kh - 1) + 1 > h + 2 * p or d * (kw - 1) + 1 > w + 2 * p:
        return

    def case(t):
        x = leaf(t, 1, n, c * g, h, w, dtype=t.float64)
        wt = leaf(t, 2, o * g, c, kh, kw, dtype=t.float64)
        b = leaf(t, 3, o * g, dtype=t.float64)
        out = t.nn.functional.conv2d(x, wt, b, stride=s, padding=p, dilation=d, groups=g)
        return backward(t, out, x, wt, b)
    check(case)


# ----- pooling -------------------------------------------------------------------------------

MAXPOOL = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(3, 2), stride=(2, 1), ceil_mode=True),
    dict(kernel_size=2, dilation=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=1),
    dict(kernel_size=2, stride=3, ceil_mode=True),
]


@pytest.mark.parametrize("kw", MAXPOOL, ids=str)
@pytest.mark.parametrize("batched", [True, False])
def test_max_pool2d(kw, batched):
    def case(t):
        x = leaf(t, 4, *(((2,) if batched else ()) + (3, 7, 6)))
        out, idx = t.nn.functional.max_pool2d(x, return_indices=True, **kw)
        return backward(t, out, x) + [D.val(idx)]
    check(case)


def test_max_pool2d_ties_and_saved_values():
    def case(t):
        x = t.tensor([[[1.0, 1.0, 0.0], [1.0, 0.5, 2.0], [2.0, 2.0, -1.0]]],
                     requires_grad=True)
        out = t.nn.functional.max_pool2d(x, 2, stride=1)
        fn = out.grad_fn
        saved = [fn._saved_kernel_size, fn._saved_stride, fn._saved_padding,
                 fn._saved_dilation, fn._saved_ceil_mode, D.val(fn._saved_result1)]
        return backward(t, out, x) + [saved]
    check(case)


def test_max_pool2d_nan_wins_and_last_nan_is_chosen():
    def case(t):
        nan = float("nan")
        x = t.tensor([[[nan, 1.0, 2.0, nan], [0.5, nan, 3.0, 1.0], [1.0, 2.0, nan, 0.0],
                       [4.0, 4.0, 0.0, -1.0]]], requires_grad=True)
        out, idx = t.nn.functional.max_pool2d(x, 2, return_indices=True)
        return backward(t, out, x) + [D.val(idx)]
    check(case)


AVGPOOL = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(3, 2), stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(3, 2), stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=2, divisor_override=3),
]


@pytest.mark.parametrize("kw", AVGPOOL, ids=str)
@pytest.mark.parametrize("batched", [True, False])
def test_avg_pool2d(kw, batched):
    def case(t):
        x = leaf(t, 5, *(((2,) if batched else ()) + (3, 7, 6)))
        out = t.nn.functional.avg_pool2d(x, **kw)
        fn = out.grad_fn
        saved = [fn._saved_kernel_size, fn._saved_stride, fn._saved_padding,
                 fn._saved_ceil_mode, fn._saved_count_include_pad, fn._saved_divisor_override]
        return backward(t, out, x) + [saved]
    check(case)


@pytest.mark.parametrize("size", [(3, 4), 2, (1, 1), 1, (None, 2), (5, 3), (7, 6)], ids=str)
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_avg_pool2d(size, batched):
    def case(t):
        x = leaf(t, 6, *(((2,) if batched else ()) + (3, 7, 6)))
        return backward(t, t.nn.functional.adaptive_avg_pool2d(x, size), x)
    check(case)


@pytest.mark.parametrize("name", ["max", "avg"])
def test_pool_second_order(name):
    def case(t):
        x = leaf(t, 7, 1, 2, 5, 5, dtype=t.float64)
        pool = t.nn.functional.max_pool2d if name == "max" else t.nn.functional.avg_pool2d
        return D.second_order(t, lambda a: pool(a, 3, stride=2, padding=1) ** 2, x)
    check(case)


POOL_ERRORS = [
    lambda t, x: t.nn.functional.max_pool2d(x, 2, padding=2),
    lambda t, x: t.nn.functional.max_pool2d(x, 7),
    lambda t, x: t.nn.functional.avg_pool2d(x, 2, padding=2),
    lambda t, x: t.nn.functional.max_pool2d(x.reshape(-1), 2),
    lambda t, x: t.nn.functional.avg_pool2d(x.reshape(-1), 2),
]


@pytest.mark.parametrize("k", range(len(POOL_ERRORS)))
def test_pool_errors(k):
    def case(t):
        return POOL_ERRORS[k](t, t.ones(2, 3, 6, 6, requires_grad=True))
    assert isinstance(check(case), D.Err)


# ----- pad -----------------------------------------------------------------------------------

PADS = [
    ((1, 2), "constant", 2, None),
    ((1, 2, 0, 3), "constant", 4, 1.5),
    ((-1, 2, 1, -2), "constant", 4, None),
    ((1, 1, 1, 1, 1, 1), "constant", 3, None),
    ((2, 1), "reflect", 2, None),
    ((2, 1), "reflect", 3, None),
    ((1, 2, 2, 0), "reflect", 3, None),
    ((1, 2, 2, 0), "reflect", 4, None),
    ((3, 1), "replicate", 3, None),
    ((0, 3, 2, 1), "replicate", 4, None),
    ((0, 3, 2, 1), "replicate", 3, None),
]


@pytest.mark.parametrize("pad,mode,ndim,value", PADS, ids=str)
def test_pad(pad, mode, ndim, value):
    def case(t):
        x = leaf(t, 8, *((2, 3, 4, 5)[4 - ndim:]))
        kw = {} if value is None else {"value": value}
        out = t.nn.functional.pad(x, pad, mode=mode, **kw)
        # (torch shows a negative saved pad as an unsigned 64-bit number; gradviz keeps -1)
        saved = getattr(out.grad_fn, "_saved_pad", None)
        # the output's strides: torch's padded output is contiguous
        return backward(t, out, x) + [saved if saved is None or min(pad) >= 0 else None,
                                      out.stride()]
    check(case)


PAD_ERRORS = [
    lambda t, x: t.nn.functional.pad(x, (1,)),
    lambda t, x: t.nn.functional.pad(x, (1, 1) * 5),
    lambda t, x: t.nn.functional.pad(x, (4, 4), mode="reflect"),
    lambda t, x: t.nn.functional.pad(x, (1, 1, 1, 1), mode="wrap"),
    lambda t, x: t.nn.functional.pad(x, (1, 1), mode="reflect", value=2.0),
    lambda t, x: t.nn.functional.pad(x[0], (4, 1), mode="reflect"),
]


@pytest.mark.parametrize("k", range(len(PAD_ERRORS)))
def test_pad_errors(k):
    def case(t):
        return PAD_ERRORS[k](t, t.ones(2, 3, 4, 4, requires_grad=True))
    assert isinstance(check(case), D.Err)


def test_pad_circular_is_not_implemented():
    x = gradviz.ones(1, 2, 3, requires_grad=True)
    with pytest.raises(NotImplementedError, match="--backend torch"):
        gradviz.nn.functional.pad(x, (1, 1), mode="circular")


# ----- scaled_dot_product_attention --------------------------------------------------------

SDPA = [
    dict(),
    dict(is_causal=True),
    dict(scale=0.3),
    dict(mask="bool"),
    dict(mask="float"),
    dict(mask="bool", is_causal=True),
    dict(mask="masked_row"),
]


@pytest.mark.parametrize("kw", SDPA, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lk", [5, 7])
def test_scaled_dot_product_attention(kw, dtype, lk):
    def case(t):
        dt = getattr(t, dtype)
        q = leaf(t, 9, 2, 3, 5, 4, dtype=dt)
        k = leaf(t, 10, 2, 3, lk, 4, dtype=dt)
        v = leaf(t, 11, 2, 3, lk, 4, dtype=dt)
        opts = {key: val for key, val in kw.items() if key != "mask"}
        mask = kw.get("mask")
        if mask == "bool":
            opts["attn_mask"] = t.tensor(np.arange(5 * lk).reshape(5, lk) % 3 != 1)
        elif mask == "float":
            opts["attn_mask"] = leaf(t, 12, 5, lk, dtype=dt, rg=False)
        elif mask == "masked_row":
            m = np.ones((5, lk), dtype=bool)
            m[1] = False
            opts["attn_mask"] = t.tensor(m)
        out = t.nn.functional.scaled_dot_product_attention(q, k, v, **opts)
        fn = out.grad_fn
        saved = [fn._saved_dropout_p, fn._saved_is_causal, fn._saved_scale,
                 list(fn._saved_logsumexp.shape), D.val(fn._saved_logsumexp),
                 None if fn._saved_attn_mask is None else D.val(fn._saved_attn_mask)]
        return backward(t, out, q, k, v) + [saved]
    check(case)


def test_attention_double_backward_fails_as_in_torch():
    def case(t):
        q = leaf(t, 9, 1, 2, 3, 4, dtype=t.float64)
        out = t.nn.functional.scaled_dot_product_attention(q, q, q)
        (g,) = t.autograd.grad((out * out).sum(), q, create_graph=True)
        return [g.grad_fn.name(), D.outcome(lambda: g.sum().backward())]
    check(case)


def test_attention_errors():
    def case(t):
        q = t.ones(2, 4, 5, 8, requires_grad=True)
        return D.outcome(lambda: t.nn.functional.scaled_dot_product_attention(q, q.double(), q))
    assert isinstance(check(case), D.Err)


@pytest.mark.parametrize("kw", [dict(dropout_p=0.5), dict(enable_gqa=True)], ids=str)
def test_attention_arguments_gradviz_does_not_implement_raise(kw):
    q = gradviz.ones(2, 4, 5, 8, requires_grad=True)
    with pytest.raises(NotImplementedError, match="run with --backend torch to use PyTorch"):
        gradviz.nn.functional.scaled_dot_product_attention(q, q, q, **kw)


MATH_PATH = [
    dict(dims=3),
    dict(dims=3, is_causal=True),
    dict(dims=3, mask="bool", scale=0.4),
    dict(dims=4, mask="grad"),
    dict(dims=4, value_dim=3),
    dict(dims=4, mask="grad", is_causal=True),
    dict(dims=2),
]


@pytest.mark.parametrize("kw", MATH_PATH, ids=str)
def test_attention_math_path(kw):
    """Where torch 2.13 does not use its CPU kernel it composes the attention from ops."""
    def case(t):
        lead = (2, 3)[4 - kw["dims"]:] if kw["dims"] > 2 else ()
        q = leaf(t, 9, *lead, 5, 4)
        k = leaf(t, 10, *lead, 6, 4)
        v = leaf(t, 11, *lead, 6, kw.get("value_dim", 4))
        opts = {key: val for key, val in kw.items() if key in ("is_causal", "scale")}
        m = None
        if kw.get("mask") == "bool":
            opts["attn_mask"] = t.tensor(np.arange(30).reshape(5, 6) % 4 != 1)
        elif kw.get("mask") == "grad":
            m = opts["attn_mask"] = leaf(t, 12, 5, 6)
        out = t.nn.functional.scaled_dot_product_attention(q, k, v, **opts)
        return backward(t, out, q, k, v, m)
    check(case)


# ----- linear on any leading dims --------------------------------------------------------------

LINEAR = [
    ((2, 5, 3), True, True), ((2, 5, 3), True, False), ((2, 5, 3), False, True),
    ((2, 2, 5, 3), True, True), ((3,), True, True), ((3,), False, True), ((4, 3), True, True),
    ((4, 3), False, True),
]


@pytest.mark.parametrize("shape,bias,rg", LINEAR, ids=str)
def test_linear_composition(shape, bias, rg):
    def case(t):
        x = leaf(t, 13, *shape, rg=rg)
        w = leaf(t, 14, 4, 3)
        b = leaf(t, 15, 4) if bias else None
        return backward(t, t.nn.functional.linear(x, w, b), x, w, b)
    check(case)


def test_linear_on_non_contiguous_3d_input_is_matmul_then_add():
    def case(t):
        x = leaf(t, 13, 5, 2, 3)
        w = leaf(t, 14, 4, 3)
        b = leaf(t, 15, 4)
        return backward(t, t.nn.functional.linear(x.transpose(0, 1), w, b), x, w, b)
    check(case)


def test_saved_values_that_are_not_tensors_stay_readable_after_backward():
    def case(t):
        x = leaf(t, 1, 1, 2, 5, 5)
        w = leaf(t, 2, 3, 2, 3, 3)
        y = t.nn.functional.conv2d(x, w, stride=2, padding=1)
        p = t.nn.functional.max_pool2d(x, 2)
        (y.sum() + p.sum()).backward()
        return [y.grad_fn._saved_stride, y.grad_fn._saved_padding, y.grad_fn._saved_groups,
                y.grad_fn._saved_transposed, p.grad_fn._saved_kernel_size,
                p.grad_fn._saved_ceil_mode, D.outcome(lambda: y.grad_fn._saved_input),
                D.outcome(lambda: p.grad_fn._saved_result1)]
    check(case)


# ----- bilinear ------------------------------------------------------------------------------

@pytest.mark.parametrize("lead,bias", [((2, 5), True), ((5,), False), ((), True)], ids=str)
def test_bilinear(lead, bias):
    def case(t):
        x1 = leaf(t, 16, *lead, 3)
        x2 = leaf(t, 17, *lead, 4)
        w = leaf(t, 18, 6, 3, 4)
        b = leaf(t, 19, 6) if bias else None
        return backward(t, t.nn.functional.bilinear(x1, x2, w, b), x1, x2, w, b)
    check(case)


def test_bilinear_module_initialisation_and_repr():
    def case(t):
        t.manual_seed(3)
        m = t.nn.Bilinear(3, 4, 6)
        x1, x2 = leaf(t, 16, 2, 3), leaf(t, 17, 2, 4)
        return [repr(m), D.val(m.weight), D.val(m.bias), D.val(m(x1, x2))]
    check(case)


BILINEAR_ERRORS = [
    lambda t, x1, x2, w, b: t.nn.functional.bilinear(x1, x2[0], w, b),
    lambda t, x1, x2, w, b: t.nn.functional.bilinear(x1, x2[:, :2], w, b),
    lambda t, x1, x2, w, b: t.nn.functional.bilinear(x1, x2, w[0], b),
    lambda t, x1, x2, w, b: t.nn.functional.bilinear(x1, x2, w[:, :2], b),
    lambda t, x1, x2, w, b: t.nn.functional.bilinear(x1, x2, w[:, :, :2], b),
    lambda t, x1, x2, w, b: t.nn.functional.bilinear(x1, x2, w, b[:2]),
    lambda t, x1, x2, w, b: t.nn.functional.bilinear(x1, x2, w, b.double()),
]


@pytest.mark.parametrize("k", range(len(BILINEAR_ERRORS)))
def test_bilinear_errors(k):
    def case(t):
        return BILINEAR_ERRORS[k](t, t.ones(2, 5, 3), t.ones(2, 5, 4), t.ones(6, 3, 4),
                                  t.ones(6))
    assert isinstance(check(case), D.Err)
