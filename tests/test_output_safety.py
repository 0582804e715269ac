"""Writing outputs never loses a file: the file being run, devices, symlinks, read-only files,
a .dot gradviz did not write; SIGTERM/Ctrl-C clean up; a closed or full stdout exits cleanly."""

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner

from gradviz.render import output as output_module
from gradviz.render.output import OutputError, check_output, loaded_sources, write_output
from gradviz.render.renderer import FALLBACK_MARK, RenderError, render
from gradviz_cli.main import cli
from hostile import outlived
from test_render_svg import fake_renderer

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
Z_SOURCE = open(os.path.join(EXAMPLES, "graph_z_wx_b.py"), encoding="utf-8").read()
GRADVIZ = [sys.executable, "-c", "from gradviz_cli.main import main; main()"]


def invoke(*args, env=None):
    return CliRunner(env=env).invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def model(tmp_path, monkeypatch):
    """A copy of the z = w*x + b example in an empty folder, which is the working directory."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRADVIZ_DOT", raising=False)
    path = tmp_path / "model.py"
    path.write_text(Z_SOURCE)
    return path


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".gradviz-"))


# ----- The file being run and the modules it imported -----

@pytest.mark.parametrize("option", ["--dot", "--svg", "--png", "-o"])
def test_the_file_being_run_is_never_an_output(model, option):
    target = "model.py" if option != "-o" else "./model.py"
    if option == "-o":
        # -o takes its format from the extension: .py is no format, refused before running.
        r = invoke("graph", model, "-o", target)
        assert r.exit_code == 2 and "extension" in r.stderr
    else:
        r = invoke("graph", model, option, target)
        assert r.exit_code == 2
        assert r.stderr == f"Error: refusing to write {target}: it is the file being run\n"
    assert model.read_text() == Z_SOURCE


def test_the_file_being_run_through_a_symlink_or_another_path(model, tmp_path):
    os.symlink("model.py", tmp_path / "alias.dot")
    r = invoke("graph", model, "--dot", "alias.dot")
    assert r.exit_code == 2
    assert r.stderr == ("Error: refusing to write alias.dot: it is the file being run "
                        f"({model})\n")
    r = invoke("graph", "model.py", "--dot", str(tmp_path / ".." / tmp_path.name / "model.py"))
    assert r.exit_code == 2 and "it is the file being run" in r.stderr
    assert model.read_text() == Z_SOURCE and os.path.islink(tmp_path / "alias.dot")


def test_a_module_the_file_imported_is_never_an_output(model, tmp_path):
    helper = tmp_path / "helper_for_output_test.py"
    helper.write_text("import gradviz as torch\n\ndef make():\n"
                      "    return torch.tensor(1.0, requires_grad=True)\n")
    main = tmp_path / "uses_helper.py"
    main.write_text("import helper_for_output_test as h\nx = h.make()\ny = x * 2\n")
    try:
        r = invoke("graph", main, "--dot", "helper_for_output_test.py")
    finally:
        sys.modules.pop("helper_for_output_test", None)
    # Refused before the file runs: any existing Python source is (see test_hostile_outputs)
    assert r.exit_code == 2
    assert r.stderr == ("Error: refusing to replace helper_for_output_test.py: it is Python "
                        "source; write the output to a file named for its format (.dot, .svg, "
                        "...)\n")
    assert helper.read_text().startswith("import gradviz")
    # A module the run imported is protected by its identity too, whatever its name
    alias = tmp_path / "helper_alias.dot"
    os.link(helper, alias)
    try:
        r = invoke("graph", main, "--dot", "helper_alias.dot")
    finally:
        sys.modules.pop("helper_for_output_test", None)
    assert r.exit_code == 2
    assert r.stderr == ("Error: refusing to write helper_alias.dot: it is the source of module "
                        f"helper_for_output_test ({helper})\n")
    assert helper.read_text().startswith("import gradviz")


def test_loaded_sources_survives_odd_modules(monkeypatch):
    class Odd:
        def __getattr__(self, name):
            raise RuntimeError("no")
    monkeypatch.setitem(sys.modules, "odd_module_for_test", Odd())
    sources = loaded_sources("x.py")
    assert sources["x.py"] == "the file being run"
    assert output_module.__file__ in sources


# ----- Targets that are not regular files -----

def test_a_fifo_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "pipe.svg"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_output(str(fifo), lambda: b"<svg/>")
    reader.join(10)
    assert received == [b"<svg/>"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert leftovers(tmp_path) == []


def test_dev_null_is_written_into_never_renamed_over(monkeypatch):
    def never(*args):
        raise AssertionError("tried to replace /dev/null")
    monkeypatch.setattr(output_module, "_replace", never)
    assert write_output("/dev/null", lambda: b"digraph {}") == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_character_device_keeps_being_one(tmp_path):
    node = tmp_path / "null.dot"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))   # a private /dev/null
    except (PermissionError, AttributeError):
        pytest.skip("cannot make a device node here")
    write_output(str(node), lambda: b"digraph {}")
    assert stat.S_ISCHR(os.lstat(node).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null.dot"]


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="no /dev/stdout")
def test_dev_stdout_redirected_to_a_file_writes_into_that_file(model, tmp_path):
    out = tmp_path / "captured.dot"
    with open(out, "wb") as f:
        inode = os.fstat(f.fileno()).st_ino
        proc = subprocess.run(GRADVIZ + ["graph", "model.py", "--dot", "/dev/stdout"],
                              stdout=f, stderr=subprocess.PIPE, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert os.stat(out).st_ino == inode            # the same file, not one renamed over it
    assert out.read_text().startswith("digraph backward {")
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="no /dev/stdout")
def test_dev_stdout_as_a_pipe(model, tmp_path):
    proc = subprocess.run(GRADVIZ + ["graph", "model.py", "--dot", "/dev/stdout"],
                          capture_output=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"digraph backward {")
    assert proc.stderr == b"wrote /dev/stdout (6 nodes, DOT)\n"


def test_a_socket_or_a_folder_is_refused(tmp_path):
    import socket
    (tmp_path / "folder.svg").mkdir()
    with pytest.raises(OutputError, match="it is a folder"):
        check_output(str(tmp_path / "folder.svg"))
    sock = socket.socket(socket.AF_UNIX)
    path = tmp_path / "s.svg"
    try:
        sock.bind(str(path))
    except OSError:
        pytest.skip("cannot bind a unix socket here")
    try:
        with pytest.raises(OutputError, match="it is a socket"):
            write_output(str(path), lambda: b"x")
    finally:
        sock.close()


# ----- Symlinks, read-only files, modes -----

def test_a_symlink_is_written_through_to_its_target(tmp_path):
    target = tmp_path / "real.dot"
    target.write_text("old")
    link = tmp_path / "link.dot"
    os.symlink("real.dot", link)
    write_output(str(link), lambda: b"new")
    assert os.path.islink(link) and os.readlink(link) == "real.dot"
    assert target.read_text() == "new"
    dangling = tmp_path / "dangling.dot"
    os.symlink("made.dot", dangling)
    write_output(str(dangling), lambda: b"made")
    assert os.path.islink(dangling) and (tmp_path / "made.dot").read_text() == "made"
    assert leftovers(tmp_path) == []


def test_a_read_only_output_is_refused_and_kept(model, tmp_path):
    ro = tmp_path / "z.dot"
    ro.write_text("mine")
    ro.chmod(0o444)
    r = invoke("graph", model, "--dot", "z.dot")
    assert r.exit_code == 2
    assert r.stderr == ("Error: refusing to replace z.dot: it is read-only (mode 444); write "
                        "somewhere else, or make it writable first (chmod u+w)\n")
    assert ro.read_text() == "mine" and stat.S_IMODE(ro.stat().st_mode) == 0o444


def test_a_replaced_file_keeps_its_mode(tmp_path):
    out = tmp_path / "g.dot"
    out.write_text("old")
    out.chmod(0o640)
    write_output(str(out), lambda: b"new")
    assert out.read_text() == "new" and stat.S_IMODE(out.stat().st_mode) == 0o640


def test_a_new_file_gets_ordinary_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        write_output(str(tmp_path / "g.dot"), lambda: b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "g.dot").stat().st_mode) == 0o644


def test_a_250_character_name_works(model, tmp_path):
    name = "g" * 246 + ".dot"
    r = invoke("graph", model, "--dot", name)
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / name).read_text().startswith("digraph")
    assert leftovers(tmp_path) == []


def test_a_failed_produce_leaves_the_target_and_no_temporary_file(tmp_path):
    out = tmp_path / "g.svg"
    out.write_text("old")

    def fail():
        raise RenderError("renderer failed")
    with pytest.raises(RenderError):
        write_output(str(out), fail)
    assert out.read_text() == "old" and leftovers(tmp_path) == []


def test_dev_full_as_an_output_is_one_clear_error(model):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    r = invoke("graph", model, "--dot", "/dev/full")
    assert r.exit_code == 2
    assert r.stderr == "Error: cannot write /dev/full: No space left on device\n"


# ----- No renderer: the .dot beside the output -----

def no_renderer(monkeypatch):
    monkeypatch.setattr("gradviz.render.renderer.find_renderer", lambda *a, **k: None)


def test_pdf_without_dot_never_clobbers_a_dot_gradviz_did_not_write(model, tmp_path,
                                                                     monkeypatch):
    no_renderer(monkeypatch)
    (tmp_path / "model.dot").write_text("my notes")
    r = invoke("graph", model, "--pdf", "model.pdf")
    assert r.exit_code == 3
    assert r.stderr.endswith("Wrote the DOT source to model.1.dot instead (model.dot exists "
                             "and gradviz did not write it).\n")
    assert (tmp_path / "model.dot").read_text() == "my notes"
    first = (tmp_path / "model.1.dot").read_text()
    assert first.startswith(FALLBACK_MARK + "\ndigraph backward {")
    # A second run replaces the file gradviz wrote, and still keeps the user's.
    r = invoke("graph", model, "--svg", "model.svg")
    assert r.exit_code == 3 and "model.1.dot" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.1.dot", "model.dot",
                                                          "model.py"]


def test_a_dot_gradviz_wrote_is_replaced(model, tmp_path, monkeypatch):
    no_renderer(monkeypatch)
    assert invoke("graph", model, "--pdf", "g.pdf").exit_code == 3
    assert invoke("graph", model, "--pdf", "g.pdf").exit_code == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dot", "model.py"]


def test_with_an_explicit_dot_no_second_copy_is_written(model, tmp_path, monkeypatch):
    no_renderer(monkeypatch)
    r = invoke("graph", model, "--pdf", "g.pdf", "--dot", "mine.dot")
    assert r.exit_code == 3
    assert r.stderr.startswith("wrote mine.dot (6 nodes, DOT)\n")
    assert r.stderr.endswith("The DOT source is in mine.dot.\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.dot", "model.py"]


# ----- Signals: the temporary file removed, the renderer stopped -----

SLOW = 'echo $$ > "{pidfile}"\nexec sleep 600\n'
_PATIENCE = 180     # seconds: a deadline for gradviz on a loaded machine, never a timing check


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_removes_the_temporary_file_and_kills_the_renderer(model, tmp_path, sig,
                                                                    code):
    pidfile = tmp_path / "renderer.pid"
    fake = fake_renderer(tmp_path, "fake", SLOW.format(pidfile=pidfile))
    proc = subprocess.Popen(GRADVIZ + ["graph", "model.py", "--svg", "out.svg",
                                       "--renderer", str(fake)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Generous deadlines: on a loaded machine starting gradviz, and its exit after the signal,
    # can take tens of seconds; the checks below are the same however long they take.
    deadline = time.monotonic() + _PATIENCE
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the renderer never started"
        time.sleep(0.05)
    renderer_pid = int(pidfile.read_text())
    assert leftovers(tmp_path) != []            # the temporary output exists while it renders
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=_PATIENCE)
    finally:
        if proc.poll() is None:     # it hung: do not leave it (or its renderer) running
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert err.decode().strip() == ("Terminated." if sig == signal.SIGTERM else "Interrupted.")
    assert leftovers(tmp_path) == [] and not (tmp_path / "out.svg").exists()
    # The renderer sleeps 600 s: gone well before that means gradviz stopped it.
    assert not outlived(renderer_pid)


# ----- Standard output closed early or full -----

BIG = "import gradviz as torch\nx = torch.ones(30, 30, requires_grad=True)\ny = (x * 2).sum()\n"


@pytest.mark.parametrize("args", [["run", "big.py", "--json", "--full"],
                                  ["run", "big.py", "--full"],
                                  ["graph", "big.py", "-o", "-"]])
def test_a_closed_stdout_is_quiet_and_exits_141(tmp_path, args):
    (tmp_path / "big.py").write_text(BIG)
    read, write = os.pipe()
    os.close(read)                      # the reader is gone before gradviz writes anything
    try:
        proc = subprocess.run(GRADVIZ + args, stdout=write, stderr=subprocess.PIPE,
                              cwd=tmp_path, timeout=120)
    finally:
        os.close(write)
    assert proc.returncode == 141
    assert proc.stderr == b""


def test_head_reading_one_line(tmp_path):
    (tmp_path / "big.py").write_text(BIG)
    gradviz = subprocess.Popen(GRADVIZ + ["run", "big.py", "--full"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = gradviz.stdout.readline()
    gradviz.stdout.close()
    err = gradviz.stderr.read()
    gradviz.wait(timeout=120)
    assert first.startswith(b"gradviz run big.py")
    assert gradviz.returncode in (0, 141) and err == b""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [["run", "big.py", "--json"], ["run", "big.py"],
                                  ["graph", "big.py", "-o", "-"]])
def test_a_full_disk_on_stdout_is_one_line_and_exit_2(tmp_path, args):
    (tmp_path / "big.py").write_text(BIG)
    with open("/dev/full", "w") as full:
        proc = subprocess.run(GRADVIZ + args, stdout=full, stderr=subprocess.PIPE,
                              cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == b"gradviz: cannot write to standard output: No space left on device\n"


def _file_size_limit(limit):
    # Runs in the child before exec: writes past `limit` bytes are cut short, then fail with
    # EFBIG, as on a disk that fills up mid-write (a small tmpfs).
    def limit_size():
        import resource
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return limit_size


@pytest.mark.parametrize("args", [["run", "big.py", "--json", "--full"],
                                  ["run", "big.py", "--full"],
                                  ["graph", "big.py", "-o", "-"]])
def test_stdout_filling_up_mid_write_is_an_error_not_a_cut_document(tmp_path, args):
    # fd 1 took part of a big write and the rest was dropped: exit 0 with a cut document
    (tmp_path / "big.py").write_text(BIG)
    with open(tmp_path / "out", "wb") as out:
        proc = subprocess.run(GRADVIZ + args, stdout=out, stderr=subprocess.PIPE,
                              cwd=tmp_path, timeout=120, preexec_fn=_file_size_limit(512))
    assert proc.returncode == 2
    assert proc.stderr.endswith(b"gradviz: cannot write to standard output: File too large\n")


FORKS_AND_IS_TERMINATED = """
import os, signal, time
pid = os.fork()
if pid == 0:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("child killed by signal", os.WTERMSIG(status) if os.WIFSIGNALED(status) else None)
"""


def test_a_forked_child_is_killed_by_sigterm_as_under_python(tmp_path):
    # it raised gradviz's Terminated instead: a multiprocessing pool's worker printed a
    # traceback, and the pool's terminate() could hang on the lock that worker held
    (tmp_path / "forks.py").write_text(FORKS_AND_IS_TERMINATED)
    proc = subprocess.run(GRADVIZ + ["run", "forks.py"], capture_output=True, cwd=tmp_path,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert b"child killed by signal 15" in proc.stdout
    assert b"Traceback" not in proc.stdout + proc.stderr


def _closed(fd):
    # Runs in the child before exec: close its fd 1 or 2, as `>&-` does.
    return lambda: os.close(fd)


@pytest.mark.parametrize("args", [["run", "big.py"], ["run", "big.py", "--json"],
                                  ["graph", "big.py", "-o", "-"]])
def test_a_closed_stdout_is_one_line_and_exit_2(tmp_path, args):
    (tmp_path / "big.py").write_text(BIG)
    proc = subprocess.run(GRADVIZ + args, stderr=subprocess.PIPE, cwd=tmp_path, timeout=120,
                          preexec_fn=_closed(1))
    assert proc.returncode == 2
    assert proc.stderr == b"gradviz: cannot write to standard output: it is closed\n"


def test_a_closed_stderr_changes_nothing_but_the_messages(tmp_path):
    (tmp_path / "big.py").write_text(BIG)
    proc = subprocess.run(GRADVIZ + ["graph", "big.py", "--dot", "g.dot"], cwd=tmp_path,
                          stdout=subprocess.PIPE, timeout=120, preexec_fn=_closed(2))
    assert proc.returncode == 0 and proc.stdout == b""
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    proc = subprocess.run(GRADVIZ + ["graph", "big.py", "--dot", "big.py"], cwd=tmp_path,
                          stdout=subprocess.PIPE, timeout=120, preexec_fn=_closed(2))
    assert proc.returncode == 2 and (tmp_path / "big.py").read_text() == BIG


@pytest.mark.parametrize("options", [["--svg", "g.svg", "--dot", "g.svg"],
                                     ["--svg", "g.svg", "-o", "./g.svg"]])
def test_two_outputs_naming_one_file_are_refused(model, tmp_path, options):
    # the DOT went to g.svg, then the SVG replaced it: one output silently lost, exit 0
    (tmp_path / "g.svg").write_text("mine")
    r = invoke("graph", model, *options)
    assert r.exit_code == 2
    assert "is named by two outputs" in r.stderr
    assert (tmp_path / "g.svg").read_text() == "mine"


def test_a_hard_link_to_another_output_is_the_same_file(model, tmp_path):
    (tmp_path / "g.svg").write_text("mine")
    os.link(tmp_path / "g.svg", tmp_path / "h.svg")
    r = invoke("graph", model, "--svg", "g.svg", "--dot", "h.svg")
    assert r.exit_code == 2
    assert "is named by two outputs" in r.stderr
    assert (tmp_path / "g.svg").read_text() == "mine"


@pytest.mark.parametrize("options, written", [(["--dot", "-", "-o", "a.svg"], "a.svg"),
                                              (["--dot", "a.dot", "-o", "-"], "a.dot")])
def test_standard_output_and_a_file_are_two_outputs(model, tmp_path, options, written):
    # stdout first used to count as the file's first name: "a.svg is named by two outputs"
    r = invoke("graph", model, *options)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("digraph")
    assert (tmp_path / written).exists()


ATEXIT_PRINTS = """
import atexit
import gradviz as torch
atexit.register(lambda: print("printed at exit"))
x = torch.tensor([1.0], requires_grad=True)
y = (x * 2).sum()
"""


@pytest.mark.parametrize("args", [["run", "f.py", "--json"], ["graph", "f.py", "-o", "-"]])
def test_what_the_file_prints_at_exit_stays_out_of_the_document(tmp_path, args):
    # the file's atexit function printed after the JSON document, on stdout: invalid JSON.
    # It runs when the file ends, as under Python: its print is the file's last output.
    (tmp_path / "f.py").write_text(ATEXIT_PRINTS)
    proc = subprocess.run(GRADVIZ + args, capture_output=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0
    assert b"printed at exit" not in proc.stderr
    if "--json" in args:
        assert json.loads(proc.stdout)["stdout"] == "printed at exit\n"
    else:
        assert proc.stdout.startswith(b"digraph") and b"printed at exit" not in proc.stdout


def test_a_reader_gone_while_the_file_prints_is_quiet(tmp_path):
    # `gradviz run f.py | head -1` on a file that prints: the frame's writes failed in the
    # reader thread, which died; the file then blocked on a full pipe (a hang) or, with less
    # output, click's own EPIPE handling gave exit 1, the code of a file that raised
    (tmp_path / "pr.py").write_text("for i in range(20000):\n    print('line', i)\n")
    proc = subprocess.Popen(GRADVIZ + ["run", "pr.py"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (141, b"")
