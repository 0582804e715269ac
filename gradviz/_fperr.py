"""NumPy's floating-point warnings, silenced where gradviz computes.

torch never warns about the inf or nan its arithmetic makes (0 / 0, float32 overflow, inf - inf);
NumPy warns through the warnings module, so a user's `warnings.simplefilter("error")` would turn a
gradviz op into an exception where torch gives nan. NumPy keeps its error state (np.seterr) in a
context variable: gradviz keeps its own context, with every error ignored, and runs its
arithmetic in it. The user's np.geterr() and warnings filters are never touched. Entering a
context costs about 500 instructions, np.errstate about 10,000. Pass operator.mul rather than
np.multiply where the operands may be NumPy scalars (0-d tensors): the operator takes NumPy's
scalar math, the ufunc its full machinery (about 5,000 instructions more).
"""

import contextvars

import numpy as np

__all__ = ["quietly", "quietly2"]


def _quiet_context():
    ctx = contextvars.Context()
    ctx.run(np.seterr, all="ignore")
    return ctx


_run = _quiet_context().run


def quietly(fn, *args, **kwargs):
    """fn(*args, **kwargs) (a NumPy function) with NumPy's floating-point errors ignored.

    >>> import numpy as np
    >>> quietly(np.divide, np.zeros(1), 0.0)
    array([nan])
    """
    try:
        return _run(fn, *args, **kwargs)
    except RuntimeError as exc:
        if not _busy(exc):
            raise
        return _in_errstate(fn, *args, **kwargs)


def quietly2(fn, a, b):
    """fn(a, b), as quietly but for the binary ops' hot path (no packing of arguments)."""
    try:
        return _run(fn, a, b)
    except RuntimeError as exc:
        if not _busy(exc):
            raise
        return _in_errstate(fn, a, b)


def _busy(exc):
    # Context.run's own refusal (fn never ran), not a RuntimeError that fn raised: that one
    # goes to the caller as it is, and fn is never run a second time
    return exc.__traceback__.tb_next is None and str(exc).startswith("cannot enter context")


def _in_errstate(fn, *args, **kwargs):
    # The context is already entered (by another thread, or fn called back into gradviz
    # through a Tensor operand): the slower errstate, this once.
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)
