"""No internal tracebacks and no terminal injection: user text is never markup, control
characters are shown escaped, hostile globals never crash the namer, tiny widths stay readable,
and a failing renderer has its own message and exit code."""

import os
import re
import signal
import subprocess
import sys
from unittest import mock

import pytest
from click.testing import CliRunner

from gradviz.inspect.names import named_tensors
from gradviz.render.renderer import RenderError, render
from gradviz.render.terminal import printable, program_output
from gradviz_cli.main import cli
from test_render_svg import fake_renderer

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
Z = os.path.join(EXAMPLES, "graph_z_wx_b.py")
GRADVIZ = [sys.executable, "-c", "from gradviz_cli.main import main; main()"]

# A file whose names, output and error message hold markup and escape sequences.
HOSTILE = '''\
import gradviz as torch
x = torch.tensor(2.0, requires_grad=True)
d = {"a\\x1b[2Jb": x * 2, "[/x]": x + 1, "nul\\x00": x * 3}
print("colour \\x1b[31mred\\x1b[0m clear\\x1b[2J nul\\x00 bell\\x07 title\\x1b]0;pwned\\x07 end")
raise ValueError("bad [/x] \\x1b[31m thing \\x00")
'''

HOSTILE_GLOBALS = '''\
import gradviz as torch
from unittest import mock

class Raising:
    def __getattr__(self, name):
        raise RuntimeError("no attributes here")

class Worse:
    def __getattribute__(self, name):
        raise RuntimeError("nothing at all")

class FakeClass:
    __class__ = property(lambda self: 1 / 0)

m = mock.Mock()
mm = mock.MagicMock()
r = Raising()
w = Worse()
f = FakeClass()
x = torch.tensor(2.0, requires_grad=True)
y = x * 3
items = [x, m, r, w]
'''


def invoke(*args, env=None):
    return CliRunner(env=env).invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """The hostile file inside a folder whose path is itself markup: .../[red]dir[/x]/f.py."""
    monkeypatch.delenv("GRADVIZ_DOT", raising=False)
    folder = tmp_path / "[red]dir[" / "x]"
    folder.mkdir(parents=True)
    path = folder / "f.py"
    path.write_text(HOSTILE)
    return path


def no_raw_control(text):
    """No control character but newline reaches the output (CliRunner: no colour)."""
    return not re.search("[\x00-\x09\x0b-\x1f\x7f]", text)


# ----- printable and program_output -----

def test_printable_escapes_every_control_character():
    assert printable("a\x1b[2Jb\x00c\x07d\re\x9bf\u202eg\udcff") == \
        "a\\x1b[2Jb\\x00c\\x07d\\re\\x9bf\\u202eg\\udcff"
    assert printable("two\nlines") == "two\nlines"
    assert printable("two\nlines\tand tab", keep="") == "two\\nlines\\tand tab"
    assert printable("[bold]plain é ü 中") == "[bold]plain é ü 中"


def test_program_output_keeps_colours_and_drops_other_sequences():
    text = program_output("x\x1b[31mred\x1b[0m y\x1b[2J z\x1b q\x00w\x1b]0;title\x07 end\t!")
    assert text.plain == "xred y z\\x1b q\\x00w end\t!"
    assert [(s.start, s.end, str(s.style)) for s in text.spans] == [(1, 4, "color(1)")]
    assert program_output("10%\r50%\r100%\nabc\rX").plain == "100%\nXbc"


# ----- Markup and control characters through every command -----

def test_run_shows_hostile_text_escaped(hostile):
    r = invoke("run", hostile)
    assert r.exit_code == 1
    assert no_raw_control(r.stdout), repr(r.stdout)
    for shown in ("d['a\\x1b[2Jb']", "d['[/x]']", "d['nul\\x00']",
                  "colour red clear nul\\x00 bell\\x07 title end",
                  "ValueError: bad [/x] \\x1b[31m thing \\x00", "[red]dir[/x]"):
        assert shown in r.stdout, shown


