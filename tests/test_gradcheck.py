"""gradcheck never gives a false verdict: one case per kind of bad input, as the library
returns it and as the command prints it (final line and exit code)."""

import json
import math
import os

import pytest
from click.testing import CliRunner

from gradviz.inspect import UsageError
from gradviz.inspect.gradcheck import VERDICTS, gradcheck_file
from gradviz_cli.main import cli

FILES = os.path.join(os.path.dirname(__file__), "files")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def path(name):
    return os.path.join(FILES, name + ".py")


def invoke(*args):
    return CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["gradcheck", *args, "--no-color"],
                                                    catch_exceptions=False)


def strict_json(text):
    """json.loads that fails on the bare NaN / Infinity Python's json would accept."""
    def refuse(token):
        raise AssertionError(f"invalid JSON constant {token}")
    return json.loads(text, parse_constant=refuse)


def last_line(result):
    return result.stdout.rstrip("\n").splitlines()[-1]


# ----- The verdict and its sentence, for each kind of input ------------------------------------

CASES = [
    # file, verdict, final line (exactly as printed), leaf status
    ("gradcheck_curved", "match", "all gradients match (2 elements checked)", "pass"),
    ("gradcheck_wrong_backward", "mismatch", "gradient mismatch at 3 elements of x", "mismatch"),
    ("gradcheck_nan_value", "nonfinite",
     "non-finite values (nan or inf) at 2 elements of x: they cannot be compared", "nonfinite"),
    ("gradcheck_inf_grad", "nonfinite",
     "non-finite values (nan or inf) at 1 element of x: they cannot be compared", "nonfinite"),
    ("gradcheck_relu_at_zero", "not_differentiable",
     "not differentiable at x[0] (the one-sided differences disagree): there is no single "
     "gradient to check there", "not_differentiable"),
    ("gradcheck_abs_at_zero", "not_differentiable",
     "not differentiable at x[0] (the one-sided differences disagree): there is no single "
     "gradient to check there", "not_differentiable"),
    ("gradcheck_branch", "not_differentiable",
     "not differentiable at x (the one-sided differences disagree): there is no single "
     "gradient to check there", "not_differentiable"),
    ("gradcheck_raises_when_moved", "raised_when_perturbed",
     "the file raised when 1 element of x moved by eps: not checked", "raised"),
    ("gradcheck_far_from_zero", "match", "all gradients match (1 element checked)", "pass"),
    ("gradcheck_large_values", "step_too_small",
     "not checked at x[0] = 1e+10, x[1] = 3.5e+10: a step of eps is below float64's resolution "
     "there (of the value, or of the root's value); pass a larger --eps", "step_too_small"),
    ("gradcheck_backward_fails", "backward_failed",
     "nothing was checked for y: backward failed", None),
    ("gradcheck_no_named_leaf", "nothing_checked",
     "nothing was checked: no named leaf that requires grad reaches y", None),
]


@pytest.mark.parametrize("name, verdict, line, status", CASES, ids=[c[0] for c in CASES])
def test_verdict_and_final_line(name, verdict, line, status):
    doc = gradcheck_file(path(name))
    assert doc["verdict"] == verdict and doc["message"] == line
    assert doc["passed"] is (verdict == "match")
    if status is not None:
        assert [lf["status"] for r in doc["roots"] for lf in r["leaves"]] == [status]
    r = invoke(path(name))
    assert r.exit_code == (0 if verdict == "match" else 1)
    assert last_line(r) == line
    assert strict_json(invoke(path(name), "--json").stdout)["verdict"] == verdict


def test_every_verdict_has_a_case():
    covered = {c[1] for c in CASES} | {"file_raised"}
    assert covered == set(VERDICTS)


# ----- Non-finite values: never "match", never bare NaN in JSON ---------------------------------

def test_nan_is_a_failure_with_the_values_as_strings():
    doc = gradcheck_file(path("gradcheck_nan_value"))
    (leaf,) = doc["roots"][0]["leaves"]
    assert leaf["nonfinite"] == [
        {"index": [0], "analytic": "nan", "numeric": "nan", "value": "nan"},
        {"index": [1], "analytic": 0.25, "numeric": "nan", "value": "nan"}]
    assert leaf["max_abs_error"] is None and not leaf["passed"]


def test_inf_gradient_keeps_the_finite_element_compared():
    doc = gradcheck_file(path("gradcheck_inf_grad"))
    (leaf,) = doc["roots"][0]["leaves"]
    assert leaf["nonfinite"] == [{"index": [0], "analytic": "inf", "numeric": "nan",
                                  "value": 2.0}]
    assert leaf["worst"]["index"] == [1] and leaf["max_abs_error"] < 1e-8


