"""Tensor printing: `gradviz._tensor_str` must give the exact text torch 2.13 prints.

The exact-string tests need no torch (their strings were copied from torch 2.13.0); the
differential tests build the torch tensor from the same NumPy array and compare `repr`s, for a
fixed list of tricky cases and for hypothesis-generated arrays and print options.
"""

import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradviz import _dtype
from gradviz._tensor_str import get_printoptions, set_printoptions, tensor_repr

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
FLOATS = ["float16", "float32", "float64"]


@pytest.fixture(scope="module")
def torch():
    # Per test rather than at module level, so the exact-string tests still run without torch.
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _restore_printoptions():
    """Every test leaves the print options and default dtype of gradviz (and torch) unchanged."""
    ours = get_printoptions()
    default = _dtype.get_default_dtype()
    theirs = sys.modules.get("torch")
    if theirs is not None:
        their_opts = theirs._tensor_str.get_printoptions()
        their_default = theirs.get_default_dtype()
    yield
    set_printoptions(**ours)
    _dtype.set_default_dtype(default)
    if theirs is not None:
        theirs.set_printoptions(**their_opts)
        theirs.set_default_dtype(their_default)


def arr(values, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float16 overflow to inf is intended
        return np.array(values, dtype=dtype)


def torch_repr(torch, data, dtype_name, suffix):
    """repr of the torch tensor with the same values; `suffix` picks how it gets autograd state.

    Only value-preserving ops give it a grad_fn: `clone` and `* 1` keep nan, inf and -0.0.
    """
    t = torch.tensor(np.asarray(data), dtype=getattr(torch, dtype_name))
    if suffix == "requires_grad":
        t.requires_grad_(True)
    elif suffix == "CloneBackward0":
        t = t.requires_grad_(True).clone()
    elif suffix == "MulBackward0":
        t = t.requires_grad_(True) * 1
    return repr(t)


def ours(data, dtype_name, suffix):
    if suffix == "requires_grad":
        return tensor_repr(data, dtype_name, requires_grad=True)
    if suffix is not None:
        return tensor_repr(data, dtype_name, grad_fn_name=suffix, requires_grad=True)
    return tensor_repr(data, dtype_name)


def check(torch, data, dtype_name, suffix=None):
    expected = torch_repr(torch, data, dtype_name, suffix)
    assert ours(data, dtype_name, suffix) == expected


# ----- Exact strings (no torch needed) ---------------------------------------------------------

# (array, dtype name, autograd suffix, the repr torch 2.13.0 prints)
EXACT = [
    (np.ones((2, 2), np.float32), "float32", "requires_grad",
     "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)"),
    (np.float32(7.389056), "float32", "ExpBackward0",
     "tensor(7.3891, grad_fn=<ExpBackward0>)"),
    (arr([1e-5, 1e4], "float32"), "float32", None, "tensor([1.0000e-05, 1.0000e+04])"),
    (arr([np.nan, 0.0, -0.0], "float32"), "float32", None, "tensor([nan, 0., -0.])"),
    (arr([np.inf, -1.5, 2.0], "float64"), "float64", "requires_grad",
     "tensor([    inf, -1.5000,  2.0000], dtype=torch.float64, requires_grad=True)"),
    (arr([True, False], "bool"), "bool", None, "tensor([ True, False])"),
    (arr([[3, -20], [7, 100]], "int32"), "int32", None,
     "tensor([[  3, -20],\n        [  7, 100]], dtype=torch.int32)"),
    (np.zeros(0, np.float32), "float32", None, "tensor([])"),
    (np.zeros((0, 3), np.float32), "float32", None, "tensor([], size=(0, 3))"),
    (np.zeros(0, np.int64), "int64", None, "tensor([], dtype=torch.int64)"),
    (np.zeros((2, 0), np.bool_), "bool", None, "tensor([], size=(2, 0), dtype=torch.bool)"),
    (np.uint8(3), "uint8", None, "tensor(3, dtype=torch.uint8)"),
    (arr([1e-4], "float32"), "float32", None, "tensor([1.0000e-04])"),
    (arr([1e-4], "float64"), "float64", None, "tensor([0.0001], dtype=torch.float64)"),
    (np.arange(20, dtype=np.float32), "float32", None,
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
     "        14., 15., 16., 17., 18., 19.])"),
    (np.arange(2000, dtype=np.float32).reshape(2, 1000), "float32", None,
     "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.9700e+02, 9.9800e+02,\n"
     "         9.9900e+02],\n"
     "        [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
     "         1.9990e+03]])"),
    (np.arange(1001, dtype=np.int64), "int64", None,
     "tensor([   0,    1,    2,  ...,  998,  999, 1000])"),
    (np.arange(8 * 9 * 20, dtype=np.int16).reshape(8, 9, 20) % 7, "int16", None,
     "tensor([[[0, 1, 2,  ..., 3, 4, 5],\n         [6, 0, 1,  ..., 2, 3, 4],\n"
     "         [5, 6, 0,  ..., 1, 2, 3],\n         ...,\n"
     "         [1, 2, 3,  ..., 4, 5, 6],\n         [0, 1, 2,  ..., 3, 4, 5],\n"
     "         [6, 0, 1,  ..., 2, 3, 4]],\n\n        [[5, 6, 0,  ..., 1, 2, 3],\n"
     "         [4, 5, 6,  ..., 0, 1, 2],\n         [3, 4, 5,  ..., 6, 0, 1],\n"
     "         ...,\n         [6, 0, 1,  ..., 2, 3, 4],\n"
     "         [5, 6, 0,  ..., 1, 2, 3],\n         [4, 5, 6,  ..., 0, 1, 2]],\n\n"
     "        [[3, 4, 5,  ..., 6, 0, 1],\n         [2, 3, 4,  ..., 5, 6, 0],\n"
     "         [1, 2, 3,  ..., 4, 5, 6],\n         ...,\n"
     "         [4, 5, 6,  ..., 0, 1, 2],\n         [3, 4, 5,  ..., 6, 0, 1],\n"
     "         [2, 3, 4,  ..., 5, 6, 0]],\n\n        ...,\n\n"
     "        [[4, 5, 6,  ..., 0, 1, 2],\n         [3, 4, 5,  ..., 6, 0, 1],\n"
     "         [2, 3, 4,  ..., 5, 6, 0],\n         ...,\n"
     "         [5, 6, 0,  ..., 1, 2, 3],\n         [4, 5, 6,  ..., 0, 1, 2],\n"
     "         [3, 4, 5,  ..., 6, 0, 1]],\n\n        [[2, 3, 4,  ..., 5, 6, 0],\n"
     "         [1, 2, 3,  ..., 4, 5, 6],\n         [0, 1, 2,  ..., 3, 4, 5],\n"
     "         ...,\n         [3, 4, 5,  ..., 6, 0, 1],\n"
     "         [2, 3, 4,  ..., 5, 6, 0],\n         [1, 2, 3,  ..., 4, 5, 6]],\n\n"
     "        [[0, 1, 2,  ..., 3, 4, 5],\n         [6, 0, 1,  ..., 2, 3, 4],\n"
     "         [5, 6, 0,  ..., 1, 2, 3],\n         ...,\n"
     "         [1, 2, 3,  ..., 4, 5, 6],\n         [0, 1, 2,  ..., 3, 4, 5],\n"
     "         [6, 0, 1,  ..., 2, 3, 4]]], dtype=torch.int16)"),
    (arr(np.linspace(-1, 1, 12).reshape(3, 4), "float16"), "float16",
     "MulBackward0",
     "tensor([[-1.0000, -0.8184, -0.6362, -0.4546],\n"
     "        [-0.2727, -0.0909,  0.0909,  0.2727],\n"
     "        [ 0.4546,  0.6362,  0.8184,  1.0000]], dtype=torch.float16,\n"
     "       grad_fn=<MulBackward0>)"),
]


@pytest.mark.parametrize("data, dtype_name, suffix, expected", EXACT,
                         ids=[f"exact{i}" for i in range(len(EXACT))])
def test_exact_strings(data, dtype_name, suffix, expected):
    assert ours(data, dtype_name, suffix) == expected


def test_printoptions_exact():
    x = np.array([1.12345, 2.5], np.float32)
    set_printoptions(precision=2)
    assert tensor_repr(x, "float32") == "tensor([1.12, 2.50])"
    set_printoptions(sci_mode=True)  # precision stays, as in torch
    assert tensor_repr(x, "float32") == "tensor([1.12e+00, 2.50e+00])"
    set_printoptions(threshold=5)
    assert tensor_repr(np.arange(10), "int64") == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    set_printoptions(edgeitems=0)
    assert tensor_repr(np.arange(10), "int64") == "tensor([...], size=(10,))"
    set_printoptions(profile="default")
    assert tensor_repr(x, "float32") == "tensor([1.1235, 2.5000])"
    assert get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3,
                                  "linewidth": 80, "sci_mode": None}


