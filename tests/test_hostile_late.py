"""Bad input that still got through after tests/test_hostile_leftovers.py (issue 12): what the
file writes to fd 1 after it ended, its own file objects on its stdout, __del__ and atexit
functions that Python runs at exit, `# coding:` lines Python ignores or words its own way,
signal handlers, gc callbacks and thread hooks that outlived the file. Each test failed before
its fix."""

import json
import os
import time

import pytest

from hostile import MODEL, gradviz, invoke, python, write


# ----- fd 1 after the file ended ---------------------------------------------------------------

# Writers that outlive the file, to fd 1 itself: a daemon thread's os.write, child processes
# and os.system's shells started by that thread, also once the file ended (fd 1 inherited).
LATE_WRITERS = {
    "thread": """
        import os, threading, time
        def w():
            while True:
                os.write(1, b"LATEWRITE\\n")
                time.sleep(0.0005)
    """,
    "child": """
        import subprocess, sys, threading, time
        def w():
            while True:
                subprocess.run([sys.executable, "-c", "print('LATEWRITE ' * 100)"])
    """,
    "system": """
        import os, threading, time
        def w():
            while True:
                os.system("echo LATEWRITE")
    """,
}


@pytest.mark.parametrize("writer", sorted(LATE_WRITERS))
@pytest.mark.parametrize("command", [["run", "--json"], ["graph", "-o", "-"]])
def test_nothing_written_to_fd_1_after_the_end_reaches_the_document(tmp_path, writer, command):
    # os.write(1, ...) after the file ended, or a process started then, landed in front of
    # (or inside) the JSON document or the DOT text: fd 1 was gradviz's stdout again
    source = LATE_WRITERS[writer] + """
        threading.Thread(target=w, daemon=True).start()
        import gradviz as torch
        x = torch.tensor([1.0], requires_grad=True)
        for _ in range(300):
            x = x * 1.0001
        loss = x.sum()
    """
    write(tmp_path, source)
    proc = gradviz(tmp_path, command[0], "prog.py", *command[1:])
    assert proc.returncode == 0, proc.stderr
    if command[0] == "run":
        json.loads(proc.stdout)
        assert proc.stdout.startswith(b'{\n  "file": "prog.py"')
    else:
        assert proc.stdout.startswith(b"digraph") and proc.stdout.rstrip().endswith(b"}")
        assert b"LATEWRITE" not in proc.stdout


def test_dev_stdout_as_an_output_still_reaches_standard_output(tmp_path):
    # fd 1 is the file's (then /dev/null) while gradviz runs: /dev/stdout must reach the
    # standard output gradviz was given, once, and -o - with it is one file named twice
    write(tmp_path, MODEL)
    proc = gradviz(tmp_path, "graph", "prog.py", "--dot", "/dev/stdout")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"digraph") and proc.stdout.count(b"digraph") == 1
    proc = gradviz(tmp_path, "graph", "prog.py", "--dot", "/dev/stdout", "-o", "-")
    assert proc.returncode == 2
    assert b"standard output is named by two outputs" in proc.stderr


# ----- the file's own objects on its stdout ------------------------------------------------------

FILE_OBJECTS = """
    import os, sys
    print("one")
    os.write(sys.stdout.fileno(), b"two\\n")
    print("three", file=open(sys.stdout.fileno(), "w", closefd=False))
    kept = open(sys.stdout.fileno(), "w", closefd=False)
    print("four", file=kept)
    print("five")
    copy = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    copy.write("six\\n")
    raw = os.dup(1)
"""


def test_file_objects_on_its_stdout_are_flushed_as_python_flushes_them(tmp_path):
    # "four" and "six", left in buffers Python flushes at exit, were lost; the copy of the
    # pipe the file kept open made gradviz wait a second and blame a child process
    path = write(tmp_path, FILE_OBJECTS)
    expected = python(tmp_path, path).stdout.decode()
    assert expected == "one\ntwo\nthree\nfive\nfour\nsix\n"
    document = json.loads(invoke("run", path, "--json").stdout)
    assert (document["stdout"], document["stdout_cut"]) == (expected, None)


# ----- what Python runs at exit ----------------------------------------------------------------

ATEXIT = """
    import atexit, os, sys
    import gradviz as torch
    x = torch.tensor([1.0], requires_grad=True)
    loss = (x * 2).sum()
    def fails():
        raise ValueError("fails at exit")
    atexit.register(fails)
    atexit.register(sys.exit, 3)
    atexit.register(print, "printed at exit")
    print("main")
"""


