"""A Python number an op saves as a 0-d tensor (torch's wrapped number: `x * 2`'s
MulBackward0._saved_other is tensor(2)) is reported alike on both backends: a saved tensor of
shape [] and torch's dtype (int64, float64 or bool) that no name of the file holds, with its
number as the value (on --backend torch the value read None before, on the core it was a plain
number without shape or dtype), and printed as `_saved_other tensor(2) [] v0->v0`."""

import pytest

from gradviz.inspect import run_file
from gradviz.render.tables import _saved_text

torch = pytest.importorskip("torch")

SNIPPETS = {
    "mul_int": "y = x * 2",
    "mul_float": "y = x * 2.5",
    "rmul": "y = 3 * x",
    "div_int": "y = x / 4",
    "div_method_float": "y = x.div(0.5)",
    "true_divide": "y = torch.true_divide(x, 2)",
    "mul_bool": "y = x.mul(True)",
    "mul_negative": "y = x.mul(-3)",
    "div_floor": "y = x.div(2, rounding_mode='floor')",
    "div_trunc_float": "y = x.div(2.5, rounding_mode='trunc')",
    "chain": "y = (x * 2) / 3 * 0.5",
    "mul_tensor": "c = torch.tensor(2.0)\ny = x * c",
    "mul_int_tensor": "c = torch.tensor(2)\ny = x * c",
    "mul_self": "y = x * x",
}


def _saved(tmp_path, name, backend):
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\nx = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)\n"
                    + SNIPPETS[name] + "\n")
    report = run_file(str(path), backend=backend).report()
    return [(n["name"], n["saved"]) for n in report["nodes"]]


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_wrapped_numbers_reported_alike(tmp_path, name):
    torch.set_num_threads(1)
    assert _saved(tmp_path, name, "gradviz") == _saved(tmp_path, name, "torch")


@pytest.mark.parametrize("backend", ["gradviz", "torch"])
@pytest.mark.parametrize("name, dtype, value", [("mul_int", "int64", 2),
                                                ("mul_float", "float64", 2.5),
                                                ("mul_bool", "bool", True)])
def test_a_wrapped_number_has_torchs_dtype_and_its_value(tmp_path, backend, name, dtype, value):
    torch.set_num_threads(1)
    (node, saved), = [(n, s) for n, s in _saved(tmp_path, name, backend) if n == "MulBackward0"]
    other = next(s for s in saved if s["name"] == "_saved_other")
    assert (other["tensor"], other["shape"], other["dtype"], other["value"]) == \
        (None, [], dtype, value)
    assert _saved_text(other).plain == f"_saved_other tensor({value}) [] v0->v0"