def test_default_dtype_float64_exact():
    _dtype.set_default_dtype(_dtype.float64)
    assert tensor_repr(np.array([1.5]), "float64") == "tensor([1.5000])"
    assert tensor_repr(np.array([1.5], np.float32), "float32") == \
        "tensor([1.5000], dtype=torch.float32)"
    assert tensor_repr(np.zeros(0, np.float32), "float32") == "tensor([], dtype=torch.float32)"


def test_get_printoptions_is_a_copy_that_round_trips():
    opts = get_printoptions()
    opts["precision"] = 9
    assert get_printoptions()["precision"] == 4
    set_printoptions(profile="full", linewidth=60, sci_mode=False)
    saved = get_printoptions()
    set_printoptions(profile="short")
    set_printoptions(**saved)
    assert get_printoptions() == {"precision": 4, "threshold": float("inf"), "edgeitems": 3,
                                  "linewidth": 60, "sci_mode": False}


# ----- Differential tests against torch -------------------------------------------------------

rng = np.random.default_rng(0)
TRICKY = [
    # scientific notation: the 1000 ratio, 1e8 and 1e-4 thresholds, on both sides
    ("ratio_1000", [1.0, 1000.0], "float32"),
    ("ratio_1000_5", [1.0, 1000.5], "float32"),
    ("ratio_1001", [1.0, 1001.0], "float64"),
    ("big_1e8", [1e8], "float64"),
    ("big_1e8_plus", [1e8 + 1], "float64"),
    ("big_1e8_f32", [1e8, 5e7], "float32"),
    ("small_1e-4_f64", [1e-4, 0.05], "float64"),
    ("small_below_1e-4", [9.9e-5], "float64"),
    ("tiny_and_huge", [1e-30, 1e30, -3.0], "float32"),
    ("subnormal", [5e-324, 1.0], "float64"),
    ("max_f64", [1.7976931348623157e308, -1.0], "float64"),
    ("f16_max", [65504.0, 1.0], "float16"),
    ("f16_tiny", [6e-8, 0.5], "float16"),
    # nan / inf / zeros, with and without other values
    ("all_nan", [np.nan, np.nan], "float32"),
    ("all_inf", [np.inf, -np.inf], "float64"),
    ("nan_inf_frac", [np.nan, np.inf, -np.inf, 0.25], "float32"),
    ("nan_inf_int", [np.nan, -np.inf, 3.0, -12.0], "float32"),
    ("nan_sci", [np.nan, 1e-7, 1.0], "float32"),
    ("zeros", [0.0, 0.0, 0.0], "float32"),
    ("neg_zeros", [-0.0, 0.0, 1.5], "float32"),
    ("neg_zero_int", [-0.0, 2.0], "float64"),
    ("neg_rounding", [-0.00001, 0.5, 3.0], "float64"),
    ("ints_as_floats", [1.0, -2.0, 300.0], "float32"),
    ("rounding_half", [0.00005, 0.12345, 2.5e-4], "float64"),
    # 0-d tensors: ndarrays and NumPy scalars
    ("0d_f32", np.float32(3.0), "float32"),
    ("0d_f32_frac", np.float32(-0.333333), "float32"),
    ("0d_nan", np.float64(np.nan), "float64"),
    ("0d_neg_zero", np.array(-0.0, np.float16), "float16"),
    ("0d_tiny", np.float32(1e-9), "float32"),
    ("0d_int", np.int64(-7), "int64"),
    ("0d_bool", np.bool_(False), "bool"),
    ("0d_u8", np.array(255, np.uint8), "uint8"),
    # integer and bool extremes
    ("int64_extremes", [np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0], "int64"),
    ("int8_extremes", [-128, 127], "int8"),
    ("uint8_all", np.arange(256).reshape(16, 16), "uint8"),
    ("bools_2d", [[True, True], [True, True]], "bool"),
    # empty tensors
    ("empty_4d", np.zeros((2, 0, 3, 1)), "float16"),
    ("empty_int32", np.zeros((0,)), "int32"),
    ("empty_float64", np.zeros((0, 1)), "float64"),
    # line wrapping and indentation
    ("wrap_1d", np.linspace(-5, 5, 40), "float32"),
    ("wrap_2d", rng.normal(size=(3, 25)), "float64"),
    ("wrap_4d", rng.normal(size=(2, 2, 2, 18)) * 1e3, "float32"),
    ("wrap_suffix", rng.normal(size=(2, 9)), "float64"),
    ("wide_ints", np.arange(30, dtype=np.int64) * 10**15, "int64"),
    # summarization
    ("summ_1d", np.arange(1001.0), "float32"),
    ("summ_1d_int", np.arange(5000), "int32"),
    ("summ_2d", rng.normal(size=(40, 30)), "float16"),
    ("summ_2d_narrow", rng.normal(size=(1001, 1)), "float32"),
    ("summ_2d_short_rows", rng.normal(size=(2, 600)), "float64"),
    ("summ_3d", rng.normal(size=(10, 20, 10)), "float32"),
    ("summ_4d", rng.integers(-50, 50, size=(10, 5, 10, 10)), "int8"),
    ("summ_bool", rng.integers(0, 2, size=(7, 7, 30)).astype(bool), "bool"),
    ("summ_hidden_nan", np.concatenate([[1.0, 2.0, 3.0], [np.nan, 1e-9] * 500, [4.0, 5.0, 6.0]]),
     "float32"),
]
SUFFIXES = [None, "requires_grad", "CloneBackward0", "MulBackward0"]


