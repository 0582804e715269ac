"""The layout torch's TensorIterator gives the result of a pointwise op (its strides).

NumPy's ufuncs pick their output's order of dims by the operands' strides too, but by other
rules: NumPy reorders two dims only when every operand agrees, torch when the first operand
that tells them apart says so (a transposed self with a contiguous other gives a transposed
result in torch, a contiguous one in NumPy), and torch's sizes of 0 and 1 enter its strides
in ways NumPy's do not (an empty transposed tensor plus a number has strides (1, 0)). The rules
below are aten/src/ATen/TensorIterator.cpp's: compute_fast_setup_type (every operand of the
result's shape, all contiguous, all channels-last, or all dense with one set of strides), else
compute_strides, reorder_dimensions and compatible_stride. The result is re-laid out only when
its strides differ from torch's; a C-contiguous result of C-contiguous operands without sizes
of 0 or 1 is torch's already (the common case, checked first).
"""

import numpy as np

from .._creation import _dense      # torch's is_non_overlapping_and_dense
from .._tensor import _make, _make_plain

__all__ = ["iter_layout", "c_order", "preserved"]

_ndarray = np.ndarray


def iter_layout(out, *operands):
    """out (an ndarray, the op's result) with the strides torch allocates for an op of these
    operands (ndarrays, NumPy or Python numbers, in the op's argument order).

    >>> import numpy as np
    >>> a = np.ones((3, 2)).T
    >>> iter_layout(a + np.ones((2, 3)), a, np.ones((2, 3))).strides
    (8, 16)
    """
    if type(out) is not _ndarray or out.ndim < 2:
        return out
    a = operands[0]
    # the common case, in as few NumPy attribute reads as can tell it (each costs about a
    # thousand instructions): C-contiguous operands (NumPy's result is then C-contiguous too)
    # and no size of 0 or 1
    if type(a) is not _ndarray or a.flags.c_contiguous:
        for x in operands[1:]:
            if type(x) is _ndarray and not x.flags.c_contiguous:
                break
        else:
            shape = out.shape
            if 1 not in shape and 0 not in shape:
                return out
    return _relaid(out, torch_strides(out.shape, operands))


def _binary_out(r, a, b, st, ot):
    """The Tensor over r, the result of a binary op of a and b (self's and other's arrays or
    numbers; st and ot their tensors or None), laid out as torch's TensorIterator lays it out.

    The hot binary ops (add, sub, mul, div) first test `st._iter_plain is a and
    ot._iter_plain is b` (two slot reads) and make the result themselves when it holds: an array
    a tensor's `_iter_plain` holds is C-contiguous with no size of 0 or 1, and for such operands
    NumPy's result is torch's and such an array too. This is their path otherwise: each operand
    found so is marked (the mark is the array itself, so a tensor given a new array loses it),
    then the result is re-laid out when torch's strides differ from NumPy's. (Private: it
    makes the Tensor, and the inspector names a tensor after the first public gradviz function
    on the stack, which must be the op, mul, not this helper.)
    """
    # an operand already marked needs no second look
    if ((st is not None and st._iter_plain is a) or _plain(a)) and (
            (ot is not None and ot._iter_plain is b) or _plain(b)):
        if st is not None and a is st._data:
            st._iter_plain = a
        if ot is not None and b is ot._data:
            ot._iter_plain = b
        return _make_plain(r)
    return _make(iter_layout(r, a, b))


def _plain(x):
    """Whether x (an operand) is a number, or an array NumPy and torch lay out alike as an
    operand: C-contiguous without a size of 0 or 1 (such a size's stride is free in NumPy's
    flags, and torch's TensorIterator reads it)."""
    if type(x) is not _ndarray:
        return True
    if not x.flags.c_contiguous:
        return False
    shape = x.shape
    return 1 not in shape and 0 not in shape


def c_order(out):
    """out (a fresh result) C-contiguous with torch's strides, as the kernels that allocate a
    contiguous result give it (softmax, log_softmax, the scans, masked_fill): NumPy's result
    follows its input's order of dims, and a size of 1 may keep any stride in NumPy's flags."""
    if type(out) is not _ndarray or out.ndim < 2:
        return out
    shape = out.shape
    if out.flags.c_contiguous and 1 not in shape and 0 not in shape:
        return out      # (the common case: a C-contiguous array's strides are then torch's)
    return _relaid(out, _contiguous(shape))


