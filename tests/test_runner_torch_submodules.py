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


def _report(tmp_path, source):
    path = tmp_path / "prog.py"
    path.write_text(source)
    return run_file(str(path)).report()


def _stdout(tmp_path, source):
    report = _report(tmp_path, source)
    assert report["error"] is None, report["error"]
    return report["stdout"].split()


@pytest.mark.parametrize("line", sorted(SUBMODULES))
def test_torch_submodule_imports_are_the_cores(tmp_path, line):
    out = _stdout(tmp_path, f"import torch\n{line}\n{SUBMODULES[line]}\n")
    assert out[-1] in ("torch.float32", "StepLR")


MISSING = {
    "import torch.distributions": "gradviz's core does not implement torch.distributions "
                                  "(PyTorch 2.13.0 has it); run with --backend torch to run "
                                  "this file on PyTorch",
    "from torch.nn.parameter import Parameter":
        "gradviz's core does not implement torch.nn.parameter (PyTorch 2.13.0 has it); run with "
        "--backend torch to run this file on PyTorch",
    "import torch.utils.tensorboard": "No module named 'torch.utils.tensorboard' in gradviz's "
                                      "core; run with --backend torch to run this file on PyTorch",
    "import torch.no_such_module": "No module named 'torch.no_such_module'",
    "import torch.render": "No module named 'torch.render'",     # gradviz's own package
    "import torch._C": "No module named 'torch._C'",
}


@pytest.mark.parametrize("line", sorted(MISSING))
def test_a_torch_submodule_the_core_lacks_is_refused_with_the_backend_hint(tmp_path, line):
    error = _report(tmp_path, f"import torch\n{line}\n")["error"]
    assert error["type"] == "ModuleNotFoundError"
    assert error["message"] == MISSING[line]
    assert error["line"] == 2


def test_a_torch_submodule_the_core_has_is_the_same_module_and_is_dropped_after_the_run(
        tmp_path):
    import sys

    import gradviz.linalg
    out = _stdout(tmp_path, "import torch, gradviz.linalg\nimport torch.linalg as L\n"
                            "print(L is gradviz.linalg, L.__spec__.name)\n")
    assert out == ["True", "gradviz.linalg"]
    assert gradviz.linalg.__spec__.name == "gradviz.linalg"
    assert "torch.linalg" not in sys.modules or sys.modules["torch.linalg"] is not gradviz.linalg


def test_torch_backends_submodules_import_by_name(tmp_path):
    out = _stdout(tmp_path, "import torch\nimport torch.backends.mps\n"
                            "import torch.backends.cudnn as c\n"
                            "print(torch.backends.mps.is_available(), c.is_available())\n")
    assert out == ["False", "False"]


def test_real_torchs_submodules_imported_earlier_are_out_of_reach_during_a_core_run(tmp_path):
    real = pytest.importorskip("torch")
    import torch.distributions     # noqa: F401 - now in sys.modules, as after a torch test
    import sys
    error = _report(tmp_path, "import torch\nimport torch.distributions\n")["error"]
    assert error is not None and error["message"] == MISSING["import torch.distributions"]
    assert sys.modules["torch.distributions"].__name__ == "torch.distributions"
    assert sys.modules["torch"] is real


def test_a_module_under_a_core_module_that_is_not_a_package_gets_the_hint(tmp_path):
    import gradviz.nn.modules
    error = _report(tmp_path, "import torch\nfrom torch.nn.modules.module import Module\n")["error"]
    assert error["message"] == ("No module named 'torch.nn.modules.module' in gradviz's core; "
                                "run with --backend torch to run this file on PyTorch")
    assert not hasattr(gradviz.nn.modules, "__path__")
    assert gradviz.nn.modules.__spec__.name == "gradviz.nn.modules"
    import gradviz.backends
    _stdout(tmp_path, "import torch.backends.mps\n")
    assert gradviz.backends.mps.__loader__ is None and gradviz.backends.mps.__package__ is None
