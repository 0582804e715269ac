"""Creation from NumPy scalars, NumPy arrays of dtypes gradviz lacks or of another byte
order, tensor bounds of arange, sizes and integers beyond int64, and a Tensor compared with
None, against torch 2.13: the same call on both gives the same dtype and values, or the same
error type and first line."""

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
    if isinstance(r, t.Tensor):
        return str(r.dtype).replace("gradviz.", "torch."), r.tolist()
    return r


CASES = [
    # tensor bounds of arange; a Tensor compared with None (Python's fallback, as torch)
    "t.arange(t.tensor(0.), 1, 0.25)", "t.arange(0, t.tensor(1.), 0.25)",
    "t.arange(t.tensor(0), t.tensor(3))",
    # sizes beyond int64, or storage beyond int64 bytes
    "t.arange(0, 1e20, 1e-5)", "t.arange(0, 1e300, 1e-300)", "t.arange(0, 5, 1e-300)",
    "t.arange(0, 2 ** 62, 1)", "t.arange(0, 2 ** 61, 1, dtype=t.float32)",
    "t.arange(0, 2.0 ** 64, 1)", "t.arange(0, -1e300, -1e-300)",
    "x == None", "x != None", "None == x", "x == 'a'", "x < None", "x >= None",
    # a NumPy scalar fill value is the Python number it is (np.bool_ a float, as torch 2.13)
    "t.full((2,), np.float64(2.5))", "t.full((2,), np.float32(1.5))", "t.full((2,), np.int32(3))",
    "t.full((2,), np.float16(1.5))", "t.full((2,), np.bool_(True))", "t.full((2,), np.uint8(3))",
    "t.full((2,), np.uint16(3))", "t.full((2,), np.int64(3), dtype=t.float16)",
    "t.full((2,), np.float64(1e300), dtype=t.float32)",
    # ... truncated into an integer dtype
    "t.full((2,), np.float32(1.5), dtype=t.int64)", "t.full((2,), np.float64(-2.5), dtype=t.int8)",
    "t.full_like(t.tensor([1, 2]), np.float32(1.5))", "t.full_like(x, np.bool_(True))",
    "t.tensor([1, 2]).new_full((2,), np.float16(2.5))",
    "t.full_like(t.tensor([1, 2], dtype=t.uint8), np.float32(300.0))",
    # NumPy data of a dtype gradviz lacks, cast to one it has (torch 2.13 reads it)
    "t.tensor(np.array([1, 2], dtype=np.uint16), dtype=t.float32)",
    "t.tensor(np.array([1, 2], dtype=np.uint32), dtype=t.int64)",
    "t.tensor(np.array([1, 2], dtype=np.uint64), dtype=t.float64)",
    "t.tensor(np.uint16(5), dtype=t.float32)", "t.tensor([np.uint16(5), 2], dtype=t.int32)",
    "t.tensor([np.uint64(5)], dtype=t.int64)",
    "t.as_tensor(np.array([1, 2], dtype=np.uint16), dtype=t.float32)",
    "t.as_tensor([np.uint32(1)], dtype=t.float64)",
    "t.full((2,), np.uint16(3), dtype=t.float32)", "t.full((2,), np.complex64(1), dtype=t.float32)",
    "t.full((2,), np.complex64(1 + 2j), dtype=t.int64)",
    "t.tensor(np.array(['a']), dtype=t.float32)",
    "t.tensor(np.array([1], dtype=object), dtype=t.float32)",
    "t.tensor(np.array([1], dtype='>f4'))", "t.from_numpy(np.array([1], dtype='>f4'))",
    "t.as_tensor(np.array([1], dtype='>i8'), dtype=t.int64)",
    "t.tensor(np.array([1], dtype='>f4'), dtype=t.int64)",
    # an int beyond int64 stored as a float or a bool (torch reads it as a double)
    "t.tensor(2 ** 63, dtype=t.float32)", "t.tensor(-2 ** 63 - 1, dtype=t.float32)",
    "t.tensor(2 ** 63, dtype=t.bool)", "t.tensor(2 ** 63, dtype=t.float16)",
    "t.tensor([2 ** 64, 1], dtype=t.float64)", "t.tensor([2 ** 63, 1.5], dtype=t.float32)",
    "t.tensor([np.uint64(2 ** 63)], dtype=t.float32)", "t.tensor(2 ** 63)",
    "t.tensor(2 ** 63, dtype=t.int64)", "t.tensor([-2 ** 63 - 1], dtype=t.int32)",
    # a NumPy scalar or tensor stored into an integer or bool dtype goes through __index__
    "t.tensor([np.bool_(True), 2])", "t.tensor([np.bool_(True), np.int32(2)])",
    "t.tensor([np.bool_(True), 2.5])", "t.tensor([np.bool_(True), True])",
    "t.tensor([np.bool_(True)], dtype=t.uint8)", "t.tensor([np.int32(2)], dtype=t.bool)",
    "t.tensor([np.float32(1.5)], dtype=t.int64)", "t.tensor(np.float32(1.5), dtype=t.int64)",
    "t.tensor([[1], [np.float32(2.0)]], dtype=t.int32)",
    "t.tensor([np.float32(0.0)], dtype=t.bool)",
    "t.tensor([np.float16(1.5), 1], dtype=t.int32)", "t.tensor([np.float64(-1.5)], dtype=t.int32)",
    "t.tensor(np.float64(1.5), dtype=t.int64)", "t.tensor([1, np.float64(2.0)])",
    "t.tensor([t.tensor(1.5), 1], dtype=t.int64)", "t.tensor([t.tensor(1.5)], dtype=t.bool)",
    "t.tensor([t.tensor(True), 1], dtype=t.int64)", "t.tensor([t.tensor(2)], dtype=t.bool)",
    "t.tensor(np.array([1.5]), dtype=t.int64)", "t.tensor([1.5], dtype=t.bool)",
]