def preserved(out, a):
    """out (a fresh result of a's shape) laid out as torch's preserve_format allocation of a
    copy of a (Tensor.to's _to_copy, empty_like): a's strides when a is non-overlapping and dense (a
    size of 1's stride too), else dense in the order of a's strides (infer_dense_strides: an
    expanded dim's 0 stride orders nothing, so an expanded tensor's copy is contiguous)."""
    if type(out) is not _ndarray or out.ndim < 2 or type(a) is not _ndarray:
        return out
    shape = a.shape
    if a.flags.c_contiguous and out.flags.c_contiguous and 1 not in shape and 0 not in shape:
        return out      # (the common case: both C-contiguous, so with torch's strides)
    st = _strides(a)
    return _relaid(out, st if _dense(a.shape, st) else torch_strides(out.shape, (a,)))


def torch_strides(shape, operands):
    """The strides (in elements) TensorIterator gives an output of `shape` for `operands`."""
    ops = []
    for x in operands:
        if type(x) is _ndarray:
            ops.append((x.shape, _strides(x)))
        else:
            ops.append(((), ()))        # a number: torch's wrapped 0-d tensor
    nd = len(shape)
    if all(s == shape for s, _ in ops):
        fast = _fast_setup(shape, ops)
        if fast is not None:
            return fast
    # compute_strides: a dim an operand broadcasts has stride 0
    full = []
    for s, st in ops:
        off = nd - len(s)
        full.append([0] * off + [0 if s[i] == 1 and shape[off + i] != 1 else st[i]
                                 for i in range(len(s))])

    def should_swap(d0, d1):
        for st in full:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue            # a broadcast dim: the next operand decides
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1            # equal strides: the smaller size goes first
        return 0

    # reorder_dimensions: an insertion sort, fastest dim first, that leaves ambiguous pairs
    perm = list(range(nd - 1, -1, -1))
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(nd - 1, -1, -1)):
        return _contiguous(shape)
    # compatible_stride: a size of 0 makes every later stride 0, as in torch
    strides, step = [0] * nd, 1
    for d in perm:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def _strides(x):
    """x's strides in elements, as Tensor.stride() reads them (torch's contiguous ones for an
    empty array NumPy gives strides of 0)."""
    if x.size or any(x.strides):
        return tuple(s // x.itemsize for s in x.strides)
    return _contiguous(x.shape)


def _fast_setup(shape, ops):
    if all(_is_contiguous(shape, st) for _, st in ops):
        return _contiguous(shape)
    nd = len(shape)
    if nd in (4, 5) and all(_is_channels_last(shape, st) for _, st in ops):
        return _channels_last(shape)
    if all(_dense(shape, st) for _, st in ops) and len({st for _, st in ops}) == 1:
        return ops[-1][1]
    return None


def _contiguous(shape):
    """torch's contiguous strides: a size of 0 counted as 1."""
    strides, step = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def _channels_order(nd):
    return (1,) + tuple(range(nd - 1, 1, -1)) + (0,)


def _channels_last(shape):
    """get_channels_last_strides_2d / _3d: C 1, then W, H, (D,) N."""
    strides, step = [0] * len(shape), 1
    for d in _channels_order(len(shape)):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def _is_contiguous(shape, st):
    """compute_contiguous: sizes of 1 skipped, an empty tensor contiguous."""
    return 0 in shape or _steps_in_order(shape, st, range(len(shape) - 1, -1, -1))


def _is_channels_last(shape, st):
    return _steps_in_order(shape, st, _channels_order(len(shape)))


def _steps_in_order(shape, st, order):
    """Whether the dims in `order` (fastest first) step through memory one element after
    another (sizes of 1 skipped)."""
    step = 1
    for d in order:
        if shape[d] != 1:
            if st[d] != step:
                return False
            step *= shape[d]
    return True


def _relaid(out, strides):
    """out copied to an array of these element strides (out itself when it has them)."""
    if _strides(out) == strides:
        return out
    size = out.itemsize
    res = np.lib.stride_tricks.as_strided(np.empty(out.size, out.dtype), out.shape,
                                          tuple(s * size for s in strides))
    if out.size:
        res[...] = out
    return res
