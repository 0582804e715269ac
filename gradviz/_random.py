"""Random draws identical to torch's CPU generator.

torch's CPU generator is a 32-bit Mersenne Twister (mt19937) seeded with the low 32 bits of
the seed; each distribution turns its 32- or 64-bit outputs into values with a documented
transform (ATen's DistributionsHelper.h, TransformationHelper.h and the CPU kernels in
DistributionTemplates.h). This module reproduces those transforms with NumPy, so that after
`torch.manual_seed(n)` (or with a `Generator`) rand, randn, randint, randperm, multinomial,
normal_, uniform_, bernoulli_, exponential_ and the nn.init functions give torch's values
bit for bit:

- uniform: float32 uses `(r32 & 0xFFFFFF) * 2**-24`, float64 `(r64 & (2**53 - 1)) * 2**-53`
  (r64 is two 32-bit draws, the first as the high word), then `x * (to - from) + from`;
- normal, 16 or more elements: all uniforms first, then Box-Muller on blocks of 16 (element j
  pairs with j + 8), the last 16 values redrawn when the size is not a multiple of 16. For
  float32 torch runs the AVX2 kernel (its Cephes-based log and sincos, `_log256` and
  `_sincos256` below, operation for operation in float32); float64 uses libm in double;
- normal, fewer than 16 elements: Box-Muller in double on (u1, u2), returning r*cos and
  caching r*sin for the next draw (the generator keeps that cache);
- randint: `r % range + low`, with r64 when the range is 2**28 or more;
- randperm: Fisher-Yates with `r32 % (n - i)`;
- bernoulli with a scalar p: `u64 < p` (torch's default CPU kernel; torch builds that use
  MKL on Intel CPUs draw these from MKL's own stream instead);
- exponential: `-1/lambda * log1p(-u64)`.

>>> import gradviz as torch
>>> g = torch.Generator().manual_seed(0)
>>> torch.rand(3, generator=g)
tensor([0.4963, 0.7682, 0.0885])
"""

import math
import os
import warnings

import numpy as np

from ._dtype import _CPP_NAMES, _TORCH_SCALAR

__all__ = ["Generator", "default_generator"]

# torch's default seed: an unseeded program draws the same numbers as an unseeded torch one.
DEFAULT_SEED = 67280421310721
_U64 = (1 << 64) - 1
_log1p = math.log1p


def _mt_key(seed):
    """mt19937's init_genrand state for a 32-bit seed."""
    key = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return np.array(key, dtype=np.uint32)


