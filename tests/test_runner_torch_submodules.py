"""A file that imports torch's submodules by their torch names runs on gradviz's core under the
runner: each name is the core's own module, never a second copy of gradviz loaded under it."""

import pytest

from gradviz.inspect import run_file

SUBMODULES = {
    "from torch.utils import data":
        "print(data.DataLoader(data.TensorDataset(torch.arange(6.)), 4)"
        ".__iter__().__next__()[0].dtype)",
    "import torch.utils.data as tud": "print(tud.TensorDataset(torch.ones(2))[0][0].dtype)",
    "from torch.optim import lr_scheduler":
        "print(type(lr_scheduler.StepLR(torch.optim.SGD([torch.ones(1, requires_grad=True)],"
        " lr=0.1), 1)).__name__)",
    "from torch.autograd.functional import jacobian":
        "print(jacobian(lambda x: x * 2, torch.ones(2)).dtype)",
}


@pytest.mark.parametrize("line", sorted(SUBMODULES))
def test_torch_submodule_imports_are_the_cores(tmp_path, line):
    path = tmp_path / "prog.py"
    path.write_text(f"import torch\n{line}\n{SUBMODULES[line]}\n")
    report = run_file(str(path)).report()
    assert report["error"] is None, report["error"]
    assert report["stdout"].split()[-1] in ("torch.float32", "StepLR")
