"""Bad input that still got through after tests/test_hostile_inputs.py (issue 12): a renderer
outliving a killed gradviz, an empty --renderer, an unusable `# coding:` line, and output of the
file's daemon threads after it ended. Each test failed before its fix."""

import json
import os
import signal
import sys
import time

import pytest

from hostile import PATIENCE, MODEL, alive, gradviz, invoke, python_status, start_gradviz, write
from test_render_svg import fake_renderer


# ----- A renderer outliving gradviz -----------------------------------------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_renderer_dies_with_a_sigkilled_gradviz(tmp_path):
    # SIGKILL runs no `finally`: the renderer, in a session of its own, ran on for 600 s
    write(tmp_path, MODEL)
    pidfile = tmp_path / "renderer.pid"
    slow = fake_renderer(tmp_path, "slow", f'echo $$ > "{pidfile}"\nexec sleep 600\n')
    proc = start_gradviz(tmp_path, "graph", "prog.py", "--svg", "g.svg", "--renderer", slow)
    deadline = time.monotonic() + PATIENCE
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the renderer never started"
        time.sleep(0.05)
    renderer = int(pidfile.read_text())
    time.sleep(0.2)     # past `exec`: the renderer is `sleep` now, under the same pid
    proc.kill()
    proc.communicate(timeout=PATIENCE)
    deadline = time.monotonic() + 30
    while alive(renderer) and time.monotonic() < deadline:
        time.sleep(0.05)
    running = alive(renderer)
    if running:
        os.kill(renderer, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert not running


# ----- --renderer "" ---------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["graph", "--svg", "g.svg"], ["report", "-o", "r.html"]])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_renderer_is_a_usage_error(tmp_path, monkeypatch, command, value):
    # `--renderer "$DOT"` with DOT unset drew with whatever the automatic search found
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, MODEL)
    r = invoke(command[0], path, *command[1:], "--renderer", value)
    assert r.exit_code == 2
    assert r.stderr.endswith("Error: Invalid value for '--renderer': needs the path of a "
                             "Graphviz executable\n")
    assert sorted(os.listdir(tmp_path)) == ["prog.py"]


# ----- An unusable `# coding:` line ------------------------------------------------------------

@pytest.mark.parametrize("head, line", [(b"# coding: bogus\n", 1),
                                        (b"#!/usr/bin/env python\n# -*- coding: nope -*-\n", 2),
                                        (b"# coding: utf-16\n", 1)])
@pytest.mark.parametrize("command", ["run", "explain", "gradcheck", "check-inplace"])
def test_an_unusable_coding_line_is_worded_as_python_words_it(tmp_path, head, line, command):
    # "invalid or missing encoding declaration for '/tmp/.../prog.py'" with no line text,
    # where `python prog.py` says "SyntaxError: encoding problem: bogus"; utf-16 decoded the
    # file into CJK characters and reported "invalid character '‣'"
    path = tmp_path / "prog.py"
    path.write_bytes(head + MODEL.encode())
    status, stderr = python_status(path)
    python_says = stderr.strip().splitlines()[-1]
    assert status == 1 and python_says.startswith("SyntaxError: encoding problem: ")
    if command == "run":
        r = invoke("run", path, "--json")
        error = json.loads(r.stdout)["error"]
        assert f"{error['type']}: {error['message']}" == python_says
        assert (error["file"], error["line"]) == (str(path), line)
        assert error["code"] == head.splitlines()[line - 1].decode()
    else:
        args = [command, path] + (["a"] if command == "explain" else [])
        r = invoke(*args)
        assert r.exit_code == 1
        shown = " ".join((r.stdout + r.stderr).split())
        assert python_says in shown
        assert f"{path}:{line}" in shown.replace(" ", "") or f"line {line}" in shown


# ----- The file's daemon threads after it ended ------------------------------------------------

CHATTY = """\
    import threading, time
    import gradviz as torch
    started = threading.Event()
    def talk():
        i = 0
        while True:
            print("tick", i, flush=True)
            started.set()
            i += 1
            time.sleep(0.001)
    threading.Thread(target=talk, daemon=True, name="talker").start()
    started.wait()
    x = torch.tensor([1.0], requires_grad=True)
    for _ in range(3000):
        x = x * 1.0001
    loss = x.sum()
"""


