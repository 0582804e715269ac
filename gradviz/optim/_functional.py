"""The float arithmetic of torch's optimizer updates, on NumPy arrays.

Each helper computes what one of torch's in-place CPU kernels computes, with the same
roundings, so that an optimizer step written with them gives torch's numbers: a Python number
is first rounded to the tensor's dtype (torch turns a scalar argument into the tensor's type),
and the kernels that torch vectorises as a fused multiply-add (`add_(other, alpha=)`,
`addcmul_`, `lerp_`) round once, not twice. The optimizers call these in the order of torch's
single-tensor (for-loop) implementation, which is the one torch runs for CPU tensors.

>>> import numpy as np
>>> from gradviz.optim._functional import lerp
>>> lerp(np.float32([0.0, 1.0]), np.float32([1.0, 1.0]), 0.1)
array([0.1, 1. ], dtype=float32)
"""

import numpy as np

from .._ops.inplace import bump_version

__all__ = ["fma", "lerp", "add", "addcmul", "addcdiv", "sqrt", "bump", "decay_square"]

_f32 = np.dtype(np.float32)
_f64 = np.float64

# Each helper returns its result; given `out` (which may be one of its inputs, as for torch's
# in-place forms) it writes the result there instead of allocating: the optimizers update their
# state and the parameters in place, with as few full-size temporaries as the roundings allow.


def fma(a, b, c, out=None):
    """a * b + c with one rounding, as torch's vectorised kernels compute it.

    In float32 the product of two float32 numbers is exact in float64, so computing in float64
    and rounding once to float32 gives the fused result (up to a double rounding that is rare
    enough never to have been seen in the tests). Other dtypes round twice.
    """
    if np.result_type(a, b, c) == _f32:
        t = np.multiply(a, b, dtype=_f64)
        t = np.add(t, c, out=t if type(t) is np.ndarray else None)
        if out is None:
            return t.astype(_f32)
        np.copyto(out, t, casting="same_kind")
        return out
    return np.add(a * b, c, out=out)


def _s(value, like):
    """A Python number as torch's kernel sees it: in the tensor's dtype."""
    return like.dtype.type(value)


def lerp(start, end, weight, out=None):
    """torch's `start.lerp_(end, weight)` for a number weight (its two-sided formula)."""
    w = _s(weight, start)
    diff = end - start
    if abs(w) < 0.5:
        return fma(w, diff, start, out)
    return fma(w - start.dtype.type(1), diff, end, out)


def add(a, b, alpha, out=None):
    """torch's `a.add(b, alpha=alpha)`: b * alpha + a, fused."""
    if alpha == 1:
        return np.add(a, b, out=out)
    return fma(b, _s(alpha, a), a, out)


def addcmul(a, t1, t2, value, out=None):
    """torch's `a.addcmul(t1, t2, value=value)`: (value * t1) * t2 + a, fused."""
    return fma(_s(value, a) * t1, t2, a, out)


def addcdiv(a, t1, t2, value, out=None):
    """torch's `a.addcdiv(t1, t2, value=value)`: a + (value * t1) / t2 (not fused)."""
    q = _s(value, a) * t1
    q = np.divide(q, t2, out=q if type(q) is np.ndarray and q.shape == np.shape(t2) else None)
    return np.add(a, q, out=out)


def sqrt(a):
    """The square root, correctly rounded.

    torch's CPU build takes float32 square roots of more than one element from MKL's vector
    library, which is not correctly rounded: about one result in six is 1 ulp away from this
    one. That is the only difference between gradviz's Adam/AdamW/RMSprop/Adagrad updates and
    torch's (the tests check the rest bit for bit by giving both the same square root).
    """
    return np.sqrt(a)


def bump(t, *ops):
    """Count the in-place edits `ops` of tensor t, in order (torch's `_version` goes up once
    per in-place call), each under its own name, as an inspector sees torch's
    `buf.mul_(momentum).add_(grad)`: "mul_", then "add_"."""
    for op in ops:
        bump_version(t, op)


def decay_square(state, x, rho):
    """torch's `state.mul_(rho).addcmul_(x, x, value=1 - rho)` on a state tensor (Adam's
    exp_avg_sq, RMSprop's and Adadelta's running averages of squares), counted as its two
    in-place edits; returns the updated array."""
    s = state._array()
    s *= s.dtype.type(rho)
    addcmul(s, x, x, 1 - rho, out=s)
    bump(state, "mul_", "addcmul_")
    return s
