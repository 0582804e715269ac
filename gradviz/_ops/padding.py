"""Padding: constant_pad_nd (ConstantPadNdBackward0), and reflection / replication padding of
the last one or two dims (ReflectionPad1D/2DBackward0, ReplicationPad1D/2DBackward0), as
torch.nn.functional.pad records them. Their backwards are ops of their own under
create_graph=True (ReflectionPad2DBackwardBackward0, ...), as in torch.
"""

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._registry import export, records
from .._tensor import _make
from .._windows import constant_pad_array, gather_pad_grad, pad_maps
from ..autograd.formula import record
from ._common import _needs


@export("constant_pad_nd", tensor=False)
@records("constant_pad_nd")
def constant_pad_nd(self, pad, value=0):
    """self padded with `value` by torch's flat `pad` list (last dim first; negative crops)."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) // 2 > self.dim():
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)} while the input "
                           f"has {self.dim()} dimensions.")
    out = _make(constant_pad_array(self._array(), pad, value))
    if _needs(self):
        record(D["constant_pad_nd"], out, (self,), (pad,))
    return out


def _gather_pad(row, self, padding, mode):
    a = self._array()
    maps = pad_maps(a.shape, padding, mode, a.dtype)
    key = [slice(None)] * a.ndim
    for i, (axis, src, _) in enumerate(maps):
        shape = [1] * len(maps)
        shape[len(maps) - 1 - i] = -1
        key[a.ndim + axis] = src.reshape(shape)
    # Contiguous, as torch's padded output (fancy indexing may lay the copy out in any order).
    out = _make(np.ascontiguousarray(a[tuple(key)]))
    if _needs(self):
        record(D[row], out, (self,), (self, padding, maps, row))
    return out


def _check_reflect(self, padding):
    shape = self.shape
    for i in range(len(padding) // 2):
        dim = self.dim() - 1 - i
        lo, hi = padding[2 * i], padding[2 * i + 1]
        if lo >= shape[dim] or hi >= shape[dim]:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                               f"{dim} of input {list(shape)}")


@records("reflection_pad1d")
def reflection_pad1d(self, padding):
    _check_reflect(self, padding)
    return _gather_pad("reflection_pad1d", self, tuple(padding), "reflect")


@records("reflection_pad2d")
def reflection_pad2d(self, padding):
    _check_reflect(self, padding)
    return _gather_pad("reflection_pad2d", self, tuple(padding), "reflect")


@records("replication_pad1d")
def replication_pad1d(self, padding):
    return _gather_pad("replication_pad1d", self, tuple(padding), "replicate")


@records("replication_pad2d")
def replication_pad2d(self, padding):
    return _gather_pad("replication_pad2d", self, tuple(padding), "replicate")


@records("reflection_pad1d_backward", "reflection_pad2d_backward", "replication_pad1d_backward",
         "replication_pad2d_backward")
def pad_backward(grad_output, self, padding, maps, op):
    """The backward of reflect / replicate padding (`op`: which of the four) as an op: each
    output's gradient summed back onto the input position it was copied from."""
    out = _make(gather_pad_grad(grad_output._data, maps))
    if _needs(grad_output, self):
        record(D[op + "_backward"], out, (grad_output, self), (padding, op))
    return out


_GATHER = {("reflect", 1): reflection_pad1d, ("reflect", 2): reflection_pad2d,
           ("replicate", 1): replication_pad1d, ("replicate", 2): replication_pad2d}


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: constant, reflect and replicate modes."""
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.dim()}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    nd = len(pad) // 2
    if input.dim() not in (nd + 1, nd + 2) or nd > 3:
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                  f"{input.dim()}D input tensor.")
    fn = _GATHER.get((mode, nd))
    if fn is None:
        raise NotImplementedError(f"gradviz: torch.nn.functional.pad(mode='{mode}') of "
                                  f"{nd} dims is not implemented by gradviz's core; run with "
                                  f"--backend torch to use PyTorch")
    return fn(input, pad)

