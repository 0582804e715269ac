"""Running a user's file the way `python file.py` would, but inspectable.

The file runs as a real `__main__` module (so pickling, multiprocessing and the
`if __name__ == "__main__":` guard work), with its own folder on sys.path and the given sys.argv.
Its source is read as Python reads it (a UTF-8 BOM, a `# coding:` line). Everything it writes to
stdout, through print, os.write, threads or child processes, goes through a pipe into the run
(never onto gradviz's own stdout) and, when asked, to a sink as it arrives; its warnings are
collected with their file and line. Afterwards, its non-daemon threads are joined and whatever
it changed in the interpreter (sys.stdout, the recursion limit, the working directory, modules
imported from its folder) is put back.

A file that says `import torch` gets gradviz under that name for the run, unless the torch
backend is asked for, in which case a file that says `import gradviz` gets the real torch.
Exceptions are caught and described with the user's own frames only.
"""

import atexit
import builtins
import codecs
import contextlib
import errno
import fcntl
import gc
import io
import json
import operator
import os
import re
import secrets
import signal
import sys
import threading
import time
import tokenize
import traceback
import types
import warnings

from ..autograd import callsite
from .submodules import torch_submodules

__all__ = ["UsageError", "BackendUnavailable", "ErrorInfo", "Execution", "ScriptEnvironment",
           "execute", "backend_module", "user_frames", "read_source", "check_file", "shown_path"]

# The inspector's files host the user's code: their frames, and whatever called them, are not
# the user's (anomaly stacks, the frames that name tensors).
callsite.register_host(os.path.dirname(os.path.abspath(__file__)))
# The repeated part of a traceback is shown once, as Python's own traceback does.
_REPEAT_SHOWN = 3
_MAX_PERIOD = 8
# After the file ended, how long to wait for child processes that still hold its stdout.
_DRAIN_SECONDS = 1.0


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


# The module of each file run once it ended, kept when keep_ended() was called (else None).
_ended = None


def keep_ended():
    """Keep, from now on, the module of each file run once it has ended, and return the list
    they are appended to. The command line ends them at exit as Python's own exit would (so
    that a __del__ runs, and its error is shown); the library alone keeps nothing."""
    global _ended
    if _ended is None:
        _ended = []
    return _ended


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
        import gradviz.autograd.functional
        import gradviz.autograd.graph
        import gradviz.nn.functional
        import gradviz.nn.init
        import gradviz.optim.lr_scheduler
        import gradviz.utils.data
        # Every submodule a file may import by torch's name: one missing here was imported a
        # second time under it (`from torch.utils import data` loaded a copy of gradviz whose
        # dtypes NumPy could not read).
        return {"torch": mod, "torch.nn": mod.nn, "torch.nn.functional": mod.nn.functional,
                "torch.nn.init": mod.nn.init, "torch.autograd": mod.autograd,
                "torch.autograd.functional": mod.autograd.functional,
                "torch.autograd.graph": mod.autograd.graph, "torch.optim": mod.optim,
                "torch.optim.lr_scheduler": mod.optim.lr_scheduler, "torch.utils": mod.utils,
                "torch.utils.data": mod.utils.data}
    import torch.utils.data
    return {"gradviz": mod, "gradviz.nn": mod.nn, "gradviz.nn.functional": mod.nn.functional,
            "gradviz.nn.init": mod.nn.init, "gradviz.autograd": mod.autograd,
            "gradviz.autograd.graph": mod.autograd.graph, "gradviz.optim": mod.optim,
            "gradviz.optim.lr_scheduler": mod.optim.lr_scheduler, "gradviz.utils": mod.utils,
            "gradviz.utils.data": mod.utils.data}


# ----- Reading the source ----------------------------------------------------------------------

def _check_path(path):
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise UsageError(f"no such file: {shown_path(path)}") from None
        # a symlink loop, a path too long, a file taken for a folder: Python's own reason
        # (`python loop.py`: "[Errno 40] Too many levels of symbolic links"), never "no such
        # file", which sends the user looking for a file that is there
        raise UsageError(f"cannot open {shown_path(path)}: {exc.strerror}") from None
    except ValueError:      # a NUL in the path
        raise UsageError(f"no such file: {shown_path(path)}") from None
    if os.path.isdir(path):
        raise UsageError(f"{shown_path(path)} is a folder, not a Python file")
    if not path.endswith(".py"):
        raise UsageError(f"{shown_path(path)} is not a Python file (expected a .py file)")


def check_file(path, backend="gradviz"):
    """UsageError for a FILE argument or a backend that no run could use (a missing file, a
    folder, not a .py file, a symlink loop; torch not installed): a command asks before it
    prints anything, so that no header goes to stdout for a run that never started."""
    _check_path(path)
    backend_module(backend)