def test_run_in_colour_obeys_no_sequence_from_the_file(hostile):
    r = invoke("run", hostile, env={"FORCE_COLOR": "1", "TERM": "xterm"})
    assert r.exit_code == 1
    assert "\x1b[2J" not in r.stdout and "\x1b]0;" not in r.stdout and "\x00" not in r.stdout
    assert "\x1b[31mred" in r.stdout.replace("\x1b[0m", "")  # its colour is kept


def test_graph_with_markup_in_path_and_message(hostile):
    r = invoke("graph", hostile, "-o", hostile.parent / "out.dot")
    assert r.exit_code == 1
    assert "ValueError: bad [/x] \\x1b[31m thing \\x00" in r.stderr
    # (a path longer than a line is folded: read it with the line breaks taken out)
    assert "wrote " in r.stderr and "[red]dir[/x]" in "".join(r.stderr.splitlines())
    assert no_raw_control(r.stderr)
    assert (hostile.parent / "out.dot").read_text().startswith("digraph")


@pytest.mark.parametrize("command", [["check-inplace"], ["gradcheck"], ["explain", None, "x"],
                                     ["run", "--json"]])
def test_other_commands_never_crash_on_hostile_text(hostile, command):
    args = [hostile if a is None else a for a in command]
    if args[0] != "explain":
        args.insert(1, hostile)
    r = invoke(*args)
    assert r.exit_code in (0, 1, 2)
    assert no_raw_control(r.stdout + r.stderr)
    assert "Traceback (most recent call last)" not in r.stdout + r.stderr


def test_usage_errors_escape_what_the_user_typed(tmp_path):
    r = invoke("run", str(tmp_path / "nope\x1b[2J.py"))
    assert r.exit_code == 2
    assert r.stderr == f"Error: no such file: {tmp_path}/nope\\x1b[2J.py\n"
    r = invoke("explain", Z, "zz\x1b")
    assert r.exit_code == 2 and "'zz\\x1b'" in r.stderr and no_raw_control(r.stderr)


# ----- The namer and hostile globals -----

def test_the_namer_skips_objects_that_raise_or_claim_every_attribute():
    class Raising:
        def __getattr__(self, name):
            raise RuntimeError("no")

    class Worse:
        def __getattribute__(self, name):
            raise RuntimeError("no")
    ns = {"m": mock.Mock(), "mm": mock.MagicMock(), "r": Raising(), "w": Worse(),
          "t": 5, "box": [mock.Mock(), 6], "d": {"k": Raising(), "j": 7}}
    assert named_tensors(ns, int) == [("t", 5), ("box[1]", 6), ("d['j']", 7)]


def test_run_with_mock_globals(tmp_path):
    path = tmp_path / "mocks.py"
    path.write_text(HOSTILE_GLOBALS)
    r = invoke("run", path, "--backward", "y")
    assert r.exit_code == 0, r.stdout
    assert re.search(r"^x +\[\] +float32", r.stdout, re.M)
    r = invoke("graph", path, "-o", "-")
    assert r.exit_code == 0 and r.stdout.startswith("digraph")
    r = invoke("explain", path, "x", "--root", "y")
    assert r.exit_code == 0


# ----- Widths -----

@pytest.mark.parametrize("columns", ["0", "1", "5", "-3", "abc"])
def test_tiny_or_invalid_widths_give_readable_output(columns):
    r = invoke("run", os.path.join(EXAMPLES, "mul_chain_backward.py"), "--backward", "e",
               env={"COLUMNS": columns})
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    width = 40 if columns in ("1", "5") else 100   # 0 and non-numbers: as if unset
    assert max(len(line) for line in lines) <= width
    assert "gradviz run " in lines[0]
    assert any(line.startswith("e ") or line.startswith("e  ") for line in lines), r.stdout


def test_a_huge_width_is_capped():
    # COLUMNS=100000000: every panel line was padded to the width (700 MB written, 223 s)
    r = invoke("run", os.path.join(EXAMPLES, "mul_chain_backward.py"),
               env={"COLUMNS": "100000000"})
    assert r.exit_code == 0
    assert max(len(line) for line in r.stdout.splitlines()) == 10_000


