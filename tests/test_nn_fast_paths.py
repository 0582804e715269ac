"""The array fast paths of the nn workloads' formulas give the same bits as the plain NumPy
expression they replace, including the shapes a fast path does not take (broadcasting, 0-d)."""

import numpy as np
import pytest

from gradviz._dmath import mask


@pytest.mark.parametrize("cond_shape", [(3, 4), (1, 4), (3, 1), (), None])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mask_selects_bits_for_any_broadcasting_condition(cond_shape, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(dtype)
    x[0, :3] = [np.nan, np.inf, -0.0]
    cond = True if cond_shape is None else rng.random(cond_shape) > 0.5
    want = np.where(cond, x, dtype(0))          # +0.0 where dropped
    got = mask(cond, x)
    assert got.dtype == x.dtype and got.shape == x.shape
    assert np.array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


def test_mask_on_a_0d_array_gives_a_scalar_of_its_dtype():
    got = mask(np.array(False), np.array(-2.5, dtype=np.float32))
    assert got.dtype == np.float32 and got.shape == () and np.signbit(got) == False  # noqa: E712


@pytest.mark.parametrize("shape", [(2, 3, 5, 6, 4), (1, 2, 4, 4, 3)])
def test_conv_weight_grad_fast_path_equals_the_general_windows(shape, monkeypatch):
    from gradviz import _windows

    n, c, h, w, o = shape
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, c, h, w))
    g = rng.standard_normal((n, o, h, w))          # 3x3 kernel, padding 1: same size out
    args = (g, x, (o, c, 3, 3), (1, 1), (1, 1), (1, 1), 1)
    fast = _windows.conv_grad_weight(*args)
    monkeypatch.setattr(_windows, "_wide", lambda *a: False)
    general = _windows.conv_grad_weight(*args)
    assert fast.shape == (o, c, 3, 3) and fast.flags.c_contiguous
    np.testing.assert_allclose(fast, general, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("is_causal", [True, False])
def test_attention_backward_is_the_plain_formula(is_causal):
    from gradviz import _derivatives as D
    from gradviz._dmath import causal_fill

    rng = np.random.default_rng(3)
    q, k, v, g = (rng.standard_normal((2, 3, 5, 4)).astype(np.float32) for _ in range(4))
    sc = np.float32(0.5)
    s = np.matmul(q, np.swapaxes(k, -2, -1)) * sc
    s = causal_fill(s) if is_causal else s
    lse = np.log(np.exp(s).sum(-1))
    out = np.matmul(np.exp(s - lse[..., None]), v)
    p = np.exp(s - lse[..., None])          # the formula before, one array per operation
    ds = (np.matmul(g, np.swapaxes(v, -2, -1)) - (g * out).sum(-1, keepdims=True)) * p * sc
    want = [np.matmul(ds, k), np.matmul(np.swapaxes(ds, -2, -1), q),
            np.matmul(np.swapaxes(p, -2, -1), g)]
    inputs = [a.copy() for a in (g, q, k, v, out)]
    got = D.flash_attention_grads(g, 7, q, k, v, out, lse, 0.0, is_causal, None, 0.5)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)
    assert all(np.array_equal(a, b) for a, b in zip(inputs, (g, q, k, v, out)))
    assert not any(np.shares_memory(r, a) for r in got for a in (g, q, k, v, out))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.1, 0.9, 1, 32, 1e-5, 32 / 31])
def test_constant_gives_the_bits_of_the_python_number(dtype, value):
    from gradviz._derivatives import constant

    x = np.random.default_rng(4).standard_normal(200).astype(dtype)
    c = constant(value, dtype)
    assert c.shape == () and c.dtype == dtype and not c.flags.writeable
    with np.errstate(over="ignore", divide="ignore"):
        pairs = ((x * c, x * value), (x / c, x / value), (c / x, value / x),
                 (x + c, x + value))
    for got, want in pairs:
        assert got.dtype == want.dtype
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    assert constant(value, dtype) is c          # cached


def test_constant_cache_stays_bounded():
    from gradviz import _derivatives

    for i in range(600):
        _derivatives.constant(i + 0.5, np.float32)
    assert len(_derivatives._CONSTANTS) <= 256


@pytest.mark.parametrize("n", [1, 27, 512, 513, 700])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_hot_columns_is_the_comparison_matrix(n, dtype):
    from gradviz._derivatives import one_hot_columns

    idx = np.random.default_rng(5).integers(0, n, 96)
    got = one_hot_columns(idx, n, dtype)
    want = (np.arange(n)[:, None] == idx).astype(dtype)
    assert got.dtype == dtype and got.flags.c_contiguous and np.array_equal(got, want)
    g = np.random.default_rng(6).standard_normal((96, 10)).astype(dtype)
    assert np.array_equal(got @ g, want @ g)


