"""Creation from NumPy scalars, NumPy arrays of dtypes gradviz lacks, tensor bounds and
integers beyond int64, against torch 2.13: the same call on both gives the same dtype and
values, or the same error type and first sentence."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _run(t, call):
    """(dtype, values) of the call on module t, or (error type, first line of its message)."""
    x = t.tensor([1.0, 2.0])                    # noqa: F841 - used by the cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(call)                      # noqa: S307 - the cases below
        except (TypeError, ValueError, RuntimeError) as exc:
            return type(exc).__name__, str(exc).split("\n")[0]
    if isinstance(r, (t.Tensor,)):
        return str(r.dtype).replace("gradviz.", "torch."), r.tolist()
    return r


CASES = [
    # tensor bounds of arange; a Tensor compared with None (Python's fallback, as torch)
    "t.arange(t.tensor(0.), 1, 0.25)", "t.arange(0, t.tensor(1.), 0.25)",
    "t.arange(t.tensor(0), t.tensor(3))",
    "x == None", "x != None", "None == x", "x == 'a'", "x < None", "x >= None",
]


@pytest.mark.parametrize("call", CASES)
def test_creation_as_torch(call):
    assert _run(gradviz, call) == _run(torch, call)
