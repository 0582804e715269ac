"""The derivative rows are checked against their ops at import, and every public op is
exported from one registry: a broken row is an error that names it, never a None gradient."""

import ast
import pathlib

import pytest

import gradviz as torch
from gradviz import _registry
from gradviz.autograd import formula
from gradviz.autograd.formula import DERIVATIVES, RowError, check_bindings, defderiv, record

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def scratch_rows(monkeypatch):
    """A private copy of the table, so a test can add broken rows without leaking them."""
    monkeypatch.setattr(formula, "DERIVATIVES", dict(DERIVATIVES))
    return formula.DERIVATIVES


def test_a_tensor_parameter_without_a_formula_is_an_import_error(scratch_rows):
    with pytest.raises(RowError, match="Tensor parameter 'other' has no formula"):
        defderiv("lerp_demo(Tensor self, Tensor other)", "LerpDemoBackward0",
                 self=lambda grad: grad)


def test_a_formula_for_a_parameter_the_signature_lacks_is_an_error(scratch_rows):
    with pytest.raises(RowError, match="formula for 'weight'"):
        defderiv("lerp_demo(Tensor self)", "LerpDemoBackward0",
                 self=lambda grad: grad, weight=lambda grad: grad)


def test_a_formula_using_a_name_not_saved_is_an_error(scratch_rows):
    with pytest.raises(RowError, match="uses unknown name 'end'"):
        defderiv("lerp_demo(Tensor self, Scalar end)", "LerpDemoBackward0", (),
                 self=lambda grad, end: grad * end)


def test_nondiff_must_name_a_tensor_parameter(scratch_rows):
    with pytest.raises(RowError, match="'mask' listed as not differentiable"):
        defderiv("lerp_demo(Tensor self)", "LerpDemoBackward0", nondiff=("mask",),
                 self=lambda grad: grad)


def test_a_forward_must_take_the_rows_inputs_by_name(scratch_rows):
    defderiv("lerp_demo(Tensor self, Tensor end)", "LerpDemoBackward0",
             self=lambda grad: grad, end=lambda grad: grad)

    def lerp_demo(self, other):      # `end` renamed: its gradient would go nowhere
        return self

    with pytest.raises(RowError, match="has no parameter 'end'"):
        check_bindings([(row, fn) for row, fn in _registry.BINDINGS] +
                       [("lerp_demo", lerp_demo)])


def test_a_forward_must_take_the_inputs_in_signature_order(scratch_rows):
    defderiv("lerp_demo(Tensor self, Tensor end)", "LerpDemoBackward0",
             self=lambda grad: grad, end=lambda grad: grad)

    def lerp_demo(end, self):
        return self

    with pytest.raises(RowError, match="in another order"):
        check_bindings(list(_registry.BINDINGS) + [("lerp_demo", lerp_demo)])


def test_a_row_no_forward_records_is_an_error(scratch_rows):
    defderiv("lerp_demo(Tensor self)", "LerpDemoBackward0", self=lambda grad: grad)
    with pytest.raises(RowError, match="rows without a forward: lerp_demo"):
        check_bindings(_registry.BINDINGS)


def test_the_shipped_rows_all_pass_the_checks():
    bound = check_bindings(_registry.BINDINGS)
    assert set(bound) == set(DERIVATIVES)


def test_recording_with_the_wrong_number_of_inputs_fails_and_names_the_op():
    x = torch.ones(2, requires_grad=True)
    out = torch.ones(2)
    with pytest.raises(RowError, match=r"mul \(MulBackward0\) recorded with 1 inputs"):
        record(DERIVATIVES["mul"], out, (x,), (x, 2.0))


def test_a_plan_for_an_input_beyond_the_row_fails():
    with pytest.raises(RowError, match="beyond its 1 differentiable parameters"):
        DERIVATIVES["exp"].plan(0b10)


def _init_imports():
    """Names gradviz/__init__.py imports from gradviz._ops modules and gradviz._creation (its
    explicit list)."""
    tree = ast.parse((ROOT / "gradviz" / "__init__.py").read_text())
    names = set()
    for node in ast.walk(tree):     # the imports are in the function that loads the core
        module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
        if module.startswith("_ops.") or module == "_creation":
            names.update(a.asname or a.name for a in node.names)
    return names


def test_init_exports_exactly_the_registry():
    assert _init_imports() == set(_registry.TORCH)
    for name, fn in _registry.TORCH.items():
        assert getattr(torch, name) is fn, name


def test_tensor_methods_are_the_registry():
    for name, fn in _registry.TENSOR.items():
        assert torch.Tensor.__dict__[name] is fn, name


def _imports_of(path):
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or ""))
    return out


@pytest.mark.parametrize("module, forbidden", [
    ("gradviz/_derivatives.py", "_ops"),
    ("gradviz/_dmath.py", "_ops"),
    ("gradviz/_dmath.py", "_derivatives"),
    ("gradviz/autograd/graph.py", "_derivatives"),
    ("gradviz/autograd/graph.py", "formula"),
    ("gradviz/autograd/formula.py", "_derivatives"),
    ("gradviz/autograd/formula.py", "_ops"),
])
def test_no_import_cycles_between_the_table_the_machinery_and_the_ops(module, forbidden):
    imports = _imports_of(ROOT / module)
    assert not [m for m in imports if m.rstrip(".").split(".")[-1] == forbidden], imports