def shown_path(path):
    r"""path as a message shows it: its control characters escaped, a newline too (a file
    named `a<newline>b.py` broke the message's line).

    >>> print(shown_path("a\nb.py"), shown_path("été.py"))
    a\nb.py été.py
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(path))


def read_source(path):
    """The file's text, decoded as Python decodes it (UTF-8, a BOM, or its `# coding:` line).

    UsageError when it is missing, a folder, not Python or unreadable; SyntaxError, worded as
    `python file.py` words it and located at the line, when Python would refuse its encoding.
    """
    _check_path(path)
    return _decoded(path, _read_bytes(path))[0]


def _read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def _decoded(path, data):
    """(text, lenient) for the bytes of a source file, decoded as CPython 3.11's tokenizer
    decodes a file (Parser/tokenizer.c), or its SyntaxError.

    A cookie counts on line 1, or on line 2 when line 1 is blank or only a comment; a BOM
    needs a UTF-8 cookie, if any. With neither, every line must be UTF-8 ("Non-UTF-8 code ...",
    line 1 checked before line 2's cookie is read). With a BOM or a UTF-8 cookie the tokenizer
    does not check: bad bytes in a comment pass, in code or a string they are the parser's
    "(unicode error)"; lenient is then True and the text has them replaced (compile the bytes).
    With another cookie, the file is decoded by that codec, and failing is "encoding problem".
    """
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8):] if bom else data
    lines = body.splitlines(keepends=True)
    name, at = _cookie(lines[0]) if lines else None, 1
    if name is None:
        if not bom and lines and not _is_utf8(lines[0]):
            raise _decode_error(path, data, _bad_utf8_at(data), "utf-8")
        if len(lines) > 1 and _BLANK.match(lines[0]):
            name, at = _cookie(lines[1]), 2
    if name is not None and bom and name != "utf-8":
        raise _encoding_problem(path, data, f"{name} with BOM", at)
    if bom or name == "utf-8":
        try:
            return body.decode("utf-8"), False
        except UnicodeDecodeError:
            return body.decode("utf-8", "replace"), True
    if name is None:
        try:
            return data.decode("utf-8"), False
        except UnicodeDecodeError as exc:
            raise _decode_error(path, data, exc.start, "utf-8") from None
    if not _ascii_compatible(name):
        raise _encoding_problem(path, data, name, at)
    try:
        return data.decode(name), False
    except UnicodeDecodeError as exc:
        # Python says only this, with no line: the line of the first byte that fails is added
        line = data.count(b"\n", 0, exc.start) + 1
        raise _encoding_problem(path, data, name, line) from None


# A cookie: in a line that is only a comment, "coding" then ":" or "=" (Parser/tokenizer.c's
# get_coding_spec); a line counts as blank when it holds at most a comment.
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK = re.compile(rb"[ \t\f]*(?:[#\r\n]|$)")


def _cookie(line):
    """The encoding a `# coding:` line names, normalized as the tokenizer normalizes it
    (get_normal_name: utf_8, UTF-8-unix are utf-8; latin-1 and its spellings iso-8859-1), or
    None."""
    match = _COOKIE.match(line)
    if match is None:
        return None
    name = match.group(1).decode("ascii")
    low = name[:12].lower().replace("_", "-")
    if low == "utf-8" or low.startswith("utf-8-"):
        return "utf-8"
    for latin in ("latin-1", "iso-8859-1", "iso-latin-1"):
        if low == latin or low.startswith(latin + "-"):
            return "iso-8859-1"
    return name


def _is_utf8(line):
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _bad_utf8_at(data):
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return 0


def _ascii_compatible(encoding):
    """False for a codec Python refuses in a `# coding:` line (utf-16, utf-32: a source file's
    encoding must keep ASCII as ASCII), or one that does not exist."""
    try:
        return b"# ascii\n".decode(encoding) == "# ascii\n"
    except (LookupError, UnicodeError):
        return False


def _encoding_problem(path, data, what, line):
    """Python's SyntaxError for an unknown or unusable encoding (`python file.py` prints
    "SyntaxError: encoding problem: bogus"), located at line."""
    raw = data.splitlines()[line - 1] if len(data.splitlines()) >= line else b""
    text = raw.decode("utf-8", "backslashreplace")
    return SyntaxError(f"encoding problem: {what}", (path, line, None, text))


def _decode_error(path, data, start, encoding):
    line = data.count(b"\n", 0, start) + 1
    # Python's own wording (Parser/tokenizer.c)
    msg = (f"Non-UTF-8 code starting with '\\x{data[start]:02x}' in file {path} on line "
           f"{line}, but no encoding declared; see https://peps.python.org/pep-0263/ for "
           "details")
    text = data.splitlines()[line - 1].decode("utf-8", "backslashreplace")
    return SyntaxError(msg, (path, line, None, text))


# ----- Tracebacks ------------------------------------------------------------------------------

def user_frames(tb, debug=False):
    """Frames of a traceback that belong to the user (all of them with debug), with runs of
    repeated frames (recursion) collapsed into one entry {"repeated": N, "frames": k}."""
    out = []
    for fr in traceback.extract_tb(tb):
        if not debug and (callsite.is_gradviz_file(fr.filename) or _is_library(fr.filename)):
            continue
        out.append({"file": fr.filename, "line": fr.lineno, "function": fr.name,
                    "code": fr.line})
    return collapse_repeats(out)


def collapse_repeats(frames):
    """Collapse a block of 1..8 frames repeated back to back: a single frame is kept three
    times, as Python's traceback does, a longer block once; then one marker entry
    {"repeated": N, "frames": k} says the last k frames were repeated N more times.

    >>> f = [{"line": 1}, {"line": 2}] + [{"line": 5}] * 10 + [{"line": 9}]
    >>> [x.get("line", x.get("repeated")) for x in collapse_repeats(f)]
    [1, 2, 5, 5, 5, 7, 9]
    """
    key = [(f.get("file"), f.get("line"), f.get("function")) for f in frames]
    out, i, n = [], 0, len(frames)
    while i < n:
        best = None
        for p in range(1, _MAX_PERIOD + 1):
            reps = 1
            while i + (reps + 1) * p <= n and key[i + reps * p:i + (reps + 1) * p] == key[i:i + p]:
                reps += 1
            keep = _REPEAT_SHOWN if p == 1 else 1
            if reps > keep and (best is None or reps * p > best[0] * best[1]):
                best = (reps, p)
        if best is None:
            out.append(frames[i])
            i += 1
            continue
        reps, p = best
        keep = _REPEAT_SHOWN if p == 1 else 1
        out.extend(frames[i:i + keep * p])
        out.append({"repeated": reps - keep, "frames": p})
        i += reps * p
    return out


def _is_library(filename):
    return (os.sep + "site-packages" + os.sep in filename
            or filename.startswith(os.path.dirname(contextlib.__file__) + os.sep)
            or filename.startswith("<frozen"))


def _plain_frames(frames):
    return [f for f in frames if "repeated" not in f]


def describe(exc, path, debug=False):
    """ErrorInfo for an exception: innermost user frame, user traceback, failing node."""
    if isinstance(exc, SyntaxError) and exc.filename == path:
        return ErrorInfo(type(exc).__name__, exc.msg, path, exc.lineno,
                         [{"file": path, "line": exc.lineno, "function": "<module>",
                           "code": (exc.text or "").strip()}], code=(exc.text or "").strip())
    frames = user_frames(exc.__traceback__, debug)
    plain = _plain_frames(frames)
    last = plain[-1] if plain else None
    mine = [f for f in plain if os.path.abspath(f["file"]) == os.path.abspath(path)]
    at = mine[-1] if mine else last
    node = getattr(exc, "_gradviz_node", None)
    forward = getattr(node, "_where", None) if node is not None else None
    message = _text_of(str, exc)
    if isinstance(exc, KeyError) and exc.args:
        message = _text_of(repr, exc.args[0])
    if type(exc) is ImportError:
        message = _import_refusal(exc, message)
    return ErrorInfo(type(exc).__name__, message, at and at["file"], at and at["line"],
                     frames, node, forward, at and at["code"])


_CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from '(gradviz(?:\.[\w.]+)?)'")


def _import_refusal(exc, message):
    """`from torch.nn import Transformer` for a name the core lacks: Python's import drops
    the module's AttributeError (gradviz._missing's sentence with the --backend torch hint)
    and says "cannot import name 'Transformer' from 'gradviz.nn'", which names gradviz's
    module and reads like the user's typo. The message keeps Python's words with torch's
    module name, followed by that sentence; for a name PyTorch lacks too, Python's message
    as torch's import would give it (and gradviz._missing's close names); for a module whose
    names gradviz does not list, that the core lacks it."""
    found = _CANNOT_IMPORT.match(message)
    module = sys.modules.get(found.group(2)) if found else None
    if module is None:
        return message
    name, torch_module = found.group(1), "torch" + found.group(2)[len("gradviz"):]
    try:
        getattr(module, name)
    except AttributeError as err:
        text = _text_of(str, err)
    else:
        return message
    head = f"cannot import name '{name}' from '{torch_module}'"
    if text.startswith("gradviz's core"):
        return f"{head}: {text}"
    if text.startswith(f"module '{torch_module}' has no attribute"):
        return f"{head} ({exc.path})" + text[text.index(f"'{name}'") + len(name) + 2:]
    return f"{head}: not in gradviz's core; run with --backend torch to run this file on PyTorch"


def _text_of(show, value):
    """show(value) (str or repr) for an object of the file's, whose __str__ or __repr__ may
    raise anything: then Python's own words for it, as its traceback prints them."""
    try:
        return show(value)
    except BaseException:  # noqa: BLE001 - the user's __str__ may raise anything
        return "<exception str() failed>" if show is str else \
            f"<{type(value).__name__} object: repr() failed>"


