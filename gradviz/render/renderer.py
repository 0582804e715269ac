"""Find a Graphviz renderer and run it on DOT source, writing the output safely.

The search order is: an explicit path, the GRADVIZ_DOT environment variable, the
`graphviz-pure` executable beside the running interpreter (shutil.which misses a virtual
environment that is not activated), `graphviz-pure` on PATH, then Graphviz's `dot` on PATH.
The renderer runs through subprocess: the graphviz package cannot find graphviz-pure, and its
version() fails on it. Files are written by gradviz.render.output (atomic, never over the
file being run, a device, a symlink or a read-only file).
"""

import errno
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from .output import OutputError, write_output

__all__ = ["EXIT_NO_RENDERER", "EXIT_RENDERER_FAILED", "FORMATS", "RenderError",
           "find_renderer", "on_slow_renderer", "render", "render_bytes", "render_svg"]

FORMATS = ("svg", "png", "pdf", "dot")

# Exit codes of the command line's table that belong to rendering (2 is a usage error).
EXIT_NO_RENDERER = 3
EXIT_RENDERER_FAILED = 4

_GET_ONE = (
    "Get one with `pip install graphviz-pure` (no system package needed), "
    "or `apt-get install graphviz` (which also gives PDF), "
    "or point gradviz at one with --renderer PATH or the GRADVIZ_DOT environment variable."
)

# The first line of a .dot file written because no renderer was found. A later run may replace
# a file that starts with it; any other file at that name is the user's and is kept.
FALLBACK_MARK = "// written by gradviz graph because no Graphviz renderer was found"


class RenderError(Exception):
    """A rendering failure, with the exit code the command line should use.

    >>> RenderError("no renderer", exit_code=3).exit_code
    3
    """

    def __init__(self, message, exit_code=EXIT_RENDERER_FAILED):
        super().__init__(message)
        self.exit_code = exit_code


def _resolve(command):
    """Return the full path of an executable given as a path or a name on PATH, or None."""
    path = Path(command).expanduser()
    if path.is_file() and os.access(path, os.X_OK):
        # Absolute: subprocess looks a bare name ("./dot" becomes "dot") up on PATH.
        return os.path.abspath(path)
    return shutil.which(command)


def _not_executable(command):
    """The reason an explicit renderer path that exists cannot be run, or None."""
    path = Path(command).expanduser()
    if path.is_dir():
        return "it is a folder"
    if path.is_file() and not os.access(path, os.X_OK):
        return "it is not executable (chmod +x it)"
    return None


def _is_pure(path):
    return "graphviz-pure" in Path(path).name


def find_renderer(renderer=None, fmt="svg"):
    """Return the path of the renderer to use for fmt, or None when there is none.

    An explicit renderer (argument or GRADVIZ_DOT) that does not exist is an error (exit 2);
    one that exists but cannot be run is a renderer failure (exit 4). PDF skips graphviz-pure,
    which has no PDF output.

    >>> find_renderer(fmt="dot") is None   # DOT needs no renderer
    True
    """
    if fmt == "dot":
        return None
    explicit = renderer or os.environ.get("GRADVIZ_DOT")
    if explicit:
        found = _resolve(explicit)
        origin = "--renderer" if renderer else "GRADVIZ_DOT"
        reason = _not_executable(explicit) if found is None else None
        if reason is not None:
            raise RenderError(f"cannot run renderer {explicit} (from {origin}): {reason}")
        if found is None:
            origin = "--renderer" if renderer else "GRADVIZ_DOT"
            raise RenderError(f"renderer not found: {explicit} (from {origin})", exit_code=2)
        return found
    candidates = []
    if fmt != "pdf":
        candidates += [Path(sys.executable).parent / "graphviz-pure", "graphviz-pure"]
    candidates.append("dot")
    for candidate in candidates:
        found = _resolve(str(candidate))
        if found is not None:
            return found
    return None