def test_atexit_functions_run_when_the_file_ends_as_under_python(tmp_path):
    # they ran when gradviz ended: after the report, their output on stderr, os._exit there
    # was gradviz's traceback (exit 0)
    path = write(tmp_path, ATEXIT)
    py = python(tmp_path, path)
    proc = gradviz(tmp_path, "run", "prog.py", "--json")
    assert proc.returncode == py.returncode == 0
    document = json.loads(proc.stdout)
    assert document["stdout"] == py.stdout.decode() == "main\nprinted at exit\n"
    shown = proc.stderr.decode()
    assert shown.count("Exception ignored in atexit callback") == 2
    assert "SystemExit: 3" in shown and "ValueError: fails at exit" in shown
    assert "gradviz" not in shown and "runner.py" not in shown


def test_os_exit_in_an_atexit_function_is_the_files_exit_code(tmp_path):
    write(tmp_path, MODEL + "import atexit, os\natexit.register(os._exit, 7)\n")
    assert python(tmp_path, tmp_path / "prog.py").returncode == 7
    proc = gradviz(tmp_path, "run", "prog.py", "--json")
    assert proc.returncode == 1, proc.stderr
    assert b"Traceback" not in proc.stderr
    document = json.loads(proc.stdout)
    assert (document["exit_code"], document["error"]["message"]) == \
        (7, "the file called os._exit(7)")
    proc = gradviz(tmp_path, "graph", "prog.py", "--dot", "g.dot")
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith("SystemExit: the file called os._exit(7) — drawing")


DEL_RAISES = """
    import gradviz as torch
    class Closer:
        def __del__(self):
            raise ValueError("closing \\x1b[2J failed")
    handle = Closer()
    x = torch.tensor([1.0], requires_grad=True)
    loss = (x * 2).sum()
"""


@pytest.mark.parametrize("command", [["run", "--json"], ["run"], ["graph", "-o", "-"]])
def test_a_del_that_raises_at_exit_is_shown_escaped_and_changes_no_exit_code(tmp_path,
                                                                              command):
    # Python prints "Exception ignored in: <function Closer.__del__ ...>" at exit; gradviz
    # kept the file's objects for its report and said nothing
    path = write(tmp_path, DEL_RAISES)
    py = python(tmp_path, path)
    assert py.returncode == 0 and b"Exception ignored in: <function Closer.__del__" in py.stderr
    proc = gradviz(tmp_path, command[0], "prog.py", *command[1:])
    assert proc.returncode == 0
    shown = proc.stderr.decode()
    assert shown.startswith("Exception ignored in: <function Closer.__del__ at 0x")
    assert shown.rstrip().endswith("ValueError: closing \\x1b[2J failed")
    assert "\x1b" not in shown and b"Exception" not in proc.stdout


# ----- `# coding:` lines -----------------------------------------------------------------------

CODINGS = {
    "cookie after code is ignored": b"x = 1\n# coding: bogus\nprint(x)\n",
    "latin-1 cookie after code": b"x = 1\n# coding: latin-1\nprint('caf\xe9')\n",
    "non-UTF-8 first line before a cookie": b"# caf\xe9\n# coding: latin-1\nprint(1)\n",
    "cookie line itself not UTF-8": b"\n# caf\xe9 coding: latin-1\nprint(1)\n",
    "BOM and latin-1": b"\xef\xbb\xbf# coding: latin_1\nprint(1)\n",
    "BOM and unknown": b"\xef\xbb\xbf# coding: bogus\nprint(1)\n",
    "BOM then cookie on line 2": b"\xef\xbb\xbf\n# coding: ascii\nprint(1)\n",
    "ascii cookie, not ascii": b"#\n#coding=ascii\nprint('caf\xc3\xa9')\n",
    "cp1252 cookie, undefined byte": b"# coding: cp1252\nprint('\x81')\n",
    "utf-8 cookie, bad byte in a comment": b"# coding: utf-8\n# caf\xe9\nprint(1)\n",
    "utf-8 cookie, bad byte in a string": b"# coding: utf-8\nprint(1)\ns = 'caf\xe9 ok'\n",
    "BOM, bad byte in a string": b"\xef\xbb\xbfprint(1)\ns = 'caf\xe9 ok'\n",
    "docstring first": b"'''\n# coding: bogus\n'''\nprint(1)\n",
    "carriage returns": b"#!/usr/bin/python\r# coding: bogus\rprint(1)\r",
}


@pytest.mark.parametrize("case", sorted(CODINGS))
def test_coding_lines_are_read_as_python_reads_them(tmp_path, case):
    # a cookie on line 2 after a line of code counted (Python ignores it); a BOM with another
    # cookie, a codec that fails and UTF-8 that only a string literal breaks were each worded
    # differently from `python file.py`, or refused what it runs
    path = tmp_path / "prog.py"
    path.write_bytes(CODINGS[case])
    py = python(tmp_path, path)
    document = json.loads(invoke("run", path, "--json").stdout)
    if py.returncode == 0:
        assert (document["error"], document["stdout"]) == (None, py.stdout.decode())
    else:
        said = py.stderr.decode().strip().splitlines()[-1]
        error = document["error"]
        assert f"{error['type']}: {error['message']}".replace(str(path), "P") == \
            said.replace(str(path), "P")
        assert error["line"] >= 1