class Generator:
    """torch.Generator: the state of one stream of random numbers (CPU only).

    >>> import gradviz as torch
    >>> g = torch.Generator().manual_seed(2147483647)
    >>> g.initial_seed()
    2147483647
    """

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError(f"gradviz: torch.Generator(device={str(device)!r}) is not "
                               "available: gradviz's core runs on the CPU only; run with "
                               "--backend torch to use PyTorch")
        self._mt = None              # the np.random.MT19937, made on the first draw
        self._mt_state = None        # its state until then
        self._seed = DEFAULT_SEED
        self._normal = None          # torch's cached second Box-Muller sample (a double)
        self.manual_seed(DEFAULT_SEED)

    def __repr__(self):
        return f"<torch._C.Generator object at {id(self):#x}>"      # as torch's

    @property
    def _bits(self):
        """The mt19937 stream. Made on first use: numpy.random costs about a tenth of
        gradviz's import time, and a program that draws nothing never needs it."""
        if self._mt is None:
            self._mt = np.random.MT19937(0)
            self._mt.state = self._mt_state
        return self._mt

    def _set_bits(self, state):
        if self._mt is None:
            self._mt_state = state
        else:
            self._mt.state = state

    @property
    def device(self):
        from ._tensor import device
        return device("cpu")

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < -(1 << 63) or seed > _U64:
            raise RuntimeError(f"Overflow when unpacking long long")
        self._seed = seed & _U64
        self._set_bits({"bit_generator": "MT19937",
                        "state": {"key": _mt_key(self._seed), "pos": 624}})
        self._normal = None
        return self

    def seed(self):
        """Seed from the operating system's entropy and return the seed (torch.seed())."""
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The generator's state as a uint8 tensor (gradviz's own layout: the mt19937 key,
        its position, and the cached normal sample)."""
        from ._creation import tensor
        st = self._bits.state["state"]
        cache = np.array([np.nan if self._normal is None else self._normal], dtype=np.float64)
        raw = np.concatenate([st["key"].astype("<u4").view(np.uint8),
                              np.array([st["pos"]], dtype="<u4").view(np.uint8),
                              cache.astype("<f8").view(np.uint8),
                              np.array([self._seed], dtype="<u8").view(np.uint8)])
        return tensor(raw, dtype=None)

    def set_state(self, new_state):
        raw = np.asarray(new_state.numpy() if hasattr(new_state, "numpy") else new_state,
                         dtype=np.uint8)
        if raw.size != 624 * 4 + 4 + 8 + 8:
            raise RuntimeError("gradviz: Generator.set_state() takes a state returned by "
                               "gradviz's get_state()")
        key = raw[:2496].view("<u4").astype(np.uint32)
        pos = int(raw[2496:2500].view("<u4")[0])
        cache = float(raw[2500:2508].view("<f8")[0])
        self._set_bits({"bit_generator": "MT19937", "state": {"key": key, "pos": pos}})
        self._normal = None if math.isnan(cache) else cache
        self._seed = int(raw[2508:2516].view("<u8")[0])
        return self

    # ----- raw draws -------------------------------------------------------------------

    def _r32(self, n):
        """n 32-bit outputs (as uint64)."""
        return self._bits.random_raw(n) if n else np.zeros(0, dtype=np.uint64)

    def _r64(self, n):
        """n 64-bit outputs: two 32-bit draws each, the first one the high word."""
        r = self._r32(2 * n).reshape(n, 2)
        return (r[:, 0] << np.uint64(32)) | r[:, 1]


default_generator = Generator()


def _gen(generator):
    return default_generator if generator is None else generator


# ----- uniform -----------------------------------------------------------------------------

def _unit_f32(gen, n):
    return ((gen._r32(n) & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24))


def _unit_f64(gen, n):
    return ((gen._r64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53)


def _fma32(a, b, c):
    """fma(a, b, c) rounded once to float32 (the compiler contracts torch's `a * b + c` into
    one instruction): the product of two float32 is exact in float64."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64)
            + np.asarray(c, np.float64)).astype(np.float32)


def _fma64(a, b, c):
    """fma(a, b, c) in float64 with one rounding: Dekker's exact product and Knuth's exact
    sum, then one rounding of the sum of their parts."""
    a = np.asarray(a, np.float64)
    split = 134217729.0
    t = split * a
    ah = t - (t - a)
    al = a - ah
    t = split * b
    bh = t - (t - b)
    bl = b - bh
    p = a * b
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    return s + (e + err)


def uniform(shape, dtype, low=0.0, high=1.0, generator=None):
    """Samples of U[low, high) as torch's uniform_ draws them, as an array of `dtype`."""
    gen = _gen(generator)
    n = math.prod(shape)
    dt = _floating(np.dtype(dtype), "check_uniform_bounds")
    if dt == np.float64:
        x = _unit_f64(gen, n)
        lo, hi = float(low), float(high)
        out = _fma64(x, hi - lo, lo) if (lo, hi) != (0.0, 1.0) else x
        out[out == hi] = lo
    else:
        lo, hi = np.float32(low), np.float32(high)
        x = _unit_f32(gen, n)
        out = _fma32(x, hi - lo, lo) if (lo, hi) != (0.0, 1.0) else x
        out = out.astype(dt)
        out[out == dt.type(high)] = dt.type(low)
    return out.reshape(shape)


# ----- normal ------------------------------------------------------------------------------

_F = np.float32


