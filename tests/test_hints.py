"""Error boxes teach: autograd's classic errors get a fix and the gradviz command that explains
them, on the message torch 2.13 gives as well as on gradviz's."""

import pytest
from click.testing import CliRunner

from gradviz.inspect import run_file
from gradviz.inspect.hints import hint_for
from gradviz_cli.main import cli

CASES = {
    "leaf": ("w = torch.ones(2, requires_grad=True)\nw += 1\n",
             "update a leaf under `with torch.no_grad():` (as optimizers do), or edit a clone "
             "of it", "gradviz check-inplace {file}"),
    "nonscalar": ("w = torch.ones(2, requires_grad=True)\ny = w * 2\ny.backward()\n",
                  "reduce the output first (y.sum().backward()) or pass a gradient of its shape "
                  "(y.backward(torch.ones_like(y)))",
                  "gradviz run {file} --backward y --gradient ones"),
    "twice": ("w = torch.ones(2, requires_grad=True)\ny = (w * w).sum()\ny.backward()\n"
              "y.backward()\n",
              "pass retain_graph=True to the first backward, or compute the forward again "
              "before the second", "gradviz graph {file} --show-saved --svg graph.svg"),
    "nonleaf": ("import warnings\nwarnings.simplefilter('ignore')\n"
                "w = torch.ones(2, requires_grad=True)\ny = w * 2\ny.sum().backward()\n"
                "y.grad.zero_()\n",
                "a .grad is None: it is kept only for leaves (call .retain_grad() on a non-leaf "
                "before backward) and only after a backward reached the tensor",
                "gradviz explain {file} y"),
    "modified": ("w = torch.ones(2, requires_grad=True)\ny = w.exp()\ny += 1\n"
                 "y.sum().backward()\n",
                 "use the out-of-place form (x = x * 2, not x *= 2) or edit a .clone(), so "
                 "backward reads the value it saved", "gradviz check-inplace {file}"),
    "int": ("w = torch.tensor([1, 2], requires_grad=True)\n",
            "give the tensor a float dtype: torch.tensor([1.0, 2.0], requires_grad=True) or "
            "dtype=torch.float32", "gradviz run {file}"),
    "nograd": ("w = torch.ones(2)\n(w * 2).sum().backward()\n",
               "make an input require grad (torch.tensor(..., requires_grad=True)) before "
               "computing the output, outside torch.no_grad()", "gradviz run {file}"),
}


def write(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\n" + body)
    return str(path)


@pytest.mark.parametrize("name", sorted(CASES))
def test_classic_errors_get_a_fix_and_a_command(tmp_path, name):
    body, fix, command = CASES[name]
    path = write(tmp_path, name, body)
    error = run_file(path).report()["error"]
    assert error["hint"] == {"fix": fix, "command": command.format(file=path)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_same_hint_on_torchs_message(tmp_path, name):
    pytest.importorskip("torch")
    body, fix, command = CASES[name]
    path = write(tmp_path, name, body)
    error = run_file(path, backend="torch").report()["error"]
    assert error["hint"] == {"fix": fix, "command": command.format(file=path)}


def test_missing_core_name_points_at_the_torch_backend(tmp_path):
    path = write(tmp_path, "missing", "x = torch.fft.fft(torch.ones(2))\n")
    assert run_file(path).report()["error"]["hint"] == {
        "fix": "run the file on PyTorch, which has this name",
        "command": f"gradviz run {path} --backend torch"}


def test_other_errors_get_no_hint(tmp_path):
    path = write(tmp_path, "other", "x = None\nx.zero_()\n")
    assert run_file(path).report()["error"]["hint"] is None
    assert hint_for("ValueError", "a leaf Variable that requires grad", "f.py") is None


def test_the_error_box_prints_the_hint(tmp_path):
    path = write(tmp_path, "leaf", CASES["leaf"][0])
    r = CliRunner().invoke(cli, ["run", path, "--no-color"], env={"COLUMNS": "300"})
    assert r.exit_code == 1
    lines = [line.strip("│ ") for line in r.stdout.splitlines()]
    assert "fix: update a leaf under `with torch.no_grad():` (as optimizers do), or edit a " \
           "clone of it" in lines
    assert f"see: gradviz check-inplace {path}" in lines


def test_the_command_names_a_function_local_as_the_tables_do(tmp_path):
    path = write(tmp_path, "local", "import gradviz as torch\n\n\ndef step(x):\n"
                 "    y = x * 2\n    y.backward()\n\n\n"
                 "step(torch.ones(1, requires_grad=True))\n"
                 "step(torch.ones(2, requires_grad=True))\n")
    report = run_file(path).report()
    assert "step[2].y" in [t["name"] for t in report["tensors"]]
    assert report["error"]["hint"]["command"] == \
        f"gradviz run {path} --backward 'step[2].y' --gradient ones"
    # The name it gives is accepted by --backward.
    r = CliRunner().invoke(cli, ["run", path, "--backward", "step[2].y", "--gradient", "ones",
                                 "--no-color"])
    assert "no tensor named" not in r.output
