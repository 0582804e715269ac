"""Every kind of sentence explain prints, checked against torch 2.13 on the same file.

Each case runs one file twice: through explain (on gradviz's core) and on the real torch
(the runner's torch backend). NAME's .grad must be what torch leaves there; the gradient explain
says reaches NAME from the root must be what torch's autograd.grad gives (or, where the file
already computed it, the value the file holds); and the numbers inside the sentences (backward
calls summed, the failing call's error, the line the file raised on) must be torch's too.
"""

import os

import numpy as np
import pytest

from gradviz.inspect import run_file
from gradviz.inspect.explain import KINDS, explain

torch = pytest.importorskip("torch")

FILES = os.path.join(os.path.dirname(__file__), "files")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")

AUTOGRAD = "autograd"       # torch.autograd.grad(root, NAME) after the file ran
NONE = "none"               # explain computes no gradient, and torch has none to give
NO_GRAD_KINDS = {"no_requires_grad", "inputs_no_grad", "no_grad", "detached"}


def where(file):
    return os.path.join(EXAMPLES if file in _EXAMPLE_FILES else FILES, file + ".py")


_EXAMPLE_FILES = {"second_derivative", "relu_zero_grad", "retain_graph_accumulate"}

# id, file, NAME, --root, cause kinds explain gives (in order), torch's reference for the
# gradient explain says reaches NAME from the root
CASES = [
    ("file_raised", "explain_t_raises", "x", None, ["file_raised", "ok"], "x.grad"),
    ("not_leaf", "explain_t_not_leaf", "h", None, ["not_leaf"], AUTOGRAD),
    ("no_requires_grad", "explain_no_requires_grad", "x", None, ["no_requires_grad"], NONE),
    ("inputs_no_grad", "explain_inputs_no_grad", "x2", None, ["inputs_no_grad"], NONE),
    ("no_grad", "explain_no_grad", "h", None, ["no_grad"], NONE),
    ("detached", "explain_detached", "d", None, ["detached"], NONE),
    ("no_root", "explain_t_no_root", "x", None, ["no_root"], NONE),
    ("not_connected", "explain_not_connected", "a", "r", ["not_connected"], NONE),
    ("backward_not_called", "explain_inputs_no_grad", "w", None,
     ["backward_not_called", "ok"], AUTOGRAD),
    ("other_root", "explain_other_root", "a", None, ["other_root"], AUTOGRAD),
    ("other_root_reaches", "explain_t_other_root_reaches", "x", "p", ["other_root"], AUTOGRAD),
    ("autograd_grad", "second_derivative", "x", None, ["autograd_grad"], "dy_dx"),
    ("not_reached", "explain_t_inputs", "x", None, ["not_reached"], AUTOGRAD),
    ("backward_failed", "explain_t_backward_failed", "x", "c",
     ["other_root", "backward_failed"], NONE),
    ("zero_gradient", "explain_zero", "x", None, ["zero_gradient"], "x.grad"),
    ("partly_zero", "relu_zero_grad", "x", "loss", ["backward_not_called", "partly_zero"],
     AUTOGRAD),
    ("nan_gradient", "explain_nan", "x", None, ["nan_gradient"], "x.grad"),
    ("nan_gradient_other_branch", "explain_t_nan_branch", "x", None, ["nan_gradient"],
     "x.grad"),
    ("accumulated", "explain_t_accumulated", "w", None, ["accumulated"], AUTOGRAD),
    ("accumulated_retained", "explain_t_accumulated", "h", None, ["accumulated"], AUTOGRAD),
    ("accumulated_since_zeroed", "explain_t_loop_zero_every_3", "w", None, ["accumulated"],
     "step_grads[-1]"),
    ("zero_grad_every_step", "explain_t_loop_zero_every_step", "w", None, ["ok"],
     "step_grads[-1]"),
    ("hook", "explain_hook", "w", None, ["hook"], "w.grad"),
    ("grad_edited", "explain_zeroed_after", "w", None, ["grad_edited"], "torch.full((2,), 3.)"),
    ("grad_edited_zero_", "retain_graph_accumulate", "w", None, ["grad_edited"],
     "torch.ones(1)"),
    ("grad_cleared", "explain_t_grad_cleared", "w", None, ["grad_cleared"], AUTOGRAD),
    ("ok_leaf", "explain_t_not_leaf", "x", None, ["ok"], AUTOGRAD),
    ("ok_retained", "explain_t_retained", "hs[0]", None, ["ok"], AUTOGRAD),
    ("ok_second_backward", "explain_t_second_backward", "x", None, ["ok"], "x.grad"),
]


def values(v):
    """explain's plain data as a float array ("nan" / "inf" strings back to floats)."""
    a = np.asarray(v, dtype=object)
    return np.vectorize(float, otypes=[float])(a)


