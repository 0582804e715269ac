"""`import torch.X` during a run on the core: gradviz's module X, or a clear refusal.

The runner puts gradviz under torch's name in sys.modules, with the submodules a file usually
imports. Any other `torch.X` would otherwise be looked for as a file in gradviz's folder:
either loaded a second time under torch's name (a copy whose classes are not the core's), or
refused with Python's bare "No module named 'torch.distributions'", which reads like the
user's own mistake. The finder below answers first: gradviz's module when the core has one
(the same object under both names), and for a submodule that PyTorch has and the core lacks,
the message `gradviz._missing` gives for a missing attribute (with the `--backend torch` hint).
"""

import contextlib
import importlib
import importlib.abc
import importlib.util
import sys

from .._missing import missing

# Names under torch's module that are gradviz's own packages, never PyTorch's.
_OWN = frozenset({"inspect", "render"})

# torch's namespaces whose public names gradviz knows (the owners of gradviz._missing).
_OWNERS = {"torch": "torch", "torch.nn": "nn", "torch.nn.functional": "functional",
           "torch.optim": "optim", "torch.linalg": "linalg", "torch.autograd": "autograd",
           "torch.autograd.functional": "autograd.functional",
           "torch.autograd.graph": "autograd.graph", "torch.nn.utils": "nn.utils"}


class _Existing(importlib.abc.Loader):
    """Loads a module that is already imported: the import gives that very object."""

    def __init__(self, module):
        self.module = module
        self.attrs = {k: getattr(module, k, None) for k in ("__spec__", "__loader__",
                                                             "__package__")}
        self.had_path = hasattr(module, "__path__")

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # the import machinery set torch's name's spec (and, where None, loader and package)
        for k, v in self.attrs.items():
            setattr(module, k, v)


class TorchSubmodules(importlib.abc.MetaPathFinder):
    """Finds `torch.X...` as gradviz's `gradviz.X...`; refuses what the core lacks. The names
    it answered for, with their loaders, are in `found`, to be undone after the run."""

    def __init__(self):
        self.found = []

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("torch."):
            return None
        parts = fullname.split(".")[1:]
        if parts[0] not in _OWN and not any(p.startswith("_") for p in parts):
            real = "gradviz." + ".".join(parts)
            try:
                module = importlib.import_module(real)
            except ModuleNotFoundError as exc:
                if exc.name != real:
                    raise
            else:
                # as a package, so that `import torch.nn.modules.module` comes back here (and
                # gets the sentence below) rather than Python's "... is not a package"
                loader = _Existing(module)
                self.found.append((fullname, loader))
                return importlib.util.spec_from_loader(fullname, loader, is_package=True)
        raise ModuleNotFoundError(_message(fullname), name=fullname)


def _message(fullname):
    """gradviz._missing's sentence when PyTorch's parent namespace has the name; Python's own
    when it does not; for a name under any other namespace, that the core has no such module."""
    parent, _, name = fullname.rpartition(".")
    owner = _OWNERS.get(parent)
    if owner is None:
        return (f"No module named '{fullname}' in gradviz's core; run with --backend torch "
                "to run this file on PyTorch")
    text = "" if name.startswith("_") else str(missing(owner, name, ()))
    return text if text.startswith("gradviz's core") else f"No module named '{fullname}'"


@contextlib.contextmanager
def torch_submodules(keep=()):
    """For the duration, `import torch.X` finds gradviz's modules first (see the module doc).
    PyTorch's own submodules already imported in this process (torch itself imported
    earlier, outside the run) are taken out of sys.modules meanwhile, except `keep` (the
    runner's aliases), so that the file cannot reach real torch through them."""
    hidden = {k: sys.modules.pop(k) for k in [k for k in sys.modules
                                              if k.startswith("torch.") and k not in keep]}
    finder = TorchSubmodules()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(finder)
        for name, loader in finder.found:   # real torch, imported later, must find its own
            sys.modules.pop(name, None)
            if not loader.had_path:
                with contextlib.suppress(AttributeError):
                    del loader.module.__path__
        sys.modules.update(hidden)
