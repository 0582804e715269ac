"""bilinear: x1^T A_o x2 for every output feature o, recorded as torch records it: both inputs
viewed as matrices, one TrilinearBackward0 node, the result viewed back, then the bias added.
"""

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._registry import export, records
from .._tensor import _make
from ..autograd.formula import record
from ._common import _needs
from .arithmetic import add
from .views import view

_C_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long"}


_BILINEAR = ((1, 3), (0,), (1, 2), (2, 3))     # bilinear's expand1, expand2, expand3, sumdim


@records("trilinear")
def _trilinear(i1, i2, i3, expand1=(1, 3), expand2=(0,), expand3=(1, 2), sumdim=(2, 3)):
    """torch's _trilinear: i1, i2 and i3 unsqueezed at expand1, expand2, expand3 (to a common
    number of dims), multiplied, and summed over sumdim. bilinear's (the defaults) is
    out[n, o] = sum_ij i1[n, i] i2[o, i, j] i3[n, j]; its gradients are _trilinear again, with
    the dims permuted (torch's _trilinear_backward)."""
    a, w, b = i1._data, i2._data, i3._data
    dims = tuple(tuple(d) for d in (expand1, expand2, expand3, sumdim))
    if dims == _BILINEAR:
        r = np.einsum("ni,oij,nj->no", a, w, b, optimize=True)
    else:
        r = _trilinear_array(a, w, b, *dims)
    out = _make(r.astype(a.dtype, copy=False))
    if _needs(i1, i2, i3):
        record(D["trilinear"], out, (i1, i2, i3), (i1, i2, i3) + dims)
    return out


def _trilinear_array(a, b, c, expand1, expand2, expand3, sumdim):
    n = a.ndim + len(expand1)
    letters = "abcdefghijklmnopqrstuvwxyz"[:n]
    ins = ["".join(letters[d] for d in range(n) if d not in e)
           for e in (expand1, expand2, expand3)]
    kept = [letters[d] for d in range(n) if d not in sumdim]
    present = set("".join(ins))
    r = np.einsum(f"{','.join(ins)}->{''.join(k for k in kept if k in present)}", a, b, c,
                  optimize=True)
    for k, letter in enumerate(kept):
        if letter not in present:       # a dim no input has: size 1
            r = np.expand_dims(r, k)
    return r


@export("bilinear", tensor=False)
def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b (torch.nn.functional.bilinear), over any leading dims.

    >>> import gradviz as torch
    >>> x = torch.ones(2, 3)
    >>> torch.bilinear(x, torch.ones(2, 4), torch.ones(5, 3, 4, requires_grad=True)).shape
    torch.Size([2, 5])
    """
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    if weight.dim() < 2 or input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected "
                           f"{weight.shape[1] if weight.dim() > 1 else weight.shape[0]}")
    if weight.dim() != 3 or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected "
                           f"{weight.shape[2] if weight.dim() > 2 else weight.shape[-1]}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1] if bias.dim() else 1} but expected "
                           f"{weight.shape[0]}")
    dts = [t._data.dtype for t in (input1, input2, weight) + ((bias,) if bias is not None
                                                              else ())]
    if len(set(dts)) != 1:
        names = ["input1", "input2", "weight", "bias"]
        listed = ", ".join(f"{n}: {_C_TYPE.get(d.name, d.name)}" for n, d in zip(names, dts))
        raise RuntimeError(f"All tensors must have the same dtype, got {listed}")
    lead = tuple(input1.shape[:-1])
    out = _trilinear(view(input1, -1, input1.shape[-1]), weight,
                     view(input2, -1, input2.shape[-1]))
    out = view(out, *lead, weight.shape[0])
    return out if bias is None else add(out, bias)