@contextlib.contextmanager
def quiet_anomaly_warnings():
    """Anomaly mode's "Error detected in ..." warning repeats what the inspector reports (with
    the forward traceback trimmed to the user's frames), so it is not printed twice."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Error detected in")    # torch's too
        yield


# ----- What the file writes -------------------------------------------------------------------

class _Capture:
    """The file's stdout: fd 1 and sys.stdout both feed a pipe read by a thread.

    The reader passes text to `sink(stream, text)` as it arrives ("stdout", or "warning" for
    the file's warnings, which travel through the same pipe between two markers carrying a
    random token, so that they keep their place among the prints) and keeps all of it.
    """

    def __init__(self, sink=None):
        self.sink = sink
        self.chunks = []
        self.warnings = []
        token = secrets.token_hex(8)
        self.start = f"\x00gradviz-warning-{token}\x00".encode()
        self.end = f"\x00gradviz-end-{token}\x00".encode()
        self.saved_fd = None
        self.read_fd = None
        self.reader = None
        self.closed = False
        self.stream = None
        self.progress = 0               # counts reads: the drain waits while it grows
        self.waiting = False            # the reader is blocked in os.read (not busy with text)
        self.cut = False                # a process still held the pipe: stopped listening
        self.stream_fd = None
        self.shown_fd = None
        self.sink_error = None          # what the sink raised: execute_file raises it after

    def __enter__(self):
        for s in (sys.stdout, sys.__stdout__):
            try:
                s.flush()
            except (AttributeError, OSError, ValueError):
                pass
        try:
            # where the output gradviz shows goes: the command line's is a copy of fd 1
            self.shown_fd = sys.stdout.fileno()
        except (AttributeError, OSError, ValueError):
            self.shown_fd = None
        try:
            self.saved_fd = os.dup(1)
        except OSError:
            self.saved_fd = None        # fd 1 is closed: nothing to protect
        r, w = os.pipe()
        os.dup2(w, 1)
        # sys.stdout writes to a descriptor of its own (the same pipe): a thread of the file
        # still printing after the run then writes into /dev/null (see __exit__), never into
        # gradviz's stdout, which fd 1 is again by then
        self.stream_fd = w if w != 1 else os.dup(1)
        self.read_fd = r
        self.reader = threading.Thread(target=self._read, name="gradviz-stdout", daemon=True)
        self.reader.start()
        raw = io.FileIO(self.stream_fd, "w", closefd=False)
        self.stream = io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8",
                                       errors="backslashreplace", line_buffering=True)
        return self

    def warn(self, record, text):
        """Send a warning through the pipe, in order with the prints before it."""
        payload = json.dumps({"record": record, "text": text}).encode()
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass
        try:
            os.write(1, self.start + payload + self.end)
        except OSError:
            self._warning(payload)

    def _read(self):
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = b""
        while True:
            self.waiting = True
            try:
                data = os.read(self.read_fd, 65536)
            except OSError:
                data = b""
            self.waiting = False
            self.progress += 1
            if not data:
                break
            pending = self._split(pending + data, decoder)
        if pending:
            self._text(decoder.decode(pending, final=True))
        else:
            self._text(decoder.decode(b"", final=True))

    def _split(self, data, decoder):
        """Route text and warnings; return the bytes that may be the start of a marker."""
        while True:
            i = data.find(self.start)
            if i < 0:
                keep = _partial_suffix(data, self.start)
                self._text(decoder.decode(data[:len(data) - keep]))
                return data[len(data) - keep:]
            self._text(decoder.decode(data[:i]))
            j = data.find(self.end, i + len(self.start))
            if j < 0:
                return data[i:]
            self._warning(data[i + len(self.start):j])
            data = data[j + len(self.end):]

    def _text(self, text):
        if text and not self.closed:
            self.chunks.append(text)
            self._show("stdout", text)

    def _warning(self, payload):
        if self.closed:
            return
        item = json.loads(payload.decode())
        self.warnings.append(item["record"])
        self._show("warning", item["text"])

    def _show(self, stream, text):
        """Pass text to the sink. A sink that raises is not called again, and the reader reads
        on: when its thread died with the error, the file's output was lost without a word,
        and a file printing more than the pipe holds waited for a reader forever."""
        if self.sink is None:
            return
        try:
            self.sink(stream, text)
        except Exception as exc:  # noqa: BLE001 - raised again after the run (execute_file)
            self.sink, self.sink_error = None, exc

    def __exit__(self, *exc):
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass
        self._release_pipe()
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream_fd)        # also lets go of this end of the pipe
            os.close(devnull)
        except OSError:
            os.close(self.stream_fd)
            self.stream_fd = None
        if self.saved_fd is not None:
            os.dup2(self.saved_fd, 1)
            os.close(self.saved_fd)
        else:
            os.close(1)
        # Our end of the pipe is closed now, so the reader ends at EOF once it has read and
        # shown what the file wrote: wait for it however long that takes on a loaded machine
        # (showing a long output in the frame is slow). A child process that still holds the
        # pipe keeps it open: stop listening once the reader has waited for data for a moment
        # (what the child writes later is dropped, as after `python file.py` ended).
        seen, quiet_since = -1, time.monotonic()
        while self.reader.is_alive():
            self.reader.join(0.05)
            if self.progress != seen or not self.waiting:
                seen, quiet_since = self.progress, time.monotonic()
            elif time.monotonic() - quiet_since > _DRAIN_SECONDS:
                self.cut = True
                break
        self.closed = True
        return False

    def text(self):
        return "".join(self.chunks)

    def _release_pipe(self):
        """Do what Python's exit does to the file's own ways into its stdout: flush the file
        objects it left open there (`f = open(sys.stdout.fileno(), "w", closefd=False)`,
        `os.fdopen(os.dup(1), "w")`: their text came last under Python, and was lost here,
        as gradviz keeps them alive for the report), then point every other descriptor that
        still writes into the pipe at /dev/null. A copy the file made and never closed held
        the pipe open: the run waited a second for it and said a child process held it."""
        try:
            pipe = os.fstat(self.stream_fd)
        except OSError:
            return
        pipe = (pipe.st_dev, pipe.st_ino)
        ours = {id(self.stream)}
        # (no buffer once the file called sys.stdout.detach(): the buffer is the file's then)
        if self.stream.buffer is not None:
            ours.update((id(self.stream.buffer), id(self.stream.buffer.raw)))
        # No other thread runs while every object is listed: the list holds a reference to a
        # tuple the reader thread is building (rich's tuple(...) while it shows a long line),
        # whose resize then fails ("SystemError: Objects/tupleobject.c: bad argument to
        # internal function"), ending the reader and what it showed of the file's output
        # (a quarter of a second, not longer: a thread of the file that spins in pure Python
        # and takes the interpreter in between keeps it for the whole interval; at 1,000 s
        # `gradviz run` hung for 16 minutes on a file whose daemon thread ran `while True: pass`)
        switch = sys.getswitchinterval()
        sys.setswitchinterval(0.25)
        try:
            # type(), not isinstance: an object's __class__ may be anything (a Mock, a proxy
            # whose __getattribute__ raises, a module's deprecation warning)
            found = [obj for obj in gc.get_objects()
                     if issubclass(type(obj), _FILE_TYPES) and id(obj) not in ours]
        finally:
            sys.setswitchinterval(switch)
        # a text layer first: its flush passes its text down to the buffer below
        found.sort(key=lambda f: not issubclass(type(f), io.TextIOWrapper))
        for f in found:
            try:
                if not f.closed and f.writable() and _identity(f.fileno()) == pipe:
                    f.flush()
            except Exception:  # noqa: BLE001 - the file's objects may fail in any way
                pass
        for fd in _open_descriptors():
            if fd in (1, self.stream_fd, self.read_fd, self.saved_fd):
                continue
            try:
                writes = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
            except OSError:
                continue
            if writes and _identity(fd) == pipe:
                _point_at_devnull(fd)


# The file objects Python flushes at exit: text, buffered and raw.
_FILE_TYPES = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom, io.FileIO)


def _identity(fd):
    try:
        st = os.fstat(fd)
    except (OSError, TypeError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _open_descriptors():
    """This process's open descriptors ([] where /proc cannot say)."""
    try:
        return [int(n) for n in os.listdir("/proc/self/fd") if n.isdigit()]
    except OSError:
        return []