@pytest.mark.parametrize("name, values, dtype_name", TRICKY, ids=[c[0] for c in TRICKY])
def test_tricky_cases_match_torch(torch, name, values, dtype_name):
    data = values if isinstance(values, np.generic) else arr(values, dtype_name)
    check(torch, data, dtype_name)
    if dtype_name in FLOATS:
        for suffix in SUFFIXES[1:]:
            check(torch, data, dtype_name, suffix)


@pytest.mark.parametrize("data, dtype_name, suffix, expected", EXACT,
                         ids=[f"exact{i}" for i in range(len(EXACT))])
def test_exact_strings_are_torchs(torch, data, dtype_name, suffix, expected):
    """The hard-coded strings above are what torch prints."""
    if suffix == "ExpBackward0":
        assert repr(torch.tensor(2.0, requires_grad=True).exp()) == expected
    else:
        assert torch_repr(torch, data, dtype_name, suffix) == expected


@pytest.mark.parametrize("n", range(1, 13))
def test_suffix_wrapping_matches_torch(torch, n):
    # Lengths around 80 columns: torch's `_add_suffixes` counts the last line two long.
    data = np.arange(n) / 7.0
    for suffix in SUFFIXES:
        check(torch, data, "float64", suffix)
        check(torch, data[:, None], "float64", suffix)


