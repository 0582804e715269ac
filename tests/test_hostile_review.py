"""Bad input that still got through after tests/test_hostile_late.py (issue 12): standard
streams Python cannot flush at exit, paths the system refuses for another reason than a missing
file, names with control characters in messages, and a missing name of torch.utils.data (or
another torch module) named in gradviz's module's name. Each test failed before its fix."""

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

import gradviz
from gradviz_cli.main import cli
from hostile import MODEL, PATIENCE, invoke, python_status, write


# ----- A standard stream Python cannot flush at exit -------------------------------------------

@pytest.mark.parametrize("body, status, error", [
    ("sys.stdout = 42", 120, "AttributeError"),
    ("sys.stderr = 42", 120, "AttributeError"),
    ("sys.stdout = 42\nsys.exit(3)", 120, "SystemExit"),
    ("sys.stdout = 42\n1 / 0", 120, "ZeroDivisionError"),
    ("sys.stdout = 42\nos._exit(4)", 4, "SystemExit"),        # os._exit flushes nothing
    ("sys.stdout = 42\nraise KeyboardInterrupt", 130, "KeyboardInterrupt"),
    ("sys.stdout = None", 0, None),
    ("sys.stdout.close()", 0, None),
])
def test_a_stream_python_cannot_flush_at_exit_is_exit_120(tmp_path, body, status, error):
    # `sys.stdout = 42`: python says "Exception ignored in: 42" and exits 120; gradviz said
    # nothing and reported a clean run
    path = write(tmp_path, f"import os, sys\nprint('hi')\n{body}\n")
    code = python_status(path)[0]
    assert (128 - code if code < 0 else code) == status      # -2: killed by SIGINT, 130
    r = invoke("run", path, "--json")
    document = json.loads(r.stdout)
    assert document["exit_code"] == status
    assert r.exit_code == (0 if error is None else 1)
    assert (document["error"] and document["error"]["type"]) == error
    if body == "sys.stdout = 42":
        assert document["error"]["message"] == (
            "'int' object has no attribute 'flush' (Exception ignored in: 42: python cannot "
            "flush the file's sys.stdout at exit, and exits 120)")


def test_a_flush_that_raises_is_located_in_the_file(tmp_path):
    path = write(tmp_path, """\
        import sys
        class Out:
            def write(self, text):
                return len(text)
            def flush(self):
                raise ValueError("no flush")
        sys.stdout = Out()
    """)
    status, stderr = python_status(path)
    assert status == 120 and "ValueError: no flush" in stderr
    error = json.loads(invoke("run", path, "--json").stdout)["error"]
    assert (error["type"], error["line"]) == ("ValueError", 6)
    assert error["message"].startswith("no flush (Exception ignored in: <__main__.Out object")


# ----- A path the system refuses ---------------------------------------------------------------

@pytest.mark.parametrize("command", [["run"], ["graph", "--dot", "-"], ["check-inplace"],
                                     ["explain", "FILE", "a"], ["gradcheck"]])
def test_a_symlink_loop_is_not_called_a_missing_file(tmp_path, monkeypatch, command):
    # "no such file: loop.py"; python: "[Errno 40] Too many levels of symbolic links"
    monkeypatch.chdir(tmp_path)
    os.symlink("b.py", tmp_path / "a.py")
    os.symlink("a.py", tmp_path / "b.py")
    args = [command[0], "a.py"] + [a for a in command[1:] if a != "FILE"]
    r = invoke(*args)
    assert r.exit_code == 2
    assert r.stderr.endswith("Error: cannot open a.py: Too many levels of symbolic links\n")


def test_a_file_taken_for_a_folder_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, MODEL)
    r = invoke("run", "prog.py/x.py")
    assert r.exit_code == 2
    assert r.stderr.endswith("Error: cannot open prog.py/x.py: Not a directory\n")


# ----- A name with control characters ----------------------------------------------------------

@pytest.mark.parametrize("args", [["explain", "FILE", "x\ny"], ["explain", "FILE", "a", "--root",
                                                                 "x\ny"],
                                  ["run", "FILE", "--backward", "x\ny"],
                                  ["gradcheck", "FILE", "--root", "x\ny"]])
def test_a_name_with_a_newline_is_shown_escaped(tmp_path, args):
    # "no tensor named 'x<newline>y'": the name broke the message's line, as a terminal would
    # show any control character it holds
    path = write(tmp_path, MODEL)
    r = invoke(*[path if a == "FILE" else a for a in args])
    assert r.exit_code == 2
    assert "'x\\ny'" in r.stderr
    assert "x\ny" not in r.stdout + r.stderr