def _run(renderer, dot_source, fmt):
    """The renderer's output for fmt; RenderError (exit 4) when it cannot run, fails or writes
    nothing. On any exception (Ctrl-C, SIGTERM) subprocess.run kills the renderer."""
    args = [renderer, f"-T{fmt}"]
    if fmt == "png":
        # Scale a huge drawing down to 300 inches a side (28,800 px at 96 dpi) instead of
        # allocating the full bitmap: a 5,000-node chain would be 480,203 px tall (2.5 GB of
        # memory), and a wide one makes graphviz-pure abort. dot caps its bitmaps similarly.
        args.append("-Gsize=300,300")
    try:
        proc = _run_group(args, dot_source.encode("utf-8"))
    except OSError as exc:
        reason = exc.strerror
        if exc.errno == errno.ENOEXEC:
            reason = "it is not a program (no #! line, or built for another machine)"
        elif exc.errno == errno.EACCES:
            reason = "permission denied (is it executable?)"
        raise RenderError(f"cannot run renderer {renderer}: {reason}") from None
    stderr = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        message = f"renderer {renderer} was killed by {name} making {fmt.upper()}"
    elif proc.returncode != 0:
        message = f"renderer {renderer} failed (exit {proc.returncode}) making {fmt.upper()}"
        if fmt == "pdf" and _is_pure(renderer):
            message += "; graphviz-pure has no PDF output, PDF needs Graphviz's `dot`"
    elif not proc.stdout:
        message = f"renderer {renderer} exited 0 but wrote no {fmt.upper()}"
    elif not _looks_like(proc.stdout, fmt):
        start = proc.stdout[:40].decode("utf-8", "backslashreplace")
        message = (f"renderer {renderer} exited 0 but what it wrote is not {fmt.upper()} "
                   f"(it starts with {start!r})")
    else:
        return proc.stdout
    raise RenderError(f"{message}:\n{stderr}" if stderr else message)


def _looks_like(data, fmt):
    """True when data starts as a file of fmt does: a renderer that exits 0 having written an
    error message (or anything else) must not leave it in the output file as a drawing.

    >>> _looks_like(b"<?xml version='1.0'?>\\n<svg>", "svg"), _looks_like(b"oops", "png")
    (True, False)
    """
    if fmt == "png":
        return data.startswith(b"\x89PNG\r\n\x1a\n")
    if fmt == "pdf":
        return data.lstrip()[:5] == b"%PDF-"
    if fmt == "svg":
        return b"<svg" in data[:65536]
    return True


# After this many seconds of rendering, the callback set by on_slow_renderer is told.
_SLOW_AFTER = 15.0
_on_slow = None


def on_slow_renderer(callback):
    """Call callback(message) when a renderer has been running for a while (the command line
    prints it on stderr); None: say nothing."""
    global _on_slow
    _on_slow = callback


def _run_group(args, data):
    """subprocess.run(args, input=data, capture_output=True), the renderer in a process group
    of its own: on any exception (Ctrl-C, SIGTERM) the whole group is killed, so a renderer
    that is a wrapper script does not leave its own child (the real `dot`) running.

    Ctrl-C and SIGTERM are held while the renderer starts and raised once it is under the
    `try` that kills its group: one arriving after the fork but before that `try` (the
    renderer already running its own children) left them running."""
    held = []
    previous = _hold_signals(held)
    try:
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True,
                                preexec_fn=_die_with_parent())
    except BaseException:
        _release_signals(previous, held)
        raise
    with proc:
        try:
            _release_signals(previous, held)
            try:
                stdout, stderr = proc.communicate(data, timeout=_SLOW_AFTER)
            except subprocess.TimeoutExpired:
                # A renderer that hangs must not look like gradviz hanging: say so, once.
                if _on_slow is not None:
                    _on_slow(f"still waiting for the renderer {args[0]} after "
                             f"{_SLOW_AFTER:g} s (Ctrl-C stops it)")
                stdout, stderr = proc.communicate()
        except BaseException:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
            raise
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)


_HELD = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM") if hasattr(signal, n))