# ----- what the file left running ---------------------------------------------------------------

def test_a_repeating_alarm_whose_handler_raises_does_not_reach_gradviz(tmp_path):
    # the file's SIGALRM handler raised in gradviz's report: "internal error", exit 70
    write(tmp_path, """
        import signal
        import gradviz as torch
        x = torch.tensor([1.0], requires_grad=True)
        loss = (x * 2).sum()
        def alarm(*args):
            raise RuntimeError("alarm")
        signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
    """)
    for command in (["run", "--json"], ["run"], ["check-inplace"]):
        proc = gradviz(tmp_path, command[0], "prog.py", *command[1:])
        assert proc.returncode in (0, 1), proc.stderr
        assert b"internal error" not in proc.stderr


def test_gc_callbacks_and_thread_hooks_of_the_file_end_with_it(tmp_path):
    # a raising gc callback printed its error at each of gradviz's collections, and a
    # threading.settrace hook ran in gradviz's own threads
    write(tmp_path, MODEL + """
import gc, threading
def callback(phase, info):
    raise RuntimeError("gc callback")
def hook(*args):
    raise RuntimeError("thread hook")
gc.callbacks.append(callback)
threading.settrace(hook)
threading.setprofile(hook)
gc.disable()
""")
    import gc
    import threading
    before = (list(gc.callbacks), threading.gettrace(), threading.getprofile(), gc.isenabled())
    document = json.loads(invoke("run", tmp_path / "prog.py", "--json").stdout)
    assert document["error"] is None
    assert (list(gc.callbacks), threading.gettrace(), threading.getprofile(),
            gc.isenabled()) == before


# ----- the parser's limits ---------------------------------------------------------------------

@pytest.mark.parametrize("source, error", [("x = " + "-" * 100000 + "1\n", "MemoryError"),
                                           ("x = " + "(" * 250 + "1" + ")" * 250 + "\n",
                                            "SyntaxError")])
def test_a_file_past_the_parsers_limits_is_the_files_error(tmp_path, monkeypatch, source,
                                                          error):
    # a MemoryError from compile() (`python file.py` prints "MemoryError") was gradviz's
    # "internal error", exit 70
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "prog.py"
    path.write_text(source)
    py = python(tmp_path, path)
    assert py.returncode == 1 and py.stderr.decode().strip().splitlines()[-1].startswith(error)
    for command in (["run", "--json"], ["check-inplace"], ["graph", "--dot", "g.dot"],
                    ["gradcheck"], ["explain", "x"]):
        r = invoke(command[0], path, *command[1:])
        assert r.exit_code == 1, (command, r.output)
        assert "internal error" not in r.stderr
    assert json.loads(invoke("run", path, "--json").stdout)["error"]["type"] == error


# ----- options given twice ---------------------------------------------------------------------

@pytest.mark.parametrize("args, option", [
    (["graph", "FILE", "--svg", "a.svg", "--svg", "b.svg"], "--svg"),
    (["graph", "FILE", "-o", "a.dot", "-o", "-"], "-o/--output"),
    (["graph", "FILE", "--dot", "a.dot", "--output=b.dot", "-o", "c.dot"], "-o/--output"),
    (["run", "FILE", "--backend", "torch", "--backend=gradviz"], "--backend"),
    (["report", "FILE", "-o", "a.html", "-o", "b.html"], "-o/--output"),
    (["gradcheck", "FILE", "--eps", "1e-3", "--eps", "1e-4"], "--eps"),
    (["explain", "FILE", "a", "--root", "loss", "--root", "a"], "--root"),
    (["check-inplace", "FILE", "--backend", "gradviz", "--backend", "gradviz"], "--backend")])
def test_an_option_that_takes_one_value_refuses_a_second(tmp_path, monkeypatch, args, option):
    # click kept the last value without a word: --svg a.svg --svg b.svg wrote b.svg only,
    # -o a.dot -o - only stdout, --backend torch --backend gradviz ran on gradviz
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, MODEL)
    r = invoke(*[path if a == "FILE" else a for a in args])
    assert r.exit_code == 2
    assert r.stderr.endswith(f"Error: Option '{option}' is given more than once; it takes one "
                             "value\n")
    assert sorted(os.listdir(tmp_path)) == ["prog.py"]


def test_repeatable_options_and_flags_may_still_repeat(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, MODEL)
    r = invoke("graph", path, "--root", "loss", "--root", "loss", "--no-legend", "--no-legend",
               "-o", "-")
    assert r.exit_code == 0 and r.stdout.startswith("digraph")


