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
