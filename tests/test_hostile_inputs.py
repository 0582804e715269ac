"""Bad input that still got through (issue 12): each test is one class of it, failing before
its fix. Files whose exception cannot be printed, exit statuses Python gives differently,
a file that changes the interpreter gradviz goes on to use, outputs over source files,
renderers that lie or leave children, verdicts on what never ran or was computed in float32."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from hostile import PATIENCE, MODEL, alive, gradviz, invoke, python_status, start_gradviz, write
from test_render_svg import fake_renderer


# ----- An exception that cannot be printed ------------------------------------------------------

UNPRINTABLE = """\
    import gradviz as torch
    class Bad(Exception):
        def __str__(self):
            raise RuntimeError("str fails")
        def __repr__(self):
            raise RuntimeError("repr fails")
    a = torch.tensor(2.0, requires_grad=True)
    loss = a * 3
    raise Bad()
"""


@pytest.mark.parametrize("command", [["run"], ["run", "--json"], ["graph", "--dot", "g.dot"],
                                     ["check-inplace"], ["explain", "FILE", "a"],
                                     ["gradcheck"], ["report", "-o", "r.html"]])
def test_an_exception_whose_str_raises_is_the_files_error(tmp_path, monkeypatch, command):
    # gradviz itself crashed on str(exc): "internal error at prog.py:4", exit 70, every command
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, UNPRINTABLE)
    args = [command[0], path] + [a for a in command[1:] if a != "FILE"]
    r = invoke(*args)
    assert r.exit_code == 1, r.output
    shown = r.stdout + r.stderr
    if command[0] == "report":
        shown = (tmp_path / "r.html").read_text()
    elif command[0] == "graph":
        assert (tmp_path / "g.dot").exists()
    # Python's own words for it, with the line that raised
    if command == ["run", "--json"]:
        error = json.loads(r.stdout)["error"]
        assert (error["type"], error["message"], error["line"]) == \
            ("Bad", "<exception str() failed>", 9)
    elif command[0] == "report":
        assert '"type": "Bad", "message": "\\u003cexception str() failed\\u003e"' in shown
    else:
        assert "Bad: <exception str() failed>" in " ".join(shown.split()), shown


def test_sys_exit_with_an_unprintable_code(tmp_path):
    path = write(tmp_path, """\
        import sys
        class Code:
            def __repr__(self):
                raise RuntimeError("repr fails")
        sys.exit(Code())
    """)
    r = invoke("run", path, "--json")
    assert r.exit_code == 1
    error = json.loads(r.stdout)["error"]
    assert error["message"] == "the file called sys.exit(<Code object: repr() failed>)"
    assert error["line"] == 5


# ----- Exit statuses as Python gives them ------------------------------------------------------

@pytest.mark.parametrize("call, failed", [("sys.exit(2 ** 70)", True), ("sys.exit(-1)", True),
                                          ("sys.exit(256)", False), ("os._exit(256)", False),
                                          ("os._exit(2 ** 40)", True), ("os._exit(-1)", True)])
def test_the_exit_status_is_the_one_python_gives(tmp_path, call, failed):
    # sys.exit(2**70) was exit status 0 (code & 0xFF), reported as a clean run; os._exit(256)
    # was status 256 (Python: 0); os._exit(2**40) exited, where Python raises OverflowError
    path = write(tmp_path, f"import os, sys\n{call}\n")
    status, _ = python_status(path)
    r = invoke("run", path, "--json")
    document = json.loads(r.stdout)
    assert r.exit_code == (1 if failed else 0)
    if call.startswith("os._exit(2 ** 40)"):
        assert status == 1 and "OverflowError" in _
        assert document["error"]["type"] == "OverflowError"
        return
    assert document["exit_code"] == status
    assert (document["error"] is not None) == failed


# ----- What the file changes in the interpreter is put back ------------------------------------

STATE = """
import builtins, json, os, signal, sys
import numpy as np
from gradviz.inspect import run_file

def state():
    mask = os.umask(0o022)
    os.umask(mask)
    return {"print": builtins.print is PRINT, "len": builtins.len is LEN,
            "extra": hasattr(builtins, "added_by_file"), "rich": sys.modules.get("json") is JSON,
            "term": repr(signal.getsignal(signal.SIGTERM)),
            "int": repr(signal.getsignal(signal.SIGINT)),
            "alarm": signal.getitimer(signal.ITIMER_REAL)[0] > 0, "umask": mask,
            "trace": sys.gettrace() is None, "profile": sys.getprofile() is None,
            "columns": os.environ.get("COLUMNS"), "dot": os.environ.get("GRADVIZ_DOT"),
            "divide": np.geterr()["divide"], "precision": np.get_printoptions()["precision"]}

