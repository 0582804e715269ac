""".ci/run builds its own .venv-ci, never touches the user's .venv, and fails when pytest does
(exit 5, no tests collected, included). Run in a copy with stand-ins for python3 and chromium."""

import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A python3 whose `-m venv DIR` makes DIR/bin/pip (logs its arguments) and DIR/bin/python
# (logs them and exits with $PYTEST_STATUS).
FAKE_PYTHON3 = '''#!/bin/sh
[ "$1" = "-m" ] && [ "$2" = "venv" ] || exit 99
mkdir -p "$3/bin"
printf '#!/bin/sh\\necho "pip $*" >> "$LOG"\\n' > "$3/bin/pip"
printf '#!/bin/sh\\necho "python $*" >> "$LOG"\\nexit "$PYTEST_STATUS"\\n' > "$3/bin/python"
chmod +x "$3/bin/pip" "$3/bin/python"
'''


@pytest.fixture
def sandbox(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, ".ci", "run"), repo / ".ci" / "run")
    (repo / ".venv").mkdir()
    (repo / ".venv" / "mine").write_text("the user's environment")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("python3", FAKE_PYTHON3), ("chromium", "#!/bin/sh\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return repo, bin_dir, tmp_path / "log"


def run_ci(sandbox, status):
    repo, bin_dir, log = sandbox
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "LOG": str(log), "PYTEST_STATUS": str(status)}
    return subprocess.run(["bash", str(repo / ".ci" / "run")], env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("status", [0, 1, 5])
def test_ci_uses_venv_ci_and_keeps_pytests_status(sandbox, status):
    repo, _, log = sandbox
    proc = run_ci(sandbox, status)
    assert proc.returncode == status, proc.stderr
    assert (repo / ".venv" / "mine").read_text() == "the user's environment"
    assert (repo / ".venv-ci" / "bin" / "python").exists()
    calls = log.read_text().splitlines()
    assert "pip install -q -e .[test]" in calls
    assert "pip install -q torch==2.13.0" in calls
    assert calls[-1] == "python -m pytest -q"
    assert ("ci: pytest collected no tests" in proc.stderr) == (status == 5)


def test_ci_script_never_removes_dot_venv():
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        script = f.read()
    assert "rm -rf .venv\n" not in script and 'VENV=.venv-ci' in script
