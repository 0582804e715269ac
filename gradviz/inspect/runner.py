"""Running a user's expression file the way `python file.py` would, but inspectable.

The file runs as `__main__` with its own folder on sys.path and the given sys.argv. What it
prints is captured (the CLI shows it apart from gradviz's own output). A file that says
`import torch` gets gradviz under that name for the run, unless the torch backend is asked for,
in which case a file that says `import gradviz` gets the real torch. Exceptions are caught and
described with the user's own frames only.
"""

import builtins
import contextlib
import io
import os
import sys
import traceback

__all__ = ["UsageError", "BackendUnavailable", "ErrorInfo", "execute", "backend_module",
           "user_frames"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class UsageError(Exception):
    """Bad input from the command line (missing file, unknown name): exit code 2."""

    exit_code = 2


class BackendUnavailable(UsageError):
    """--backend torch without torch installed."""


class ErrorInfo:
    """An exception raised by the user's file (or by backward), located in the user's code."""

    def __init__(self, type, message, file=None, line=None, frames=(), node=None,
                 forward=None, code=None):
        self.type = type
        self.message = message
        self.file = file
        self.line = line
        self.frames = list(frames)
        self.node = node              # the backward node that failed, if any
        self.forward = forward        # (file, line) of the forward op that made that node
        self.code = code

    def to_dict(self):
        return {"type": self.type, "message": self.message, "file": self.file,
                "line": self.line, "code": self.code,
                "traceback": [dict(f) for f in self.frames]}


def backend_module(backend):
    """The autograd module a run uses: gradviz, or the real torch when installed."""
    if backend == "gradviz":
        import gradviz
        return gradviz
    if backend == "torch":
        try:
            import torch
        except ImportError:
            raise BackendUnavailable(
                "--backend torch needs PyTorch, which is not installed here "
                "(pip install torch==2.13.0), or use the built-in core (--backend gradviz)."
            ) from None
        if getattr(torch, "__name__", "") != "torch" or not hasattr(torch, "__version__"):
            raise BackendUnavailable("--backend torch: 'torch' is not PyTorch here")
        return torch
    raise UsageError(f"unknown backend {backend!r} (choose gradviz or torch)")


def _aliases(backend, mod):
    """sys.modules entries that make the other name import this backend for one run."""
    if backend == "gradviz":
        import gradviz.autograd.graph
        import gradviz.nn.functional
        import gradviz.nn.init
        return {"torch": mod, "torch.nn": mod.nn, "torch.nn.functional": mod.nn.functional,
                "torch.nn.init": mod.nn.init, "torch.autograd": mod.autograd,
                "torch.autograd.graph": mod.autograd.graph, "torch.optim": mod.optim}
    return {"gradviz": mod, "gradviz.nn": mod.nn, "gradviz.nn.functional": mod.nn.functional,
            "gradviz.nn.init": mod.nn.init, "gradviz.autograd": mod.autograd,
            "gradviz.optim": mod.optim}


@contextlib.contextmanager
def _patched_modules(entries):
    saved = {k: sys.modules.get(k) for k in entries}
    sys.modules.update(entries)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


@contextlib.contextmanager
def _as_script(path, argv):
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [path] + list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        yield
    finally:
        sys.argv = old_argv
        sys.path[:] = old_path


def read_source(path):
    """The file's text; UsageError when it is missing, a folder, or not Python."""
    if not os.path.exists(path):
        raise UsageError(f"no such file: {path}")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a folder, not a Python file")
    if not path.endswith(".py"):
        raise UsageError(f"{path} is not a Python file (expected a .py file)")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None


def user_frames(tb, debug=False):
    """Frames of a traceback that belong to the user (all of them with debug)."""
    out = []
    for fr in traceback.extract_tb(tb):
        if not debug and (fr.filename.startswith(_PKG_DIR) or _is_library(fr.filename)):
            continue
        out.append({"file": fr.filename, "line": fr.lineno, "function": fr.name,
                    "code": fr.line})
    return out


def _is_library(filename):
    return (os.sep + "site-packages" + os.sep in filename
            or filename.startswith(os.path.dirname(contextlib.__file__) + os.sep)
            or filename.startswith("<frozen"))


def describe(exc, path, debug=False):
    """ErrorInfo for an exception: innermost user frame, user traceback, failing node."""
    if isinstance(exc, SyntaxError) and exc.filename == path:
        return ErrorInfo(type(exc).__name__, exc.msg, path, exc.lineno,
                         [{"file": path, "line": exc.lineno, "function": "<module>",
                           "code": (exc.text or "").strip()}], code=(exc.text or "").strip())
    frames = user_frames(exc.__traceback__, debug)
    last = frames[-1] if frames else None
    mine = [f for f in frames if os.path.abspath(f["file"]) == os.path.abspath(path)]
    at = mine[-1] if mine else last
    node = getattr(exc, "_gradviz_node", None)
    forward = getattr(node, "_where", None) if node is not None else None
    message = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        message = repr(exc.args[0])
    return ErrorInfo(type(exc).__name__, message, at and at["file"], at and at["line"],
                     frames, node, forward, at and at["code"])


@contextlib.contextmanager
def quiet_anomaly_warnings():
    """Anomaly mode's "Error detected in ..." warning repeats what the inspector reports (with
    the forward traceback trimmed to the user's frames), so it is not printed twice."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Error detected in", category=RuntimeWarning)
        yield


def execute(path, argv=(), backend="gradviz", anomaly=False, tracer=None, debug=False):
    """Run the file; return (namespace, stdout text, ErrorInfo or None).

    KeyboardInterrupt is not caught: the caller handles Ctrl-C once, at the top.
    """
    source = read_source(path)
    mod = backend_module(backend)
    ns = {"__name__": "__main__", "__file__": path, "__builtins__": builtins,
          "__package__": None, "__doc__": None}
    out = io.StringIO()
    error = None
    try:
        code = compile(source, path, "exec")
    except SyntaxError as exc:
        return ns, "", describe(exc, path, debug)
    from ..autograd.grad_mode import _state
    from .tracer import tracing
    prev_anomaly = (_state.anomaly, _state.anomaly_nan)
    with _patched_modules(_aliases(backend, mod)), _as_script(path, argv), \
            contextlib.redirect_stdout(out), quiet_anomaly_warnings():
        if anomaly:
            if backend == "gradviz":
                _state.anomaly, _state.anomaly_nan = True, True
            else:
                mod.autograd.set_detect_anomaly(True)
        try:
            with (tracing(tracer) if tracer is not None and backend == "gradviz"
                  else contextlib.nullcontext()):
                exec(code, ns)
        except SystemExit as exc:
            if exc.code not in (None, 0):
                error = describe(exc, path, debug)
                error.message = f"the file called sys.exit({exc.code!r})"
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - the user's file may raise anything
            error = describe(exc, path, debug)
        finally:
            if backend == "gradviz":
                _state.anomaly, _state.anomaly_nan = prev_anomaly
            elif anomaly:
                mod.autograd.set_detect_anomaly(False)
    return ns, out.getvalue(), error