def _point_at_devnull(fd):
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(devnull, fd, inheritable=False)
    except OSError:
        pass
    finally:
        os.close(devnull)


class _LateThreads:
    """sys.stdout after the run while threads the file started are still running: their
    writes are dropped, everyone else's go to stream."""

    def __init__(self, stream, threads):
        self._stream, self._threads = stream, frozenset(threads)

    def write(self, text):
        if threading.current_thread() in self._threads:
            return len(text)
        return self._stream.write(text)

    def flush(self):
        if threading.current_thread() not in self._threads:
            self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _cut_note(late, drained):
    """Why the file's output may be incomplete, or None: daemon threads still running when it
    ended, or a process that still held its stdout when gradviz stopped listening."""
    if late:
        names = ", ".join(repr(t.name) for t in late[:3])
        more = f" and {len(late) - 3} more" if len(late) > 3 else ""
        s = "s" if len(late) > 1 else ""
        was = "were" if len(late) > 1 else "was"
        return (f"output may be cut: daemon thread{s} {names}{more} {was} still running when "
                "the file ended; what it printed after that is not shown (python would have "
                "stopped it at exit)")
    if drained:
        return (f"output may be cut: a child process still held the file's standard output "
                f"{_DRAIN_SECONDS:g} s after the file ended; what it wrote after that is not "
                "shown")
    return None


def _partial_suffix(data, marker):
    """Length of the longest end of data that is a beginning of marker."""
    for k in range(min(len(marker) - 1, len(data)), 0, -1):
        if data.endswith(marker[:k]):
            return k
    return 0


