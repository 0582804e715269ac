"""linspace, logspace and arange against torch 2.13, value for value (bit for bit): integer
dtypes truncate start and end first and step in float64, float dtypes step in the dtype, the
first half counted from start and the second from end, and torch's checked conversions
refuse what the dtype cannot hold; a float arange is its kernel's fused multiply-adds, from
the start of each vector for whole pairs of vectors."""

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8"]

CASES = [
    # integer dtypes: start and end truncated first (0.9 -> 0), negative ranges, uint8 wrapping
    ("linspace", (0.9, 10.2, 7), "int64"), ("linspace", (-0.9, -10.2, 7), "int64"),
    ("linspace", (-2.5, 2.5, 5), "int32"), ("linspace", (-7, 3, 6), "uint8"),
    ("linspace", (-100, 100, 7), "uint8"), ("linspace", (-1, 1, 3), "uint8"),
    ("linspace", (10, 0, 4), "int8"), ("linspace", (0, 1, 3), "int16"),
    ("linspace", (-100, 100, 7), "float64"), ("linspace", (0, 1, 10), "float32"),
    ("linspace", (2.7, 9, 1), "int64"), ("linspace", (-2.5, -300, 1), "int64"),
    ("linspace", (0, 1, 0), "uint8"), ("linspace", (-3, 3, 1000), "float16"),
    # torch's errors
    ("linspace", (-2.5, 2.5, 5), "uint8"), ("linspace", (-256, 1, 3), "uint8"),
    ("linspace", (0, 300, 3), "int8"), ("linspace", (0, 1e40, 3), "float32"),
    ("linspace", (0, 1e6, 3), "float16"), ("linspace", (0, float("inf"), 3), "int64"),
    ("linspace", (0, 2 ** 63, 3), "int64"), ("linspace", (0, 1, 3), "bool"),
    ("linspace", (0, 1, 3.0), "float32"), ("linspace", (0, float("inf"), 3), "float32"),
    ("logspace", (0, 2, 3), "float32"), ("logspace", (-1, 2, 4, -2.0), "float32"),
    ("logspace", (0, 2, 3, -2.0), "int64"), ("logspace", (-3.5, 2.7, 9, 2.0), "int32"),
    ("logspace", (5, 5, 1), "int16"), ("logspace", (5, 4, 1), "float16"),
    ("logspace", (-3.5, 1, 1, -2.0), "int32"), ("logspace", (0, 1, 3), "bool"),
    ("logspace", (1.333, -1.089, 100, 0.5), "float64"), ("logspace", (5.9, 2.0, 1000, 2.0),
                                                          "float16"),
    ("arange", (-1.5, 1.5, 0.3), "float32"), ("arange", (18.131, 2.367, -0.5085), "float32"),
    ("arange", (0.1, 50.3, 0.1), "float64"), ("arange", (-3.3, 7.1, 0.01), "float16"),
    ("arange", (0.1, 3000.3, 0.1), "float32"), ("arange", (0, 1, 1 / 3), "float64"),
    # (from 32768 values on, torch splits the range between its threads: its values then
    # depend on torch.get_num_threads(), which a test run may have changed)
    # int64 bounds converted checked (never wrapped) and its length counted in int64
    # arithmetic, which wraps; a nan or zero step, non-finite bounds, sizes beyond int64 or
    # beyond memory
    ("arange", (2 ** 63 - 3, 2 ** 63), "int64"), ("arange", (0, 2 ** 63), "int64"),
    ("arange", (2 ** 63 - 3, 2 ** 63 + 2), "int64"), ("arange", (0, 2 ** 64), "int64"),
    ("arange", (0, -2 ** 63 - 1), "int64"), ("arange", (0, 3, 2 ** 63), "int64"),
    ("arange", (2 ** 63 - 5, 2 ** 63 - 1, 2), "int64"),
    ("arange", (-2 ** 62, 2 ** 62, 2 ** 61), "int64"),
    ("arange", (-2 ** 63, 2 ** 63 - 1, 2 ** 62), "int64"), ("arange", (5, 0, -2 ** 63), "int64"),
    ("arange", (0, 2 ** 63 - 1, 2 ** 63 - 1), "int64"),
    ("arange", (-1, 2 ** 63 - 1, 2 ** 63 - 1), "int64"), ("arange", (0, 2 ** 63 - 1), "int64"),
    ("arange", (0, 1e20, 1e18), "int64"), ("arange", (0.0, 9.3e18, 1e18), "int64"),
    ("arange", (0, 2.5, 0.5), "int64"), ("arange", (0, 2 ** 62), "int64"),
    ("arange", (0, 2 ** 40), "int64"), ("arange", (0, 1e15), "float32"),
    ("arange", (0, 1e20), "float32"), ("arange", (0, float("nan")), "float32"),
    ("arange", (float("-inf"), 0), "float64"), ("arange", (0, float("nan")), "int64"),
    ("arange", (0, 3, float("nan")), "float32"), ("arange", (0, 3, float("inf")), "float32"),
    ("arange", (0, 3, 0), "int64"), ("arange", (0.0, 3.0, 0.0), "float32"),
    ("arange", (0, 3, -1), "int64"), ("arange", (0, 1e5, 1e4), "float16"),
    ("arange", (0.0, 1e300, 1e299), "float16"), ("arange", (1e300, 1e300 + 1e290, 1e289),
                                                   "float32"),
]


def _seen(t, fn, args, dtype):
    try:
        with np.errstate(all="ignore"):
            value = getattr(t, fn)(*args, dtype=getattr(t, dtype))
    except Exception as exc:                # noqa: BLE001 - the error is what is compared
        return type(exc).__name__, str(exc).splitlines()[0]
    return str(value.dtype), np.array(value.tolist(), dtype=np.float64)


def _assert_same(fn, args, dtype):
    ours, theirs = _seen(gradviz, fn, args, dtype), _seen(torch, fn, args, dtype)
    assert ours[0] == theirs[0]
    if isinstance(ours[1], np.ndarray):
        np.testing.assert_array_equal(ours[1], theirs[1])
    else:
        assert ours[1] == theirs[1]


@pytest.mark.parametrize("fn,args,dtype", CASES)
def test_range_as_torch(fn, args, dtype):
    _assert_same(fn, args, dtype)


def _drawn(seed):
    """Random calls over the dtypes, ranges and lengths: float32's fused multiply-add and the
    halfway values an integer dtype truncates differ from NumPy's linspace on many of them."""
    rng = random.Random(seed)
    for _ in range(60):
        fn, dtype = rng.choice(["linspace", "logspace", "arange"]), rng.choice(DTYPES)
        bound = 6 if fn == "logspace" else 300 if dtype in ("int8", "uint8") else 1000
        start, end = rng.uniform(-bound, bound), rng.uniform(-bound, bound)
        if rng.random() < 0.4:
            start, end = round(start), round(end)
        if fn == "arange":
            dtype = rng.choice(["float32", "float64", "float16"])
            step = (end - start) / rng.choice([1.5, 7.3, 31.7, 40.2, 333.3])
            yield fn, (start, end, step), dtype
            continue
        args = (start, end, rng.choice([2, 3, 7, 17, 100, 1000]))
        if fn == "logspace":
            args += (rng.choice([10.0, 2.0, 3.0, 0.5]),)
        yield fn, args, dtype


@pytest.mark.parametrize("seed", range(5))
def test_drawn_ranges_as_torch(seed):
    for fn, args, dtype in _drawn(seed):
        _assert_same(fn, args, dtype)
