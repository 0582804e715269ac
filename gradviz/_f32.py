"""Bit-exact float32 replicas of the vectorized kernels torch's CPU ops run, in NumPy.

torch's float32 kernels do not round as NumPy's do: where torch evaluates through
at::vec::Vectorized<float> (AVX2), it calls SLEEF, whose polynomials use fused multiply-add.
Each function here follows one such kernel operation by operation, so that its float32 result
is the same bits as torch's, element for element (tests/test_f32_kernels.py checks this
against torch on millions of values).

What torch 2.13 runs for float32 on an x86 CPU (AVX2 capability), found by reading its
sources and confirmed by calling the kernels themselves:
- torch.sigmoid: (1 + Vectorized::exp(-x)).reciprocal(), exp being Sleef_expf8_u10, which is
  `sleef_expf_u10` below.
- torch.exp, torch.log, torch.tanh: at::vml, which in the MKL builds shipped on PyPI calls
  Intel MKL's vmsExp/vmsLn/vmsTanh (High Accuracy mode), not SLEEF. MKL picks its code path
  from the CPU (on AMD it runs its generic SSE kernels, on Intel AVX2 others), so torch's own
  bits there depend on the machine; MKL's source is closed, and these are not replicated.

FMA: SLEEF's AVX2 build fuses every multiply-add (vmla is _mm256_fmadd_ps). `_fma` emulates
fmaf(a, b, c) in float64: a*b of two float32 values is exact in float64 (48 bits), but
rounding the float64 sum a*b + c to float32 is a second rounding, which differs from the fused
one exactly when the float64 sum lands on a float32 midpoint (halfway between two float32
values) while the exact sum was not there. Such elements are found by their bits and redone
with the exact error of the float64 sum (TwoSum), so the emulation is exact, not just likely.
"""

import os

import numpy as np

# The exp-based replicas (sigmoid, softmax, log_softmax and its backward) cost far more than
# NumPy's own functions (an exp of 32x27 floats: ~19x np.exp's instructions), too much for
# a training step's budget, so they run only when asked: GRADVIZ_TORCH_FLOAT32=1 in the
# environment, or this attribute set True at run time.
TORCH_BITS = os.environ.get("GRADVIZ_TORCH_FLOAT32", "") == "1"

_F32 = np.float32
_F64 = np.float64

# a float64 whose low 29 mantissa bits are 1 followed by 28 zeros lies halfway between two
# float32 values (normal range): the only case where float64-then-float32 rounding can differ
# from one rounding
_LOW29 = np.uint64((1 << 29) - 1)
_HALF29 = np.uint64(1 << 28)


def _fma(a, b, c):
    """fmaf(a, b, c) elementwise: float32 arrays or scalars in, float32 out, one rounding.

    >>> _fma(np.float32(1 + 2**-23), np.float32(1 - 2**-23), np.float32(-1))
    np.float32(-1.4210855e-14)
    """
    p = np.multiply(a, b, dtype=_F64)          # exact: 24 + 24 bits
    s = np.add(p, c, dtype=_F64)
    r = s.astype(_F32)
    mid = (s.view(np.uint64) & _LOW29) == _HALF29
    if mid.any():
        _fma_fix(r, p, c, s, mid)
    return r


def _fma_fix(r, p, c, s, mid):
    """Redo the float32 rounding of the midpoint elements of s = p + c (float64) exactly."""
    idx = np.nonzero(mid)
    pm = np.broadcast_to(p, s.shape)[idx]
    cm = np.broadcast_to(np.asarray(c, dtype=_F64), s.shape)[idx]
    sm = s[idx]
    # TwoSum: p + c == sm + err exactly
    bb = sm - pm
    err = (pm - (sm - bb)) + (cm - bb)
    # a nonzero error moves the exact sum off the midpoint, to its side: nudge sm that way by
    # one float64 ulp, which cannot cross a float32 rounding boundary
    toward = np.where(err > 0, np.inf, -np.inf)
    r[idx] = np.where(err != 0, np.nextafter(sm, toward), sm).astype(_F32)