class _OsExit(BaseException):
    """os._exit(n) called by the file: it ends the file, not gradviz."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


class Execution:
    """What running the file left: namespace, output, warnings, error and exit code."""

    def __init__(self, path):
        self.path = path
        self.namespace = {}
        self.stdout = ""
        self.warnings = []
        self.error = None
        self.exit_code = 0
        self.stdout_cut = None      # why the output may miss what was written after the end


class ScriptEnvironment:
    """Context manager: the interpreter set up as `python FILE ARGV` would have it.

    Inside, the backend answers to both names, `__main__` is the file's module, sys.argv and
    sys.path[0] are the file's, and stdout is captured (see _Capture). On leaving, the file's
    non-daemon threads are joined and every change listed in the module docstring is undone.
    """

    def __init__(self, path, argv=(), backend="gradviz", sink=None):
        self.path = path
        self.argv = list(argv)
        self.backend = backend
        self.module = backend_module(backend)
        self.sink = sink
        self.capture = _Capture(sink)
        self.pid = os.getpid()
        self.main = types.ModuleType("__main__")
        self.main.__dict__.update({"__file__": path, "__builtins__": builtins,
                                   "__package__": None, "__doc__": None, "__spec__": None,
                                   "__loader__": None, "__cached__": None})
        self._stack = None
        self.stdout_cut = None
        self._late = []             # the file's threads still running when it ended
        self._atexit = []           # (func, args, kwargs) the file gave atexit.register
        self._exit_code = None      # os._exit(code) called by a thread of the file
        self._exit_pending = False
        self._running = False       # the file's code is running (not its atexit functions)

    @property
    def namespace(self):
        return self.main.__dict__

    def __enter__(self):
        stack = contextlib.ExitStack()
        self._saved = self._snapshot()
        stack.callback(self._restore_process, self._saved)
        aliases = _aliases(self.backend, self.module)
        stack.enter_context(_patched_modules(aliases))
        if self.backend == "gradviz":
            stack.enter_context(torch_submodules(keep=aliases))
        stack.enter_context(self.capture)
        stack.enter_context(_collected_warnings(self.capture))
        stack.enter_context(self._file_stdout())
        stack.enter_context(_patched(builtins, "input", self._input))
        stack.enter_context(self._exit_patched())
        stack.enter_context(_patched(atexit, "register", self._atexit_register))
        stack.enter_context(_patched(atexit, "unregister", self._atexit_unregister))
        # gradviz's own descriptors (its stdout, the capture's pipe, a copy of stderr): under
        # python they would not exist, so the file cannot close them (os.closerange(3, 65536),
        # as daemon code does, closed gradviz's stdout: "internal error", no document)
        # (only those still open: the listing's own descriptor is closed once it is read)
        self._protected = frozenset(fd for fd in _open_descriptors() if _identity(fd)) - \
            {0, 1, 2, self.capture.stream_fd}
        stack.enter_context(_patched(os, "close", self._os_close))
        stack.enter_context(_patched(os, "closerange", self._os_closerange))
        self._threads = set(threading.enumerate())
        self._stack = stack
        self._interrupted = False
        self._watching_sigint = threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is signal.default_int_handler
        if self._watching_sigint:
            # Put back by _restore_process, with every other handler.
            signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def _on_sigint(self, signum, frame):
        """Ctrl-C: as Python's own handler, but remembered, so that a KeyboardInterrupt the
        file raises itself (`raise KeyboardInterrupt`) is told from the user's Ctrl-C. Also
        how another thread's os._exit ends the file (see _os_exit)."""
        if self._exit_pending:
            self._exit_pending = False
            if self._running:
                raise _OsExit(self._exit_code)
            return      # the file had ended already
        self._interrupted = True
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def _file_stdout(self):
        """sys.stdout is the capture's stream while the file runs. The file's daemon threads
        run on while gradviz reports (python file.py would have stopped them at exit): what
        they print must not land in the document (`run --json`), so sys.stdout comes back
        wrapped, in one assignment, dropping their writes (see _stdout_after)."""
        old = sys.stdout
        sys.stdout = self.capture.stream
        try:
            yield
        finally:
            self._late = [t for t in threading.enumerate()
                          if t not in self._threads and t is not threading.current_thread()]
            sys.stdout = self._stdout_after(old)

    def _stdout_after(self, stream):
        return _LateThreads(stream, self._late) if self._late else stream

    def __exit__(self, *exc):
        self._stack.close()
        if self.capture.stream_fd is not None and not self._late:
            # closed first, so that a reference the file kept cannot write into whatever file
            # gets this descriptor number next (with threads still running it stays /dev/null)
            try:
                self.capture.stream.close()
            except (OSError, ValueError):
                pass
            try:
                os.close(self.capture.stream_fd)
            except OSError:
                pass    # the file closed its stdout's descriptor itself
        self.stdout_cut = _cut_note(self._late, self.capture.cut)
        if _ended is not None and os.getpid() == self.pid:
            _ended.append(self.main)
        return False

    def run(self, code, execution, debug=False):
        """exec the compiled file in its module; fill execution's error and exit code."""
        os_exit = False
        try:
            self._running = True
            try:
                exec(code, self.namespace)
            finally:
                self._running = False
        except SystemExit as exc:
            execution.exit_code = _exit_status(exc.code)
            if execution.exit_code != 0:
                execution.error = describe(exc, self.path, debug)
                execution.error.message = \
                    f"the file called sys.exit({_text_of(repr, exc.code)})"
        except _OsExit as exc:
            os_exit = True
            execution.exit_code = exc.code & 0xFF
            if execution.exit_code != 0:
                execution.error = describe(exc, self.path, debug)
                execution.error.type = "SystemExit"
                execution.error.message = f"the file called os._exit({exc.code!r})"
        except KeyboardInterrupt as exc:
            self._leave_if_forked(130)
            if self._interrupted or not self._watching_sigint:
                raise
            # The file raised it, no Ctrl-C came: its error, with its line, as any other.
            # `python file.py` exits 130 then.
            execution.exit_code = 130
            execution.error = describe(exc, self.path, debug)
        except BaseException as exc:  # noqa: BLE001 - the user's file may raise anything
            execution.exit_code = 1
            execution.error = describe(exc, self.path, debug)
            self._leave_if_forked(1, exc)
        self._leave_if_forked(execution.exit_code)
        try:
            self._join_threads()
            self._run_atexit()
            if not os_exit:
                self._flush_std_files(execution, debug)
        except _OsExit as exc:
            # os._exit in an atexit function: Python exits there, with that code
            execution.exit_code = exc.code & 0xFF
            if execution.exit_code != 0 and execution.error is None:
                execution.error = describe(exc, self.path, debug)
                execution.error.type = "SystemExit"
                execution.error.message = f"the file called os._exit({exc.code!r})"
        except KeyboardInterrupt:
            if self._interrupted or not self._watching_sigint:
                raise
        except BaseException as exc:  # noqa: BLE001 - a signal handler of the file's
            if execution.error is None:
                execution.exit_code = 1
                execution.error = describe(exc, self.path, debug)
        finally:
            # The file's alarm and signal handlers end with it: a repeating SIGALRM whose
            # handler raises went off in gradviz's report (an "internal error").
            _restore_signals(self._saved["signals"])

    def _flush_std_files(self, execution, debug):
        """What Python's exit does last (flush_std_files in Python/pylifecycle.c): flush the
        file's sys.stdout and sys.stderr unless they are None or closed. When one fails
        (`sys.stdout = 42`) `python file.py` exits 120 whatever it would have exited with
        (but 130 after a KeyboardInterrupt), saying "Exception ignored in: 42" for stdout and
        nothing for stderr; gradviz said nothing and exited 0."""
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name, None)
            if stream is None or _is_closed(stream):
                continue
            try:
                stream.flush()
            except _OsExit:
                raise
            except BaseException as exc:  # noqa: BLE001 - the file's object may raise anything
                if execution.exit_code != 130:
                    execution.exit_code = 120
                if execution.error is None:
                    error = describe(exc, self.path, debug)
                    error.message = (
                        f"{error.message} (Exception ignored in: {_text_of(repr, stream)}: "
                        f"python cannot flush the file's sys.{name} at exit, and exits 120)")
                    if error.file is None:
                        error.file = self.path
                    execution.error = error

    def _atexit_register(self, func, *args, **kwargs):
        """atexit.register while the file runs: its functions run when it ends, as under
        Python (before the report, their output in the file's, their os._exit its exit
        code), not when gradviz ends (an os._exit there was gradviz's traceback)."""
        if not callable(func):
            raise TypeError("the first argument must be callable")
        if self._atexit is None or os.getpid() != self.pid:
            return _REAL_ATEXIT[0](func, *args, **kwargs)
        self._atexit.append((func, args, kwargs))
        return func

    def _atexit_unregister(self, func):
        if self._atexit is not None:
            self._atexit[:] = [entry for entry in self._atexit if not entry[0] == func]
        _REAL_ATEXIT[1](func)

    def _run_atexit(self):
        """The file's atexit functions, last registered first; each one's exception printed
        and ignored, as Python's atexit does, except os._exit and a real Ctrl-C."""
        pending, self._atexit = self._atexit or [], None
        while pending:
            func, args, kwargs = pending.pop()
            try:
                func(*args, **kwargs)
            except _OsExit:
                raise
            except KeyboardInterrupt:
                if self._interrupted or not self._watching_sigint:
                    raise
                self._atexit_failed(func)
            except BaseException:  # noqa: BLE001 - Python's atexit ignores the rest
                self._atexit_failed(func)

    def _atexit_failed(self, func):
        exc = sys.exc_info()[1]
        # the traceback from the function's own frame, as Python's shows it (not this file's)
        exc = exc.with_traceback(exc.__traceback__.tb_next)
        text = f"Exception ignored in atexit callback: {_text_of(repr, func)}\n" + \
            _text_of(lambda e: "".join(traceback.format_exception(e)), exc)
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - the file may have broken its stderr
            pass

    def _leave_if_forked(self, code, exc=None):
        """A child forked by the file ends where `python file.py`'s child would: here, never
        reaching gradviz's report (which its parent writes)."""
        if os.getpid() == self.pid:
            return
        if exc is not None:
            traceback.print_exception(exc)
        for s in (sys.stdout, sys.stderr):
            try:
                s.flush()
            except (OSError, ValueError, AttributeError):
                pass
        _REAL_EXIT(code)

    def _join_threads(self):
        # Python joins non-daemon threads when the main module ends (threading._shutdown).
        for t in threading.enumerate():
            if t not in self._threads and not t.daemon and t is not threading.current_thread():
                t.join()

    def _snapshot(self):
        return {"cwd": _getcwd(), "recursion": sys.getrecursionlimit(),
                "streams": (sys.stdout, sys.stderr, sys.stdin), "argv": sys.argv,
                "path": list(sys.path), "main": sys.modules.get("__main__"),
                "modules": dict(sys.modules), "builtins": dict(builtins.__dict__),
                "environ": dict(os.environ), "umask": _umask(), "trace": sys.gettrace(),
                "profile": sys.getprofile(), "signals": _signal_handlers(),
                "numpy": _numpy_state(), "code": _code_state(), "stderr_fd": _dup(2),
                "thread_hooks": (threading.gettrace(), threading.getprofile()),
                "gc": (gc.isenabled(), gc.get_threshold(), list(gc.callbacks), gc.get_debug()),
                "imports": (list(sys.meta_path), list(sys.path_hooks),
                            dict(sys.path_importer_cache))}

    def _restore_process(self, saved):
        if saved["cwd"] is not None and _getcwd() != saved["cwd"]:
            os.chdir(saved["cwd"])
        sys.setrecursionlimit(saved["recursion"])
        stdout, sys.stderr, sys.stdin = saved["streams"]
        sys.stdout = self._stdout_after(stdout)
        sys.argv = saved["argv"]
        sys.path[:] = saved["path"]
        # What gradviz runs on after the file: a file that set builtins.print = None,
        # sys.modules["rich"] = None, os.umask(0o777) (every output then had mode 000),
        # ignored SIGTERM (gradviz could then not be stopped while rendering), set an alarm or
        # a trace function, or changed the environment (GRADVIZ_DOT, COLUMNS) changed gradviz.
        _restore_dict(builtins.__dict__, saved["builtins"])
        for name, module in saved["modules"].items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
        if os.environ != saved["environ"]:
            os.environ.clear()
            os.environ.update(saved["environ"])
        os.umask(saved["umask"])
        # only when the file changed them: a profiler's or coverage's own hook (cProfile's
        # Profile object, gradviz itself run under `python -m cProfile`) cannot be given back
        # through sys.setprofile ("'Profile' object is not callable": an internal error)
        if sys.gettrace() is not saved["trace"]:
            sys.settrace(saved["trace"])
        if sys.getprofile() is not saved["profile"]:
            sys.setprofile(saved["profile"])
        # the hooks the file gave threading.settrace/setprofile ran in gradviz's threads
        threading.settrace(saved["thread_hooks"][0])
        threading.setprofile(saved["thread_hooks"][1])
        # gc as gradviz had it: a callback of the file's that raises printed its error at
        # each of gradviz's own collections, after the file ended
        enabled, threshold, callbacks, debug = saved["gc"]
        gc.callbacks[:] = callbacks
        gc.set_threshold(*threshold)
        gc.set_debug(debug)
        (gc.enable if enabled else gc.disable)()
        # the import system gradviz imports its renderer with (a finder of the file's that
        # raised, or emptied path hooks, made gradviz's own imports fail after the file)
        sys.meta_path[:], sys.path_hooks[:] = saved["imports"][0], saved["imports"][1]
        sys.path_importer_cache.clear()
        sys.path_importer_cache.update(saved["imports"][2])
        _restore_signals(saved["signals"])
        _restore_numpy(saved["numpy"])
        _restore_code(saved["code"])
        if os._exit is _REAL_EXIT:
            self._guard_exit()
        if saved["stderr_fd"] is not None:
            # fd 2 as the file found it (it may have closed it, or pointed it elsewhere): where
            # gradviz's own messages go, and what decides its exit code when writing fails
            try:
                os.dup2(saved["stderr_fd"], 2)
            except OSError:
                pass
            os.close(saved["stderr_fd"])
        if saved["main"] is None:
            sys.modules.pop("__main__", None)
        else:
            sys.modules["__main__"] = saved["main"]
        _forget_user_modules(set(saved["modules"]),
                             os.path.dirname(os.path.abspath(self.path)))
        for name in [n for n in sys.modules if n not in saved["modules"]]:
            top = name.partition(".")[0]
            if top in _FRESH_AFTER and top not in saved["modules"]:
                del sys.modules[name]

    def install(self):
        """Make the file's module `__main__`, its argv and folder current (inside the run)."""
        folder = os.path.dirname(os.path.abspath(self.path))
        sys.argv = [self.path] + self.argv
        sys.path.insert(0, folder)
        sys.modules["__main__"] = self.main
        self._hidden = _hide_shadowed(folder)
        self._stack.callback(sys.modules.update, self._hidden)

    def _input(self, prompt=""):
        """input(): on a terminal the prompt is shown there (not kept in the captured
        output), since someone has to see it to answer."""
        try:
            on_tty = os.isatty(sys.stdin.fileno())
        except (AttributeError, OSError, ValueError):
            on_tty = False
        tty = None
        if on_tty:
            for fd in (self.capture.shown_fd, self.capture.saved_fd, 2):
                if fd is not None and os.isatty(fd):
                    tty = fd
                    break
        if tty is None:
            return _REAL_INPUT(prompt)
        self.capture.stream.flush()
        os.write(tty, str(prompt).encode("utf-8", "backslashreplace"))
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line[:-1] if line.endswith("\n") else line

    def _os_close(self, fd):
        if operator.index(fd) in self._protected:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        _REAL_CLOSE(fd)

    def _os_closerange(self, low, high):
        low, high = operator.index(low), operator.index(high)
        keep = set(self._protected)
        if not low <= 1 < high:
            # sys.stdout's descriptor stands for fd 1, which closerange(3, ...) leaves open
            keep.add(self.capture.stream_fd)
        for fd in sorted(p for p in keep if low <= p < high):
            _REAL_CLOSERANGE(low, fd)
            low = fd + 1
        _REAL_CLOSERANGE(low, high)

    @contextlib.contextmanager
    def _exit_patched(self):
        """os._exit is _os_exit while the file runs, and then what _guard_exit puts, in one
        assignment: a watchdog thread that called os._exit between putting the real one back
        and guarding it killed gradviz in its report (exit 9, no document, on a busy machine)."""
        old = os._exit
        os._exit = self._os_exit
        try:
            yield
        finally:
            os._exit = self._late_exit(old)

    def _guard_exit(self):
        os._exit = self._late_exit(os._exit)

    def _late_exit(self, otherwise):
        """Once the file ended, os._exit in a thread of its still running (a watchdog) ends
        that thread only (_LateExit): it killed gradviz in its report, where python file.py
        had stopped the thread at exit. `otherwise` when no thread of the file runs."""
        late = [t for t in threading.enumerate() if t not in self._threads and t.is_alive()
                and t is not threading.current_thread()]
        return _LateExit(late) if late else otherwise

    def _os_exit(self, code):
        if os.getpid() != self.pid:
            _REAL_EXIT(code)
        # os._exit's own checks: os._exit("x") is a TypeError, os._exit(2**70) an OverflowError
        code = operator.index(code)
        if not _C_INT_MIN <= code <= _C_INT_MAX:
            raise OverflowError("Python int too large to convert to C int")
        if threading.current_thread() is threading.main_thread():
            raise _OsExit(code)
        # Another thread of the file (a watchdog): the file ends here, with that code, and
        # gradviz reports what ran; it killed gradviz, with no report (an empty --json).
        # The main thread gets it as Ctrl-C would come (even out of a sleep or a lock wait);
        # this thread ends, as every thread of the file does at os._exit.
        if self._exit_code is None and self._watching_sigint and \
                signal.getsignal(signal.SIGINT) == self._on_sigint:
            self._exit_code, self._exit_pending = code, True
            _interrupt_main()
        raise SystemExit(code)


