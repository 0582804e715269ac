"""check-inplace: findings for each kind of in-place hazard, and the verdicts against torch."""

import os

import pytest

from gradviz.inspect.inplace import check_inplace
from gradviz.inspect.session import run_file

HERE = os.path.join(os.path.dirname(__file__), "files")


def path(name):
    return os.path.join(HERE, name)


def failing_roots(result):
    return sorted({r for f in result["findings"] if f["kind"] == "modified_saved_tensor"
                   for r in f["roots"]})


def test_seed_setitem_is_found_with_both_lines_and_versions():
    r = check_inplace(path("inplace_seed.py"))
    (f,) = r["findings"]
    assert f["kind"] == "modified_saved_tensor"
    assert (f["tensor"], f["op"], f["line"]) == ("b", "setitem", 6)
    assert (f["saved_by"], f["saved_line"]) == ("MulBackward0", 5)
    assert (f["saved_version"], f["version"]) == (0, 1)
    assert f["roots"] == ["loss"]
    assert "clone" in f["fix"]
    assert r["warnings"] == []


def test_edit_through_a_view_is_found_on_the_base():
    r = check_inplace(path("inplace_view.py"))
    (f,) = r["findings"]
    assert (f["tensor"], f["op"], f["via"], f["line"]) == ("b", "mul_", "v", 7)
    assert (f["saved_by"], f["saved_line"]) == ("SinBackward0", 5)
    assert f["roots"] == ["c"]


def test_add_on_a_tensor_no_formula_needs_is_accepted():
    r = check_inplace(path("inplace_accepted.py"))
    assert r["findings"] == [] and r["warnings"] == []


def test_data_edit_is_a_warning_only():
    r = check_inplace(path("inplace_data_edit.py"))
    assert r["findings"] == []
    (w,) = r["warnings"]
    assert (w["kind"], w["tensor"], w["line"], w["saved_by"]) == \
        ("invisible_edit", "b", 6, "MulBackward0")


def test_leaf_edit_is_reported_where_it_raised():
    r = check_inplace(path("inplace_leaf.py"))
    (f,) = r["findings"]
    assert (f["kind"], f["tensor"], f["line"]) == ("leaf_inplace", "w", 4)


def test_edit_inside_a_function_reports_the_edit_line():
    r = check_inplace(path("inplace_in_function.py"))
    (f,) = r["findings"]
    assert (f["tensor"], f["op"], f["line"]) == ("h", "mul_", 5)
    assert (f["saved_by"], f["saved_line"]) == ("ExpBackward0", 10)


def test_only_the_affected_root_is_named():
    r = check_inplace(path("inplace_two_roots.py"))
    assert failing_roots(r) == ["p"]


def test_no_grad_and_detach_edits_are_seen_by_the_version_counter():
    assert failing_roots(check_inplace(path("inplace_no_grad.py"))) == ["loss"]
    assert failing_roots(check_inplace(path("inplace_detach.py"))) == ["b"]


def test_examples_verdicts():
    ex = os.path.join(os.path.dirname(__file__), "..", "examples")
    assert failing_roots(check_inplace(os.path.join(ex, "inplace_version_error.py"))) == \
        ["loss"]
    assert check_inplace(os.path.join(ex, "inplace_ok_when_not_saved.py"))["findings"] == []


CASES = ["inplace_seed.py", "inplace_view.py", "inplace_accepted.py", "inplace_data_edit.py",
         "inplace_in_function.py", "inplace_two_roots.py", "inplace_no_grad.py",
         "inplace_detach.py"]


@pytest.mark.parametrize("name", CASES)
def test_verdicts_match_torch_backward(name):
    pytest.importorskip("torch")
    r = check_inplace(path(name))
    run = run_file(path(name), backend="torch")
    roots = run.report()["roots"]
    failed = []
    for root in roots:
        t = run.tensor(root)
        try:
            t.backward(t.new_ones(t.shape) if t.numel() > 1 else None, retain_graph=True)
        except RuntimeError as exc:
            assert "modified by an inplace operation" in str(exc)
            failed.append(root)
    assert sorted(failed) == failing_roots(r)