@pytest.mark.parametrize("call", CASES)
def test_creation_as_torch(call):
    assert _run(gradviz, call) == _run(torch, call)


@pytest.mark.parametrize("call", [
    "t.tensor(np.array([1 + 2j], dtype=np.complex64), dtype=t.float32)",
    "t.as_tensor(np.array([1 + 2j, 3]), dtype=t.float64)",
    "t.tensor(np.complex64(1 + 2j), dtype=t.float32)",
    "t.tensor([np.complex128(1 + 2j)], dtype=t.float64)",
])
def test_complex_numpy_data_cast_to_a_real_dtype_warns_and_drops_the_imaginary_part(
        call, monkeypatch):
    # an array warns once per process, as torch's TORCH_WARN_ONCE: made to warn again here
    monkeypatch.setattr(gradviz._creation, "_complex_warned", False)
    with pytest.warns(Warning, match="Casting complex values to real discards the imaginary"):
        ours = eval(call.replace("t.", "gradviz."))    # noqa: S307 - the cases above
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = eval(call.replace("t.", "torch."))    # noqa: S307 - the cases above
    assert str(ours.dtype) == str(theirs.dtype) and ours.tolist() == theirs.tolist()


def test_numpy_data_of_a_dtype_gradviz_lacks_is_still_refused_as_it_is():
    for data in (np.array([1, 2], dtype=np.uint16), np.uint32(3), [np.uint64(1)]):
        with pytest.raises(TypeError, match="tensors are not implemented by gradviz's core"):
            gradviz.tensor(data)


def test_the_complex_cast_warning_names_the_callers_line_as_torch(monkeypatch):
    for make in (gradviz.tensor, gradviz.as_tensor):
        monkeypatch.setattr(gradviz._creation, "_complex_warned", False)
        with pytest.warns(UserWarning, match="Casting complex values") as caught:
            make(np.array([1 + 2j]), dtype=gradviz.float32)
        assert caught[0].filename == __file__


_WARN_TWICE = """
import sys, warnings
import numpy as np
import {module} as t
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for make in (t.tensor, t.as_tensor, t.tensor):
        make(np.array([1 + 2j]), dtype=t.float32)
print([(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in caught])
"""


def test_the_complex_cast_warning_is_given_once_per_process_as_torch():
    # torch's TORCH_WARN_ONCE: once, whatever the warning filters say; torch's text then names
    # its C++ source (" (Triggered internally at ...Copy.cpp)"), which gradviz does not
    import subprocess
    import sys

    def warned(module):
        run = subprocess.run([sys.executable, "-c", _WARN_TWICE.format(module=module)],
                             capture_output=True, text=True, check=True)
        return run.stdout
    ours = warned("gradviz")
    assert ours == warned("torch")
    assert ours.count("Casting complex values") == 1