def _is_closed(stream):
    """file_is_closed in Python/pylifecycle.c: a `closed` that cannot be read is open."""
    try:
        return bool(stream.closed)
    except BaseException:  # noqa: BLE001 - the file's object may raise anything
        return False


_REAL_EXIT = os._exit
_REAL_CLOSE, _REAL_CLOSERANGE = os.close, os.closerange


class _LateExit:
    """os._exit once the file ended while threads of its still run: in those threads it
    ends the thread only."""

    def __init__(self, threads):
        self._threads = frozenset(threads)

    def __call__(self, code):
        if threading.current_thread() in self._threads:
            raise SystemExit(code)
        _REAL_EXIT(code)


def _interrupt_main():
    """SIGINT sent to the main thread itself: a real signal, so that a sleep or a lock wait
    of the main thread ends too (_thread.interrupt_main only sets the flag Python checks
    between bytecodes, which a 60 s time.sleep does not reach)."""
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

_REAL_ATEXIT = (atexit.register, atexit.unregister)
_REAL_INPUT = builtins.input


_C_INT_MIN, _C_INT_MAX = -2 ** 31, 2 ** 31 - 1
_C_LONG_MIN, _C_LONG_MAX = -2 ** 63, 2 ** 63 - 1


def _exit_status(code):
    """The process exit status `python file.py` would have after sys.exit(code).

    >>> _exit_status(None), _exit_status(3), _exit_status(256), _exit_status("msg")
    (0, 3, 0, 1)
    >>> _exit_status(2 ** 70)       # too big for a C long: Python exits with -1, that is 255
    255
    """
    if code is None:
        return 0
    if isinstance(code, int):
        if not _C_LONG_MIN <= code <= _C_LONG_MAX:
            return 0xFF
        return code & 0xFF
    return 1


