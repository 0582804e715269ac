"""gradviz/_f32.py gives torch's float32 kernel results bit for bit.

Three references, each the code torch itself runs on this CPU:
- SLEEF's Sleef_expf8_u10 and Sleef_logf8_u10, called from torch's own libtorch_cpu through a
  small C shim compiled here (skipped without a C compiler or an AVX2+FMA CPU), over a fixed
  sweep of 2**32 / 409 bit patterns (about 10.5 million floats: every exponent, subnormals,
  both zeros, infinities and NaNs) plus random draws;
- torch's public ops whose output is a SLEEF exp exactly: _log_softmax_backward_data with
  grad (1, 0, 0, ...) per row gives -exp(y) in every other column, for hypothesis' floats;
- torch.sigmoid / softmax / log_softmax and log_softmax's backward through gradviz's API,
  with the replicas switched on (they are off unless GRADVIZ_TORCH_FLOAT32=1), and unchanged
  results with them off.
"""

import ctypes
import glob
import os
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradviz
from gradviz import _f32

torch = pytest.importorskip("torch")

F32 = np.float32

@pytest.fixture(scope="module", autouse=True)
def torch_bits():
    """gradviz's ops use the replicas only when asked (GRADVIZ_TORCH_FLOAT32=1)."""
    saved, _f32.TORCH_BITS = _f32.TORCH_BITS, True
    yield
    _f32.TORCH_BITS = saved


_SHIM = r"""
#include <immintrin.h>
#include <stdint.h>
__m256 Sleef_expf8_u10(__m256);
__m256 Sleef_logf8_u10(__m256);
#define MAP(name, fn) void name(int64_t n, const float *x, float *y) { \
    for (int64_t i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, fn(_mm256_loadu_ps(x + i))); }
MAP(sleef_exp, Sleef_expf8_u10)
MAP(sleef_log, Sleef_logf8_u10)
"""


