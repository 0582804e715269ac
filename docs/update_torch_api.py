"""Regenerate gradviz/_torch_api.json: the public names of torch 2.13 that gradviz compares a
missing attribute with, so that `torch.X` the core lacks says "not implemented by gradviz's
core" when PyTorch has X, and reads like Python's own AttributeError when it does not.
gradviz/_torch_api.py reads the file into frozensets.

    .venv/bin/python docs/update_torch_api.py     (needs torch installed)

It also holds torch's signatures of every `torch.X` and `Tensor.X` that gradviz exports (one
string per overload, from torch's own type stubs, or from inspect for torch's Python-level
functions): gradviz._keywords reads them to accept `out=` exactly where torch does and to refuse
an argument it does not implement, and tests/test_signatures_torch.py audits the exports
against them.

tests/test_missing_names.py fails when the file is stale for the installed torch.
"""

import ast
import inspect
import json
import pathlib

TARGET = pathlib.Path(__file__).resolve().parents[1] / "gradviz" / "_torch_api.json"


def names():
    import torch
    import torch.linalg
    import torch.nn
    import torch.nn.functional
    import torch.nn.utils
    import torch.optim
    import torch.optim.lr_scheduler
    import torch.nn.init
    import torch.utils
    import torch.utils.data
    import torch.autograd.functional
    import torch.autograd.graph

    def public(obj):
        return sorted(n for n in dir(obj) if not n.startswith("_"))

    sigs, tensors = signatures(torch)
    return {"version": torch.__version__.split("+")[0],
            "signatures": sigs, "tensors": tensors,
            "torch": public(torch), "Tensor": public(torch.Tensor), "nn": public(torch.nn),
            "functional": public(torch.nn.functional), "optim": public(torch.optim),
            "linalg": public(torch.linalg),
            "autograd": public(torch.autograd),
            "autograd_functional": public(torch.autograd.functional),
            "autograd_graph": public(torch.autograd.graph),
            "nn_utils": public(torch.nn.utils),
            "nn_init": public(torch.nn.init),
            "optim_lr_scheduler": public(torch.optim.lr_scheduler),
            "utils": public(torch.utils), "utils_data": public(torch.utils.data)}


# Where torch's stubs differ from what its parser takes: tensor, as_tensor and new_tensor take
# only the data positionally ("tensor() takes 1 positional argument but 2 were given").
_PARSER = {
    ("torch", "tensor"): ["(data, *, dtype=None, device=None, requires_grad=False, "
                          "pin_memory=False)"],
    ("torch", "as_tensor"): ["(data, *, dtype=None, device=None)"],
    ("Tensor", "new_tensor"): ["(data, *, dtype=None, device=None, requires_grad=False, "
                               "pin_memory=False)"],
    # torch.unique is a (*args, **kwargs) dispatcher; its implementation (_unique_impl) takes
    ("torch", "unique"): ["(input, sorted=True, return_inverse=False, return_counts=False, "
                          "dim=None)"],
    # and so is torch.unique_consecutive (_unique_consecutive_impl)
    ("torch", "unique_consecutive"): ["(input, return_inverse=False, return_counts=False, "
                                      "dim=None)"],
}


def signatures(torch):
    """torch's overloads of each exported name: {"torch": {name: [sig, ...]}, "Tensor": ...};
    and, for the names read from the stubs, each overload's tensor parameters (_tensor_params),
    in the same order."""
    from gradviz import _registry
    stubs = pathlib.Path(torch.__file__).parent / "_C"
    functions = _stub_overloads(stubs / "_VariableFunctions.pyi", None)
    methods = _stub_overloads(stubs / "__init__.pyi", "TensorBase")
    out, tensors = {}, {}
    for where, owner, table, names in (("torch", torch, functions, _registry.TORCH),
                                       ("Tensor", torch.Tensor, methods, _registry.TENSOR)):
        found, typed = {}, {}
        for name in sorted(n for n in names if not n.startswith("__")):
            python = _from_inspect(getattr(owner, name, None), where == "Tensor")
            if (where, name) in _PARSER:
                found[name] = _PARSER[where, name]
            elif python or name in table:
                found[name] = python or [sig for sig, _ in table[name]]
                if not python and any(p[-1] != "#" for _, ps in table[name] for p in ps):
                    typed[name] = [params for _, params in table[name]]
        out[where], tensors[where] = found, typed
    return out, tensors


def _stub_overloads(path, cls):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = tree.body if cls is None else next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    found = {}
    for node in body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("__"):
            found.setdefault(node.name, []).append(
                (_from_stub(node.args, cls is not None), _tensor_params(node.args, cls)))
    return found


def _from_stub(args, method):
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + args.defaults
    parts = [_param(a.arg, d) for a, d in zip(positional, defaults)]
    if args.vararg:
        parts.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        parts.append("*")
    # The stubs give Tensor methods torch.X's `out`, which methods refuse (Tensor.add(out=) is
    # a TypeError), and spell the parser's `from` (a Python keyword) as `from_`.
    parts += [_param(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)
              if not (method and a.arg == "out")]
    if method and parts[:1] == ["self"]:
        parts = parts[1:]
    if parts[-1:] == ["*"]:
        parts = parts[:-1]
    return "(" + ", ".join(parts).replace("from_", "from") + ")"


def _tensor_params(args, method):
    """The parameters a stub types as a tensor or a number: "name" where the parser takes only a
    Tensor, "name+" where it also takes a number (torch.add's `other`), "name?" where it also
    takes None, "name#" where it takes only a number (an int, a float or a bool): gradviz._keywords
    names them in torch's TypeError for an argument of another type."""
    found = []
    for a in args.posonlyargs + args.args + args.kwonlyargs:
        kinds = {ast.unparse(k) for k in _union(a.annotation)} if a.annotation else set()
        if method and a.arg in ("self", "out"):     # methods refuse `out` (see _from_stub)
            continue
        if "Tensor" in kinds:
            found.append(a.arg + ("?" if "None" in kinds else "+" if "Number" in kinds else ""))
        elif kinds and kinds <= _NUMBERS:
            found.append(a.arg + "#")
    return found


_NUMBERS = {"Number", "_complex", "_int", "_float", "_bool", "SymInt"}


def _union(node):
    """The members of a stub's `A | B | C` annotation."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union(node.left) + _union(node.right)
    return [node]


def _param(name, default):
    return name if default is None else f"{name}={ast.unparse(default)}"


def _from_inspect(fn, method):
    """[signature] of a function torch writes in Python (torch/functional.py, torch/_tensor.py),
    None for a builtin."""
    if not inspect.isfunction(fn):
        return None
    try:
        params = list(inspect.signature(fn).parameters.values())
    except ValueError:
        return None
    params = [p.replace(annotation=p.empty) for p in params[method:]]
    return [str(inspect.Signature(params))]


def render(data):
    # One name a line, so that a new torch release reads as a diff of names.
    return json.dumps(data, indent=1) + "\n"


if __name__ == "__main__":
    import sys
    # Run in a fresh interpreter: dir(torch) grows as other code imports torch's submodules.
    if "--print" in sys.argv:
        sys.stdout.write(render(names()))
    else:
        TARGET.write_text(render(names()), encoding="utf-8")
        print(f"wrote {TARGET}")