def same(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)


def torch_grad(t):
    """What torch keeps in .grad (None for a non-leaf it does not retain, without warning)."""
    if not (t.is_leaf or t.retains_grad) or t.grad is None:
        return None
    return t.grad.detach().numpy().copy()


def torch_reference(run, ref, name, root):
    t = run.tensor(name)
    if ref == AUTOGRAD:
        r = run.tensor(root)
        seed = None if r.numel() == 1 else torch.ones_like(r)
        (g,) = torch.autograd.grad(r, t, seed, retain_graph=True, allow_unused=True)
        return None if g is None else g.detach().numpy()
    ns = dict(run.namespace, torch=torch)
    return eval(ref, ns).detach().numpy()          # noqa: S307 - a fixed test expression


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_explain_numbers_are_torchs(case):
    _, file, name, root, kinds, ref = case
    path = where(file)
    r = explain(path, name, root=root)
    assert [c["kind"] for c in r["causes"]] == kinds
    tr = run_file(path, backend="torch")
    t = tr.tensor(name)
    grad = torch_grad(t)                 # read before any reference computation below
    assert (r["grad"] is None) == (grad is None)
    if grad is not None:
        assert same(values(r["grad"]), grad)
    # explain says NAME does not require grad exactly when torch's tensor does not
    assert bool(set(kinds) & NO_GRAD_KINDS) == (not t.requires_grad)
    if ref == NONE:
        assert r["computed"] is None
        return
    expected = torch_reference(tr, ref, name, r["root"])
    assert same(values(r["computed"]), expected)


def test_every_kind_explain_prints_has_a_torch_case():
    kinds = {k for c in CASES for k in c[4]}
    assert kinds == set(KINDS)


# ----- The numbers inside the sentences ------------------------------------------------------

def test_accumulated_count_is_torchs():
    path = where("explain_t_accumulated")
    tr = run_file(path, backend="torch")
    w, loss = tr.tensor("w"), tr.tensor("loss")
    (one,) = torch.autograd.grad(loss, w, retain_graph=True)
    calls = explain(path, "w")["causes"][0]["calls"]
    assert calls == 3
    assert torch.allclose(w.grad, calls * one)


def test_count_starts_again_where_zero_grad_zeroed_it():
    # zero_grad(set_to_none=False) at steps 0 and 3 of 5: .grad holds steps 3 and 4.
    path = where("explain_t_loop_zero_every_3")
    tr = run_file(path, backend="torch")
    steps = tr.namespace["step_grads"]
    c = explain(path, "w")["causes"][0]
    assert c["calls"] == 2 and "since it was last zeroed" in c["message"]
    w = tr.tensor("w")
    assert torch.allclose(w.grad, sum(steps[-c["calls"]:]))
    assert not torch.allclose(w.grad, sum(steps[-c["calls"] - 1:]))


def test_training_loop_that_zeroes_every_step_says_no_sum():
    for path, name in [(where("explain_t_loop_zero_every_step"), "w"),
                       (os.path.join(EXAMPLES, "training_loop_mlp.py"), "model.hidden.weight")]:
        r = explain(path, name)
        assert [c["kind"] for c in r["causes"]] == ["ok"]
        assert r["grad"] == r["computed"]
        assert "sum of" not in r["causes"][0]["message"]


def test_second_derivative_gradient_from_y_is_48():
    path = where("second_derivative")
    r = explain(path, "x")
    tr = run_file(path, backend="torch")
    assert r["root"] == "y" and r["computed"] == 48.0
    assert r["computed"] == tr.namespace["dy_dx"].item()
    assert r["grad"] is None and tr.tensor("x").grad is None
    assert r["causes"][0]["message"] == (
        "the file computed the gradient from 'y' with torch.autograd.grad, which "
        "returns gradients instead of storing them in .grad: 'x.grad' stays None")
    assert r["causes"][0]["line"] == 24
    r2 = explain(path, "x", root="dy_dx")
    assert r2["computed"] == 24.0 == tr.namespace["d2y_dx2"].item()


def test_retained_non_leaf_is_not_called_a_leaf():
    r = explain(where("explain_t_retained"), "hs[0]")
    msg = r["causes"][0]["message"]
    assert "is a leaf" not in msg
    assert msg.startswith("'hs[0]' is not a leaf (it was made by TanhBackward0), but "
                          "retain_grad() keeps its .grad")


def test_backward_failed_says_torchs_error():
    path = where("explain_t_backward_failed")
    r = explain(path, "x", root="c")
    tr = run_file(path, backend="torch")
    with pytest.raises(RuntimeError) as err:
        torch.autograd.grad(tr.tensor("c"), tr.tensor("x"))
    first = str(err.value).split(". ")[0]
    failed = r["causes"][-1]
    assert first in failed["message"] and failed["line"] == 4


