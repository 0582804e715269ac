"""Grad modes: no_grad, enable_grad, set_grad_enabled, is_grad_enabled, and anomaly mode state.

Grad mode, inference mode and the saved-tensor hooks are per thread, as torch's are: a new
thread starts with grad mode on, outside inference mode, without hooks, whatever another
thread is in. Anomaly mode is one for the whole process, as torch's is. The hot path reads
`_state.enabled`: a plain slot while every thread is in the default modes (the common case),
the calling thread's own value (a property over a threading.local) once a thread left them.
Whoever listens to the core (a tracer) is installed through gradviz.autograd.tracing.
"""

import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "is_inference"]


class _Threads(threading.local):
    """Each thread's own modes; a thread starts with the class's values, the defaults."""

    enabled = True
    inference = False           # inside inference_mode(): new tensors are inference tensors
    saved_hooks = None          # (pack, unpack) of the innermost saved_tensors_hooks
    saved_hooks_disabled = None     # disable_saved_tensors_hooks' error message


_FIELDS = ("enabled", "inference", "saved_hooks", "saved_hooks_disabled")
_threads = _Threads()


class _State:
    """The modes while every thread is in the defaults: plain slots holding them. `anomaly`
    (record a forward stack per node, check backward outputs) and `anomaly_nan` are the
    process's, in this class and the next."""

    __slots__ = _FIELDS + ("anomaly", "anomaly_nan")


def _thread_field(name):
    # getattr(_threads, name, state): C calls only, no Python frame per read (the default, the
    # state object itself, is never returned: _Threads has every field)
    return property(functools.partial(getattr, _threads, name))


class _PerThread(_State):
    """The modes once some thread left the defaults: each read is the calling thread's own."""

    __slots__ = ()
    enabled = _thread_field("enabled")
    inference = _thread_field("inference")
    saved_hooks = _thread_field("saved_hooks")
    saved_hooks_disabled = _thread_field("saved_hooks_disabled")


class _Outside:
    """Per mode, how many threads are outside its default (read without a thread lookup: the
    hot path asks `_outside.inference and _state.inference`)."""

    __slots__ = _FIELDS


_state = _State()
_outside = _Outside()
for _name in _FIELDS:
    setattr(_state, _name, getattr(_Threads, _name))
    setattr(_outside, _name, 0)
_state.anomaly = False
_state.anomaly_nan = True
# reentrant: a collection inside _set may finalize a generator that leaves a no_grad block
_lock = threading.RLock()
_total = 0          # the sum of _outside's counts


def _set(name, value):
    """Set one per-thread mode of the calling thread and return what it was: the one writer of
    grad mode (written out as _set_enabled), inference mode and the saved-tensor hooks.
    `_state` reads the threads' own values while any thread is outside the defaults (a thread
    that ends outside them keeps it so: slower, not wrong)."""
    global _total
    default = getattr(_Threads, name)
    with _lock:
        old = getattr(_threads, name)
        setattr(_threads, name, value)
        change = (value is not default) - (old is not default)
        if change:
            setattr(_outside, name, getattr(_outside, name) + change)
            _total += change
            _state.__class__ = _PerThread if _total else _State
    return old


def _set_enabled(value):
    """_set("enabled", value), written out for the one mode that user code switches at every
    step (`with torch.no_grad():` around an update): no field looked up by name."""
    global _total
    with _lock:
        old = _threads.enabled
        _threads.enabled = value
        change = (value is not True) - (old is not True)
        if change:
            _outside.enabled += change
            _total += change
            _state.__class__ = _PerThread if _total else _State
    return old


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
        self._prev = _set(self._field, self._value)

    def __exit__(self, *exc):
        _set(self._field, self._prev)
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

    def __enter__(self):
        self._prev = _set_enabled(self._value)

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False


def _wrap_generator(ctx_factory, func):
    """The generator function func, with a fresh ctx_factory() context around each resume of
    its generator (the first next(), each send(), throw() and close()) and the caller's modes
    between them, as torch/utils/_contextlib.py's `_wrap_generator`: entering the mode once
    around the call would only cover the creation of the generator."""

    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException as exc:
                    with ctx_factory():
                        response = gen.throw(exc)
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return generator_context


class _DecoratorContextManager:
    """A context manager that is also usable as a decorator (`@no_grad()`); on a generator
    function the mode applies each time the generator runs, as torch's."""

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

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
            return object.__new__(cls)     # (super() would be an object more per block)
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
        self._value = False         # (_Setting.__init__'s work, one call fewer per block)


class enable_grad(_NoParamDecoratorContextManager, _GradMode):
    """Enable recording inside a no_grad region."""

    def __init__(self):
        self._value = True


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
        self._prev_inference = _set("inference", self.mode)
        super().__enter__()

    def __exit__(self, *exc):
        _set("inference", self._prev_inference)
        return super().__exit__(*exc)