def test_json_output_is_strict_json_for_every_case():
    for name, *_ in CASES:
        text = invoke(path(name), "--json").stdout
        assert "NaN" not in text and "Infinity" not in text
        strict_json(text)


def test_hooks_that_print_do_not_reach_the_json():
    r = invoke(path("gradcheck_hooks_print"), "--json")
    assert r.exit_code == 0 and strict_json(r.stdout)["verdict"] == "match"


# ----- Kinks: detected from the one-sided differences, the rest still compared ------------------

def test_kink_reports_both_slopes_and_compares_the_smooth_element():
    doc = gradcheck_file(path("gradcheck_relu_at_zero"))
    (leaf,) = doc["roots"][0]["leaves"]
    (kink,) = leaf["kinks"]
    assert kink["index"] == [0] and kink["analytic"] == 0.0
    assert kink["left"] == pytest.approx(0.0, abs=1e-6)
    assert kink["right"] == pytest.approx(1.0, abs=1e-6)
    assert leaf["worst"]["index"] == [1] and leaf["mismatched"] == 0
    text = invoke(path("gradcheck_relu_at_zero")).stdout
    assert "x[0]: not differentiable: slope 0 from the left, 1 from the right (analytic 0)" \
        in text


def test_a_jump_is_not_differentiable():
    # x[2] = 0: moving it up lets it into the product (y jumps from 6 to about 0).
    doc = gradcheck_file(os.path.join(EXAMPLES, "dynamic_control_flow.py"))
    assert doc["verdict"] == "not_differentiable"
    assert [k["index"] for k in doc["roots"][0]["leaves"][0]["kinks"]] == [[2]]


def test_large_curvature_is_not_a_kink():
    # The one-sided differences at 0 are -1 and 1 (beyond atol); a step ten times smaller
    # shrinks their gap tenfold, so the point is smooth and its gradient 0 is compared.
    doc = gradcheck_file(path("gradcheck_curved"))
    (leaf,) = doc["roots"][0]["leaves"]
    assert leaf["kinks"] == [] and leaf["checked"] == 2 and leaf["passed"]


# ----- Nothing compared: say why, with the file and line ----------------------------------------

@pytest.mark.parametrize("name, line", [
    ("raises", "nothing was checked: the file raised RuntimeError: shape '[5]' is invalid for "
               "input of size 6 ({}:5)"),
    ("syntax_error", "nothing was checked: the file raised SyntaxError: '(' was never closed "
                     "({}:3)"),
])
def test_file_that_raises_is_not_a_mismatch(name, line):
    doc = gradcheck_file(path(name))
    assert doc["verdict"] == "file_raised" and doc["roots"] == []
    assert doc["message"] == line.format(path(name))
    r = invoke(path(name))
    assert r.exit_code == 1
    assert "mismatch" not in r.stdout
    assert r.stdout.splitlines()[-1].startswith("nothing was checked: the file raised")


@pytest.mark.parametrize("backend", ["gradviz", "torch"])
def test_a_file_that_raises_only_without_the_kept_graph_is_not_a_match(backend):
    # gradcheck's runs keep the graph (retain_graph) to take the analytic gradient: the
    # second backward ran, and "all gradients match", exit 0, hid the file's RuntimeError
    if backend == "torch":
        pytest.importorskip("torch")
    name = path("gradcheck_backward_twice")
    doc = gradcheck_file(name, backend=backend)
    assert doc["verdict"] == "file_raised" and not doc["passed"]
    assert (doc["error"]["type"], doc["error"]["line"]) == ("RuntimeError", 7)
    assert doc["message"].startswith("nothing was checked: the file raised RuntimeError: "
                                     "Trying to backward through the graph a second time")
    r = invoke(name, "--backend", backend)
    assert r.exit_code == 1 and "match" not in r.stdout


@pytest.mark.parametrize("backend", ["gradviz", "torch"])
@pytest.mark.parametrize("name, skipped", [("gradcheck_manual_sgd", ["w", "b"]),
                                           ("gradcheck_data_edit", ["x"])])
