"""Write an output file without losing what was there.

Each rule below stops a way a writer can destroy a user's file:

- a path that is the file being run, or any module the run loaded, is refused: `--dot model.py`
  would replace the user's source; so is any existing Python source file (.py, .ipynb) or
  program (an executable starting with #! or as a binary);
- a symlink is written through to its target; replacing the link with a file would break it;
- a target that exists and is not a regular file (/dev/null, a FIFO, a terminal) is opened and
  written into: renaming a file over it would replace the device (as root, /dev/null itself),
  and so is a path that reaches an open file through /proc (/dev/stdout, /dev/fd/1);
- a read-only file is refused; a writable one keeps its mode when it is replaced;
- anything else is replaced atomically: the bytes go to a temporary file with a short name in
  the same directory (so a 250-character output name still leaves room), which is then renamed
  over the target. On any error, and on Ctrl-C or SIGTERM (which the command line raises as
  exceptions), the temporary file is removed and the target is left as it was.
"""

import errno
import os
import secrets
import stat
import sys

__all__ = ["OutputError", "check_output", "loaded_sources", "on_waiting_reader", "redirect_descriptor",
           "write_output"]

# A read-only target's message tells how to allow replacing it.
_READ_ONLY = ("refusing to replace {path}: it is read-only (mode {mode:o}); "
              "write somewhere else, or make it writable first (chmod u+w)")


class OutputError(Exception):
    """An output that must not or cannot be written (exit code 2).

    >>> OutputError("cannot write x.svg: Permission denied").exit_code
    2
    """

    exit_code = 2


def loaded_sources(*paths):
    """Return {path: what it is} for paths (the file being run) and every loaded module's file.

    An output naming any of them is refused (see check_output).

    >>> sources = loaded_sources("model.py")
    >>> sources["model.py"], any(p.endswith("output.py") for p in sources)
    ('the file being run', True)
    """
    sources = {path: "the file being run" for path in paths}
    for module in list(sys.modules.values()):
        try:
            path = module.__file__
        except Exception:  # noqa: BLE001 - a user's module object may raise anything
            continue
        if isinstance(path, str) and path not in sources:
            sources[path] = f"the source of module {module.__name__}"
    return sources


def _through_proc(path):
    """True when path reaches an open file through /proc, as /dev/stdout -> /proc/self/fd/1
    does: resolving such a link gives a path that is not the open file (or no path at all)."""
    current = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on symlinks followed
        if os.path.realpath(os.path.dirname(current)).startswith("/proc/"):
            return True
        if not os.path.islink(current):
            return False
        current = os.path.join(os.path.dirname(current), os.readlink(current))
    return False


# {n: fd}: a path reaching this process's descriptor n through /proc writes to fd instead
_REDIRECTED = {}


def redirect_descriptor(number, fd):
    """Make paths that reach descriptor number of this process through /proc (/dev/stdout,
    /dev/fd/1) mean descriptor fd. The command line keeps its standard output on a copy of
    fd 1 taken at start, fd 1 itself being the user's file's (its capture, then /dev/null):
    `--dot /dev/stdout` must reach the standard output gradviz was given."""
    _REDIRECTED[number] = fd


def _redirected(path):
    """path, or /proc/self/fd/FD when path reaches a descriptor redirect_descriptor moved."""
    if not _REDIRECTED:
        return path
    current = os.path.abspath(path)
    mine = (f"/proc/{os.getpid()}/fd", "/proc/self/fd")
    for _ in range(40):  # the kernel's own limit on symlinks followed
        name = os.path.basename(current)
        if name.isdigit() and int(name) in _REDIRECTED and \
                os.path.realpath(os.path.dirname(current)) in mine:
            return f"/proc/self/fd/{_REDIRECTED[int(name)]}"
        if not os.path.islink(current):
            return path
        current = os.path.join(os.path.dirname(current), os.readlink(current))
    return path


def _stat(path, shown):
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {exc.strerror}") from None


def _same_as(st, protected):
    """The description of the protected path that is the same file as st, or None."""
    for path, what in protected.items():
        try:
            other = os.stat(path)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return path, what
    return None