def test_file_raised_line_and_type_are_torchs():
    path = where("explain_t_raises")
    tr = run_file(path, backend="torch")
    for name in ("x", "z"):
        r = explain(path, name)
        assert r["error"]["type"] == tr.error.type == "RuntimeError"
        assert r["causes"][0]["line"] == tr.error.line == 6
    r = explain(path, "z")
    assert r["found"] is False and r["causes"][0]["message"].endswith(
        "when it stopped there was no tensor named 'z' to explain")


def test_other_root_does_not_claim_independence_when_it_reaches():
    r = explain(where("explain_t_other_root_reaches"), "x", root="p")
    msg = r["causes"][0]["message"]
    assert "does not depend" not in msg and "'x.grad' comes from that call" in msg
    r = explain(where("explain_other_root"), "a")
    assert "'q' does not depend on 'a'" in r["causes"][0]["message"]


def test_explains_own_backward_does_not_change_the_grad_it_reports():
    # The file ran backward from loss; from hs[1] gradviz computes the gradient itself, and
    # that pass writes retained .grad values (torch's autograd.grad does too). The .grad
    # explain reports is the one the file left, as torch leaves it.
    path = where("explain_t_retained")
    tr = run_file(path, backend="torch")
    r = explain(path, "hs[0]", root="hs[1]")
    assert [c["kind"] for c in r["causes"]] == ["other_root"]
    assert same(values(r["grad"]), torch_grad(tr.tensor("hs[0]")))
    assert same(values(r["computed"]), torch_reference(tr, AUTOGRAD, "hs[0]", "hs[1]"))


def test_every_kind_and_verdict_is_documented():
    from gradviz.inspect.gradcheck import VERDICTS
    root = os.path.join(os.path.dirname(__file__), "..")
    for doc in ("README.md", os.path.join("docs", "report-schema.md")):
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            text = f.read()
        for word in KINDS + VERDICTS:
            assert f"`{word}`" in text or f"| {word} " in text, (doc, word)


def test_nan_found_on_a_branch_the_shown_path_does_not_take():
    r = explain(where("explain_t_nan_branch"), "x")
    assert [p["node"] for p in r["path"]] == ["SumBackward0", "AddBackward0", "MulBackward0",
                                              "AccumulateGrad"]
    c = r["causes"][0]
    assert c["message"].startswith("the gradient reaching 'x' has NaN/inf: SqrtBackward0 (b) "
                                   "produced it first") and c["line"] == 5
    tr = run_file(where("explain_t_nan_branch"), backend="torch")
    assert r["grad"] == ["inf", 2.25] and tr.tensor("x").grad.tolist() == [float("inf"), 2.25]


# ----- explain --backend torch: the same document, read off the torch run ---------------------

# Where the torch document differs, with the reason (strict: one that passes must leave).
_TORCH_DIFFERS = {
    "ok_second_backward": "the nodes g's graph has inside the first backward (create_graph) have "
                          "no Python tensor on torch: the path names them on the core only",
}


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=_TORCH_DIFFERS[c[0]]))
    if c[0] in _TORCH_DIFFERS else c for c in CASES], ids=[c[0] for c in CASES])
def test_explain_on_torch_gives_the_same_document(case):
    _, file, name, root, kinds, _ = case
    path = where(file)
    on_torch = explain(path, name, root=root, backend="torch")
    assert [c["kind"] for c in on_torch["causes"]] == kinds
    on_core = explain(path, name, root=root)
    # the values within float32 rounding (the backends sum in different orders), the rest
    # word for word
    for key in ("grad", "computed"):
        mine, theirs = on_core.pop(key), on_torch.pop(key)
        assert (mine is None) == (theirs is None), key
        assert mine is None or same(values(theirs), values(mine)), key
    assert on_torch == on_core


def test_explain_command_on_torch_prints_the_same_sentences():
    from click.testing import CliRunner
    from gradviz_cli.main import cli
    path = os.path.join(EXAMPLES, "relu_zero_grad.py")
    out = {}
    for backend in ("gradviz", "torch"):
        r = CliRunner(env={"COLUMNS": "200"}).invoke(
            cli, ["explain", path, "x", "--root", "loss", "--backend", backend, "--no-color"],
            catch_exceptions=False)
        assert r.exit_code == 0
        out[backend] = r.stdout
    assert out["torch"] == out["gradviz"]
    assert "- the gradient reaching 'x' is zero in 2 of 4 elements: ReluBackward0 (out) " \
        "turned a non-zero gradient into zeros" in out["torch"]
    r = CliRunner().invoke(cli, ["explain", where("explain_t_raises"), "x", "--backend",
                                 "torch", "--json"], catch_exceptions=False)
    assert r.exit_code == 1 and '"kind": "file_raised"' in r.stdout
