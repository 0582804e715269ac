"""A non-tensor (None, a str, a list, a NumPy array) where torch takes a tensor: every `torch.X`
and `Tensor.X` the export registry holds gets torch's TypeError and its first sentence, as torch's
argument parser words it ("dot(): argument 'tensor' (position 2) must be Tensor, not NoneType"),
instead of an AttributeError from inside the op. The table is generated from the registry and
torch's typed overloads (gradviz/_torch_api.json); each case runs on both.
"""

import warnings

import numpy as np
import pytest

import gradviz
from gradviz import _registry
from gradviz._torch_api import SIGNATURES, TENSORS
from gradviz._keywords import _parse

torch = pytest.importorskip("torch")

# Known differences: tensor_split refuses a non-tensor with other words (its sections and
# indices overloads take an int or a list of ints, whose types the table does not hold).
KNOWN = {(owner, "tensor_split", bad) for owner in ("torch", "Tensor")
         for bad in ("None", "str", "list", "ndarray")}
BAD = {"None": None, "str": "x", "list": [1.0, 2.0], "ndarray": np.ones(2)}


def _cases():
    """(owner, name, number of tensors before the bad argument, bad kind): for each overload,
    each tensor parameter whose earlier parameters all take tensors, with every required
    parameter after it a tensor too (so the call is well formed but for the bad argument)."""
    seen = set()
    for owner, table in (("torch", _registry.TORCH), ("Tensor", _registry.TENSOR)):
        for name in sorted(table):
            for sig, tensors in zip(SIGNATURES[owner].get(name, ()),
                                    TENSORS[owner].get(name, ())):
                kinds = {t.rstrip("+?#"): t[-1] if t[-1] in "+?#" else "" for t in tensors}
                params = [p for p, kind in _parse(sig) if kind == "positional"]
                required = [part.split("=")[0] for part in sig[1:-1].split(", ")
                            if part and "=" not in part and "*" not in part]
                for i, p in enumerate(params):
                    if kinds.get(p) != "" or any(kinds.get(q) not in ("", "+")
                                                 for q in params[:i]):
                        break
                    if all(kinds.get(q) in ("", "+") for q in required[i + 1:]):
                        n = max(len(required), i + 1)
                        for bad in BAD:
                            if (owner, name, i, n, bad) not in seen:
                                seen.add((owner, name, i, n, bad))
                                yield owner, name, i, n, bad


CASES = list(_cases())


def _outcome(mod, owner, name, i, n, bad):
    x = mod.ones(2, 2)
    args = [mod.ones(2, 2) for _ in range(n)]
    args[i] = BAD[bad]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn = getattr(mod, name) if owner == "torch" else getattr(x, name)
            fn(*args)
        except Exception as exc:        # noqa: BLE001 - the class is compared
            return type(exc).__name__, str(exc).split("\n")[0]
    return "no error"


def test_the_table_is_not_empty():
    names = {(o, n) for o, n, *_ in CASES}
    assert ("torch", "dot") in names and ("Tensor", "dot") in names and len(names) > 150


@pytest.mark.parametrize("owner, name, i, n, bad", CASES)
def test_a_non_tensor_argument_gets_torchs_type_error(owner, name, i, n, bad):
    expected = _outcome(torch, owner, name, i, n, bad)
    if not hasattr(gradviz if owner == "torch" else gradviz.Tensor, name):
        pytest.skip("no such call")
    if expected == "no error" or expected[0] != "TypeError":
        pytest.skip(f"torch takes it ({expected})")
    if (owner, name, bad) in KNOWN:
        pytest.xfail("a known difference")
    assert _outcome(gradviz, owner, name, i, n, bad) == expected