PRINT, LEN, JSON = builtins.print, builtins.len, sys.modules["json"]
signal.signal(signal.SIGTERM, lambda *a: None)
before = state()
run = run_file(sys.argv[1])
after = state()
sys.stdout.write(json.dumps({"before": before, "after": after, "error": run.error and
                             run.error.message}))
"""

CHANGES = """\
import builtins, os, signal, sys
import numpy as np
import gradviz as torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
loss = (a * 3).sum()
builtins.print = None
builtins.len = None
builtins.added_by_file = 1
sys.modules["json"] = None
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.alarm(100)
os.umask(0o777)
sys.settrace(lambda *a: None)
sys.setprofile(lambda *a: None)
os.environ["COLUMNS"] = "5"
os.environ["GRADVIZ_DOT"] = "/bin/false"
np.seterr(divide="raise")
np.set_printoptions(precision=1)
"""


def test_what_the_file_changed_in_the_interpreter_is_put_back(tmp_path):
    # builtins.print = None made the report a traceback of gradviz's; sys.modules["rich"] =
    # None an internal error; SIG_IGN for SIGTERM left gradviz unkillable while it rendered;
    # os.umask(0o777) wrote every output with mode 000; the alarm killed the report
    path = write(tmp_path, CHANGES)
    proc = subprocess.run([sys.executable, "-c", STATE, str(path)], capture_output=True,
                          text=True, timeout=PATIENCE, env=dict(os.environ, COLUMNS="80"))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["error"] is None
    assert result["after"] == result["before"]


def test_a_file_that_breaks_builtins_and_modules_still_gets_its_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, MODEL + "import builtins, sys\nbuiltins.print = None\n"
                 "builtins.open = None\nsys.modules['rich'] = None\nsys.modules['json'] = None\n"
                 "import os\nos.umask(0o777)\n")
    proc = gradviz(tmp_path, "graph", path, "--dot", "g.dot", text=True)
    assert (proc.returncode, proc.stderr) == (0, "wrote g.dot (4 nodes, DOT)\n")
    assert os.stat(tmp_path / "g.dot").st_mode & 0o777 == 0o666 & ~_umask()
    proc = gradviz(tmp_path, "run", path, "--json", text=True)
    assert proc.returncode == 0, proc.stderr
    assert [t["name"] for t in json.loads(proc.stdout)["tensors"]] == ["a", "loss", "%0"] or \
        "loss" in proc.stdout


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ----- A KeyboardInterrupt the file raises itself ---------------------------------------------

def test_a_keyboard_interrupt_the_file_raises_is_its_error(tmp_path):
    # it was taken for Ctrl-C: "Interrupted.", exit 130, no report and no line
    path = write(tmp_path, MODEL + "raise KeyboardInterrupt\n")
    status, _ = python_status(path)
    r = invoke("run", path, "--json")
    assert r.exit_code == 1
    document = json.loads(r.stdout)
    assert (document["error"]["type"], document["error"]["line"]) == ("KeyboardInterrupt", 4)
    # Python ends by SIGINT then (status 130 in a shell)
    assert (document["exit_code"], status) == (130, -signal.SIGINT)
    assert [t["name"] for t in document["tensors"]][:2] == ["a", "loss"]


def test_a_real_sigint_is_still_an_interruption(tmp_path):
    path = write(tmp_path, MODEL + "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n"
                 "import time\ntime.sleep(5)\n")
    proc = gradviz(None, "run", path, text=True)
    assert proc.returncode == 130
    assert proc.stderr.strip() == "Interrupted."


# ----- Reading the source ----------------------------------------------------------------------

def test_a_non_utf8_first_line_names_line_1(tmp_path):
    # detect_encoding's "invalid or missing encoding declaration", at line None
    path = tmp_path / "latin.py"
    path.write_bytes(b"x = '\xe9'\n")
    _, stderr = python_status(path)
    r = invoke("run", path, "--json")
    error = json.loads(r.stdout)["error"]
    assert (error["type"], error["line"]) == ("SyntaxError", 1)
    assert stderr.strip().endswith(error["message"].replace(str(path), "")[-60:])
    assert error["message"].startswith("Non-UTF-8 code starting with '\\xe9' in file ")


def test_a_very_long_line_and_message_are_shortened_on_the_terminal(tmp_path):
    # a 10,000-character line filled 100 rows of the error panel
    line = "a = torch.tensor(1.0) * " + " + ".join(["1.0"] * 2500) + " + undefined_name"
    path = write(tmp_path, f"import gradviz as torch\n{line}\n")
    r = invoke("run", path)
    assert r.exit_code == 1
    assert "more characters)" in r.stdout
    assert len(r.stdout.splitlines()) < 30
    document = json.loads(invoke("run", path, "--json").stdout)
    assert document["error"]["code"] == line            # --json keeps it whole
    path = write(tmp_path, "raise ValueError('m' * 100000)\n", "msg.py")
    r = invoke("run", path)
    assert "(96012 more characters)" in r.stdout and len(r.stdout) < 20000


# ----- Outputs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["graph", "--dot"], ["graph", "--svg"], ["report", "-o"]])
def test_an_existing_python_file_is_never_an_output(tmp_path, monkeypatch, command):
    # `--dot helper.py` replaced a module the file did not import with DOT, exit 0
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, MODEL)
    helper = write(tmp_path, "def f():\n    return 1\n", "helper.py")
    r = invoke(command[0], path, command[1], "helper.py")
    assert r.exit_code == 2
    assert r.stderr == ("Error: refusing to replace helper.py: it is Python source; write the "
                        "output to a file named for its format (.dot, .svg, ...)\n")
    assert helper.read_text() == "def f():\n    return 1\n"
    assert sorted(os.listdir(tmp_path)) == ["helper.py", "prog.py"]


@pytest.mark.parametrize("head", [b"#!/bin/sh\necho hi\n", b"\x7fELF\x02\x01\x01"])
def test_an_existing_program_is_never_an_output(tmp_path, monkeypatch, head):
    # `--dot /usr/local/bin/dot` (meant as --renderer) replaced the program with DOT
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, MODEL)
    program = tmp_path / "dot"
    program.write_bytes(head)
    program.chmod(0o755)
    r = invoke("graph", path, "--dot", "dot")
    assert r.exit_code == 2
    assert r.stderr == ("Error: refusing to replace dot: it is a program (executable, starting "
                        "with #! or as a binary does)\n")
    assert program.read_bytes() == head
    # the executable bit alone (files on a FAT or NTFS mount) is not a program
    drawing = tmp_path / "old.dot"
    drawing.write_text("digraph {}\n")
    drawing.chmod(0o777)
    assert invoke("graph", path, "--dot", "old.dot").exit_code == 0
    assert drawing.read_text().startswith("digraph backward {")


def test_report_escapes_its_output_path_and_needs_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, MODEL)
    r = invoke("report", path, "-o", "\x1b[2Jr.html")
    assert r.exit_code == 0
    assert "\x1b" not in r.stderr and r.stderr.startswith("wrote \\x1b[2Jr.html (")
    r = invoke("report", path, "-o", "")
    assert r.exit_code == 2
    assert r.stderr.endswith("Error: Invalid value for '-o' / '--output': needs a file name "
                             "('-' for standard output)\n")


@pytest.mark.parametrize("fmt, option", [("svg", "--svg"), ("png", "--png"), ("pdf", "--pdf")])
def test_a_renderer_that_writes_something_else_fails(tmp_path, monkeypatch, fmt, option):
    # a renderer printing an error message and exiting 0 left it in g.svg as "the drawing"
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, MODEL)
    liar = fake_renderer(tmp_path, "liar", "cat > /dev/null; echo 'Error: out of memory'")
    r = invoke("graph", path, option, f"g.{fmt}", "--renderer", liar)
    assert r.exit_code == 4
    assert r.stderr == (f"Error: renderer {liar} exited 0 but what it wrote is not "
                        f"{fmt.upper()} (it starts with 'Error: out of memory\\n')\n")
    assert not (tmp_path / f"g.{fmt}").exists()


def test_a_slow_renderer_is_said_to_be_running(tmp_path, monkeypatch):
    # a renderer that hangs looked like gradviz hanging: nothing on the terminal
    from gradviz.render import renderer
    monkeypatch.setattr(renderer, "_SLOW_AFTER", 0.2)
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, MODEL)
    slow = fake_renderer(tmp_path, "slow", "cat > /dev/null; sleep 2; echo '<svg/>'")
    r = invoke("graph", path, "--svg", "g.svg", "--renderer", slow)
    assert r.exit_code == 0
    assert r.stderr == (f"still waiting for the renderer {slow} after 0.2 s (Ctrl-C stops "
                        "it)\nwrote g.svg (4 nodes, SVG)\n")
    assert (tmp_path / "g.svg").read_text() == "<svg/>\n"


def test_sigterm_stops_a_wrapper_renderer_and_its_child_even_if_the_file_ignored_it(tmp_path):
    # The file set SIGTERM to SIG_IGN: gradviz could not be stopped while rendering, and the
    # renderer's own child (a wrapper script's `dot`) kept running after gradviz ended
    write(tmp_path, MODEL + "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n")
    pidfile = tmp_path / "child.pid"
    wrapper = fake_renderer(tmp_path, "wrapper", f'sleep 600 &\necho $! > "{pidfile}"\nwait\n')
    proc = start_gradviz(tmp_path, "graph", "prog.py", "--svg", "g.svg", "--renderer", wrapper)
    deadline = time.monotonic() + PATIENCE
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the renderer never started"
        time.sleep(0.05)
    child = int(pidfile.read_text())
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=PATIENCE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 30
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    running = alive(child)
    if running:
        os.kill(child, signal.SIGKILL)
    assert (proc.returncode, err.decode().strip()) == (143, "Terminated.")
    assert not running
    assert sorted(os.listdir(tmp_path)) == ["bin", "child.pid", "prog.py"]


# ----- Verdicts on what never ran --------------------------------------------------------------

def test_check_inplace_gives_no_clean_verdict_on_a_file_that_did_not_run(tmp_path):
    # "No in-place edit breaks backward." after a SyntaxError (nothing ran), or after the file
    # raised on its first lines
    path = write(tmp_path, "x = (\n", "broken.py")
    r = invoke("check-inplace", path)
    assert r.exit_code == 1
    assert "No in-place edit breaks backward" not in r.stdout
    assert r.stdout.rstrip().endswith("Nothing ran, so nothing was checked.")
    path = write(tmp_path, MODEL + "raise ValueError('stop')\na.add_(1)\n", "stops.py")
    r = invoke("check-inplace", path)
    assert r.exit_code == 1
    assert "No in-place edit breaks backward.\n" not in r.stdout
    assert " ".join(r.stdout.split()).endswith(
        "No in-place edit breaks backward in what ran before the error (up to "
        f"{path}:4); the rest was not checked.")


# ----- gradcheck on a root computed below float64 ---------------------------------------------

LOW = {"float32": "(x.float() * x.float()).exp().sum()",
       "float16": "(x.half() * 3).sum()"}


@pytest.mark.parametrize("dtype", sorted(LOW))
@pytest.mark.parametrize("backend", ["gradviz", "torch"])
def test_gradcheck_judges_a_float32_root_by_float32_rounding(tmp_path, dtype, backend):
    # correct gradients were "gradient mismatch" (x[0]: analytic 1.28 vs numeric 1.43) and
    # "not differentiable" at a smooth point: float32 rounding, read as float64 differences
    if backend == "torch":
        pytest.importorskip("torch")
    path = write(tmp_path, "import gradviz as torch\nx = torch.tensor([0.5, 1.5], "
                 f"requires_grad=True)\nloss = {LOW[dtype]}\n")
    r = invoke("gradcheck", path, "--json", "--backend", backend)
    document = json.loads(r.stdout)
    assert r.exit_code == 1
    assert document["verdict"] == "step_too_small", document["message"]
    assert document["roots"][0]["dtype"] == dtype
    assert f"the root is computed in {dtype}" in document["message"]
    assert all(e["dtype"] == dtype for e in document["roots"][0]["leaves"][0]["step_too_small"])
    if dtype == "float32":
        # a step float32 can resolve checks it, and the gradients match
        r = invoke("gradcheck", path, "--json", "--backend", backend, "--eps", "1e-2",
                   "--rtol", "1e-2")
        assert (r.exit_code, json.loads(r.stdout)["verdict"]) == (0, "match")


def test_gradcheck_still_finds_a_wrong_gradient_in_float32(tmp_path):
    path = write(tmp_path, """\
        import gradviz as torch
        class Wrong(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x
            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * 3 * x
        x = torch.tensor([0.5, 1.5], requires_grad=True)
        loss = Wrong.apply(x.float()).sum()
    """)
    r = invoke("gradcheck", path, "--json", "--eps", "1e-2", "--rtol", "1e-2")
    assert (r.exit_code, json.loads(r.stdout)["verdict"]) == (1, "mismatch")