# ----- A name the core lacks in a torch module -------------------------------------------------

@pytest.mark.parametrize("where, name", [("utils.data", "WeightedRandomSampler"),
                                         ("utils", "checkpoint"), ("nn.init", "trunc_normal"),
                                         ("optim.lr_scheduler", "no_such_scheduler")])
def test_a_missing_name_is_named_in_torchs_module(where, name):
    # "module 'gradviz.utils.data' has no attribute 'WeightedRandomSampler'": not the module
    # the user wrote, and no word of --backend torch
    module = gradviz
    for part in where.split("."):
        module = getattr(module, part)
    with pytest.raises(AttributeError) as info:
        getattr(module, name)
    message = str(info.value)
    assert "gradviz" not in message.replace("gradviz's core", "")
    torch = pytest.importorskip("torch")
    import torch.utils.data  # noqa: F401 - torch.utils.data is imported on demand
    real = torch
    for part in where.split("."):
        real = getattr(real, part)
    if hasattr(real, name):
        assert message.startswith(f"gradviz's core does not implement torch.{where}.{name} "
                                  "(PyTorch 2.13")
        assert "run with --backend torch" in message
    else:
        assert message.startswith(f"module 'torch.{where}' has no attribute '{name}'")


def test_a_missing_name_of_torch_utils_data_in_a_run(tmp_path):
    path = write(tmp_path, "import torch\nsampler = torch.utils.data.WeightedRandomSampler\n")
    error = json.loads(invoke("run", path, "--json").stdout)["error"]
    assert (error["type"], error["line"]) == ("AttributeError", 2)
    assert error["message"].startswith("gradviz's core does not implement "
                                       "torch.utils.data.WeightedRandomSampler")


# ----- A big literal ---------------------------------------------------------------------------

def test_the_report_parses_the_file_once(tmp_path, monkeypatch):
    # A 6 MB list literal: the loops and the assignment lines each parsed the file and walked
    # every number (ast.walk), and `run` took 2.6 times as long as python (1.6 times now)
    import ast
    path = write(tmp_path, "import gradviz as torch\nx = torch.tensor([" +
                 ", ".join(["1.5"] * 2000) + "], requires_grad=True)\n"
                 "for i in range(2):\n    y = (x * i).sum()\n")
    parses = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *a, **k: parses.append(1) or real(*a, **k))
    r = invoke("run", path, "--json")
    assert r.exit_code == 0
    assert len(parses) == 1
    tensors = json.loads(r.stdout)["tensors"]
    assert [(t["name"], t["line"]) for t in tensors] == [("x", 2), ("y", 4), ("mul(x, …)", 4)]


def test_gradviz_runs_under_a_profiler(tmp_path):
    # `python -m cProfile ... gradviz run`: putting back the profiler's hook after the file ran
    # failed ("'Profile' object is not callable"), an internal error
    write(tmp_path, MODEL)
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(tmp_path / "p.out"), "-m",
                           "gradviz_cli.main", "run", "prog.py", "--json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=PATIENCE)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["error"] is None


# ----- A file name with a newline --------------------------------------------------------------

RAISES = MODEL + "raise ValueError('stop')\n"


@pytest.mark.parametrize("command, source", [
    (["run"], MODEL), (["run"], RAISES), (["check-inplace"], RAISES), (["gradcheck"], RAISES),
    (["graph", "--dot", "g.dot"], RAISES), (["graph", "--dot", "g.dot"], "x = 1\n"),
    (["report", "-o", "r.html"], RAISES), (["run"], None)])
def test_a_file_name_with_a_newline_is_shown_escaped(tmp_path, monkeypatch, command, source):
    # "gradviz run a<newline>b.py", "(a<newline>b.py:4)": the path broke the line it is in
    monkeypatch.chdir(tmp_path)
    if source is not None:
        write(tmp_path, source, name="a\nb.py")
    r = invoke(command[0], "a\nb.py", *command[1:])
    assert r.exit_code == (2 if source is None else 1 if source == RAISES else 0)
    assert "a\\nb.py" in r.stdout + r.stderr
    assert "a\nb.py" not in r.stdout + r.stderr


# ----- A file that rewrites itself -------------------------------------------------------------

