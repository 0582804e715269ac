"""Regenerate gradviz/_torch_api.json: the public names of torch 2.13 that gradviz compares a
missing attribute with, so that `torch.X` the core lacks says "not implemented by gradviz's
core" when PyTorch has X, and reads like Python's own AttributeError when it does not.
gradviz/_torch_api.py reads the file into frozensets.

    .venv/bin/python docs/update_torch_api.py     (needs torch installed)

tests/test_missing_names.py fails when the file is stale for the installed torch.
"""

import json
import pathlib

TARGET = pathlib.Path(__file__).resolve().parents[1] / "gradviz" / "_torch_api.json"


def names():
    import torch
    import torch.linalg
    import torch.nn
    import torch.nn.functional
    import torch.optim
    import torch.autograd.functional
    import torch.autograd.graph

    def public(obj):
        return sorted(n for n in dir(obj) if not n.startswith("_"))

    return {"version": torch.__version__.split("+")[0],
            "torch": public(torch), "Tensor": public(torch.Tensor), "nn": public(torch.nn),
            "functional": public(torch.nn.functional), "optim": public(torch.optim),
            "linalg": public(torch.linalg),
            "autograd": public(torch.autograd),
            "autograd_functional": public(torch.autograd.functional),
            "autograd_graph": public(torch.autograd.graph)}


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
