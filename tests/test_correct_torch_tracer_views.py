"""A view made in no_grad mode whose base was then edited in place: torch refuses to read its
grad_fn (and is_leaf) with a RuntimeError, which ended `gradviz run --backend torch` with an
internal error (exit 70) while the core described the file. Both backends now describe it the
same way: the view is a leaf without a grad_fn, the rest of the report as before."""

import textwrap

import pytest

torch = pytest.importorskip("torch")

from gradviz.inspect import run_file  # noqa: E402

EDITED_BASE = """\
    import torch
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    with torch.no_grad():
        v = y[:2]
    y.mul_(3)
    z = y.sum()
    z.backward()
    """

# the file then uses the view: torch (and the core) raise in the file, at that line
USED_AFTER = EDITED_BASE + "w = v * 2\n"


def _write(tmp_path, source):
    path = tmp_path / "f.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def _tensors(report):
    keys = ("requires_grad", "is_leaf", "grad_fn", "next_functions", "version", "data")
    return {t["name"]: {k: t[k] for k in keys} for t in report["tensors"]}


def test_torch_refuses_the_views_grad_fn():
    ns = {}
    exec(textwrap.dedent(EDITED_BASE), ns)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        ns["v"].grad_fn


@pytest.mark.parametrize("source", [EDITED_BASE, USED_AFTER], ids=["edited", "used after"])
def test_both_backends_describe_the_view(tmp_path, source):
    path = _write(tmp_path, source)
    on_torch = run_file(path, backend="torch").report()
    on_core = run_file(path).report()
    assert _tensors(on_torch) == _tensors(on_core)
    assert _tensors(on_torch)["v"] == {"requires_grad": True, "is_leaf": True, "grad_fn": None,
                                       "next_functions": None, "version": 1,
                                       "data": [6.0, 6.0]}
    assert [(n["name"], n["tensor"], n["next_functions"]) for n in on_torch["nodes"]] == \
        [(n["name"], n["tensor"], n["next_functions"]) for n in on_core["nodes"]]


def test_the_cli_exits_as_on_the_core(tmp_path):
    from click.testing import CliRunner

    from gradviz_cli.main import cli

    path = _write(tmp_path, USED_AFTER)
    runner = CliRunner()
    on_torch = runner.invoke(cli, ["run", path, "--backend", "torch"])
    on_core = runner.invoke(cli, ["run", path])
    assert on_torch.exit_code == on_core.exit_code == 1
    assert "A view was created in no_grad mode" in on_torch.output
    assert "internal error" not in on_torch.output