@pytest.fixture(scope="module")
def sleef(tmp_path_factory):
    """torch's own SLEEF functions, callable on float32 arrays (lengths a multiple of 8)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    if not cc or " avx2" not in flags or " fma" not in flags:
        pytest.skip("needs a C compiler and an AVX2+FMA CPU")
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    if not glob.glob(os.path.join(lib, "libtorch_cpu.*")):
        pytest.skip("torch's libtorch_cpu not found")
    d = tmp_path_factory.mktemp("shim")
    src, so = d / "shim.c", d / "shim.so"
    src.write_text(_SHIM)
    proc = subprocess.run([cc, "-O2", "-mavx2", "-mfma", "-shared", "-fPIC", str(src), "-o",
                           str(so), f"-L{lib}", "-ltorch_cpu", f"-Wl,-rpath,{lib}"],
                          capture_output=True, text=True)
    if proc.returncode:
        pytest.skip("could not link against torch's SLEEF: " + proc.stderr[-300:])
    shim = ctypes.CDLL(str(so))

    def call(name, x):
        x = np.ascontiguousarray(x, dtype=F32)
        assert x.size % 8 == 0
        out = np.empty_like(x)
        getattr(shim, name)(ctypes.c_int64(x.size), x.ctypes.data_as(ctypes.c_void_p),
                            out.ctypes.data_as(ctypes.c_void_p))
        return out
    return call


def _sweep():
    """Every 409th float32 bit pattern, the special values, random normals: ~10.5 million."""
    bits = np.arange(0, 2**32, 409, dtype=np.uint64).astype(np.uint32).view(F32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38,
                        1.17549435e-38, 3.4028235e38, -3.4028235e38, 1.0, 0.75, 1.5,
                        88.72283, 88.7229, -103.97, -104.0, -104.00001, 100.0, 100.00001],
                       dtype=F32)
    rng = np.random.default_rng(0)
    x = np.concatenate([bits, special, (rng.standard_normal(1 << 16) * 30).astype(F32)])
    return np.concatenate([x, np.ones(-x.size % 8, dtype=F32)])


def _same_bits(a, b):
    """Indices where a and b differ, NaN of any payload matching NaN."""
    a, b = np.asarray(a, dtype=F32), np.asarray(b, dtype=F32)
    return np.nonzero((a.view(np.uint32) != b.view(np.uint32)) & ~(np.isnan(a) & np.isnan(b)))[0]


def test_expf_is_sleefs_on_a_sweep_of_all_floats(sleef):
    x = _sweep()
    assert x.size >= 10_000_000
    bad = _same_bits(_f32.sleef_expf_u10(x), sleef("sleef_exp", x))
    assert bad.size == 0, x[bad[:10]]


def test_logf_is_sleefs_on_a_sweep_of_all_floats(sleef):
    x = _sweep()
    bad = _same_bits(_f32.sleef_logf_u10(x), sleef("sleef_log", x))
    assert bad.size == 0, x[bad[:10]]


def test_the_fma_emulation_repairs_double_rounding():
    # a*b = 2**-24 - 2**-70 exactly; + c = 1 + 3 * 2**-24 - 2**-70, just below the midpoint
    # between 1 + 2**-23 and 1 + 2**-22. float64 rounds the sum onto the midpoint, and
    # float32 then rounds that to even (1 + 2**-22); fmaf rounds once, to 1 + 2**-23.
    a = F32((1 + 2**-23) * 2**-12)
    b = F32((1 - 2**-23) * 2**-12)
    c = F32(1 + 2**-23)
    twice = (np.float64(a) * np.float64(b) + np.float64(c)).astype(F32)
    assert twice == F32(1 + 2**-22)
    assert _f32._fma(np.array([a, a]), b, c).tolist() == [1 + 2**-23] * 2

    def kernel(d, fma):
        return fma(d, b, c)
    # the fast path finds the midpoint afterwards and redoes that element exactly
    d = np.array([F32(0.5), a, F32(2.0)])
    assert _f32._replicated(kernel, d)[1] == F32(1 + 2**-23)


floats32 = st.floats(width=32, allow_nan=True, allow_infinity=True)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(F32, st.integers(1, 40), elements=floats32))
def test_expf_is_torchs_through_log_softmax_backward(y):
    # grad (1, 0, ...) per row: grad_input = grad - exp(y) * 1 = -exp(y) exactly off column 0
    rows = np.stack([np.concatenate([[F32(0)], y])])
    g = np.zeros_like(rows)
    g[:, 0] = 1
    t = torch._log_softmax_backward_data(torch.from_numpy(g), torch.from_numpy(rows), -1,
                                         torch.float32).numpy()[0, 1:]
    assert _same_bits(_f32.sleef_expf_u10(y), F32(0) - t).size == 0     # (0 - t: +0 for 0)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(F32, st.integers(0, 80),
                  elements=st.floats(-120, 120, width=32) | floats32))
def test_sigmoid_is_torchs(x):
    want = torch.sigmoid(torch.from_numpy(x)).numpy()
    assert _same_bits(gradviz.sigmoid(gradviz.tensor(x)).numpy(), want).size == 0


shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=40)


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(F32, shapes, elements=st.floats(-30, 30, width=32)), st.data())
def test_softmax_log_softmax_and_log_softmax_backward_are_torchs(x, data):
    g = data.draw(hnp.arrays(F32, x.shape, elements=st.floats(-3, 3, width=32)))
    for op in ("softmax", "log_softmax"):
        res = []
        for lib in (gradviz, torch):
            a = lib.tensor(x, requires_grad=True)
            y = getattr(lib, op)(a, -1)
            y.backward(lib.tensor(g))
            res.append((y.detach().numpy(), a.grad.numpy()))
        assert _same_bits(res[0][0], res[1][0]).size == 0, op
        if op == "log_softmax":     # softmax's backward sums in an order not replicated yet
            assert _same_bits(res[0][1], res[1][1]).size == 0, op + " backward"


def test_makemore_shapes_match_torch():
    rng = np.random.default_rng(1)
    logits = (rng.standard_normal((32, 27)) * 3).astype(F32)
    h = (rng.standard_normal((32, 200)) * 2).astype(F32)
    for lib_out in (("log_softmax", logits), ("softmax", logits), ("sigmoid", h)):
        name, x = lib_out
        args = (-1,) if name != "sigmoid" else ()
        want = getattr(torch, name)(torch.from_numpy(x), *args).numpy()
        got = getattr(gradviz, name)(gradviz.tensor(x), *args).numpy()
        assert _same_bits(got, want).size == 0, name


def test_glibc_expf_is_the_c_librarys():
    try:
        libm = ctypes.CDLL("libm.so.6")
    except OSError:
        pytest.skip("no glibc libm")
    libm.expf.restype, libm.expf.argtypes = ctypes.c_float, [ctypes.c_float]
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-110, 95, 20000), rng.standard_normal(20000) * 5,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 88.72283, 88.7229, -103.97,
                         -103.98, 1e-45]]).astype(F32)
    want = np.array([libm.expf(float(v)) for v in x], dtype=F32)
    bad = _same_bits(_f32.glibc_expf(x), want)
    assert bad.size == 0, x[bad[:10]]


def test_the_replicas_are_off_unless_asked(monkeypatch):
    monkeypatch.setattr(_f32, "TORCH_BITS", False)
    x = (np.random.default_rng(3).standard_normal((32, 27)) * 3).astype(F32)
    a = gradviz.tensor(x)
    off = gradviz.log_softmax(a, -1).numpy()
    assert np.array_equal(off, gradviz._ops.reductions._log_softmax(x, 1))
    monkeypatch.setattr(_f32, "TORCH_BITS", True)
    on = gradviz.log_softmax(a, -1).numpy()
    assert np.array_equal(on, _f32.log_softmax_lastdim(x))
    assert not np.array_equal(on, off)          # on this input the switch changes bits
