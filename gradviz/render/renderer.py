"""Find a Graphviz renderer and run it on DOT source, writing the output atomically.

The search order is: an explicit path, the GRADVIZ_DOT environment variable, the
`graphviz-pure` executable beside the running interpreter (shutil.which misses a virtual
environment that is not activated), `graphviz-pure` on PATH, then Graphviz's `dot` on PATH.
The renderer runs through subprocess: the graphviz package cannot find graphviz-pure, and its
version() fails on it.
"""

import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["FORMATS", "RenderError", "find_renderer", "render"]

FORMATS = ("svg", "png", "pdf", "dot")

_GET_ONE = (
    "Get one with `pip install graphviz-pure` (no system package needed), "
    "or `apt-get install graphviz` (which also gives PDF), "
    "or point gradviz at one with --renderer PATH or the GRADVIZ_DOT environment variable."
)


class RenderError(Exception):
    """A rendering failure, with the exit code the command line should use.

    >>> RenderError("no renderer", exit_code=3).exit_code
    3
    """

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.exit_code = exit_code


def _resolve(command):
    """Return the full path of an executable given as a path or a name on PATH, or None."""
    path = Path(command).expanduser()
    if path.is_file() and os.access(path, os.X_OK):
        return str(path)
    return shutil.which(command)


def _is_pure(path):
    return "graphviz-pure" in Path(path).name


def find_renderer(renderer=None, fmt="svg"):
    """Return the path of the renderer to use for fmt, or None when there is none.

    An explicit renderer (argument or GRADVIZ_DOT) that does not exist is an error (exit 2).
    PDF skips graphviz-pure, which has no PDF output.

    >>> find_renderer(fmt="dot") is None   # DOT needs no renderer
    True
    """
    if fmt == "dot":
        return None
    explicit = renderer or os.environ.get("GRADVIZ_DOT")
    if explicit:
        found = _resolve(explicit)
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


def _atomic_write(out_path, produce):
    """Write produce()'s bytes to out_path through a temporary file in the same directory.

    The temporary file is created before produce() runs, so an unwritable path fails early;
    on any error it is removed and out_path is left as it was.
    """
    out_path = Path(out_path)
    tmp = out_path.parent / f".{out_path.name}.{secrets.token_hex(4)}.tmp"
    try:
        # os.open applies the umask, so the result gets ordinary permissions (mkstemp: 0600).
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise RenderError(f"cannot write {out_path}: {exc.strerror}", exit_code=2) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(produce())
        os.replace(tmp, out_path)
    except OSError as exc:
        raise RenderError(f"cannot write {out_path}: {exc.strerror}", exit_code=2) from exc
    finally:
        if tmp.exists():
            tmp.unlink()
    return out_path


def _run(renderer, dot_source, fmt):
    args = [renderer, f"-T{fmt}"]
    if fmt == "png":
        # Scale a huge drawing down to 300 inches a side (28,800 px at 96 dpi) instead of
        # allocating the full bitmap: a 5,000-node chain would be 480,203 px tall (2.5 GB of
        # memory), and a wide one makes graphviz-pure abort. dot caps its bitmaps similarly.
        args.append("-Gsize=300,300")
    try:
        proc = subprocess.run(args, input=dot_source.encode("utf-8"), capture_output=True,
                              check=False)
    except OSError as exc:
        raise RenderError(f"cannot run renderer {renderer}: {exc.strerror}") from exc
    if proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        message = f"renderer {renderer} failed (exit {proc.returncode}) making {fmt.upper()}"
        if fmt == "pdf" and _is_pure(renderer):
            message += "; graphviz-pure has no PDF output, PDF needs Graphviz's `dot`"
        raise RenderError(f"{message}:\n{stderr}" if stderr else message)
    return proc.stdout


def render(dot_source, fmt, out_path, renderer=None):
    """Render DOT source to out_path as svg, png, pdf or dot, and return the path written.

    The output is written atomically: on any error nothing is left at out_path. Without any
    renderer, the DOT source is written beside out_path (as .dot) and RenderError says how to
    get one (exit_code 3).

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "g.dot"
    >>> render("digraph { a -> b }", "dot", out).read_text()
    'digraph { a -> b }'
    """
    if fmt not in FORMATS:
        raise RenderError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}", 2)
    out_path = Path(out_path)
    if fmt == "dot":
        return _atomic_write(out_path, lambda: dot_source.encode("utf-8"))
    found = find_renderer(renderer, fmt)
    if found is None:
        dot_path = out_path.with_suffix(".dot")
        _atomic_write(dot_path, lambda: dot_source.encode("utf-8"))
        if fmt == "pdf":
            message = ("PDF output needs Graphviz's `dot`, and it is not on PATH "
                       "(graphviz-pure has no PDF; use SVG or PNG with it). "
                       "Install it with `apt-get install graphviz`, "
                       "or point gradviz at it with --renderer PATH or GRADVIZ_DOT.")
        else:
            message = "no Graphviz renderer found (graphviz-pure or dot). " + _GET_ONE
        raise RenderError(f"{message}\nWrote the DOT source to {dot_path} instead.", exit_code=3)
    return _atomic_write(out_path, lambda: _run(found, dot_source, fmt))