@pytest.mark.parametrize("shape", [(32, 200), (8, 6, 5), (4, 3, 2, 5)])
def test_batch_norm_training_matches_torch_bits_and_running_stats(shape):
    torch = pytest.importorskip("torch")
    import gradviz

    rng = np.random.default_rng(7)
    c = shape[1]
    x = rng.standard_normal(shape).astype(np.float32)
    w, b = rng.uniform(0.5, 1.5, c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    results = []
    for lib in (gradviz, torch):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        rm, rv = lib.zeros(c), lib.ones(c)
        out = lib.nn.functional.batch_norm(xs, rm, rv, ws, bs, training=True, momentum=0.2)
        out.backward(lib.tensor(g))
        results.append([t.detach().numpy() for t in (out, rm, rv, xs.grad, ws.grad, bs.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-5)


def test_batch_norm_training_calls_with_other_sizes_and_numbers_keep_their_own_constants():
    # batch_norm caches its training constants per (n, eps, dtype, momentum, stats dtype): a
    # call after another with a different batch, momentum, eps or dtype uses its own.
    torch = pytest.importorskip("torch")
    import gradviz

    rng = np.random.default_rng(9)
    calls = [((32, 5), 0.1, 1e-5, np.float32), ((7, 5), 0.1, 1e-5, np.float32),
             ((32, 5), 0.3, 1e-5, np.float32), ((32, 5), 0.1, 0.5, np.float32),
             ((32, 5), 0.1, 1e-5, np.float64), ((2, 5, 3), 0.0, 1e-5, np.float32),
             ((32, 5), 1, 1e-5, np.float32)]
    for shape, momentum, eps, dtype in calls:
        x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
        rm0, rv0 = rng.standard_normal(5).astype(dtype), rng.uniform(0.5, 2, 5).astype(dtype)
        results = []
        for lib in (gradviz, torch):
            rm, rv = lib.tensor(rm0), lib.tensor(rv0)
            out = lib.nn.functional.batch_norm(lib.tensor(x), rm, rv, training=True,
                                               momentum=momentum, eps=eps)
            results.append([t.numpy() for t in (out, rm, rv)])
        for ours, theirs in zip(*results):
            assert ours.dtype == theirs.dtype
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows", [27, 600])
def test_embedding_backward_sums_repeated_rows_as_torch(rows):
    torch = pytest.importorskip("torch")
    import gradviz

    rng = np.random.default_rng(8)
    table = rng.standard_normal((rows, 10)).astype(np.float32)
    idx = rng.integers(0, rows, (32, 3))
    idx[0] = idx[1]                      # repeated rows accumulate
    g = rng.standard_normal((32, 3, 10)).astype(np.float32)
    grads = []
    for lib in (gradviz, torch):
        t = lib.tensor(table, requires_grad=True)
        lib.nn.functional.embedding(lib.tensor(idx), t).backward(lib.tensor(g))
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_backward_scales_in_the_inputs_dtype(dtype):
    # The default scale 1 / sqrt(E) is a float64 NumPy scalar: the score gradient is scaled
    # in the inputs' dtype (as torch's kernel), not through float64.
    from gradviz import _derivatives as D

    rng = np.random.default_rng(9)
    q, k, v, g = (rng.standard_normal((2, 3, 6, 32)).astype(dtype) for _ in range(4))
    sc = dtype(1.0 / np.sqrt(32))
    s = np.matmul(q, k.swapaxes(-2, -1)) * sc
    lse = np.log(np.exp(s).sum(-1)).astype(dtype)
    p = np.exp(s - lse[..., None])
    out = np.matmul(p, v)
    ds = np.matmul(g, v.swapaxes(-2, -1))
    ds -= np.einsum("...ij,...ij->...i", g, out)[..., None]   # the kernel's row sums
    ds *= p
    ds *= sc
    got = D.flash_attention_grads(g, 7, q, k, v, out, lse, 0.0, False, None, None)
    assert all(r.dtype == dtype for r in got)
    assert np.array_equal(got[0], np.matmul(ds, k))
    assert np.array_equal(got[1], np.matmul(ds.swapaxes(-2, -1), q))


def test_on_tensors_finds_a_tensor_in_any_position():
    import gradviz
    from gradviz._derivatives import on_tensors

    t, a = gradviz.ones(2), np.ones(2)
    assert on_tensors(t) and on_tensors(a, None, t) and on_tensors(t, a)
    assert not on_tensors() and not on_tensors(a, None, 1.0)