def test_columns_zero_through_the_console_script():
    env = dict(os.environ, COLUMNS="0")
    proc = subprocess.run(GRADVIZ + ["run", os.path.join(EXAMPLES, "mul_chain_backward.py")],
                          capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stdout.count(b"\n") > 10


# ----- A failing renderer: its own message, exit code 4 -----

@pytest.mark.parametrize("script, message", [
    ("echo 'syntax error in line 1' >&2; exit 1",
     r"renderer .*/bin/fake failed \(exit 1\) making SVG:\nsyntax error in line 1$"),
    ("cat >/dev/null; exit 0", r"renderer .*/bin/fake exited 0 but wrote no SVG$"),
    ("kill -9 $$", r"renderer .*/bin/fake was killed by SIGKILL making SVG$"),
])
def test_renderer_failures_exit_4(tmp_path, script, message):
    fake = fake_renderer(tmp_path, "fake", script)
    with pytest.raises(RenderError) as info:
        render("digraph {}", "svg", tmp_path / "g.svg", renderer=str(fake))
    assert info.value.exit_code == 4
    assert re.search(message, str(info.value)), str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]


def test_a_renderer_that_is_not_executable_or_not_a_program(tmp_path):
    fake = fake_renderer(tmp_path, "fake", "echo hi")
    fake.chmod(0o644)
    with pytest.raises(RenderError) as info:
        render("digraph {}", "svg", tmp_path / "g.svg", renderer=str(fake))
    assert info.value.exit_code == 4
    assert str(info.value) == (f"cannot run renderer {fake} (from --renderer): it is not "
                               "executable (chmod +x it)")
    garbage = tmp_path / "bin" / "garbage"
    garbage.write_text("\x7fELF not really")       # no #! line: the kernel cannot run it
    garbage.chmod(0o755)
    with pytest.raises(RenderError) as info:
        render("digraph {}", "svg", tmp_path / "g.svg", renderer=str(garbage))
    assert info.value.exit_code == 4
    assert str(info.value) == (f"cannot run renderer {garbage}: it is not a program (no #! "
                               "line, or built for another machine)")


def test_a_relative_renderer_path_is_run_from_where_it_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fake_renderer(tmp_path, "fake", "cat >/dev/null; echo '<svg/>'")
    out = render("digraph {}", "svg", tmp_path / "g.svg", renderer="./bin/fake")
    assert out.read_text() == "<svg/>\n"


def test_graph_command_renderer_failure_is_exit_4(tmp_path):
    fake = fake_renderer(tmp_path, "fake", "echo 'boom' >&2; exit 7")
    r = invoke("graph", Z, "--svg", tmp_path / "z.svg", "--renderer", fake)
    assert r.exit_code == 4
    assert r.stderr == f"Error: renderer {fake} failed (exit 7) making SVG:\nboom\n"
    assert not (tmp_path / "z.svg").exists()


def test_a_renderer_stderr_with_escape_sequences_is_escaped(tmp_path):
    fake = fake_renderer(tmp_path, "fake", r"printf 'bad\033[2J\n' >&2; exit 1")
    r = invoke("graph", Z, "--svg", tmp_path / "z.svg", "--renderer", fake)
    assert r.exit_code == 4 and "bad\\x1b[2J" in r.stderr and no_raw_control(r.stderr)


# ----- The exit-code table -----

def test_every_exit_code_is_in_the_readme_and_the_help():
    from gradviz_cli import main as main_mod
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    table = readme.split("### Exit codes", 1)[1].split("\n## ", 1)[0]
    in_readme = {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)}
    constants = {v for k, v in vars(main_mod).items() if k.startswith("EXIT_")}
    in_docstring = {int(c) for c in re.findall(r"^    (\d+) ", main_mod.__doc__, re.M)}
    assert in_readme == constants == in_docstring == {0, 1, 2, 3, 4, 70, 130, 141, 143}
    assert signal.SIGTERM + 128 == 143 and signal.SIGPIPE + 128 == 141


@pytest.mark.parametrize("module", ["gradviz.render.terminal", "gradviz.render.output",
                                    "gradviz.render.drawing", "gradviz.inspect.names"])
def test_docstring_examples_run(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