def _hold_signals(held):
    """Make Ctrl-C and SIGTERM append their number to held instead of running their
    handlers; the handlers they replaced (None off the main thread, where Python runs no
    handler and none can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return {s: signal.signal(s, lambda signum, frame: held.append(signum)) for s in _HELD
            if signal.getsignal(s) is not None}     # (None: set outside Python, kept)


def _release_signals(previous, held):
    """Put the handlers back, then raise the first held signal again: its handler runs here
    (SIGTERM's raises the command line's Terminated, Ctrl-C's KeyboardInterrupt)."""
    if previous is None:
        return
    for s, handler in previous.items():
        signal.signal(s, handler)
    if held:
        signal.raise_signal(held[0])


_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """On Linux, a function for Popen's preexec_fn that makes the renderer get SIGKILL when
    gradviz dies, however it dies: SIGKILL (the OOM killer, `kill -9`) runs no `finally`, and
    the renderer, in a session of its own, was left running. None elsewhere.

    libc is loaded here, in gradviz, so that the child only makes the call. PDEATHSIG fires
    when the thread that forked ends: rendering runs on gradviz's main thread."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return None
    parent, kill, leave = os.getpid(), int(signal.SIGKILL), os._exit

    def preexec():
        prctl(_PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent:
            # gradviz died between fork and prctl: the signal will never come
            leave(1)
    return preexec


def _fallback_path(out_path):
    """Where the DOT source goes when no renderer was found: out_path as .dot, unless a file
    gradviz did not write is there; then the first free NAME.1.dot, NAME.2.dot, ..."""
    base = out_path.with_suffix(".dot")
    for i in range(100):
        path = base if i == 0 else base.with_name(f"{base.stem}.{i}.dot")
        if not os.path.lexists(path) or _written_by_fallback(path):
            return path
    return None


def _written_by_fallback(path):
    try:
        with open(path, "rb") as f:
            return f.read(len(FALLBACK_MARK)) == FALLBACK_MARK.encode()
    except OSError:
        return False


def _missing(fmt):
    """What to tell the user when no renderer for fmt was found."""
    if fmt == "pdf":
        return ("PDF output needs Graphviz's `dot`, and it is not on PATH "
                "(graphviz-pure has no PDF; use SVG or PNG with it). "
                "Install it with `apt-get install graphviz`, "
                "or point gradviz at it with --renderer PATH or GRADVIZ_DOT.")
    return "no Graphviz renderer found (graphviz-pure or dot). " + _GET_ONE


def _no_renderer(dot_source, fmt, out_path, protected, dot_copy):
    """RenderError (exit 3) saying how to get a renderer, after writing the DOT source beside
    out_path (or naming dot_copy, where it was already written)."""
    message = _missing(fmt)
    if dot_copy is not None:
        return RenderError(f"{message}\nThe DOT source is in {dot_copy}.", EXIT_NO_RENDERER)
    dot_path = _fallback_path(out_path)
    if dot_path is None:
        return RenderError(f"{message}\nDid not write the DOT source: "
                           f"{out_path.with_suffix('.dot')} and NAME.1.dot to NAME.99.dot "
                           "exist.", EXIT_NO_RENDERER)
    text = f"{FALLBACK_MARK}\n{dot_source}".encode("utf-8")
    try:
        write_output(dot_path, lambda: text, protected)
    except OutputError as exc:
        return RenderError(f"{message}\nDid not write the DOT source: {exc}", EXIT_NO_RENDERER)
    wrote = f"Wrote the DOT source to {dot_path} instead"
    if dot_path != out_path.with_suffix(".dot"):
        wrote += f" ({out_path.with_suffix('.dot')} exists and gradviz did not write it)"
    return RenderError(f"{message}\n{wrote}.", EXIT_NO_RENDERER)


def render(dot_source, fmt, out_path, renderer=None, protected=None, dot_copy=None):
    """Render DOT source to out_path as svg, png, pdf or dot, and return the path written.
    For dot, dot_source may be a list of the text's UTF-8 chunks.

    The output is written by gradviz.render.output.write_output: atomically, and never over a
    file in protected ({path: what it is}), a device, a symlink or a read-only file (RenderError,
    exit_code 2). Without any renderer, the DOT source is written beside out_path as .dot
    (never over a .dot gradviz did not write; dot_copy names a file that already holds it) and
    RenderError says how to get one (exit_code 3). A renderer that cannot run, fails or writes
    nothing gives exit_code 4.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "g.dot"
    >>> render("digraph { a -> b }", "dot", out).read_text()
    'digraph { a -> b }'
    """
    if fmt not in FORMATS:
        raise RenderError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}", 2)
    out_path = Path(out_path)
    if fmt == "dot":
        # DOT text, or already its UTF-8 chunks (dot.build_columns), each written in turn
        produce = dot_source.encode if isinstance(dot_source, str) else lambda: dot_source
    else:
        found = find_renderer(renderer, fmt)
        if found is None:
            raise _no_renderer(dot_source, fmt, out_path, protected, dot_copy)
        produce = functools.partial(_run, found, dot_source, fmt)
    try:
        return Path(write_output(out_path, produce, protected))
    except OutputError as exc:
        raise RenderError(str(exc), exc.exit_code) from None


def render_bytes(dot_source, fmt, renderer=None):
    """Return dot_source rendered as fmt (svg, png, pdf or dot), as bytes, writing no file
    (`graph --svg -` prints them). RenderError: exit_code 3 when there is no renderer (nothing
    is written then), 4 when it fails, 2 for a missing explicit one or an unknown format.

    >>> render_bytes("digraph { a -> b }", "dot")
    b'digraph { a -> b }'
    """
    if fmt not in FORMATS:
        raise RenderError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}", 2)
    if fmt == "dot":
        return dot_source.encode("utf-8")
    found = find_renderer(renderer, fmt)
    if found is None:
        raise RenderError(_missing(fmt), EXIT_NO_RENDERER)
    return _run(found, dot_source, fmt)


def render_svg(dot_source, renderer=None):
    """Return the SVG the renderer lays out for dot_source, as text, writing no file (the
    interactive report inlines it). RenderError as render_bytes.

    >>> render_svg("digraph { a -> b }").count('class="node"')      # doctest: +SKIP
    2
    """
    return render_bytes(dot_source, "svg", renderer).decode("utf-8")