def _getcwd():
    try:
        return os.getcwd()
    except OSError:
        return None


def _dup(fd):
    try:
        return os.dup(fd)
    except OSError:
        return None


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _restore_dict(current, saved):
    """Make current (a namespace dict) hold what saved holds, object for object."""
    for name in [n for n in current if n not in saved]:
        del current[name]
    for name, value in saved.items():
        if current.get(name, _MISSING) is not value:
            current[name] = value


_MISSING = object()
# The signals gradviz itself relies on after the file ran (Ctrl-C, SIGTERM, a closed pipe).
_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGPIPE", "SIGHUP", "SIGALRM")
                 if hasattr(signal, n))


def _signal_handlers():
    """The handlers of _SIGNALS and the pending alarm; None off the main thread (signals can
    only be set there)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    timer = signal.getitimer(signal.ITIMER_REAL) if hasattr(signal, "getitimer") else None
    return {"handlers": {s: signal.getsignal(s) for s in _SIGNALS}, "timer": timer}


def _restore_signals(saved):
    if saved is None:
        return
    if saved["timer"] is not None:
        # An alarm the file set would end gradviz's report (`Alarm clock`) after the file
        # ended, when under Python the process had already exited.
        signal.setitimer(signal.ITIMER_REAL, *saved["timer"])
    for sig, handler in saved["handlers"].items():
        if handler is not None and signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)


# The libraries gradviz itself runs on after the file: their functions, classes and modules
# are put back if the file replaced them (`np.asarray = None`, `np.isfinite = ...`,
# `gradviz.inspect.report.build_report = None` made gradviz fail after the file, and say that
# was a bug of its own). Their data (counters, caches, settings) is left as the file left it.
_CODE_MODULES = ("gradviz", "gradviz_cli", "numpy", "rich", "click")
_CODE_ONE = frozenset((
    "torch", "torch.autograd", "torch.autograd.graph", "torch.nn", "torch.nn.functional",
    "torch.utils._python_dispatch",
    # the standard library gradviz writes its files and messages with (`os.replace = None`
    # made every output an internal error)
    "os", "posixpath", "sys", "io", "json", "json.encoder", "json.decoder", "tempfile",
    "shutil", "subprocess", "signal", "threading", "traceback", "re", "math", "html",
    "weakref", "contextlib", "functools", "codecs", "errno", "stat", "time", "warnings",
    "collections", "itertools", "operator", "textwrap", "pathlib", "base64", "hashlib",
    "zlib", "importlib", "unicodedata", "gc", "ctypes"))
# Libraries gradviz imports only after the file ran (for speed): when the file imported them
# first, and perhaps replaced their functions, gradviz imports them afresh.
_FRESH_AFTER = ("rich", "click")


def _code_state():
    """[(module, a copy of its namespace)] for the modules gradviz uses."""
    saved = []
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType):
            continue
        if name.partition(".")[0] not in _CODE_MODULES and name not in _CODE_ONE:
            continue
        try:
            saved.append((module, dict(vars(module))))
        except TypeError:
            continue
    return saved


def _is_code(value):
    return isinstance(value, types.ModuleType) or callable(value)


def _restore_code(saved):
    for module, entries in saved:
        current = vars(module)
        for name, value in entries.items():
            if current.get(name, _MISSING) is not value and _is_code(value):
                current[name] = value


def _numpy_state():
    np = sys.modules.get("numpy")
    if np is None:
        return None
    return np, np.geterr(), np.get_printoptions()


def _restore_numpy(saved):
    if saved is not None:
        np, errors, options = saved
        np.seterr(**errors)
        np.set_printoptions(**options)


# What the run itself needs; a user's module of the same name is not imported instead.
_KEEP = ("gradviz", "torch", "numpy")


def _hide_shadowed(folder):
    """Take out of sys.modules, for the run, the libraries gradviz loaded that a module in the
    file's folder shadows (its `rich.py`), so the file imports its own, as under Python.
    Returns them, to be put back after."""
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    tops = set()
    for n in names:
        if n.endswith(".py"):
            tops.add(n[:-3])
        elif os.path.isfile(os.path.join(folder, n, "__init__.py")):
            tops.add(n)
    tops -= set(_KEEP) | set(getattr(sys, "stdlib_module_names", ()))
    # Only the top-level module: its submodules stay, so that the library's own lazy
    # imports (`from .text import Text` inside rich, while the output frame prints) still work.
    hidden = {}
    for name in tops & set(sys.modules):
        file = getattr(sys.modules[name], "__file__", None) or ""
        if not file.startswith(os.path.join(folder, "")):
            hidden[name] = sys.modules.pop(name)
    return hidden


def _forget_user_modules(before, folder):
    """Drop the modules the file imported from its own folder that shadow a module found
    elsewhere on sys.path (a `rich.py` of the user's must not stand in for the library gradviz
    prints with). The others stay, as they would in the process that ran the file."""
    from importlib.machinery import PathFinder
    folder = os.path.join(folder, "")
    for name in set(sys.modules) - before:
        file = getattr(sys.modules.get(name), "__file__", None) or ""
        if not isinstance(file, str) or not file.startswith(folder) or \
                callsite.is_gradviz_file(file):
            continue
        top = name.partition(".")[0]
        try:
            shadows = top in sys.builtin_module_names or \
                PathFinder.find_spec(top, [p for p in sys.path if p]) is not None
        except (ImportError, ValueError):
            shadows = True
        if shadows:
            del sys.modules[name]


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
def _patched(obj, attr, value):
    old = getattr(obj, attr)
    setattr(obj, attr, value)
    try:
        yield
    finally:
        setattr(obj, attr, old)


@contextlib.contextmanager
def _collected_warnings(capture):
    """The file's warnings go to the capture (and so into its output, in order)."""
    def show(message, category, filename, lineno, file=None, line=None):
        if callsite.is_gradviz_file(filename):
            # torch's C++ warnings (reading a non-leaf's .grad) come from the innermost
            # Python frame, the torch tracer's: the user's line made the call
            filename, lineno = callsite.user_site(2) or (filename, lineno)
        record = {"category": category.__name__, "message": str(message), "file": filename,
                  "line": lineno}
        capture.warn(record, warnings.formatwarning(message, category, filename, lineno, line))
    with warnings.catch_warnings():
        warnings.showwarning = show
        warnings.filterwarnings("ignore", message="Error detected in")    # torch's too
        yield