_SOURCE_SUFFIXES = (".py", ".pyw", ".pyi", ".ipynb")
# How programs start: a script's #!, an ELF or Mach-O binary. No drawing gradviz writes does.
_PROGRAM_MAGIC = (b"#!", b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")


def _starts_as_program(path):
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return head.startswith(_PROGRAM_MAGIC)


def check_output(path, protected=None):
    """Raise OutputError when path must not be written: the same file as one in protected
    ({path: what it is}, see loaded_sources), a folder, a socket, an existing program or
    Python source file, or a read-only file.

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> try:
    ...     check_output(folder)
    ... except OutputError as exc:
    ...     print(exc.exit_code, str(exc).endswith(": it is a folder"))
    2 True
    """
    shown, path = path, _redirected(path)
    st = _stat(path, shown)
    if st is None:
        return
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise OutputError(f"cannot write {shown}: it is a folder")
    if stat.S_ISSOCK(mode):
        raise OutputError(f"cannot write {shown}: it is a socket")
    same = _same_as(st, protected or {})
    if same is not None:
        where = "" if os.path.abspath(same[0]) == os.path.abspath(shown) else f" ({same[0]})"
        raise OutputError(f"refusing to write {shown}: it is {same[1]}{where}")
    if stat.S_ISREG(mode) and mode & 0o111 and _starts_as_program(path):
        # `--dot /usr/local/bin/dot`, meant as --renderer: as root that replaced the program
        raise OutputError(f"refusing to replace {shown}: it is a program (executable, "
                          "starting with #! or as a binary does)")
    if stat.S_ISREG(mode) and os.path.splitext(path)[1].lower() in _SOURCE_SUFFIXES:
        # Not imported by this run, but someone's code all the same: `--dot model.py` for
        # `--dot model.dot` would lose it.
        raise OutputError(f"refusing to replace {shown}: it is Python source; "
                          "write the output to a file named for its format (.dot, .svg, ...)")
    # os.access says yes to root even for mode 0444, so the mode bits are checked as well.
    if stat.S_ISREG(mode) and not _through_proc(path) and (
            not mode & 0o222 or not os.access(path, os.W_OK)):
        raise OutputError(_READ_ONLY.format(path=shown, mode=stat.S_IMODE(mode)))


def write_output(path, produce, protected=None):
    """Write the bytes produce() returns (or the list of byte chunks, one after the other) to
    path, following the rules in this module's docstring, and return path. produce() runs
    before anything at path changes.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "g.dot"
    >>> write_output(out, lambda: b"digraph {}").read_bytes()
    b'digraph {}'
    """
    check_output(path, protected)
    reached = _redirected(path)
    st = _stat(reached, path)
    if (st is not None and not stat.S_ISREG(st.st_mode)) or _through_proc(reached):
        _write_into(reached, produce(), path)
    else:
        _replace(path, st, produce)
    return path


_on_wait = None


def on_waiting_reader(callback):
    """Call callback(message) when an output is a FIFO nobody reads yet: opening it waits
    for a reader (as `echo > fifo` does), and without a word that looked like a hang."""
    global _on_wait
    _on_wait = callback


def _open_into(path):
    # O_APPEND: /dev/stdout redirected to a file must not overwrite what is already there.
    flags = os.O_WRONLY | os.O_APPEND
    try:
        if not stat.S_ISFIFO(os.stat(path).st_mode):
            return os.open(path, flags)
        fd = os.open(path, flags | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
        # a FIFO with no reader: say so, then wait for one (Ctrl-C stops the wait)
        if _on_wait is not None:
            _on_wait(f"waiting for a reader of the FIFO {path} (Ctrl-C stops)")
        return os.open(path, flags)
    os.set_blocking(fd, True)
    return fd


def _write_into(path, data, shown):
    """Write data (bytes, or a list of byte chunks) into an existing file that is not
    replaced: a device, a FIFO, /dev/stdout."""
    try:
        fd = _open_into(path)
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {exc.strerror}") from None
    try:
        for chunk in [data] if isinstance(data, bytes) else data:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _replace(path, st, produce):
    """Replace the regular file at path (or create it) atomically, keeping its mode."""
    # Through a symlink the target is replaced, not the link; realpath of a dangling link is
    # where its target would be.
    real = os.path.realpath(path)
    tmp = os.path.join(os.path.dirname(real), f".gradviz-{secrets.token_hex(4)}.tmp")
    try:
        # os.open applies the umask, so a new file gets ordinary permissions (mkstemp: 0600).
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            data = produce()
            if isinstance(data, bytes):
                f.write(data)
            else:
                f.writelines(data)
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, real)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
