"""NumPy values and Python types given where torch 2.13 takes a dim or a tensor type: the same
result, or the same error type and first sentence."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

CODES = ["x.sum(np.int64(0))", "x.sum(dim=np.int64(0))", "x.sum(np.int32(-1), keepdim=True)",
         "x.mean(np.int64(0))", "x.sum(())", "x.type(float)", "x.type(int)", "x.type(bool)",
         "x.type(np.float32)", "x.type('float')", "x.type('torch.DoubleTensor')",
         "x.type('torch.LongTensor')", "x.type(t.float16)", "x.type()",
         "x.__setitem__(0, np.float32(7)) or x", "x.__setitem__(0, np.float16(7)) or x",
         "x.__setitem__(0, np.bool_(True)) or x", "x.__setitem__(0, np.complex64(7)) or x",
         "x.__setitem__(0, np.float64(7)) or x", "x.__setitem__(0, np.int32(7)) or x",
         "x.long().__setitem__(0, np.float32(7))", "x.bool().__setitem__(0, np.bool_(True))"]


def _outcome(t, code):
    x = t.tensor([[1.0, 2.0], [3.0, 4.0]])
    try:
        r = eval(code, {"t": t, "np": np, "x": x})
    except (TypeError, ValueError, RuntimeError) as exc:
        return type(exc).__name__, str(exc).split(". ")[0]
    if r is None or isinstance(r, str):
        return r
    return str(r.dtype).replace("gradviz.", "torch."), r.tolist()


@pytest.mark.parametrize("code", CODES)
def test_numpy_dim_and_tensor_type_as_torch(code):
    assert _outcome(gradviz, code) == _outcome(torch, code)


@pytest.mark.parametrize("code", ["x + 1j", "x * np.complex64(1 + 2j)", "2j - x",
                                  "x / np.complex128(1j)"])
def test_a_complex_number_is_refused_clearly(code):
    x = gradviz.tensor([1.0, 2.0])
    with pytest.raises(NotImplementedError, match="complex numbers are not implemented by "
                                                  "gradviz's core; run with --backend torch"):
        eval(code, {"x": x, "np": np})