# ----- gradcheck of a complex leaf ----------------------------------------------------------------

def test_gradcheck_does_not_pass_a_complex_leaf_it_read_as_real(tmp_path):
    # its values were read as float64 (NumPy's ComplexWarning on stderr, the imaginary parts
    # dropped) and "all gradients match" followed
    pytest.importorskip("torch")
    write(tmp_path, """
        import torch
        x = torch.tensor([1.0 + 2.0j, 3.0 - 1.0j], requires_grad=True)
        loss = (x * x.conj()).real.sum()
    """)
    r = invoke("gradcheck", tmp_path / "prog.py", "--backend", "torch", "--json")
    assert r.exit_code == 1
    leaf = json.loads(r.stdout)["roots"][0]["leaves"][0]
    assert (leaf["status"], leaf["checked"]) == ("skipped", 0)
    assert leaf["skipped"].startswith("'x' is complex (torch.complex128)")
    assert "ComplexWarning" not in r.stderr


# ----- descriptors, the import system, os._exit from a thread -----------------------------------

def test_a_file_that_closes_every_descriptor_above_2_gets_its_report(tmp_path):
    # os.closerange(3, 65536), as daemon code does, closed gradviz's own stdout and the
    # capture's pipe: "internal error" or "cannot write to standard output"; under python
    # those descriptors do not exist (os.close of one is EBADF)
    write(tmp_path, MODEL + "import os\nos.closerange(3, 65536)\n"
                            "try:\n    os.close(70000)\nexcept OSError as e:\n    print(e.errno)\n")
    proc = gradviz(tmp_path, "run", "prog.py", "--json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert (document["error"], document["stdout"]) == (None, "9\n")
    proc = gradviz(tmp_path, "graph", "prog.py", "-o", "-")
    assert proc.returncode == 0 and proc.stdout.startswith(b"digraph"), proc.stderr


@pytest.mark.parametrize("change", [
    "class Evil:\n    def find_spec(self, *a, **k):\n        raise ImportError('evil')\n"
    "sys.meta_path.insert(0, Evil())\n",
    "sys.path_hooks.clear()\nsys.path_importer_cache.clear()\n",
    "import gc\ngc.set_debug(gc.DEBUG_STATS)\n"])
def test_import_machinery_and_gc_debugging_of_the_file_end_with_it(tmp_path, change):
    # gradviz imports its tables' renderer after the file: a finder that raised, or no path
    # hooks, made that an internal error; gc's debug output filled stderr
    write(tmp_path, MODEL + "import sys\n" + change)
    proc = gradviz(tmp_path, "run", "prog.py")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b"" and b"MulBackward0" in proc.stdout


def test_os_exit_from_a_thread_ends_the_file_and_gets_its_report(tmp_path):
    # a watchdog thread's os._exit killed gradviz: exit 9, no document at all
    write(tmp_path, """
        import os, threading, time
        import gradviz as torch
        x = torch.tensor([1.0], requires_grad=True)
        loss = (x * 2).sum()
        def dog():
            time.sleep(0.2)
            os._exit(9)
        threading.Thread(target=dog, daemon=True).start()
        time.sleep(60)
        print("never")
    """)
    started = time.monotonic()
    proc = gradviz(tmp_path, "run", "prog.py", "--json")
    # as under python, the file ends at the thread's os._exit, not after the main thread's
    # 60 s sleep
    assert time.monotonic() - started < 30
    assert proc.returncode == 1, proc.stderr
    document = json.loads(proc.stdout)
    assert (document["exit_code"], document["error"]["message"], document["error"]["line"]) \
        == (9, "the file called os._exit(9)", 10)
    assert document["stdout"] == ""


def test_os_exit_from_a_thread_after_the_file_ended_ends_only_that_thread(tmp_path):
    # python file.py had stopped the thread at exit; under gradviz it killed the report
    write(tmp_path, MODEL + """
import os, threading, time
def dog():
    time.sleep(0.01)
    os._exit(9)
threading.Thread(target=dog, daemon=True).start()
""")
    for command in (["run", "--json"], ["graph", "-o", "-"]):
        proc = gradviz(tmp_path, command[0], "prog.py", *command[1:])
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.rstrip().endswith(b"}")


def test_a_daemon_thread_spinning_in_python_does_not_hold_up_the_report(tmp_path):
    # python file.py exits at once; gradviz hung 1,000 s (its report gave the interpreter to
    # whichever thread took it next, for that long, and SIGTERM waited too)
    write(tmp_path, MODEL + """
import threading
def spin():
    while True:
        pass
threading.Thread(target=spin, daemon=True).start()
""")
    started = time.monotonic()
    proc = gradviz(tmp_path, "run", "prog.py", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["exit_code"] == 0
    assert time.monotonic() - started < 60
