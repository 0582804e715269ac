"""The user's file runs as `python file.py` would: a real __main__ module, Python's decoding of
the source, stdout captured at the file descriptor, warnings kept in order, and whatever the file
changed in the interpreter put back (issue 12, issue 13)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from gradviz.inspect import run_file
from gradviz.inspect.runner import collapse_repeats
from gradviz_cli.main import cli

GRADVIZ = os.path.join(os.path.dirname(sys.executable), "gradviz")


def write(tmp_path, source, name="prog.py", raw=None):
    path = tmp_path / name
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    return str(path)


def gradviz(*args, cwd=None, stdin=None):
    """The real command in a fresh process: fd 1 is a real pipe there."""
    return subprocess.run([GRADVIZ, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, stdin=stdin)


def json_run(path, *more):
    r = gradviz("run", path, "--json", *more)
    return r, json.loads(r.stdout)


# ----- __main__ is a real module --------------------------------------------------------------

def test_main_guard_and_pickling_of_functions_defined_in_the_file(tmp_path):
    path = write(tmp_path, """
        import pickle
        import sys

        def square(v):
            return v * v

        if __name__ == "__main__":
            back = pickle.loads(pickle.dumps(square))
            print(back(7), sys.modules["__main__"].__file__ == __file__)
    """)
    run = run_file(path)
    assert run.error is None
    assert run.stdout == "49 True\n"
    assert sys.modules["__main__"].__name__ != "prog"


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_multiprocessing_pool_runs_functions_of_the_file(tmp_path, method):
    path = write(tmp_path, f"""
        import multiprocessing as mp
        import gradviz as torch

        def work(v):
            return float((torch.tensor(float(v)) * 2).item())

        if __name__ == "__main__":
            with mp.get_context("{method}").Pool(2) as pool:
                print(pool.map(work, [1, 2, 3]))
    """)
    r, doc = json_run(path)
    assert r.returncode == 0, r.stderr
    assert doc["stdout"] == "[2.0, 4.0, 6.0]\n"
    assert doc["error"] is None


def test_a_forked_child_that_returns_does_not_write_the_report_again(tmp_path):
    path = write(tmp_path, """
        import os
        pid = os.fork()
        if pid == 0:
            print("child")
        else:
            os.waitpid(pid, 0)
            print("parent")
    """)
    out = tmp_path / "g.dot"
    r = gradviz("run", path, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)        # exactly one document
    assert doc["stdout"] == "child\nparent\n"
    r = gradviz("graph", path, "--dot", str(out))
    assert r.returncode == 3 or r.stderr.count("wrote") == 1, r.stderr
    assert r.stdout == ""


# ----- reading the source as Python does ------------------------------------------------------

def test_utf8_bom_and_coding_line(tmp_path):
    bom = write(tmp_path, None, "bom.py", raw=b"\xef\xbb\xbfprint('bom ok')\n")
    assert run_file(bom).stdout == "bom ok\n"
    latin = write(tmp_path, None, "latin.py",
                  raw="# -*- coding: latin-1 -*-\nprint('café')\n".encode("latin-1"))
    run = run_file(latin)
    assert run.error is None and run.stdout == "café\n"


def test_non_utf8_file_error_names_the_line(tmp_path):
    path = write(tmp_path, None, "bad.py", raw=b"x = 1\ny = 2\nname = 'caf\xe9'\n")
    r, doc = json_run(path)
    assert r.returncode == 1
    e = doc["error"]
    assert e["type"] == "SyntaxError" and e["line"] == 3
    assert e["message"] == (f"Non-UTF-8 code starting with '\\xe9' in file {path} on line 3, "
                            "but no encoding declared; see https://peps.python.org/pep-0263/ "
                            "for details")


# ----- nothing but the document on stdout -----------------------------------------------------

def test_json_stdout_holds_only_the_document(tmp_path):
    path = write(tmp_path, """
        import os, subprocess, sys, threading, time
        print("print")
        os.write(1, b"os.write\\n")
        subprocess.run([sys.executable, "-c", "print('child process')"])

        def late():
            time.sleep(0.2)
            print("late thread")

        threading.Thread(target=late).start()
    """)
    r, doc = json_run(path)
    assert r.returncode == 0
    assert doc["stdout"] == "print\nos.write\nchild process\nlate thread\n"


def test_hook_prints_of_graph_backward_stay_out_of_the_dot(tmp_path):
    path = write(tmp_path, """
        import gradviz as torch
        x = torch.tensor(2.0, requires_grad=True)
        x.register_hook(lambda g: print("hook saw", g))
        y = x * 3
    """)
    r = gradviz("graph", path, "--backward", "y", "-o", "-")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("digraph")
    assert "hook saw" not in r.stdout


def test_warnings_go_in_the_output_frame_and_the_json(tmp_path):
    path = write(tmp_path, """
        import warnings
        import gradviz as torch
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        print("before")
        y.grad
        warnings.warn("mine")
        print("after")
    """)
    r, doc = json_run(path)
    assert r.returncode == 0 and r.stderr == ""
    assert [(w["category"], w["line"]) for w in doc["warnings"]] == [("UserWarning", 7),
                                                                     ("UserWarning", 8)]
    assert doc["warnings"][1]["message"] == "mine"
    assert doc["stdout"] == "before\nafter\n"
    r = gradviz("run", "prog.py", "--no-color", cwd=str(tmp_path))
    assert r.stderr == ""
    lines = [line.strip("│ ").rstrip() for line in r.stdout.splitlines()[1:]]
    assert lines[0].startswith("╭─ output of prog.py")
    assert lines[1] == "before"
    assert lines[2].startswith("prog.py:7: UserWarning: The .grad attribute of a Tensor that "
                               "is not a leaf")
    assert lines.index("prog.py:8: UserWarning: mine") == lines.index("after") - 2


def test_long_output_shows_head_and_tail(tmp_path):
    path = write(tmp_path, "for i in range(1000):\n    print('line', i)\n")
    r = CliRunner().invoke(cli, ["run", path, "--no-color"], catch_exceptions=False)
    assert r.exit_code == 0
    rows = [line[2:-2].rstrip() for line in r.stdout.splitlines() if line.startswith("│")]
    assert rows[:2] == ["line 0", "line 1"] and rows[49] == "line 49"
    assert rows[50] == "… 930 more lines — --full or --json for all"
    assert rows[51:] == [f"line {i}" for i in range(980, 1000)]
    full = CliRunner().invoke(cli, ["run", path, "--no-color", "--full"])
    assert sum(1 for line in full.stdout.splitlines() if line.startswith("│")) == 1000


# ----- what the file changes is put back ------------------------------------------------------

def test_stdout_recursion_limit_and_cwd_are_restored(tmp_path):
    path = write(tmp_path, """
        import os, sys
        print("shown")
        sys.setrecursionlimit(80)
        os.chdir("/")
        sys.stdout.close()
    """)
    cwd, limit, stdout = os.getcwd(), sys.getrecursionlimit(), sys.stdout
    run = run_file(path)
    assert run.error is None and run.stdout == "shown\n"
    assert (os.getcwd(), sys.getrecursionlimit(), sys.stdout) == (cwd, limit, stdout)


def test_replaced_stdout_and_relative_output_path(tmp_path):
    (tmp_path / "sub").mkdir()
    path = write(tmp_path / "sub", """
        import io, os, sys
        import gradviz as torch
        os.chdir("/")
        sys.stdout = io.StringIO()
        x = torch.ones(1, requires_grad=True)
        y = x * 2
    """)
    r = gradviz("graph", path, "--dot", "out.dot", cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.dot").read_text().startswith("digraph")


@pytest.mark.parametrize("shadow", ["rich", "graphviz", "click"])
def test_user_modules_named_like_gradviz_dependencies(tmp_path, shadow):
    (tmp_path / f"{shadow}.py").write_text("VALUE = 'the user module'\n")
    path = write(tmp_path, f"""
        import {shadow}
        import gradviz as torch
        print({shadow}.VALUE)
        x = torch.ones(2, requires_grad=True)
        y = (x * 2).sum()
    """)
    r = gradviz("run", path, "--no-color", cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "the user module" in r.stdout and "SumBackward0" in r.stdout
    r = gradviz("graph", path, "--dot", str(tmp_path / "g.dot"), cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr


# ----- exits, input, recursion ----------------------------------------------------------------

@pytest.mark.parametrize("call, code, message", [
    ("sys.exit(3)", 3, "the file called sys.exit(3)"),
    ("os._exit(4)", 4, "the file called os._exit(4)"),
    ("sys.exit('bye')", 1, "the file called sys.exit('bye')"),
])
def test_exit_codes_are_reported(tmp_path, call, code, message):
    path = write(tmp_path, f"""
        import os, sys
        import gradviz as torch
        x = torch.ones(1, requires_grad=True)
        print("before")
        {call}
        print("never")
    """)
    r, doc = json_run(path)
    assert r.returncode == 1
    assert doc["exit_code"] == code
    assert doc["error"]["message"] == message and doc["error"]["line"] == 6
    assert doc["stdout"] == "before\n"
    assert [t["name"] for t in doc["tensors"]] == ["x"]


def test_clean_exits_are_not_errors(tmp_path):
    for call in ("sys.exit()", "sys.exit(0)", "os._exit(0)"):
        path = write(tmp_path, f"import os, sys\nprint('a')\n{call}\nprint('b')\n")
        r, doc = json_run(path)
        assert r.returncode == 0 and doc["error"] is None and doc["exit_code"] == 0
        assert doc["stdout"] == "a\n"


def test_input_reads_stdin_and_keeps_the_prompt_in_the_output(tmp_path):
    path = write(tmp_path, "name = input('name? ')\nprint('hello', name)\n")
    r = subprocess.run([GRADVIZ, "run", path, "--json"],
                       input="ada\n", capture_output=True, text=True, timeout=60)
    assert json.loads(r.stdout)["stdout"] == "name? hello ada\n"


def test_recursion_error_is_collapsed(tmp_path):
    path = write(tmp_path, """
        def f(n):
            return f(n + 1)

        f(0)
    """)
    r, doc = json_run(path)
    e = doc["error"]
    assert e["type"] == "RecursionError"
    assert len(e["traceback"]) == 5
    assert e["traceback"][4]["frames"] == 1 and e["traceback"][4]["repeated"] > 900
    # named from its folder, so the frames' lines fit the box whatever the temporary path
    r = gradviz("run", "prog.py", "--no-color", cwd=tmp_path)
    assert "[Previous line repeated" in r.stdout
    assert r.stdout.count('File "prog.py", line 3, in f') == 3


def test_collapse_repeats_handles_cycles():
    frames = [{"line": 1}] + [{"line": 2}, {"line": 3}] * 50 + [{"line": 4}]
    out = collapse_repeats(frames)
    assert out == [{"line": 1}, {"line": 2}, {"line": 3}, {"repeated": 49, "frames": 2},
                   {"line": 4}]
    assert collapse_repeats([{"line": 1}, {"line": 1}, {"line": 1}]) == [{"line": 1}] * 3


def test_input_on_a_terminal_shows_the_prompt_there(tmp_path):
    import pty
    import select
    path = write(tmp_path, "name = input('name? ')\nprint('hello', name)\n")
    master, slave = pty.openpty()
    proc = subprocess.Popen([GRADVIZ, "run", path, "--json"], stdin=slave, stderr=slave,
                            stdout=subprocess.PIPE, text=True)
    os.close(slave)
    seen = b""
    while b"name? " not in seen:
        ready, _, _ = select.select([master], [], [], 30)
        assert ready, f"no prompt on the terminal (saw {seen!r})"
        seen += os.read(master, 1024)
    os.write(master, b"ada\n")
    out, _ = proc.communicate(timeout=60)
    os.close(master)
    doc = json.loads(out)
    assert doc["stdout"] == "hello ada\n"        # the prompt went to the terminal, not stdout


def test_the_file_sees_the_collector_as_under_python(tmp_path):
    # nothing of the heap is frozen or hidden while the file runs: memory-debugging code that
    # asks the collector for referrers finds the module's globals, as under plain Python
    path = write(tmp_path, """
        import gc

        class Node:
            pass

        kept = Node()
        frozen = gc.get_freeze_count()
        found = any(r is globals() for r in gc.get_referrers(kept))
    """)
    import gc
    gc.unfreeze()       # an in-process CLI test may have left its exit-time freeze behind
    run = run_file(path)
    assert run.error is None
    assert run.namespace["frozen"] == 0 and run.namespace["found"]
