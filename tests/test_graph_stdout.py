"""`gradviz graph` with `-` as an output: each format goes to stdout as itself (`--svg -` wrote
DOT), only one output may go there (`-o - --dot -` wrote the DOT twice), and PNG/PDF never go
to a terminal."""

import os
import pty
import subprocess

import pytest

from gradviz.render.drawing import output_targets
from gradviz.render.renderer import RenderError
from test_output_safety import GRADVIZ, Z_SOURCE, invoke, model  # noqa: F401 - model: fixture
from test_render_svg import fake_renderer

# A renderer that starts as a file of the format asked for does (gradviz refuses anything
# else as that format), then says which format it was asked for, and what it read.
MAGIC = {"svg": b"<svg>", "png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-"}
ECHO = ('case "$1" in -Tsvg) printf "<svg>";; -Tpng) printf "\\211PNG\\r\\n\\032\\n";; '
        '-Tpdf) printf "%%PDF-";; esac\nprintf "<%s>" "$1"\ncat\n')


@pytest.mark.parametrize("option, fmt", [("--svg", "svg"), ("--png", "png"), ("--pdf", "pdf")])
def test_each_format_goes_to_stdout_as_itself(model, tmp_path, option, fmt):
    # --svg - wrote the DOT source to stdout, exit 0
    echo = fake_renderer(tmp_path, "dot", ECHO)
    r = invoke("graph", model, option, "-", "--renderer", echo)
    assert r.exit_code == 0, r.stderr
    dot = invoke("graph", model, "-o", "-").stdout
    assert r.stdout_bytes == MAGIC[fmt] + f"<-T{fmt}>".encode() + dot.encode()
    assert r.stderr == "" and sorted(os.listdir(tmp_path)) == ["bin", "model.py"]


def test_stdout_and_a_file_of_other_formats(model, tmp_path):
    echo = fake_renderer(tmp_path, "dot", ECHO)
    r = invoke("graph", model, "--svg", "-", "--dot", "g.dot", "--renderer", echo)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "<svg><-Tsvg>" + (tmp_path / "g.dot").read_text()
    assert r.stderr == "wrote g.dot (6 nodes, DOT)\n"


@pytest.mark.parametrize("options", [["--dot", "-", "-o", "-"], ["--svg", "-", "--dot", "-"],
                                     ["--png", "-", "-o", "-"], ["--svg", "-", "--pdf", "-"]])
def test_two_outputs_to_stdout_are_refused(model, options):
    # -o - --dot - wrote the DOT twice, one after the other, exit 0
    r = invoke("graph", model, *options)
    assert r.exit_code == 2
    first, second = " ".join(options[:2]), " ".join(options[2:])
    assert r.stderr == (f"Error: standard output is named by two outputs ({first} and "
                        f"{second}): one would replace or run into the other; give each its "
                        "own file\n")
    assert r.stdout == ""


def test_dev_stdout_beside_dash_is_one_file(tmp_path):
    (tmp_path / "model.py").write_text(Z_SOURCE)
    proc = subprocess.run(GRADVIZ + ["graph", "model.py", "--dot", "/dev/stdout", "-o", "-"],
                          capture_output=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.startswith(b"Error: standard output is named by two outputs "
                                  b"(--dot /dev/stdout and -o -)")


def test_stdout_redirected_to_another_output_is_one_file(tmp_path):
    # `-o - > g.dot --svg g.dot`: the SVG replaced g.dot while the DOT went to the old one
    (tmp_path / "model.py").write_text(Z_SOURCE)
    with open(tmp_path / "g.dot", "wb") as out:
        proc = subprocess.run(GRADVIZ + ["graph", "model.py", "--svg", "g.dot", "-o", "-"],
                              stdout=out, stderr=subprocess.PIPE, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and (tmp_path / "g.dot").read_bytes() == b""
    assert proc.stderr.startswith(b"Error: standard output is named by two outputs "
                                  b"(--svg g.dot and -o -)")


class Terminal:
    """A stand-in for a terminal on stdout."""

    def isatty(self):
        return True


@pytest.mark.parametrize("fmt", ["png", "pdf"])
def test_no_binary_format_to_a_terminal(fmt):
    with pytest.raises(RenderError) as caught:
        output_targets(**{fmt: "-"}, stdout=Terminal())
    assert caught.value.exit_code == 2
    assert str(caught.value) == (f"refusing to write {fmt.upper()} to a terminal: redirect "
                                 f"standard output (> graph.{fmt}) or give a file name")
    # text formats are fine on a terminal
    assert [t.fmt for t in output_targets(svg="-", stdout=Terminal())] == ["svg"]


def test_png_to_a_real_terminal_is_refused_before_the_file_runs(tmp_path):
    (tmp_path / "model.py").write_text("open('ran', 'w').close()\n" + Z_SOURCE)
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(GRADVIZ + ["graph", "model.py", "--png", "-"], cwd=tmp_path,
                              stdout=follower, stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 2
    assert proc.stderr.startswith(b"Error: refusing to write PNG to a terminal")
    assert not (tmp_path / "ran").exists()


def test_no_renderer_writes_nothing_to_stdout(model, tmp_path, monkeypatch):
    monkeypatch.setattr("gradviz.render.renderer.find_renderer", lambda *a, **k: None)
    r = invoke("graph", model, "--svg", "-")
    assert r.exit_code == 3 and r.stdout == ""
    assert r.stderr.endswith("\nNothing was written to standard output; --dot - writes the DOT "
                             "source there.\n")
    assert sorted(os.listdir(tmp_path)) == ["model.py"]
    r = invoke("graph", model, "--svg", "-", "--dot", "g.dot")
    assert r.exit_code == 3 and r.stdout == ""
    assert r.stderr.endswith("\nThe DOT source is in g.dot.\n")


def test_a_failing_renderer_writes_nothing_to_stdout(model, tmp_path):
    failing = fake_renderer(tmp_path, "dot", "echo half; exit 1\n")
    r = invoke("graph", model, "--svg", "-", "--renderer", failing)
    assert r.exit_code == 4 and r.stdout == ""
    assert "failed (exit 1) making SVG" in r.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_binary_stdout_on_a_full_disk_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "model.py").write_text(Z_SOURCE)
    echo = fake_renderer(tmp_path, "dot", ECHO)
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(GRADVIZ + ["graph", "model.py", "--png", "-", "--renderer", echo],
                              stdout=full, stderr=subprocess.PIPE, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == b"gradviz: cannot write to standard output: No space left on device\n"


def test_binary_stdout_closed_early_is_quiet(tmp_path):
    (tmp_path / "model.py").write_text(Z_SOURCE)
    echo = fake_renderer(tmp_path, "dot", ECHO)
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(GRADVIZ + ["graph", "model.py", "--png", "-", "--renderer", echo],
                              stdout=write, stderr=subprocess.PIPE, cwd=tmp_path, timeout=120)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (141, b"")


def test_report_dash_writes_the_page_to_stdout(model, tmp_path):
    # report -o - wrote a file named "-"; what the file printed must not come before the page
    printing = "print('printed by the file')\n" + Z_SOURCE
    model.write_text(printing)
    r = invoke("report", model, "-o", "-")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("<!DOCTYPE html>") and r.stdout.rstrip().endswith("</html>")
    assert r.stderr == "" and sorted(os.listdir(tmp_path)) == ["model.py"]
