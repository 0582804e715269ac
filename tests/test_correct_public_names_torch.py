"""Every public name of a gradviz module that stands for a torch module is a name torch 2.13's
module has too: a file reaching `torch.autograd.is_grad_enabled` or `F.no_grad` ran on gradviz and
failed on torch. gradviz's own helpers there take a leading underscore, and reading such a name
raises torch's AttributeError."""

import importlib
import types

import pytest

import gradviz

torch = pytest.importorskip("torch")

MODULES = ["", ".autograd", ".autograd.functional", ".autograd.graph", ".nn", ".nn.functional",
           ".nn.init", ".linalg", ".optim", ".optim.lr_scheduler", ".utils.data"]

# Deliberate differences, each with its reason.
ALLOWED = {
    # gradviz.autograd.graph defines the node machinery itself (torch's lives in C++): the
    # engine, the inspector and the renderers import these from it. Known; not yet private.
    ".autograd.graph": {
        "AccumulateGrad", "CopySlices", "WRITE_OVERLAP", "accumulate", "accumulator",
        "apply_view", "edge_of", "edges", "internal_overlap", "is_stale", "itertools", "modified_error", "np", "overlaps", "re", "refresh",
        "short_name", "shorten", "site_at", "sys", "user_frame", "user_stack", "weakref",
        "writable_view"},
}


def _extra(suffix):
    ours = importlib.import_module("gradviz" + suffix)
    theirs = importlib.import_module("torch" + suffix)
    for name in dir(ours):
        if name.startswith("_") or hasattr(theirs, name):
            continue
        value = getattr(ours, name)
        # a package's own submodules (gradviz.nn.loss): Python sets them on the package when
        # they are imported (torch's sit elsewhere, torch.nn.modules.loss, or are deleted)
        if isinstance(value, types.ModuleType) and value.__name__.startswith(ours.__name__ + "."):
            continue
        yield name


@pytest.mark.parametrize("suffix", MODULES)
def test_public_names_are_torchs(suffix):
    assert sorted(set(_extra(suffix)) - ALLOWED.get(suffix, set())) == []


@pytest.mark.parametrize("suffix", sorted(ALLOWED))
def test_the_allowed_names_are_still_there(suffix):
    assert ALLOWED[suffix] <= set(_extra(suffix))


@pytest.mark.parametrize("path", [
    "get_printoptions", "autograd.is_grad_enabled", "autograd.is_anomaly_enabled",
    "autograd.FunctionCtx", "autograd.GradcheckError", "autograd.once_differentiable",
    "autograd.functional.enable_grad", "nn.functional.add_", "nn.functional.no_grad",
    "nn.functional.ops", "nn.functional.user_stacklevel", "nn.init.as_tensor",
    "linalg.linalg_cross", "linalg.with_keywords", "optim.lr_scheduler.user_stacklevel"])
def test_a_name_torch_lacks_raises_as_torch(path):
    *module, name = path.split(".")
    theirs = importlib.import_module(".".join(["torch", *module]))
    ours = importlib.import_module(".".join(["gradviz", *module]))
    with pytest.raises(AttributeError) as expected:
        getattr(theirs, name)
    with pytest.raises(AttributeError) as found:
        getattr(ours, name)
    # gradviz writes the "Did you mean" that Python prints for torch's in a traceback
    text = str(found.value).replace("gradviz", "torch").split(". Did you mean:")[0]
    assert text == str(expected.value)


def test_the_names_stay_where_torch_has_them():
    # torch.autograd.function.FunctionCtx, torch.is_grad_enabled, ...: kept there
    from gradviz.autograd.function import FunctionCtx, once_differentiable  # noqa: F401
    from gradviz.autograd.gradcheck import GradcheckError  # noqa: F401
    assert gradviz.is_grad_enabled() and not gradviz.is_anomaly_enabled()