def test_a_daemon_thread_printing_after_the_end_neither_corrupts_json_nor_goes_unsaid(tmp_path):
    # its prints after the file ended went to gradviz's stdout, in front of the JSON document
    # ("tick 25\ntick 26\n...{"), and what was dropped was dropped without a word
    path = write(tmp_path, CHATTY)
    proc = gradviz(tmp_path, "run", path, "--json", text=True)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["stdout"].startswith("tick 0\n")
    assert document["stdout_cut"] == (
        "output may be cut: daemon thread 'talker' was still running when the file ended; "
        "what it printed after that is not shown (python would have stopped it at exit)")
    # (in a process of its own: the thread never ends)
    proc = gradviz(tmp_path, "run", path, text=True, env={**os.environ, "COLUMNS": "100"})
    assert proc.returncode == 0, proc.stderr
    assert "gradviz: output may be cut: daemon thread 'talker' was still running" in \
        " ".join(proc.stdout.replace("│", " ").split())


def test_a_file_whose_threads_all_ended_has_nothing_cut(tmp_path):
    path = write(tmp_path, "import threading\nt = threading.Thread(target=print, args=('hi',),"
                           " daemon=True)\nt.start()\nt.join()\n")
    r = invoke("run", path, "--json")
    document = json.loads(r.stdout)
    assert (document["stdout"], document["stdout_cut"]) == ("hi\n", None)


# ----- gradcheck through a float32 value -------------------------------------------------------

THROUGH = {"float32": "(x.float().double() * x).exp().sum()",
           "float16": "(x.half().double() * 3).sum()"}


@pytest.mark.parametrize("dtype", sorted(THROUGH))
@pytest.mark.parametrize("backend", ["gradviz", "torch"])
def test_gradcheck_judges_a_float64_root_computed_through_float32(tmp_path, dtype, backend):
    # "gradient mismatch at 2 elements of x" (x[1]: analytic 28.4632 vs numeric 27.8039) for a
    # correct gradient: float32 rounding in the middle of a float64 computation
    if backend == "torch":
        pytest.importorskip("torch")
    path = write(tmp_path, "import gradviz as torch\nx = torch.tensor([0.5, 1.5], "
                 f"dtype=torch.float64, requires_grad=True)\nloss = {THROUGH[dtype]}\n")
    r = invoke("gradcheck", path, "--json", "--backend", backend)
    document = json.loads(r.stdout)
    assert r.exit_code == 1
    assert document["verdict"] == "step_too_small", document["message"]
    root = document["roots"][0]
    assert root["dtype"] == "float64"
    cast = "to_copy(x)" if backend == "gradviz" else root["through"]["tensor"]
    assert root["through"] == {"tensor": cast, "file": str(path), "line": 3}
    assert f"the root is computed through {dtype} ({cast} at {path}:3)" in document["message"]
    assert all(e["dtype"] == dtype for e in root["leaves"][0]["step_too_small"])


def test_gradcheck_through_float32_still_finds_a_wrong_gradient(tmp_path):
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
        x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
        loss = Wrong.apply(x.float()).double().sum()
    """)
    r = invoke("gradcheck", path, "--json")
    document = json.loads(r.stdout)
    assert (r.exit_code, document["verdict"]) == (1, "mismatch"), document["message"]
    assert document["roots"][0]["through"]["line"] in (5, 12)     # x in forward, or x.float()


def test_gradcheck_of_a_plain_float64_root_has_nothing_through(tmp_path):
    path = write(tmp_path, "import gradviz as torch\nx = torch.tensor([0.5, 1.5], "
                 "dtype=torch.float64, requires_grad=True)\nloss = (x * x).exp().sum()\n")
    document = json.loads(invoke("gradcheck", path, "--json").stdout)
    assert (document["verdict"], document["roots"][0]["through"]) == ("match", None)


# ----- Caches keyed by id() --------------------------------------------------------------------

ID_REUSE = """\
    import gc
    import gradviz as torch
    from gradviz import nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2)
            self.b = nn.Linear(2, 2)
            self.extra = []          # a plain list: not the model's modules

        def forward(self, x):
            y = self.b(x)
            for m in self.extra:
                y = m(y)
            return y

    model = Model()
    x = torch.ones(1, 2)
    model(x)                          # the model's names are read: a, b
    old = id(model.a)
    del model.a
    gc.collect()
    keep = []
    for _ in range(20000):
        m = nn.Identity()
        if id(m) == old:
            break
        keep.append(m)
    REUSED = id(m) == old
    model.extra.append(m)             # a module that took the id of the dropped `a`
    out = model(x).sum()