class _FastFma:
    """fmaf in float64 without the per-call midpoint test: each float64 sum is kept, and
    `midpoints()` afterwards names the elements where one of them sat on a float32 midpoint
    with a nonzero rounding error (those are redone with the exact `_fma`). Cheaper than
    testing after every fma."""

    def __init__(self):
        self.sums = []

    def __call__(self, a, b, c):
        p = _as64(a) * _as64(b)
        c = _as64(c)
        s = p + c
        self.sums.append((p, c, s))
        return s.astype(_F32)

    def midpoints(self, n):
        """Boolean mask over the n elements where some fma rounded twice, or None."""
        full = [rec for rec in self.sums if rec[2].shape == (n,)]
        if not full:
            return None
        bits = np.concatenate([rec[2] for rec in full]).view(np.int64)
        hit = (bits & ((1 << 29) - 1)) == (1 << 28)
        if not hit.any():
            return None
        redo = np.zeros(n, dtype=bool)
        for (p, c, s), h in zip(full, hit.reshape(len(full), n)):
            idx = np.nonzero(h)[0]
            if idx.size:
                pm = np.broadcast_to(p, s.shape)[idx]
                cm = np.broadcast_to(c, s.shape)[idx]
                bb = s[idx] - pm
                err = (pm - (s[idx] - bb)) + (cm - bb)       # TwoSum: the sum's exact error
                redo[idx[err != 0]] = True
        return redo if redo.any() else None


def _as64(v):
    return v.astype(_F64) if isinstance(v, np.ndarray) else v


def _replicated(kernel, d):
    """Run kernel(d, fma) on a 1-D float32 array: fast, then exactly where fmas need it."""
    fast = _FastFma()
    r = kernel(d, fast)
    redo = fast.midpoints(d.size)
    if redo is not None:
        idx = np.nonzero(redo)[0]
        r[idx] = kernel(d[idx], _fma)
    return r


# ----- SLEEF expf, 1.0-ulp (Sleef_expf8_u10, sleefsimdsp.c xexpf) ------------------------