def test_a_leaf_changed_through_data_is_skipped_not_a_mismatch(backend, name, skipped):
    # `w.data -= lr * w.grad`: finite differences moved w as it was made, which moved every
    # step after it, and a correct backward was called "gradient mismatch" (exit 1)
    if backend == "torch":
        pytest.importorskip("torch")
    doc = gradcheck_file(path(name), backend=backend)
    leaves = doc["roots"][0]["leaves"]
    assert [lf["name"] for lf in leaves] == skipped
    assert {lf["status"] for lf in leaves} == {"skipped"}
    assert leaves[0]["skipped"] == (
        f"'{skipped[0]}' was changed through .data after it was made (autograd does not see "
        "such edits): finite differences would move a different value than the one the graph "
        "used")
    assert doc["verdict"] == "nothing_checked"
    r = invoke(path(name), "--backend", backend)
    assert r.exit_code == 1 and "mismatch" not in r.stdout


def test_backward_failure_names_the_forward_line():
    doc = gradcheck_file(path("gradcheck_backward_fails"))
    (root,) = doc["roots"]
    assert root["line"] == 4 and root["file"] == path("gradcheck_backward_fails")
    assert root["error"].startswith("backward of 'y' fails, so there is no analytic gradient "
                                    "to check: one of the variables needed for gradient "
                                    "computation has been modified by an inplace operation")


def test_perturbed_run_that_raises_names_element_and_line():
    doc = gradcheck_file(path("gradcheck_raises_when_moved"))
    (leaf,) = doc["roots"][0]["leaves"]
    assert leaf["raised"] == 1 and leaf["checked"] == 1
    assert leaf["error"] == {"type": "ValueError", "message": "x[0] must be at most 1",
                             "file": path("gradcheck_raises_when_moved"), "line": 5,
                             "index": [0]}


def test_only_skipped_leaves_is_nothing_checked():
    doc = gradcheck_file(os.path.join(EXAMPLES, "inplace_on_leaf.py"))
    assert doc["verdict"] == "nothing_checked"
    assert doc["message"] == "nothing was checked: a was skipped"
    assert [lf["status"] for lf in doc["roots"][0]["leaves"]] == ["skipped"]


# ----- Options: finite and positive, or a usage error (exit 2) ----------------------------------

@pytest.mark.parametrize("option, value, message", [
    ("--eps", "0", "--eps must be a finite number greater than 0, got 0.0"),
    ("--eps", "-1e-6", "--eps must be a finite number greater than 0, got -1e-06"),
    ("--eps", "nan", "--eps must be a finite number greater than 0, got nan"),
    ("--eps", "inf", "--eps must be a finite number greater than 0, got inf"),
    ("--atol", "nan", "--atol must be a finite number >= 0, got nan"),
    ("--atol", "-1", "--atol must be a finite number >= 0, got -1.0"),
    ("--atol", "inf", "--atol must be a finite number >= 0, got inf"),
    ("--rtol", "nan", "--rtol must be a finite number >= 0, got nan"),
    ("--rtol", "-0.5", "--rtol must be a finite number >= 0, got -0.5"),
    ("--rtol", "-inf", "--rtol must be a finite number >= 0, got -inf"),
])
def test_bad_tolerances_are_usage_errors(option, value, message):
    r = invoke(os.path.join(EXAMPLES, "manual_derivative_x2_exp.py"), option, value)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"Error: {message}"
    assert r.stdout == ""
    with pytest.raises(UsageError, match="must be a finite number"):
        gradcheck_file(os.path.join(EXAMPLES, "manual_derivative_x2_exp.py"),
                       **{option[2:]: float(value)})


def test_zero_tolerances_are_allowed():
    # atol 0 alone still passes on the relative tolerance; both at 0 ask for exact equality,
    # which finite differences in float64 cannot give.
    mul = os.path.join(EXAMPLES, "mul_chain_backward.py")
    assert gradcheck_file(mul, atol=0.0)["verdict"] == "match"
    doc = gradcheck_file(mul, atol=0.0, rtol=0.0)
    # (b = 3 moved by the steps float64 takes gives its gradient exactly)
    assert doc["message"] == "gradient mismatch at 2 elements of a, d"


# ----- Against torch: its gradcheck fails on the same non-finite and kink inputs ----------------