def test_gradcheck_runs_the_file_as_it_was_when_it_started(tmp_path):
    # gradcheck runs the file once per moved element: each run read the file again, and a
    # file that rewrote itself (x * x into x * 3) was judged "not differentiable"
    path = write(tmp_path, MODEL.replace("a * 3", "a * a") +
                 "src = open(__file__).read()\n"
                 "open(__file__, 'w').write(src.replace('a * a', 'a * 3'))\n")
    r = invoke("gradcheck", path, "--json")
    result = json.loads(r.stdout)
    assert (r.exit_code, result["verdict"]) == (0, "match")


@pytest.mark.parametrize("name", ["missing.py", "folder", "notes.txt"])
def test_run_prints_no_header_for_a_file_it_cannot_run(tmp_path, monkeypatch, name):
    # "gradviz run missing.py" went to stdout (`> out.txt` kept it) before the usage error
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "notes.txt").write_text("x = 1\n")
    r = invoke("run", name)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.startswith("Error: ")


@pytest.mark.parametrize("tail, stdout", [("", "x\n"), ("sys.stdout.detach()\n", "x\n"),
                                          ("sys.stdout.detach().write(b'raw\\n')\n", "x\nraw\n")])
def test_a_detached_stdout_is_the_files_exit_120(tmp_path, tail, stdout):
    # sys.stdout.detach(): "gradviz: internal error at runner.py: AttributeError: 'NoneType'
    # object has no attribute 'raw'", exit 70; python exits 120 (its stdout cannot be flushed)
    path = write(tmp_path, "import sys\nprint('x')\n" + tail)
    status = 120 if tail else 0
    assert python_status(path)[0] == status
    r = invoke("run", path, "--json")
    document = json.loads(r.stdout)
    assert (document["exit_code"], document["stdout"]) == (status, stdout)
    if tail:
        assert document["error"]["message"].startswith("underlying buffer has been detached")


def test_gradient_needs_backward(tmp_path):
    # `run f.py --gradient ones` without --backward: ignored, exit 0, as if it had been used
    path = write(tmp_path, MODEL)
    r = CliRunner().invoke(cli, ["run", str(path), "--gradient", "ones"])
    assert r.exit_code == 2
    assert r.stderr.endswith("Error: --gradient ones goes with --backward NAME (the gradient of "
                             "that root)\n")
    assert invoke("run", path, "--gradient", "ones", "--backward", "loss").exit_code == 0


# ----- One very long line of output ------------------------------------------------------------

def test_a_very_long_line_shows_its_start_and_says_how_much_more():
    # `print("x" * 5_000_000)`: wrapped into 50,000 rows of the frame, 50 s (python: 0.05 s)
    import io
    from rich.console import Console
    from gradviz.render.text import OutputFrame
    console = Console(file=io.StringIO(), width=40, no_color=True)
    frame = OutputFrame(console, "f.py", head=2, tail=1, rows=2)
    frame.write("stdout", "a" * 200 + "\nshort\n" + "b" * 100 + "\n" + "c" * 90)
    frame.write("stdout", "c" * 50 + "\nlast")
    frame.write("stdout", "d" * 500)
    frame.close()
    assert console.file.getvalue() == (
        "╭─ output of f.py ─────────────────────╮\n"
        "│ " + "a" * 36 + " │\n"
        "│ " + "a" * 36 + " │\n"
        "│ … 128 more characters on this line — │\n"
        "│ --full or --json for all             │\n"
        "│ short                                │\n"
        "│ … 2 more lines — --full or --json    │\n"
        "│ for all                              │\n"
        "│ last" + "d" * 32 + " │\n"
        "│ " + "d" * 36 + " │\n"
        "│ … 432 more characters on this line — │\n"
        "│ --full or --json for all             │\n"
        "╰──────────────────────────────────────╯\n")


SINK_FAILS = """
import sys
from gradviz.inspect.runner import execute_file
def sink(stream, text):
    raise LookupError("the sink failed")
try:
    execute_file(sys.argv[1], sink=sink)
except LookupError as exc:
    print("raised:", exc)
"""


def test_a_sink_that_raises_is_said_and_the_file_is_not_left_waiting(tmp_path):
    # the reader thread died with the sink's error: the file's output was lost without a word,
    # and a file printing more than the pipe holds waited for a reader forever
    path = write(tmp_path, "for i in range(20000):\n    print('line', i)\n")
    proc = subprocess.run([sys.executable, "-c", SINK_FAILS, str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout == "raised: the sink failed\n", proc.stderr