@pytest.mark.parametrize("default", ["float64", "float16"])
def test_default_dtype_matches_torch(torch, default):
    torch.set_default_dtype(getattr(torch, default))
    _dtype.set_default_dtype(getattr(_dtype, default))
    for dtype_name in DTYPES:
        for shape in [(), (0,), (0, 2), (3,)]:
            check(torch, np.ones(shape), dtype_name)
            check(torch, arr(np.full(shape, 1.5), dtype_name), dtype_name)


# ----- Hypothesis: arrays and print options ---------------------------------------------------

SPECIAL_FLOATS = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, 1e-4, 9.99e-5, 1e-5,
                  1e8, 1e8 + 1.0, 1000.0, 1001.0, 0.1, 2.0 / 3.0, 12345.678, 65504.0, 1e-300,
                  1e300, 5e-324]

float_values = st.one_of(
    st.sampled_from(SPECIAL_FLOATS),
    st.integers(-10**6, 10**6).map(float),                     # integers as floats
    st.floats(allow_nan=True, allow_infinity=True),             # anything, tiny to huge
    st.floats(-1e4, 1e4),
    st.builds(lambda m, e: m * 10.0 ** e, st.floats(-10, 10), st.integers(-12, 12)),
)

INT_BOUNDS = {name: (int(np.iinfo(name).min), int(np.iinfo(name).max))
              for name in ["int8", "int16", "int32", "int64", "uint8"]}

