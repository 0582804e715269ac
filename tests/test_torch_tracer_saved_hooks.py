"""Under --backend torch the tracer reads what each node saved, but never through the file's
own saved_tensors_hooks: their unpack hook runs exactly as often as under `python file.py`."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
from gradviz.inspect import run_file  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = """\
import torch
log = []
def pack(t):
    log.append("pack")
    return ("boxed", t)
def unpack(box):
    log.append("unpack")
    return box[1]
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = (x[torch.tensor([0, 2])] * w).exp()     # IndexBackward0 saves a list of indices
    z = torch.stack([y, y.sin()]).sum()
z.backward()
print(log.count("pack"), log.count("unpack"), x.grad.tolist(), w.grad.tolist())
"""


def _python(path):
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.parametrize("source", ["inline", "examples/saved_tensors_hooks.py"])
def test_the_files_unpack_hook_runs_as_under_python(tmp_path, source):
    if source == "inline":
        path = tmp_path / "prog.py"
        path.write_text(PROGRAM)
        expected = _python(path)
    else:
        path = os.path.join(ROOT, source)
        prog = tmp_path / "as_torch.py"      # the example imports gradviz: run it on torch
        prog.write_text("import sys, torch\nsys.modules['gradviz'] = torch\n"
                        f"exec(open({path!r}).read())\n")
        expected = _python(prog)
    report = run_file(str(path), backend="torch").report()
    assert report["error"] is None
    assert report["stdout"] == expected
