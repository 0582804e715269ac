"""explain: one small file per cause, checking the kind and the reported line."""

import os

import pytest

from gradviz.inspect import UsageError
from gradviz.inspect.explain import explain

FILES = os.path.join(os.path.dirname(__file__), "files")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def kinds(result):
    return [(c["kind"], c["line"]) for c in result["causes"]]


@pytest.mark.parametrize("file, name, root, expected", [
    ("explain_not_leaf", "h", None, [("not_leaf", 4)]),
    ("explain_no_requires_grad", "x", None, [("no_requires_grad", 4)]),
    ("explain_inputs_no_grad", "x2", None, [("inputs_no_grad", 5)]),
    ("explain_no_grad", "h", None, [("no_grad", 5)]),
    ("explain_detached", "h", None, [("detached", 4)]),
    ("explain_detached", "d", None, [("detached", 5)]),
    ("explain_not_connected", "a", "r", [("not_connected", 3)]),
    ("explain_other_root", "a", None, [("other_root", 7)]),
    ("explain_zero", "x", None, [("zero_gradient", 4)]),
    ("explain_nan", "x", None, [("nan_gradient", 4)]),
    ("explain_accumulated", "w", None, [("accumulated", 6)]),
    ("explain_hook", "w", None, [("hook", 6)]),
    ("explain_zeroed_after", "w", None, [("grad_edited", 6)]),
])
def test_each_cause(file, name, root, expected):
    r = explain(os.path.join(FILES, file + ".py"), name, root=root)
    assert kinds(r) == expected


def test_backward_not_called_runs_it_afterwards():
    r = explain(os.path.join(FILES, "explain_inputs_no_grad.py"), "w")
    assert [c["kind"] for c in r["causes"]] == ["backward_not_called", "ok"]
    assert r["grad"] is None and r["computed"] == [6.0, 8.0]
    assert [p["node"] for p in r["path"]] == ["SumBackward0", "MulBackward0", "AccumulateGrad"]


def test_not_connected_names_the_nearest_tensor():
    r = explain(os.path.join(FILES, "explain_not_connected.py"), "a", root="r")
    assert "nearest tensor it does feed into is 'p'" in r["causes"][0]["message"]


def test_zero_names_the_node_that_zeroed_it():
    r = explain(os.path.join(FILES, "explain_zero.py"), "x")
    assert "ReluBackward0 (h)" in r["causes"][0]["message"]
    assert r["grad"] == [0.0, 0.0]


def test_partly_zero_relu_example():
    r = explain(os.path.join(EXAMPLES, "relu_zero_grad.py"), "x", root="loss")
    assert [c["kind"] for c in r["causes"]] == ["backward_not_called", "partly_zero"]
    assert "ReluBackward0" in r["causes"][1]["message"]


def test_unknown_name_suggests_close_matches():
    with pytest.raises(UsageError, match="Did you mean h"):
        explain(os.path.join(FILES, "explain_not_leaf.py"), "hh")


@pytest.mark.parametrize("f", sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py")))
def test_explain_runs_on_the_first_and_last_named_tensor_of_every_example(f):
    """Explain re-runs the file for each name, so every name of every file would cost minutes:
    a file's first name is mostly a leaf and its last a result, and each sentence kind has
    its own test above."""
    from gradviz.inspect import run_file
    names = list(run_file(os.path.join(EXAMPLES, f)).names())
    if not names:
        pytest.skip(f"{f} names no tensor")
    for name in dict.fromkeys(names[:1] + names[-1:]):
        r = explain(os.path.join(EXAMPLES, f), name)
        assert r["causes"], (f, name)
        for c in r["causes"]:
            assert c["kind"] and c["message"], (f, name, c)


# ----- %N names, and files that raised ------------------------------------------------------------

def test_generated_names_from_the_tables_are_accepted():
    from gradviz.inspect import run_file
    path = os.path.join(FILES, "explain_t_retained.py")
    table = {t["name"]: t for t in run_file(path).report()["tensors"]}
    assert table["mul(w, …)"]["grad_fn"] == "MulBackward0"
    assert [n for n in table if table[n]["generated"]] == [
        "mul(w, …)", "mul(w, hs[0])", "mul(w, hs[1])"]
    r = explain(path, "%2")
    assert [c["kind"] for c in r["causes"]] == ["not_leaf"]
    assert r["causes"][0]["message"].startswith(
        "'%2' is not a leaf (it was made by MulBackward0), so its .grad is not kept: the file "
        "has no name for it either")
    assert [p["tensor"] for p in r["path"]] == ["loss", "h", "mul(w, hs[1])"]
    assert explain(path, "mul(w, hs[1])")["causes"][0]["message"].startswith(
        "'mul(w, hs[1])' is not a leaf (it was made by MulBackward0), so its .grad is not kept: "
        "the file has no name for it either")
    with pytest.raises(UsageError, match="no tensor named '%99'"):
        explain(path, "%99")


def invoke(*args):
    from click.testing import CliRunner

    from gradviz_cli.main import cli
    return CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["explain", *args, "--no-color"],
                                                    catch_exceptions=False)


def test_file_that_raised_exits_1_and_shows_the_error_not_no_such_tensor():
    path = os.path.join(FILES, "raises.py")
    r = invoke(path, "z")
    assert r.exit_code == 1 and "Error: no tensor named" not in r.output
    assert r.stdout.splitlines() == [
        "cannot explain 'z'",
        "- the file raised RuntimeError: shape '[5]' is invalid for input of size 6; when it "
        f"stopped there was no tensor named 'z' to explain  ({os.path.relpath(path)}:5)"]
    r = invoke(path, "y")          # made before the error: explained, still exit 1
    assert r.exit_code == 1
    assert r.stdout.splitlines()[2].startswith("- the file raised RuntimeError: shape '[5]'")


def test_syntax_error_exits_1_with_its_line():
    path = os.path.join(FILES, "syntax_error.py")
    r = invoke(path, "x")
    assert r.exit_code == 1
    assert r.stdout.splitlines()[1] == (
        "- nothing ran: the file has a SyntaxError: '(' was never closed, so there is no tensor "
        f"named 'x' to explain  ({os.path.relpath(path)}:3)")
    import json
    doc = json.loads(invoke(path, "x", "--json").stdout)
    assert doc["found"] is False and doc["error"]["line"] == 3


def test_unknown_name_in_a_file_that_ran_is_still_a_usage_error():
    r = invoke(os.path.join(FILES, "explain_not_leaf.py"), "nope")
    assert r.exit_code == 2 and "no tensor named 'nope'" in r.stderr


def test_a_long_path_is_folded_not_cut_so_the_line_number_stays(tmp_path):
    # the location of a cause was cut with an ellipsis at the terminal's width: a file in a
    # deep folder lost its line number ("(/tmp/.../pro…")
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = deep / "prog.py"
    path.write_text("import torch\nx = torch.ones(2, requires_grad=True)\nraise ValueError('no')\n")
    from click.testing import CliRunner

    from gradviz_cli.main import cli
    r = CliRunner(env={"COLUMNS": "80"}).invoke(cli, ["explain", str(path), "x", "--no-color"])
    shown = "".join(line.strip() for line in r.output.splitlines())
    assert r.exit_code == 1
    assert "…" not in r.output
    assert f"{path}:3" in shown
