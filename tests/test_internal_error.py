"""An exception that escapes gradviz's own code (not the user's file) ends the command with one
paragraph on stderr and exit code 70 (README's table), never a Python traceback."""

import gradviz.inspect.report
from gradviz_cli import main as cli_main


def _broken(*args, **kwargs):
    raise RuntimeError("the report\nbroke")


def test_an_internal_error_is_one_paragraph_and_exit_code_70(tmp_path, monkeypatch, capsys):
    path = tmp_path / "prog.py"
    path.write_text("import torch\nx = torch.ones(2, requires_grad=True)\n")
    monkeypatch.setattr(gradviz.inspect.report, "report_json", _broken)
    code = cli_main._main(["run", "--json", str(path)])
    err = capsys.readouterr().err
    assert code == cli_main.EXIT_INTERNAL == 70
    assert err.splitlines()[0] == ("gradviz: internal error at test_internal_error.py:9: "
                                   "RuntimeError: the report broke")
    assert "Traceback" not in err and "bug in gradviz" in err


def test_the_readme_documents_exit_code_70():
    from pathlib import Path
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    assert "\n| 70 | an internal error" in readme