def new_tracer(backend, whole_grads=False, **options):
    """The tracer that records a run on this backend (torch's needs torch installed; both
    keep summaries of large hook values, torch's of large gradients too, unless whole_grads)."""
    if backend == "torch":
        backend_module(backend)
        from .torch_tracer import TorchTracer
        return TorchTracer(whole_grads=whole_grads, **options)
    from .tracer import Tracer
    return Tracer(whole_grads=whole_grads, **options)


def tracing_for(tracer, backend):
    """Context manager installing tracer for a run on backend (nothing when tracer is None)."""
    if tracer is None:
        return contextlib.nullcontext()
    if backend == "torch":
        from .torch_tracer import torch_tracing
        return torch_tracing(tracer)
    from .tracer import tracing
    return tracing(tracer)


def compile_file(path):
    """The file's code object; SyntaxError (with file and line) when it is not valid Python."""
    _check_path(path)
    data = _read_bytes(path)
    source, lenient = _decoded(path, data)
    at = source.find("\0")
    if at >= 0:
        # compile() says "source code string cannot contain null bytes", with no file or
        # line; `python file.py` says this, at the line holding the first one
        line = source.count("\n", 0, at) + 1
        text = source.split("\n")[line - 1].replace("\0", "")
        raise SyntaxError("source code cannot contain null bytes", (path, line, None, text))
    # bytes that are not UTF-8 under a BOM or a UTF-8 cookie: the tokenizer's own answer
    return compile(data if lenient else source, path, "exec", dont_inherit=True)


def execute_file(path, argv=(), backend="gradviz", anomaly=False, tracer=None, debug=False,
                 sink=None, after=None, code=None):
    """Run the file as `python FILE ARGV` would; return an Execution.

    code, when given, is the file's code object from an earlier compile_file(path): a command
    that runs the file more than once (gradcheck) runs the file as it was the first time, even
    if it deleted or rewrote itself since.

    after(execution), when given, runs inside the same environment once the file ended (its
    output is still captured): `--backward` runs there. sink(stream, text) receives the
    file's output as it is written. KeyboardInterrupt is not caught: the caller handles
    Ctrl-C once, at the top.
    """
    result = Execution(path)
    try:
        if code is None:
            code = compile_file(path)
    except SyntaxError as exc:
        result.error, result.exit_code = describe(exc, path, debug), 1
        return result
    except (MemoryError, RecursionError) as exc:
        # The parser's limits (`x = ------...1` nested 100,000 deep): `python file.py` prints
        # "MemoryError" or "RecursionError: maximum recursion depth exceeded during
        # compilation", with no line; it was gradviz's "internal error"
        # (MemoryError says nothing more: what it means here is said instead, no more than is
        # known: a file too big for the memory left ends the same way as deep nesting)
        message = _text_of(str, exc) or ("Python's parser ran out of memory compiling the file "
                                         "(an expression nested too deeply does this)")
        result.error = ErrorInfo(type(exc).__name__, message, path)
        result.exit_code = 1
        return result
    env = ScriptEnvironment(path, argv, backend, sink)
    result.namespace = env.namespace
    from ..autograd.grad_mode import _state
    mod = env.module
    prev_anomaly = (_state.anomaly, _state.anomaly_nan)
    with env:
        env.install()
        if anomaly:
            if backend == "gradviz":
                _state.anomaly, _state.anomaly_nan = True, True
            else:
                mod.autograd.set_detect_anomaly(True)
        try:
            # (the nodes' sites: describe reads a failing node's, with or without a tracer)
            with tracing_for(tracer, backend), callsite.keeping_sites():
                env.run(code, result, debug)
        finally:
            if backend == "gradviz":
                _state.anomaly, _state.anomaly_nan = prev_anomaly
            elif anomaly:
                mod.autograd.set_detect_anomaly(False)
        if after is not None:
            after(result)
    if env.capture.sink_error is not None:
        raise env.capture.sink_error
    result.stdout = env.capture.text()
    result.warnings = env.capture.warnings
    result.stdout_cut = env.stdout_cut
    return result


def execute(path, argv=(), backend="gradviz", anomaly=False, tracer=None, debug=False,
            code=None):
    """Run the file; return (namespace, stdout text, ErrorInfo or None)."""
    r = execute_file(path, argv, backend, anomaly, tracer, debug, code=code)
    return r.namespace, r.stdout, r.error
