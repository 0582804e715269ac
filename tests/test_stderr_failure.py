"""Standard error failing (`2>&1 | head -1`, a full disk) exits with stdout's codes: 141 for a
closed pipe, 2 otherwise. rich's own handling of a closed pipe exited 1 (the code of a file that
raised), and a full disk printed gradviz's traceback into the failing stream and exited 1."""

import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
Z_SOURCE = open(os.path.join(EXAMPLES, "graph_z_wx_b.py"), encoding="utf-8").read()
GRADVIZ = [sys.executable, "-c", "from gradviz_cli.main import main; main()"]
CASES = [(["graph", "model.py", "--dot", "g.dot"], True),      # "wrote g.dot" fails
         (["graph", "model.py", "--dot", "model.py"], False),  # the usage error fails
         (["report", "model.py", "-o", "page.html"], True)]


def run_with_stderr(tmp_path, args, stderr):
    (tmp_path / "model.py").write_text(Z_SOURCE)
    return subprocess.run(GRADVIZ + args, stdout=subprocess.PIPE, stderr=stderr, cwd=tmp_path,
                          timeout=180)


@pytest.mark.parametrize("args, writes", CASES)
def test_a_closed_stderr_pipe_is_141(tmp_path, args, writes):
    read, write = os.pipe()
    os.close(read)
    try:
        proc = run_with_stderr(tmp_path, args, write)
    finally:
        os.close(write)
    assert proc.returncode == 141 and proc.stdout == b""
    if writes:
        assert (tmp_path / args[-1]).exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args, writes", CASES)
def test_a_full_stderr_is_exit_2(tmp_path, args, writes):
    with open("/dev/full", "wb") as full:
        proc = run_with_stderr(tmp_path, args, full)
    assert proc.returncode == 2 and proc.stdout == b""
    assert (tmp_path / "model.py").read_text() == Z_SOURCE
    if writes:
        assert (tmp_path / args[-1]).exists()