def _log256(x):
    """torch's AVX2 log256_ps (Cephes logf), in float32, operation for operation. The compiler
    fuses each multiply-add of these intrinsics into one FMA (a single rounding): `_fma32`."""
    x = x.astype(np.float32)
    invalid = x <= 0
    x = np.maximum(x, np.array(0x00800000, dtype=np.int32).view(np.float32))
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(np.float32) + _F(1)
    x = (bits & ~0x7F800000 | np.array(0.5, np.float32).view(np.int32)).view(np.float32)
    mask = x < _F(0.707106781186547524)
    tmp = np.where(mask, x, _F(0))
    x = x - _F(1)
    e = e - np.where(mask, _F(1), _F(0))
    x = x + tmp
    z = x * x
    y = np.full_like(x, _F(7.0376836292E-2))
    for p in (-1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
              -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1):
        y = _fma32(y, x, _F(p))
    y = y * x
    # Which product the compiler fuses into each add was found by comparing 192,000 samples
    # with torch's: `y * z + e * q1` fuses the first product, `y - z * 0.5` the second.
    y = _fma32(y, z, e * _F(-2.12194440e-4))
    y = _fma32(z, _F(-0.5), y)
    x = x + y
    x = _fma32(e, _F(0.693359375), x)
    return np.where(invalid, _F(np.nan), x)


def _sincos256(x):
    """torch's AVX2 sincos256_ps (Cephes sinf/cosf), in float32, operation for operation."""
    x = x.astype(np.float32)
    sign_sin = x.view(np.int32) & np.int32(-0x80000000)
    x = np.abs(x)
    y = x * _F(1.27323954473516)
    j = y.astype(np.int32)                           # truncation, as cvttps
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    swap_sin = (j & 4) << 29
    poly = (j & 2) == 0
    x = _fma32(y, _F(-0.78515625), x)
    x = _fma32(y, _F(-2.4187564849853515625e-4), x)
    x = _fma32(y, _F(-3.77489497744594108e-8), x)
    sign_cos = (~(j - 2) & 4) << 29
    sign_sin = sign_sin ^ swap_sin
    z = x * x
    c = _fma32(np.full_like(z, _F(2.443315711809948E-005)), z, _F(-1.388731625493765E-003))
    c = _fma32(c, z, _F(4.166664568298827E-002))
    c = _fma32(c * z, z, -(z * _F(0.5)))
    c = c + _F(1)
    s = _fma32(np.full_like(z, _F(-1.9515295891E-4)), z, _F(8.3321608736E-3))
    s = _fma32(s, z, _F(-1.6666654611E-1))
    s = _fma32(s * z, x, x)
    sin = np.where(poly, s, c)
    cos = np.where(poly, c, s)
    sin = (sin.view(np.int32) ^ sign_sin).view(np.float32)
    cos = (cos.view(np.int32) ^ sign_cos).view(np.float32)
    return sin, cos


def _fill16_f32(d, mean, std):
    """Box-Muller on blocks of 16 float32 uniforms (rows of d), torch's AVX2 kernel."""
    u1 = _F(1) - d[:, :8]
    u2 = d[:, 8:]
    radius = np.sqrt(_F(-2) * _log256(u1))
    theta = _F(2.0 * math.pi) * u2
    sin, cos = _sincos256(theta)
    out = np.empty_like(d)
    out[:, :8] = _fma32(radius * cos, _F(std), _F(mean))
    out[:, 8:] = _fma32(radius * sin, _F(std), _F(mean))
    return out


def _fill16_f64(d, mean, std):
    """Box-Muller on blocks of 16 float64 uniforms, with libm in double (torch's kernel)."""
    out = np.empty_like(d)
    log, sqrt, cos, sin = math.log, math.sqrt, math.cos, math.sin
    two_pi = 2.0 * math.pi
    for row, res in zip(d, out):
        for j in range(8):
            radius = sqrt(-2 * log(1 - row[j]))
            theta = two_pi * float(row[j + 8])
            res[j] = radius * cos(theta) * std + mean
            res[j + 8] = radius * sin(theta) * std + mean
    return out


