"""The AttributeError for a name the core lacks: `torch.X`, `Tensor.X`, `nn.X`, `F.X`.

When PyTorch has the name, the message says that gradviz's core does not implement it and
that `--backend torch` runs the file on PyTorch; when PyTorch lacks it too, the message is
Python's own (with torch's module name, as the user wrote it). Either way, close names gradviz
does have are suggested.

>>> import gradviz as torch
>>> torch.no_such_op
Traceback (most recent call last):
  ...
AttributeError: module 'torch' has no attribute 'no_such_op'
"""

from ._torch_api import (AUTOGRAD, AUTOGRAD_FUNCTIONAL, AUTOGRAD_GRAPH, FUNCTIONAL, LINALG,
                         NN, NN_INIT, NN_UTILS, OPTIM, OPTIM_LR_SCHEDULER, TENSOR, TORCH, UTILS,
                         UTILS_DATA, VERSION)

_OWNERS = {
    "torch": (TORCH, "module 'torch'", "torch."),
    "Tensor": (TENSOR, "'Tensor' object", "Tensor."),
    "nn": (NN, "module 'torch.nn'", "torch.nn."),
    "functional": (FUNCTIONAL, "module 'torch.nn.functional'", "torch.nn.functional."),
    "optim": (OPTIM, "module 'torch.optim'", "torch.optim."),
    "linalg": (LINALG, "module 'torch.linalg'", "torch.linalg."),
    "autograd": (AUTOGRAD, "module 'torch.autograd'", "torch.autograd."),
    "autograd.functional": (AUTOGRAD_FUNCTIONAL, "module 'torch.autograd.functional'",
                            "torch.autograd.functional."),
    "autograd.graph": (AUTOGRAD_GRAPH, "module 'torch.autograd.graph'", "torch.autograd.graph."),
    "nn.utils": (NN_UTILS, "module 'torch.nn.utils'", "torch.nn.utils."),
    "nn.init": (NN_INIT, "module 'torch.nn.init'", "torch.nn.init."),
    "optim.lr_scheduler": (OPTIM_LR_SCHEDULER, "module 'torch.optim.lr_scheduler'",
                           "torch.optim.lr_scheduler."),
    "utils": (UTILS, "module 'torch.utils'", "torch.utils."),
    "utils.data": (UTILS_DATA, "module 'torch.utils.data'", "torch.utils.data."),
}


def missing(owner, name, have):
    """The AttributeError for `name` looked up on `owner` ("torch", "Tensor", "nn",
    "functional", "optim", "linalg", "autograd", "autograd.functional", "autograd.graph",
    "nn.utils", "nn.init", "optim.lr_scheduler", "utils" or "utils.data");
    `have` lists the names gradviz does define there."""
    known, subject, prefix = _OWNERS[owner]
    if name.startswith("__") or name not in known:
        msg = f"{subject} has no attribute '{name}'"
    else:
        msg = (f"gradviz's core does not implement {prefix}{name} (PyTorch {VERSION} "
               "has it); run with --backend torch to run this file on PyTorch")
    if not name.startswith("_"):
        import difflib              # only on this error path (import time)
        close = difflib.get_close_matches(name, [h for h in have if not h.startswith("_")],
                                          n=3, cutoff=0.75)
        if close:
            msg += ". Did you mean: " + ", ".join(f"'{c}'" for c in close) + "?"
    err = AttributeError(msg)
    # The message makes its own suggestions: a name of None keeps Python's traceback from
    # appending a second "Did you mean" (it only suggests when the error names the attribute).
    err.name = None
    return err



def module_getattr(owner, module_name, have):
    """The module-level `__getattr__` of the gradviz module standing for torch's `owner`
    namespace (see `missing`): a private name gets Python's own error, a public one the error
    above. `have` (the module's globals() or __all__) is read when a name is asked for."""
    def __getattr__(name):
        if name.startswith("_"):
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        raise missing(owner, name, have)
    return __getattr__

class _Missing:
    """A Tensor attribute that PyTorch has and gradviz's core lacks: reading it raises the
    AttributeError above. (A class-level __getattr__ would say the same, but it turns off
    CPython's fast attribute lookups on every tensor, costing about 9% per op.)"""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, owner=None):
        owner = type(obj) if owner is None else owner
        # close names among the methods the core has (the other stubs are no suggestion)
        have = [n for n in dir(owner) if not isinstance(_static(owner, n), _Missing)]
        raise missing("Tensor", self.name, have)


def _static(cls, name):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def install_tensor_stubs(tensor_cls):
    """Give tensor_cls a _Missing stub for each public torch.Tensor name it lacks."""
    for name in TENSOR:
        if not hasattr(tensor_cls, name):
            setattr(tensor_cls, name, _Missing(name))
