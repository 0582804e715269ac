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

__all__ = ["quietly", "quietly2", "quietly_into", "enter_pass", "leave_pass"]


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


def quietly_into(fn, a, b, out):
    """fn(a, b, out) (a ufunc writing into out), as quietly2: an in-place update's hot path."""
    try:
        return _run(fn, a, b, out)
    except RuntimeError as exc:
        if not _busy(exc):
            raise
        return _in_errstate(fn, a, b, out)


def _busy(exc):
    # Context.run's own refusal (fn never ran), not a RuntimeError that fn raised: that one
    # goes to the caller as it is, and fn is never run a second time
    return exc.__traceback__.tb_next is None and str(exc).startswith("cannot enter context")


def _in_errstate(fn, *args, **kwargs):
    # The context is already entered (by another thread, or fn called back into gradviz
    # through a Tensor operand): the slower errstate, this once.
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)


# ----- The backward pass ------------------------------------------------------------------
#
# The engine runs a whole pass under np.errstate(divide, invalid, over = "ignore") (a hook or
# a custom Function's backward runs inside and sees that state, NumPy's others kept). The
# errstate object costs about 10,000 instructions a pass; its own work is one set of NumPy's
# context variable to a state made from the current one (`_make_extobj`), which is the same
# for the same current state: made once by np.errstate itself, then set and reset directly.

try:
    from numpy._core._ufunc_config import _extobj_contextvar as _EXTOBJ
except ImportError:         # another NumPy layout: np.errstate every pass
    _EXTOBJ = None
_PASS_STATES = {}           # NumPy's current error state -> that state with the pass's ignores


def enter_pass():
    """Enter np.errstate(divide="ignore", invalid="ignore", over="ignore"); returns what
    leave_pass takes to put the state back.

    >>> import numpy as np
    >>> token = enter_pass()
    >>> np.geterr()["divide"], np.geterr()["under"]
    ('ignore', 'ignore')
    >>> leave_pass(token)
    """
    if _EXTOBJ is None:
        state = np.errstate(divide="ignore", invalid="ignore", over="ignore")
        state.__enter__()
        return state
    current = _EXTOBJ.get()
    quiet = _PASS_STATES.get(current)
    if quiet is None:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            quiet = _EXTOBJ.get()
        if len(_PASS_STATES) >= 16:
            _PASS_STATES.clear()
        _PASS_STATES[current] = quiet       # (the key is kept alive: its id is never reused)
    return _EXTOBJ.set(quiet)


def leave_pass(token):
    """Put back the error state enter_pass found."""
    if type(token) is np.errstate:
        token.__exit__(None, None, None)
    else:
        _EXTOBJ.reset(token)