def normal(shape, dtype, mean=0.0, std=1.0, generator=None, contiguous=True):
    """Samples of N(mean, std**2) as torch's normal_ draws them, as an array of `dtype`
    (for a result that is not contiguous, one at a time: torch's blocks of 16 need one)."""
    check_std(std)
    gen = _gen(generator)
    n = math.prod(shape)
    dt = _floating(np.dtype(dtype), "normal_kernel_cpu") if n else np.dtype(dtype)
    if n >= 16 and contiguous:
        f32 = dt != np.float64
        unit = _unit_f32 if f32 else _unit_f64
        fill = _fill16_f32 if f32 else _fill16_f64
        full = n - n % 16
        # float32 and float64 draw all n uniforms first (the last n % 16 are then drawn again
        # with the last block); float16 draws those of the whole blocks only
        data = unit(gen, n) if dt != np.float16 else np.concatenate([unit(gen, full),
                                                                     np.zeros(n - full, _F)])
        if full:
            data[:full] = fill(data[:full].reshape(-1, 16), mean, std).reshape(-1)
        if n % 16:
            data[n - 16:] = fill(unit(gen, 16).reshape(1, 16), mean, std).reshape(-1)
        return data.astype(dt, copy=False).reshape(shape)
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = _normal_double(gen) * std + mean
    return _cast(out, dt).reshape(shape)


def check_std(std):
    """torch's check of normal's std, made before its dtype's."""
    if not std >= 0:        # nan too
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")


def _normal_double(gen):
    """One standard normal sample of torch's normal_distribution<double> (with its cache)."""
    if gen._normal is not None:
        v, gen._normal = gen._normal, None
        return v
    u1, u2 = _unit_f64(gen, 2)
    r = math.sqrt(-2.0 * math.log1p(-float(u2)))
    theta = 2.0 * math.pi * float(u1)
    gen._normal = r * math.sin(theta)
    return r * math.cos(theta)


# ----- integers, permutations, Bernoulli, exponential --------------------------------------

def randint(low, high, shape, generator=None, dtype=np.int64):
    """Integers in [low, high) as torch's random_(from, to) draws them, as an array of dtype
    (bounds out of its range refused as torch)."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    dt = np.dtype(dtype)
    if dt.kind == "f":
        low, high = _float_from(low, dt), _float_to(high, dt)
        if low >= high:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' "
                               f"casted to dtype, but got from={low} >= to={high}")
    _check_bounds(low, high - 1, dt)
    gen = _gen(generator)
    n = math.prod(shape)
    span = high - low
    raw = gen._r64(n) if span >= 1 << 28 else gen._r32(n)
    vals = (raw % np.uint64(span)).astype(np.int64) + np.int64(low)
    return _cast(vals, dt).reshape(shape)


def _num(x):
    """A number as torch's C++ messages print a double (ostream: 6 significant digits, so
    -1.0 prints as -1 and 1e308 as 1e+308)."""
    return format(float(x), "g")


def check_uniform(low, high, dt):
    """torch's check_uniform_bounds for uniform_(low, high) into float dtype dt."""
    lowest, highest = float(np.finfo(dt).min), float(np.finfo(dt).max)
    for name, v in (("from", low), ("to", high)):
        if not lowest <= v <= highest:
            raise RuntimeError(f"{name} is out of bounds for {_CPP_NAMES[dt.name]}")
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_num(low)} > to={_num(high)}")
    if high - low > highest:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{_TORCH_SCALAR[dt.name]}>::max(), "
                           f"but found to={_num(high)} and from={_num(low)} which result in "
                           "to-from to exceed the limit")


def _floating(dt, kernel):
    """dt, when floating; torch's kernel error otherwise."""
    if dt.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_TORCH_SCALAR[dt.name]}\'')
    return dt


def _float_from(low, dt):
    """torch's update_from: a float dtype's from moved up to an integer it holds exactly."""
    above = _cast(np.array(low + 1, np.int64), dt)
    if np.isfinite(above) and int(above) < low:      # beyond float16's range: refused later
        above = int(above)
        n = abs(low + 1).bit_length() - 1
        low = above + (1 << (n - np.finfo(dt).nmant))
    return low


def _float_to(high, dt):
    """torch's update_to: a float dtype's to moved down to an integer it holds exactly."""
    below = _cast(np.array(high - 1, np.int64), dt)
    if np.isfinite(below) and int(below) >= high:
        below = int(below)
        n = abs(high - 1).bit_length() - 1
        high = below - (1 << (n - np.finfo(dt).nmant))
    return high


