"""`import gradviz` imports the core on first use of one of its names: the torch backend's
inspector and renderer import without it, and `import gradviz as torch` offers the same names,
bound to the same objects, as when the core was imported eagerly.

Each case runs in a fresh interpreter: what a module imports shows only in the first import.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _fresh(code):
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_torch_backend_modules_import_without_the_core():
    loaded = _fresh(
        "import json, sys\n"
        "import gradviz.inspect, gradviz.inspect.torch_tracer, gradviz.render.drawing\n"
        "import gradviz.render.module_graph\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('gradviz'))))\n")
    assert "gradviz.inspect.session" in loaded
    # (the derivative table is read: torch's nodes list their saved values in its order)
    for core in ("gradviz._ops", "gradviz.nn", "gradviz.optim", "gradviz.serialization"):
        assert core not in loaded


def test_first_name_imports_the_core_as_the_eager_import_did():
    facts = _fresh(
        "import json\n"
        "import gradviz as torch\n"
        "a = torch.tensor(2.0, requires_grad=True)\n"
        "(a * a).backward()\n"
        "from gradviz import _missing, _registry\n"
        "print(json.dumps({\n"
        "    'grad': a.grad.item(),\n"
        "    'all': [n for n in torch.__all__ if not hasattr(torch, n)],\n"
        # the registry's forwards replace the raw imports; the imports after them win
        "    'registry': [n for n, f in _registry.TORCH.items()\n"
        "                 if getattr(torch, n) is not f and n not in vars(torch.autograd)\n"
        "                 and n not in ('load', 'save')],\n"
        "    'no_grad': torch.no_grad is torch.autograd.no_grad,\n"
        "    'float': [torch.float is torch.float32, torch.long is torch.int64],\n"
        "    'stubs': sum(isinstance(vars(torch.Tensor).get(n), _missing._Missing)\n"
        "                 for n in _missing.TENSOR),\n"
        "    'dir': dir(torch) == sorted(vars(torch)),\n"
        "}))\n")
    assert facts["grad"] == 4.0
    assert facts["all"] == []
    assert facts["registry"] == []
    assert facts["no_grad"] is True
    assert facts["float"] == [True, True]
    assert facts["stubs"] > 0
    assert facts["dir"] is True


def test_a_module_of_the_core_asked_for_from_outside_comes_filled():
    # the registry is filled as the core's modules are imported: `from gradviz import
    # _registry` (a test's, a script's) gives it whole, as the eager import did
    count = _fresh("import json\nfrom gradviz import _registry\n"
                   "print(json.dumps(len(_registry.TORCH)))\n")
    assert count > 200


def test_dir_lists_the_core_before_any_name_is_used():
    names = _fresh("import json, gradviz\nprint(json.dumps(dir(gradviz)))\n")
    for name in ("tensor", "Tensor", "nn", "autograd", "no_grad", "float", "add"):
        assert name in names


def test_core_modules_imported_first_still_give_the_whole_core():
    # a core module imported before any name of the package (its imports ask the package for
    # its sibling modules while the core is half imported)
    facts = _fresh(
        "import json\n"
        "import gradviz._ops.sorting\n"
        "from gradviz import nn\n"
        "import gradviz as torch\n"
        "y = nn.Linear(2, 1)(torch.ones(3, 2)).sum()\n"
        "y.backward()\n"
        "print(json.dumps([type(y.grad_fn).__name__, torch.sort(torch.tensor([2., 1.]))[1]"
        ".tolist()]))\n")
    assert facts == ["SumBackward0", [1, 0]]


def test_unknown_names_still_say_what_torch_has():
    message = _fresh(
        "import json, gradviz\n"
        "try:\n"
        "    gradviz.no_such_name\n"
        "except AttributeError as exc:\n"
        "    print(json.dumps(str(exc)))\n")
    assert message.startswith("module 'torch' has no attribute 'no_such_name'")


def test_a_tensor_unpickled_in_a_fresh_process_has_its_ops(tmp_path):
    # pickle imports gradviz._tensor alone: the tensor it rebuilds must still add, multiply, ...
    path = tmp_path / "t.pkl"
    _fresh(f"import pickle, gradviz\npickle.dump(gradviz.ones(2) * 3, open({str(path)!r}, 'wb'))\n"
           "print(1)")
    out = _fresh(f"import json, pickle\nx = pickle.load(open({str(path)!r}, 'rb'))\n"
                 "print(json.dumps([(x + 1).tolist(), (x * x).sum().item()]))")
    assert out == [[4.0, 4.0], 18.0]


# ----- First names from many threads at once -----------------------------------------------
# Each thread waits at a barrier, then asks for its name: one loads the core, the others wait
# for it (before, they found it half loaded: "gradviz's core does not implement torch.tensor",
# or a circular import of gradviz.nn across threads).

_THREADS = (
    "import json, sys, threading\n"
    "import gradviz as torch\n"
    "names = sys.argv[1:]\n"
    "barrier = threading.Barrier(len(names))\n"
    "errors, got = [], {}\n"
    "def first(name):\n"
    "    barrier.wait()\n"
    "    try:\n"
    "        got[name] = type(getattr(torch, name)).__name__\n"
    "    except Exception as exc:\n"
    "        errors.append(f'{name}: {type(exc).__name__}: {exc}')\n"
    "threads = [threading.Thread(target=first, args=(n,)) for n in names]\n"
    "for t in threads: t.start()\n"
    "for t in threads: t.join()\n"
    "print(json.dumps([errors, got, torch.nn.Linear(2, 1)(torch.ones(2)).shape[0]]))\n"
)

_NAME_SETS = [
    ["tensor"] * 8,
    ["tensor", "ones", "nn", "zeros", "randn", "Tensor", "optim", "float32"],
    ["nn", "optim", "linalg", "autograd", "no_grad", "utils", "cuda", "manual_seed"],
]


@pytest.mark.parametrize("run", range(2))
@pytest.mark.parametrize("names", _NAME_SETS, ids=["same", "mixed", "modules"])
def test_first_names_from_eight_threads_at_once_all_load(names, run):
    proc = subprocess.run([sys.executable, "-c", _THREADS, *names], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    errors, got, n = json.loads(proc.stdout)
    assert errors == [] and sorted(got) == sorted(set(names)) and n == 1