@pytest.mark.parametrize("fn, values", [
    ("sqrt", [-1.0, 4.0]),        # nan value and gradient
    ("sqrt", [0.0, 4.0]),         # infinite gradient
    ("relu", [0.0, 1.0]),         # a kink where the analytic value is not the central one
    ("reciprocal", [0.0, 1.0]),   # an infinite value
])
def test_core_and_torch_gradcheck_both_fail_on_non_finite_and_kinks(fn, values):
    torch = pytest.importorskip("torch")
    import warnings

    import gradviz
    results = []
    for mod in (torch, gradviz):
        x = mod.tensor(values, dtype=mod.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results.append(mod.autograd.gradcheck(getattr(mod, fn), (x,),
                                                  raise_exception=False))
    assert results == [False, False]


def test_eps_nan_fails_the_core_gradcheck_as_it_fails_torch():
    torch = pytest.importorskip("torch")
    import warnings

    import gradviz
    results = []
    for mod in (torch, gradviz):
        x = mod.tensor([1.0, 4.0], dtype=mod.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results.append(mod.autograd.gradcheck(lambda t: t * 2, (x,), eps=math.nan,
                                                  raise_exception=False))
    assert results == [False, False]


def test_an_empty_leaf_is_skipped_not_passed():
    doc = gradcheck_file(path("gradcheck_empty_leaf"))
    x, w = doc["roots"][0]["leaves"]
    assert (x["status"], x["passed"], x["skipped"]) == ("skipped", False,
                                                        "'x' has no elements to move")
    assert w["status"] == "pass"
    assert doc["message"] == "all gradients match (1 element checked); not checked: x (see above)"


# ----- --backend torch: the same check, every run on PyTorch --------------------------------

# What differs on torch, with the reason; anything else in the document must be equal.
TORCH_DIFFERENCES = {
    "gradcheck_backward_fails": "the torch tracer's message for a saved tensor edited in place "
                                "does not say whose output it is when it is the op's own result "
                                "(', which is output 0 of Exp,'): only the error's words up to "
                                "that point are compared",
}


def _without_error_detail(doc):
    for r in doc["roots"]:
        if r["error"]:
            r["error"] = r["error"].split(" [")[0]
    return doc


@pytest.mark.parametrize("name", [c[0] for c in CASES] + [
    "raises", "syntax_error", "gradcheck_empty_leaf", "gradcheck_hooks_print"])
def test_torch_backend_gives_the_same_document_and_final_line(name):
    pytest.importorskip("torch")
    core = gradcheck_file(path(name))
    on_torch = gradcheck_file(path(name), backend="torch")
    if name in TORCH_DIFFERENCES:
        core, on_torch = _without_error_detail(core), _without_error_detail(on_torch)
    assert on_torch == core
    r = invoke(path(name), "--backend", "torch")
    assert r.exit_code == (0 if core["passed"] else 1)
    assert last_line(r) == core["message"]


def test_torch_backend_keeps_the_graph_of_a_file_that_called_backward():
    # the file's loss.backward() frees the graph on torch: the check re-runs it with
    # retain_graph=True so that the analytic gradient can still be taken
    pytest.importorskip("torch")
    doc = gradcheck_file(os.path.join(EXAMPLES, "mul_chain_backward.py"), backend="torch")
    assert doc["verdict"] == "match" and doc["passed"]
    assert [lf["name"] for r in doc["roots"] for lf in r["leaves"]] == \
        [lf["name"] for r in gradcheck_file(os.path.join(EXAMPLES, "mul_chain_backward.py"))[
            "roots"] for lf in r["leaves"]]


def test_torch_backend_validates_eps_first():
    pytest.importorskip("torch")
    r = CliRunner().invoke(cli, ["gradcheck", path("gradcheck_curved"), "--backend", "torch",
                                 "--eps", "0"])
    assert r.exit_code == 2
    assert "--eps must be a finite number greater than 0, got 0.0" in r.stderr


@pytest.mark.parametrize("command", [["gradcheck", path("gradcheck_curved")],
                                     ["explain", path("gradcheck_curved"), "x"]])
def test_torch_backend_without_torch_is_a_usage_error(monkeypatch, command):
    import sys
    monkeypatch.setitem(sys.modules, "torch", None)      # `import torch` raises ImportError
    r = CliRunner().invoke(cli, [*command, "--backend", "torch"])
    assert r.exit_code == 2 and "pip install torch==2.13.0" in r.stderr


def test_an_eps_lost_at_the_leafs_value_is_not_a_mismatch():
    # 1 + 1e-320 == 1 in float64: the numeric gradient read 0 and the verdict was "mismatch"
    doc = gradcheck_file(path("gradcheck_curved"), eps=1e-320)
    assert doc["verdict"] == "step_too_small" and not doc["passed"]
    assert doc["roots"][0]["leaves"][0]["mismatched"] == 0


def test_elements_lost_in_the_roots_rounding_are_not_counted_as_checked():
    # the table said "checked 2/2" while the sentence said "not checked at x[0], x[1]"
    doc = gradcheck_file(path("gradcheck_large_values"))
    leaf = doc["roots"][0]["leaves"][0]
    assert doc["verdict"] == "step_too_small"
    assert (leaf["checked"], len(leaf["step_too_small"])) == (0, 2)