def _check_bounds(low, last, dt):
    """torch's check_from_to_in_range: from and to - 1 within the dtype's range; beyond
    2**digits a float dtype holds only some integers, which torch warns about."""
    if dt.kind == "f":
        lowest, highest = float(np.finfo(dt).min), float(np.finfo(dt).max)
    elif dt.kind == "b":
        lowest, highest = 0, 1
    else:
        lowest, highest = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
    for name, v in (("from", low), ("to - 1", last)):
        if not lowest <= v <= highest:
            raise RuntimeError(f"{name} is out of bounds for {_CPP_NAMES[dt.name]}")
    if dt.kind == "f":
        digits = np.finfo(dt).nmant + 1
        from .autograd.callsite import user_stacklevel     # (a rare warning: not at import)
        for name, v in (("from", low), ("to - 1", last)):
            if not -(1 << digits) <= v <= 1 << digits:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                              f"precision limitations {_CPP_NAMES[dt.name]} can support "
                              "discrete uniform distribution only within this range. This "
                              "warning will become an error in version 1.7 release, please fix "
                              "the code in advance", UserWarning,
                              stacklevel=user_stacklevel())


def randperm(n, generator=None):
    """A permutation of range(n) as torch's CPU randperm draws it (Fisher-Yates)."""
    gen = _gen(generator)
    perm = list(range(n))
    if n > 1:
        raw = gen._r32(n - 1).tolist()
        for i, r in enumerate(raw):
            z = i + r % (n - i)
            perm[i], perm[z] = perm[z], perm[i]
    return np.array(perm, dtype=np.int64)


def bernoulli(shape, p, generator=None):
    """1.0 where a uniform double draw is below p (torch's default CPU bernoulli_)."""
    gen = _gen(generator)
    return (_unit_f64(gen, math.prod(shape)) < p).reshape(shape)


def exponential(shape, dtype, lambd=1.0, generator=None):
    """Samples of Exp(lambd): -1/lambd * log1p(-u), u a uniform double (torch's CPU kernel)."""
    if not lambd > 0:       # nan too
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    dt = np.dtype(dtype)
    if dt.kind != "f":
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{_TORCH_SCALAR[dt.name]}")
    gen = _gen(generator)
    u = _unit_f64(gen, math.prod(shape))
    # libm's log1p (as torch's kernel calls it): NumPy's own can differ in the last bit.
    scale = -1.0 / lambd
    vals = np.fromiter((scale * _log1p(-x) for x in u.tolist()), np.float64, u.size)
    return _cast(vals, dtype).reshape(shape)


def _cast(values, dtype):
    """Values (float64 or int64) as torch's static_cast<scalar_t> gives them: c10::Half is
    made from a float, so float16 rounds twice (through float32)."""
    dt = np.dtype(dtype)
    return values.astype(np.float32).astype(dt) if dt == np.float16 else values.astype(dt)


def multinomial(probs, num_samples, replacement=False, generator=None):
    """Category indices drawn from the rows of `probs` (a 1-D or 2-D float array), as torch's
    CPU multinomial draws them: without replacement (or for one sample), the argmax / top-k of
    probs / q with q ~ Exp(1); with replacement, a binary search of one uniform double per
    sample in each row's normalised cumulative sums."""
    gen = _gen(generator)
    rows = probs.reshape(-1, probs.shape[-1]) if probs.ndim else probs.reshape(1, 1)
    if not replacement or num_samples == 1:
        q = exponential(rows.shape, rows.dtype, 1.0, gen)
        with np.errstate(divide="ignore", invalid="ignore"):
            score = (rows / q).astype(rows.dtype)
        if num_samples == 1:
            out = np.argmax(score, axis=-1)[:, None]
        else:
            # topk: largest first; ties keep the lower index first (a stable sort of -score).
            out = np.argsort(-score, axis=-1, kind="stable")[:, :num_samples]
    else:
        acc = np.cumsum(rows.astype(np.float64), axis=-1)
        total = acc[:, -1:]
        acc = np.where(total > 0, acc / np.where(total > 0, total, 1), acc)
        u = _unit_f64(gen, rows.shape[0] * num_samples).reshape(rows.shape[0], num_samples)
        out = np.stack([np.searchsorted(acc[i], u[i], side="left")
                        for i in range(rows.shape[0])])
    out = out.astype(np.int64)
    return out.reshape(num_samples) if probs.ndim == 1 else out
