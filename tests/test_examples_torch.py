"""Examples print what PyTorch prints: every file runs as a script on gradviz and, with
`gradviz` aliased to the real torch, on PyTorch 2.13; the printed output must be the same,
character for character (values as torch prints them, random draws included).

All files run in one process per backend (importing torch once), each after
`manual_seed(67280421310721)` so that no file depends on the ones before it.
"""

import json
import os
import subprocess
import sys

import pytest

try:
    from .example_files import EXAMPLES, example_files
except ImportError:
    from example_files import EXAMPLES, example_files

_RUNNER = r"""
import contextlib, io, json, os, runpy, sys, warnings
backend = sys.argv[1]
if backend == "torch":
    import torch, torch.nn, torch.nn.functional, torch.optim
    sys.modules["gradviz"] = torch
    for name in list(sys.modules):
        if name.startswith("torch."):
            sys.modules["gradviz." + name[6:]] = sys.modules[name]
import gradviz
warnings.simplefilter("ignore")
out = {}
for path in sys.argv[2:]:
    gradviz.manual_seed(67280421310721)
    buf = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(buf):
        try:
            sys.argv = [path]
            runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:
            code = exc.code
        except BaseException as exc:
            code = type(exc).__name__ + ": " + str(exc).split("\n")[0]
    out[os.path.basename(path)] = [code, buf.getvalue()]
sys.__stdout__.write(json.dumps(out))
"""

# Examples whose output differs from torch's on purpose, with the reason.
DIFFERENT = {}


def _examples():
    # a torch-only example has no core output to compare (see example_files.TORCH_ONLY)
    return [f for f in example_files(include_torch_only=False) if f not in DIFFERENT]


@pytest.fixture(scope="module")
def outputs():
    pytest.importorskip("torch")
    paths = [os.path.join(EXAMPLES, f) for f in _examples()]
    res = {}
    for backend in ("gradviz", "torch"):
        proc = subprocess.run([sys.executable, "-c", _RUNNER, backend, *paths],
                              capture_output=True, text=True, cwd=EXAMPLES, timeout=900,
                              env=dict(os.environ, COLUMNS="100"))
        assert proc.returncode == 0, proc.stderr[-3000:]
        res[backend] = json.loads(proc.stdout)
    return res


@pytest.mark.parametrize("name", _examples())
def test_example_prints_what_torch_prints(outputs, name):
    assert outputs["gradviz"][name] == outputs["torch"][name]