"""


@pytest.mark.parametrize("backend", ["gradviz", "torch"])
def test_a_module_that_takes_a_dropped_childs_id_is_not_given_its_name(tmp_path, backend):
    # the model's names were cached by id(): the Identity was called "a", the dropped Linear
    if backend == "torch":
        pytest.importorskip("torch")
    from gradviz.inspect import run_file
    path = write(tmp_path, ID_REUSE)
    run = run_file(str(path), backend=backend)
    assert run.error is None
    if not run.namespace["REUSED"]:
        pytest.skip("the allocator gave no freed id back in 20,000 tries")
    calls = [(c["module"], c["class"]) for c in run.report()["module_calls"]]
    assert calls == [("", "Model"), ("b", "Linear"), ("", "Model"), ("b", "Linear"),
                     ("Identity", "Identity")]


# ----- A file that replaces functions gradviz runs on ------------------------------------------

SABOTAGE = {
    "numpy": "import numpy as np\nnp.asarray = None\nnp.isfinite = lambda *a, **k: 1 / 0\n"
             "np.ndarray = None\n",
    "gradviz": "import gradviz.inspect.report as r\nr.build_report = None\n"
               "import gradviz.render.dot as d\nd.build_dot = None\n",
    "stdlib": "import json, os\njson.dumps = None\nos.replace = None\n",
    "rich": "import rich.console, rich.table\nrich.console.Console = None\n"
            "rich.table.Table = None\n",
}


@pytest.mark.parametrize("what", sorted(SABOTAGE))
@pytest.mark.parametrize("command", [["run"], ["run", "--json"], ["graph", "--dot", "g.dot"],
                                     ["check-inplace"], ["explain", "FILE", "a"],
                                     ["gradcheck"], ["report", "-o", "r.html"]])
def test_a_file_that_replaces_functions_gradviz_uses_gets_its_report(tmp_path, monkeypatch,
                                                                    what, command):
    # "gradviz: internal error at report.py:49: TypeError: 'NoneType' object is not callable.
    # This is a bug in gradviz, not in your file", exit 70: the file's patches outlived it
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, MODEL + SABOTAGE[what])
    args = [command[0], path] + [a for a in command[1:] if a != "FILE"]
    proc = gradviz(tmp_path, *args, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr
    if command == ["run", "--json"]:
        assert json.loads(proc.stdout)["error"] is None
    if command[0] in ("graph", "report"):
        assert (tmp_path / command[-1]).stat().st_size > 0


def test_a_file_that_closes_fd_2_still_gets_gradviz_messages(tmp_path):
    # its messages failed on the closed fd: exit 2 ("cannot write"), nothing said, for a file
    # that raised (exit 1)
    write(tmp_path, MODEL + "import os\nos.close(2)\nraise ValueError('boom')\n")
    proc = gradviz(tmp_path, "graph", "prog.py", "--dot", "g.dot", text=True)
    assert proc.returncode == 1
    assert proc.stderr == ("ValueError: boom (prog.py:6) — drawing what was recorded up to "
                           "there\nwrote g.dot (4 nodes, DOT)\n")


def test_null_bytes_are_worded_and_located_as_python_does(tmp_path):
    # "source code string cannot contain null bytes", with no file and no line
    path = tmp_path / "prog.py"
    path.write_bytes(b"x = 1\ny = 2\nz = 3\0\n")
    _, stderr = python_status(path)
    assert stderr.strip().endswith("SyntaxError: source code cannot contain null bytes")
    error = json.loads(invoke("run", path, "--json").stdout)["error"]
    assert (error["type"], error["message"], error["file"], error["line"], error["code"]) == \
        ("SyntaxError", "source code cannot contain null bytes", str(path), 3, "z = 3")
    assert f'File "{path}", line 3' in stderr


# ----- An output that is a FIFO nobody reads ---------------------------------------------------

@pytest.mark.parametrize("command", [["graph", "--dot"], ["report", "-o"]])
def test_an_output_fifo_without_a_reader_is_said_to_be_waited_for(tmp_path, command):
    # gradviz sat in open() without a word, as if it hung
    write(tmp_path, MODEL)
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    proc = start_gradviz(tmp_path, command[0], "prog.py", command[1], "out", text=True)
    try:
        line = proc.stderr.readline()
        assert line == "waiting for a reader of the FIFO out (Ctrl-C stops)\n"
        with open(fifo, "rb") as f:
            data = f.read()
        _, err = proc.communicate(timeout=PATIENCE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert data.startswith(b"digraph" if command[0] == "graph" else b"<!DOCTYPE html>")


def test_an_invisible_character_in_a_name_is_shown_escaped(tmp_path):
    # a tensor named "a\u200bb" (zero width space) showed as "ab": two rows looked the same
    path = write(tmp_path, MODEL + 'globals()["a\\u200bb"] = a * 2\nab = a * 3\n'
                 'globals()["c\\ufeffd"] = a * 4\n')
    r = invoke("run", path)
    assert r.exit_code == 0
    rows = [line.split()[0] for line in r.stdout.splitlines() if line[:1] in ("a", "c")]
    assert "a\\u200bb" in rows and "c\\ufeffd" in rows
    assert "\u200b" not in r.stdout and "\ufeff" not in r.stdout
