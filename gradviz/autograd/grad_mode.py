"""Grad modes: no_grad, enable_grad, set_grad_enabled, is_grad_enabled, and anomaly mode state.

The state is process-global (torch keeps it per thread); the hot path reads `_state.enabled`.
Whoever listens to the core (a tracer) is installed through gradviz.autograd.tracing.
"""

import functools

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "is_inference"]


class _State:
    __slots__ = ("enabled", "inference", "anomaly", "anomaly_nan", "saved_hooks",
                 "saved_hooks_disabled")

    def __init__(self):
        self.enabled = True
        self.inference = False     # inside inference_mode(): new tensors are inference tensors
        self.saved_hooks = None    # (pack, unpack) of the innermost saved_tensors_hooks
        self.saved_hooks_disabled = None    # disable_saved_tensors_hooks' error message
        self.anomaly = False       # record a forward stack per node, check backward outputs
        self.anomaly_nan = True


_state = _State()


def is_grad_enabled():
    """True when operations are recorded for backward (the default).

    >>> import gradviz as torch
    >>> torch.is_grad_enabled()
    True
    """
    return _state.enabled


class _Setting:
    """`with` block that sets one field of `_state` (named by the subclass's `_field`) to a
    value, and puts back what it held before when the block ends, exceptions included."""

    _field = None

    def __init__(self, value):
        self._value = value

    def __enter__(self):
        self._prev = getattr(_state, self._field)
        setattr(_state, self._field, self._value)

    def __exit__(self, *exc):
        setattr(_state, self._field, self._prev)
        return False


class _GradMode(_Setting):
    """`with _GradMode(mode):` grad mode is `mode` inside, and what it was before after the
    block, exceptions included. The one place grad mode is saved and restored: no_grad,
    enable_grad, set_grad_enabled and inference_mode build on it, and the engine and custom
    Functions' backward use it directly.

    >>> with _GradMode(False):
    ...     is_grad_enabled()
    False
    """

    _field = "enabled"


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


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a decorator without parentheses (`@no_grad`), as torch's."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager, _GradMode):
    """Disable recording: results of operations inside have requires_grad=False.

    >>> import gradviz as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    def __init__(self):
        super().__init__(False)


class enable_grad(_NoParamDecoratorContextManager, _GradMode):
    """Enable recording inside a no_grad region."""

    def __init__(self):
        super().__init__(True)


class set_grad_enabled(_DecoratorContextManager, _GradMode):
    """Set grad mode: takes effect at once as a function, and is undone at the end of a `with`.
    As a decorator it leaves the mode as it was and applies it inside each call, as torch's.

    >>> import gradviz as torch
    >>> _ = torch.set_grad_enabled(False); torch.is_grad_enabled()
    False
    >>> _ = torch.set_grad_enabled(True)
    >>> @torch.set_grad_enabled(False)
    ... def f():
    ...     return torch.is_grad_enabled()
    >>> f(), torch.is_grad_enabled()
    (False, True)
    """

    def __init__(self, mode):
        self.mode = bool(mode)
        super().__init__(self.mode)
        _GradMode.__enter__(self)       # torch: the mode changes at once

    def __call__(self, func):
        # torch: the constructor already switched the mode; a decorator must not.
        _GradMode.__exit__(self)
        return super().__call__(func)

    def __enter__(self):
        pass

    def clone(self):
        return self.__class__(self.mode)

    def __repr__(self):
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


def is_inference_mode_enabled():
    """True inside `torch.inference_mode()`.

    >>> import gradviz as torch
    >>> with torch.inference_mode():
    ...     torch.is_inference_mode_enabled()
    True
    """
    return _state.inference


def is_inference(input):
    """True for a tensor made in inference mode (see Tensor.is_inference)."""
    return input.is_inference()


class inference_mode(_DecoratorContextManager, _GradMode):
    """Grad mode off, and tensors made inside are inference tensors: they can never be saved
    for backward, and edited in place only inside inference mode (torch's rules and errors).
    `inference_mode(False)` turns grad mode on instead, as torch's does.

    >>> import gradviz as torch
    >>> with torch.inference_mode():
    ...     a = torch.ones(2)
    >>> a.is_inference(), torch.is_grad_enabled()
    (True, True)
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return object.__new__(cls)
        return cls()(mode)          # @inference_mode without parentheses

    def __init__(self, mode=True):
        self.mode = mode
        super().__init__(not mode)

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self):
        self._prev_inference = _state.inference
        _state.inference = self.mode
        super().__enter__()

    def __exit__(self, *exc):
        _state.inference = self._prev_inference
        return super().__exit__(*exc)
