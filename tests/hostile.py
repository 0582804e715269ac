"""What the tests of bad input (tests/test_hostile_*.py) share: a file written for the test,
gradviz run in-process (CliRunner) or as a command in a process of its own, the same file under
plain Python, and one deadline for all of them on a loaded machine."""

import os
import subprocess
import sys
import textwrap

from click.testing import CliRunner

from gradviz_cli.main import cli

GRADVIZ = [sys.executable, "-c", "from gradviz_cli.main import main; main()"]
PATIENCE = 180      # seconds: a deadline on a loaded machine, never a timing check

MODEL = "import gradviz as torch\na = torch.tensor([1.0, 2.0], requires_grad=True)\n" \
        "loss = (a * 3).sum()\n"


def write(tmp_path, source, name="prog.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def gradviz(cwd, *args, **kw):
    """`gradviz ARGS` in a process of its own, run in cwd; kw go to subprocess.run."""
    return subprocess.run(GRADVIZ + [str(a) for a in args], cwd=cwd, capture_output=True,
                          timeout=PATIENCE, **kw)


def start_gradviz(cwd, *args, **kw):
    """`gradviz ARGS` started in cwd, with stdout and stderr piped; kw go to Popen."""
    return subprocess.Popen(GRADVIZ + [str(a) for a in args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def python(cwd, path):
    """`python path` in cwd, stdin closed."""
    return subprocess.run([sys.executable, str(path)], cwd=cwd, capture_output=True,
                          timeout=PATIENCE, stdin=subprocess.DEVNULL)


def python_status(path):
    """The exit status and stderr of `python path`, gradviz answering to `torch`."""
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=PATIENCE, cwd=os.path.dirname(path))
    return proc.returncode, proc.stderr


def alive(pid):
    """Whether process pid runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True
