"""Grad modes: no_grad, enable_grad, set_grad_enabled, is_grad_enabled, and anomaly mode state.

The state is process-global (torch keeps it per thread); the hot path reads `_state.enabled`.
"""

import functools

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode"]


class _State:
    __slots__ = ("enabled", "anomaly", "anomaly_nan", "trace")

    def __init__(self):
        self.enabled = True
        self.anomaly = False       # record a forward stack per node, check backward outputs
        self.anomaly_nan = True
        self.trace = None          # inspection hook: called with each new node (gradviz.inspect)


_state = _State()


def is_grad_enabled():
    """True when operations are recorded for backward (the default).

    >>> import gradviz as torch
    >>> torch.is_grad_enabled()
    True
    """
    return _state.enabled


class _DecoratorContextManager:
    """A context manager that is also usable as a decorator (`@no_grad()`)."""

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disable recording: results of operations inside have requires_grad=False.

    >>> import gradviz as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


class enable_grad(_DecoratorContextManager):
    """Enable recording inside a no_grad region."""

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode: takes effect at once as a function, and is undone at the end of a `with`.

    >>> import gradviz as torch
    >>> _ = torch.set_grad_enabled(False); torch.is_grad_enabled()
    False
    >>> _ = torch.set_grad_enabled(True)
    """

    def __init__(self, mode):
        self.prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False

    def clone(self):
        return self.__class__(self.mode)

    def __repr__(self):
        return f"<torch.autograd.grad_mode.set_grad_enabled object at {hex(id(self))}>"


class inference_mode(no_grad):
    """Same as no_grad for gradviz (there are no inference tensors)."""

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self.prev = _state.enabled
        if self.mode:
            _state.enabled = False