# Small shapes (0-d, empty, broadcasting-like 1s) and shapes large enough to summarize.
small_shapes = st.lists(st.sampled_from([0, 1, 1, 2, 3, 4, 5, 7]), min_size=0, max_size=4)
large_shapes = st.one_of(
    st.tuples(st.integers(1001, 3000)),
    st.tuples(st.integers(1, 40), st.integers(1, 200)),
    st.tuples(st.integers(1, 12), st.integers(1, 12), st.integers(1, 30)),
    st.tuples(st.integers(1, 8), st.integers(1, 8), st.integers(1, 8), st.integers(1, 8)),
)
shapes = st.one_of(small_shapes, small_shapes, large_shapes).map(tuple)


@st.composite
def arrays(draw):
    """An array of any supported dtype, filled from a small drawn palette (fast for big shapes)."""
    dtype_name = draw(st.sampled_from(DTYPES))
    shape = draw(shapes)
    if dtype_name in FLOATS:
        palette = draw(st.lists(float_values, min_size=1, max_size=6))
    elif dtype_name == "bool":
        palette = draw(st.lists(st.booleans(), min_size=1, max_size=2))
    else:
        lo, hi = INT_BOUNDS[dtype_name]
        palette = draw(st.lists(st.one_of(st.integers(lo, hi), st.integers(-3, 9).filter(
            lambda v: lo <= v <= hi)), min_size=1, max_size=6))
    seed = draw(st.integers(0, 2**32 - 1))
    picks = np.random.default_rng(seed).integers(0, len(palette), size=shape)
    data = arr(np.array(palette, dtype=object)[picks], dtype_name)
    if data.ndim == 0 and draw(st.booleans()):
        data = data[()]  # a NumPy scalar, as the core passes for 0-d tensors
    suffix = draw(st.sampled_from(SUFFIXES)) if dtype_name in FLOATS else None
    return data, dtype_name, suffix


@settings(max_examples=250, deadline=None, database=None)
@given(case=arrays())
def test_random_arrays_match_torch(torch, case):
    data, dtype_name, suffix = case
    check(torch, data, dtype_name, suffix)


printoptions = st.fixed_dictionaries({}, optional={
    "precision": st.integers(0, 10),
    "threshold": st.integers(0, 2000),
    "edgeitems": st.integers(0, 4),
    "linewidth": st.integers(10, 200),
    "profile": st.sampled_from(["default", "short", "full"]),
    "sci_mode": st.sampled_from([None, True, False]),
})


@settings(max_examples=120, deadline=None, database=None)
@given(case=arrays(), opts=printoptions)
def test_random_printoptions_match_torch(torch, case, opts):
    data, dtype_name, suffix = case
    saved, their_saved = get_printoptions(), torch._tensor_str.get_printoptions()
    try:
        set_printoptions(**opts)
        torch.set_printoptions(**opts)
        assert get_printoptions() == torch._tensor_str.get_printoptions()
        check(torch, data, dtype_name, suffix)
    finally:
        set_printoptions(**saved)
        torch.set_printoptions(**their_saved)