_R_LN2F = _F32(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2UF = _F32(0.693145751953125)
_L2LF = _F32(1.428606765330187045e-06)
_EXP_POLY = tuple(_F32(c) for c in (
    0.000198527617612853646278381, 0.00139304355252534151077271, 0.00833336077630519866943359,
    0.0416664853692054748535156, 0.166666671633720397949219, 0.5))


def _pow2i(q):
    """2.0f ** q for int32 q in the float32 exponent range, by building the bits (vpow2i)."""
    return ((q + 0x7f) << 23).view(_F32)


def sleef_expf_u10(x):
    """e**x for a float32 array, bit for bit as SLEEF's Sleef_expf8_u10 (AVX2, with FMA).

    >>> sleef_expf_u10(np.array([0.0, 1.0, -1.0], dtype=np.float32))
    array([1.        , 2.7182817 , 0.36787945], dtype=float32)
    """
    d = np.asarray(x, dtype=_F32)
    with np.errstate(all="ignore"):
        return _replicated(_expf_kernel, d.reshape(-1)).reshape(d.shape)


def _expf_kernel(d, fma):
    # vrint_vi2_vf: round to nearest even (cvtps2dq). Lanes where it overflows (|d| > 100,
    # NaN) get other values of q than on the CPU, but their results are replaced below or are
    # NaN either way.
    qf = np.rint(d * _R_LN2F)
    q = qf.astype(np.int32)
    s = fma(qf, -_L2UF, d)
    s = fma(qf, -_L2LF, s)
    u = _EXP_POLY[0]
    for c in _EXP_POLY[1:]:
        u = fma(u, s, c)
    u = _F32(1) + fma(s * s, u, s)
    # vldexp2: u * 2**(q >> 1) * 2**(q - (q >> 1)), two float32 products
    h = q >> 1
    u = u * _pow2i(h) * _pow2i(q - h)
    if d.size and np.fmin.reduce(d) < _F32(-104):          # fmin, fmax: NaN aside
        np.copyto(u, _F32(0), where=d < _F32(-104))
    if d.size and np.fmax.reduce(d) > _F32(100):
        np.copyto(u, _F32(np.inf), where=d > _F32(100))
    return u


# ----- SLEEF logf, 1.0-ulp (Sleef_logf8_u10, sleefsimdsp.c xlogf_u1) ----------------------
# Double-float arithmetic: a value is a pair (hi, lo) of float32 whose sum carries ~48 bits.

def _df_add2(x, y):
    """dfadd2_vf2_vf_vf: x + y as an exact (hi, lo) pair."""
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


_FLT_MIN = _F32(1.17549435e-38)
_LN2_HI = _F32(0.69314718246459960938)
_LN2_LO = _F32(-1.904654323148236017e-09)
_LOG_POLY = tuple(_F32(c) for c in (0.3027294874, 0.3996108174, 0.6666694880))


def sleef_logf_u10(x):
    """Natural log for a float32 array, bit for bit as SLEEF's Sleef_logf8_u10 (AVX2).

    >>> sleef_logf_u10(np.array([1.0, 2.0, 0.5], dtype=np.float32))
    array([ 0.        ,  0.6931472 , -0.6931472 ], dtype=float32)
    """
    d = np.asarray(x, dtype=_F32)
    with np.errstate(all="ignore"):
        return _replicated(_logf_kernel, d.reshape(-1)).reshape(d.shape)


def _logf_kernel(d, fma):
    # the special inputs (0, negative, subnormal, NaN, inf) cost two reductions when absent
    special = d.size and not d.min() >= _FLT_MIN
    if special:
        o = d < _FLT_MIN
        d = np.where(o, d * _F32(2.0**64), d)
    # vilogb2k: the biased exponent field of d * (1 / 0.75), minus 127
    e = (((d * _F32(1 / 0.75)).view(np.int32) >> 23) & 0xff) - 0x7f
    m = (d.view(np.int32) - (e << 23)).view(_F32)          # vldexp3(d, -e)
    ef = (np.where(o, e - 64, e) if special else e).astype(_F32)
    # s = (ln2 as a pair) * e, dfmul_vf2_vf2_vf
    sx = _LN2_HI * ef
    sy = fma(_LN2_LO, ef, fma(_LN2_HI, ef, -sx))
    # x = (m - 1) / (m + 1) in double-float (dfdiv_vf2_vf2_vf2, the FMA variant)
    nx, ny = _df_add2(_F32(-1), m)
    dx, dy = _df_add2(_F32(1), m)
    t = _F32(1) / dx
    xx = nx * t
    u = fma(t, nx, -xx)
    v = fma(-dy, t, fma(-dx, t, _F32(1)))
    xy = fma(xx, v, fma(ny, t, u))
    x2 = xx * xx
    t = _LOG_POLY[0]
    for c in _LOG_POLY[1:]:
        t = fma(t, x2, c)
    # s = s + 2x (dfadd_vf2_vf2_vf2), then s + x^3 t (dfadd_vf2_vf2_vf)
    bx, by = xx * _F32(2), xy * _F32(2)
    hi = sx + bx
    lo = (((sx - hi) + bx) + sy) + by
    w = (x2 * xx) * t
    hi2 = hi + w
    lo = ((hi - hi2) + w) + lo
    r = hi2 + lo
    if special:
        r = np.where((d < 0) | np.isnan(d), _F32(np.nan), r)
        r = np.where(d == 0, _F32(-np.inf), r)
    if d.size and np.fmax.reduce(d) == np.inf:
        r = np.where(d == np.inf, _F32(np.inf), r)
    return r


# ----- softmax and log_softmax over a contiguous last dim (SoftMaxKernel.cpp) -------------

def _vec_sum_rows(e):
    """Row sums of a 2-D float32 array in at::vec::reduce_all's order (AVX2, 8 lanes).

    Rows shorter than 8 add left to right. Longer rows accumulate 8 lanes vector by vector
    (the last partial vector into the first lanes only), then fold the lanes as
    ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
    """
    rows, n = e.shape
    if n < 8:
        acc = e[:, 0].copy()
        for i in range(1, n):
            acc += e[:, i]
        return acc
    full = n - n % 8
    acc = e[:, :8].copy()
    for k in range(8, full, 8):
        acc += e[:, k:k + 8]
    if full < n:
        acc[:, :n - full] += e[:, full:]
    w = acc[:, :4] + acc[:, 4:]
    return (w[:, 0] + w[:, 2]) + (w[:, 1] + w[:, 3])


def softmax_lastdim(a):
    """torch.softmax(a, -1) for a float32 array, as _vec_softmax_lastdim computes it."""
    rows = a.reshape(-1, a.shape[-1]) if a.shape[-1] else a.reshape(-1, 0)
    with np.errstate(all="ignore"):
        m = np.maximum.reduce(rows, axis=1, keepdims=True)
        e = sleef_expf_u10(rows - m)
        inv = _F32(1) / _vec_sum_rows(e)
        return np.multiply(e, inv[:, None], out=e).reshape(a.shape)


def log_softmax_lastdim(a):
    """torch.log_softmax(a, -1) for a float32 array, as serial_vec_log_softmax_lastdim_range."""
    rows = a.reshape(-1, a.shape[-1])
    with np.errstate(all="ignore"):
        m = np.maximum.reduce(rows, axis=1, keepdims=True)
        shifted = rows - m
        logsum = sleef_logf_u10(_vec_sum_rows(sleef_expf_u10(shifted)))
        return np.subtract(shifted, logsum[:, None], out=shifted).reshape(a.shape)


def lastdim_float32(g, y, dim):
    """Whether the softmax backward kernels above apply: two float32 arrays of one shape,
    reduced over their last dim."""
    return (isinstance(g, np.ndarray) and isinstance(y, np.ndarray) and g.dtype == _F32
            and y.dtype == _F32 and g.shape == y.shape and g.ndim >= 1 and g.size > 0
            and dim in (-1, g.ndim - 1))


def log_softmax_backward_lastdim(g, y):
    """torch's _log_softmax_backward_data over a contiguous last dim, float32: g - exp(y) *
    sum(g), the sum in reduce_all's order and the multiply-subtract fused (the compiler
    contracts it in torch's AVX2 build)."""
    g2 = g.reshape(-1, g.shape[-1])
    e = sleef_expf_u10(y.reshape(g2.shape))
    total = np.broadcast_to(_vec_sum_rows(g2)[:, None], e.shape)
    with np.errstate(all="ignore"):
        return _fma(-e, total, g2).reshape(g.shape)


# ----- glibc expf (scalar tails of torch's vectorized loops) -------------------------------
# at::native's cpu_kernel_vec runs 16 elements at a time through Vectorized and the rest
# (n % 16) through the scalar lambda, whose std::exp is the C library's expf: glibc's
# (sysdeps/ieee754/flt-32/e_expf.c), evaluated in double and rounded once.

_EXP2F_N = 32


def _exp2f_table():
    """tab[i] = bits of 2**(i/32) rounded to double, minus i << 47 (glibc's __exp2f_data)."""
    from decimal import Decimal, localcontext
    with localcontext() as ctx:
        ctx.prec = 40
        bits = [np.float64(float(Decimal(2) ** (Decimal(i) / _EXP2F_N))).view(np.uint64)
                for i in range(_EXP2F_N)]
    return np.array([b - np.uint64(i << 47) for i, b in enumerate(bits)], dtype=np.uint64)


_EXP2F_TAB = None
_INVLN2N = float.fromhex("0x1.71547652b82fep+0") * _EXP2F_N
_EXP2F_SHIFT = float.fromhex("0x1.8p+52")
_EXP2F_C = (float.fromhex("0x1.c6af84b912394p-5") / _EXP2F_N ** 3,
            float.fromhex("0x1.ebfce50fac4f3p-3") / _EXP2F_N ** 2,
            float.fromhex("0x1.62e42ff0c52d6p-1") / _EXP2F_N)


def glibc_expf(x):
    """e**x for a float32 array, bit for bit as glibc's expf (2.28 and later).

    >>> glibc_expf(np.array([0.0, 1.0], dtype=np.float32))
    array([1.       , 2.7182817], dtype=float32)
    """
    global _EXP2F_TAB
    if _EXP2F_TAB is None:
        _EXP2F_TAB = _exp2f_table()
    x = np.asarray(x, dtype=_F32)
    with np.errstate(all="ignore"):
        xd = x.astype(_F64)
        z = _INVLN2N * xd
        kd = z + _EXP2F_SHIFT
        ki = np.where(np.isfinite(kd), kd, 0).view(np.uint64)
        kd -= _EXP2F_SHIFT
        r = z - kd
        s = (_EXP2F_TAB[ki % np.uint64(_EXP2F_N)] + (ki << np.uint64(47))).view(_F64)
        y = (_EXP2F_C[0] * r + _EXP2F_C[1]) * (r * r) + (_EXP2F_C[2] * r + 1)
        y = (y * s).astype(_F32)
        # |x| >= 88 or NaN: glibc's special cases
        y = np.where(x > _F32(float.fromhex("0x1.62e42ep6")), _F32(np.inf), y)
        y = np.where(x < _F32(float.fromhex("-0x1.9fe368p6")), _F32(0), y)
        return np.where(np.isnan(x), x, y)


# ----- sigmoid (UnaryOpsKernel.cpp sigmoid_kernel) ------------------------------------------

def sigmoid(a):
    """torch.sigmoid for a float32 array: 1 / (1 + exp(-x)), with SLEEF's exp over each run of
    16 elements and glibc's expf over the last n % 16, as torch's vectorized loop does.

    Exact for C-contiguous arrays that torch runs in one piece (up to 32768 elements, its
    GRAIN_SIZE, or any size single-threaded); a larger tensor split between threads has a
    scalar tail at the end of each thread's piece.
    """
    flat = np.ascontiguousarray(a, dtype=_F32).reshape(-1)
    head = flat.size - flat.size % 16
    e = np.empty_like(flat)
    e[:head] = sleef_expf_u10(-flat[:head])
    e[head:] = glibc_expf(-flat[head:])
    with np.errstate(all="ignore"):
        return (_F32(1) / (_F32(1) + e)).reshape(a.shape)
