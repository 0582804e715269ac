"""The `gradviz` command: one click group, each command registered explicitly.

Exit codes (one table for every command, also in the README):

    0    it ran, and there was nothing wrong to report
    1    the user's file raised, backward failed or found an anomaly, or a check failed
    2    usage error: missing or unreadable file, not a Python file, unknown tensor name,
         bad option, backend not installed; an output that must not or cannot be written
         (the file being run or a module it imported, any existing .py file or program, a
         folder, a read-only file, a full
         disk, including standard output and standard error)
    3    graph: no Graphviz renderer was found (the .dot file is written anyway; nothing goes
         to stdout for --svg -)
    4    graph: the renderer failed (cannot be run, exited non-zero or was killed, wrote
         nothing, or wrote something that is not the format asked for)
    70   internal error: gradviz itself failed (a bug in gradviz, not in the file); one
         paragraph on stderr, never a traceback
    130  interrupted (Ctrl-C)
    141  standard output (or error) was closed early (`| head`): nothing more is printed, as
         a program killed by SIGPIPE would report
    143  terminated (SIGTERM): temporary files removed and the renderer stopped first
"""

import atexit
import errno
import gc
import io
import os
import signal
import sys

import click

from .commands.check_inplace import check_inplace
from .commands.explain import explain
from .commands.gradcheck import gradcheck
from .commands.graph import graph
from .commands.report import report
from .commands.run import run
from .common import GuardedStream as _GuardedStream
from .common import StderrFailed as _StderrFailed
from .common import StdoutFailed as _StdoutFailed

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_RENDERER, EXIT_RENDERER_FAILED = 0, 1, 2, 3, 4
EXIT_INTERNAL = 70             # EX_SOFTWARE: a fault in gradviz itself
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE, EXIT_TERMINATED = 130, 141, 143


def _version():
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("gradviz")
    except PackageNotFoundError:
        return "0.1.0"


def _print_version(ctx, param, value):
    """--version. The installed version is looked up only then: importlib.metadata (and the
    email package it loads) took 0.04 s of the start of every command."""
    if value and not ctx.resilient_parsing:
        click.echo(f"gradviz {_version()}")
        ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_version, help="Show the version and exit.")
def cli():
    """Inspect what autograd records: tensors, grad_fn graphs, gradients, hooks, anomalies
    and in-place edits of a Python file.

    \b
    Examples:
      gradviz run examples/mul_chain_backward.py --backward e
      gradviz graph examples/graph_z_wx_b.py --svg z.svg
      gradviz check-inplace examples/inplace_version_error.py
      gradviz explain examples/relu_zero_grad.py x --root loss
      gradviz gradcheck examples/broadcast_grad_shape.py --root loss

    \b
    Exit codes: 0 ok, 1 the file raised / backward failed / a check failed,
    2 usage error or an output that cannot be written, 3 no Graphviz renderer,
    4 the renderer failed, 70 internal error (a bug in gradviz), 130 interrupted,
    141 stdout closed early, 143 terminated.
    """


cli.add_command(run)
cli.add_command(graph)
cli.add_command(check_inplace)
cli.add_command(gradcheck)
cli.add_command(explain)
cli.add_command(report)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised the way Ctrl-C is, so every `finally` on the way up runs: a temporary
    output file is removed, and subprocess.run kills the renderer it is waiting for."""


def _on_sigterm(signum, frame):
    raise Terminated()


def _default_sigterm_in_child():
    """A process the file forks (a multiprocessing pool's worker) is killed by SIGTERM, as
    under plain Python: raising Terminated in a worker that holds the pool's queue lock hung
    the pool's terminate(), and printed gradviz's traceback."""
    if signal.getsignal(signal.SIGTERM) is _on_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


os.register_at_fork(after_in_child=_default_sigterm_in_child)


class _WholeWrites(io.RawIOBase):
    """fd 1, each write written whole or failing: the bytes os.write did not take are written
    again, and a disk that filled up raises ENOSPC. (Under a BufferedWriter, fd 1 taking part
    of a big write on a filling disk came back as a short count, which TextIOWrapper drops:
    `run --json > file` on a full disk was cut short with exit 0.)"""

    def __init__(self, fd):
        super().__init__()
        self._fd = fd

    def writable(self):
        return True

    def fileno(self):
        return self._fd

    def isatty(self):
        return os.isatty(self._fd)

    def write(self, data):
        view = memoryview(data).cast("B")
        while view:
            view = view[os.write(self._fd, view):]
        return len(data)


def _private_stdout(stream):
    """gradviz's own standard output: a text stream like stream (its encoding, error handler
    and line buffering) on a copy of fd 1 taken now, whose writes are all-or-error (see
    _WholeWrites); stream itself when it has no fd 1.

    fd 1 itself becomes /dev/null, and the user's file's capture while it runs: what the file
    writes to fd 1 (os.write from a thread still running after it ended, a child process, a
    late atexit function) can never land in or before the document gradviz prints (`run
    --json`, `graph -o -`). /dev/stdout and /dev/fd/1 as output paths reach the copy."""
    try:
        if stream.fileno() != 1:
            return stream
        stream.flush()
        fd = os.dup(1)      # not inherited by the processes the file or gradviz start
    except (AttributeError, OSError, ValueError):
        return stream
    _to_devnull(1)
    from gradviz.render.output import redirect_descriptor
    redirect_descriptor(1, fd)
    return io.TextIOWrapper(io.BufferedWriter(_WholeWrites(fd)), encoding=stream.encoding,
                            errors=stream.errors, line_buffering=stream.line_buffering)


def _to_devnull(fd):
    """Point fd at /dev/null."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != fd:
            os.dup2(devnull, fd)
            os.close(devnull)
    except OSError:
        pass


def _silence_stdout():
    """Point gradviz's standard output at /dev/null: Python flushes it at exit, and what is
    still buffered would fail again, with a traceback."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        fd = 1
    _to_devnull(fd)


def _file_output_to_stderr():
    """gradviz has written all it writes: what the file still prints (its atexit functions,
    its daemon threads) goes to stderr, after the document (`run --json`, `graph -o -`) and
    never into it."""
    try:
        sys.stdout.flush()
        os.dup2(2, 1)
    except (OSError, _StdoutFailed):
        pass


def _stdout_failed(error):
    _silence_stdout()
    if error.errno == errno.EPIPE:
        # The reader is gone (`gradviz run f.py | head -1`): quiet, as SIGPIPE would be.
        return EXIT_BROKEN_PIPE
    _say(f"gradviz: cannot write to standard output: {error.strerror}")
    return EXIT_USAGE


def _stderr_failed(error):
    """Standard error failed (`2>&1 | head -1`, a full disk): there is nowhere left to say so.
    The codes are stdout's: rich's own handling of a closed pipe exited 1, the code of a file
    that raised."""
    _to_devnull(2)
    return EXIT_BROKEN_PIPE if error.errno == errno.EPIPE else EXIT_USAGE


def _say(message):
    """One line on stderr, unless stderr itself fails."""
    try:
        click.echo(message, err=True)
    except OSError:
        _to_devnull(2)


def _end_files(modules):
    """At exit, after the files' own atexit functions, what Python's exit does to a file's
    module: its globals let go of, in their order (as its dict's deallocation does), so that
    the __del__ of what they held runs. One that raises prints Python's "Exception ignored
    in" paragraph on stderr, escaped (gradviz kept the file's objects for its report, and
    their __del__ never ran); the exit code is not changed."""
    previous = sys.unraisablehook
    sys.unraisablehook = _show_unraisable
    try:
        for module in modules:
            namespace = module.__dict__
            for name in [n for n in namespace if n != "__builtins__"]:
                namespace[name] = None
        modules.clear()
    except BaseException:   # noqa: BLE001 - nothing at exit may change the exit code
        pass
    finally:
        sys.unraisablehook = previous


def _show_unraisable(unraisable):
    """sys.unraisablehook at exit: Python's default paragraph, with control characters
    escaped (a message holding escape sequences must not drive the terminal)."""
    import traceback
    from gradviz.render.terminal import printable
    try:
        where = unraisable.err_msg or "Exception ignored in"
        if unraisable.object is not None:
            try:
                shown = repr(unraisable.object)
            except Exception:   # noqa: BLE001 - the user's __repr__ may raise anything
                shown = f"<{type(unraisable.object).__name__} object: repr() failed>"
            where = f"{where}: {shown}"
        text = where + "\n" + "".join(traceback.format_exception(
            unraisable.exc_type, unraisable.exc_value, unraisable.exc_traceback))
        os.write(2, printable(text).encode("utf-8", "backslashreplace"))
    except BaseException:   # noqa: BLE001 - stderr may be gone
        pass


def main(argv=None):
    """Entry point of the console script; Ctrl-C, SIGTERM and a failing stdout are handled
    here, once."""
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    stdout, stderr = sys.stdout, sys.stderr
    # A closed fd 1 or 2 (`>&-`) is held with /dev/null, so that no file gradviz opens
    # becomes "stdout"; writing to stdout still fails, with a message, while a closed stderr
    # means the user wants no messages.
    if stdout is None:
        _to_devnull(1)
    if stderr is None:
        _to_devnull(2)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
    sys.stdout = _GuardedStream(None if stdout is None else _private_stdout(stdout))
    from gradviz.inspect.runner import keep_ended
    # registered before the file runs: Python calls it after the file's own atexit functions
    atexit.register(_end_files, keep_ended())
    try:
        code = _main(argv)
        _file_output_to_stderr()
        # Everything left is kept until the process ends: the collection Python makes at exit
        # would walk the file's graph and the report once more (1.8 s of the 7.7 s that `run`
        # takes on a 100,000-node chain). Objects are still freed as their counts drop.
        gc.freeze()
        sys.exit(code)
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        signal.signal(signal.SIGTERM, previous)


def _main(argv):
    """Run the command line; return its exit code."""
    try:
        code = cli.main(args=argv, prog_name="gradviz", standalone_mode=False)
        sys.stdout.flush()
    except _StderrFailed as exc:
        return _stderr_failed(exc.error)
    except _StdoutFailed as exc:
        return _stdout_failed(exc.error)
    except BrokenPipeError as exc:
        return _stdout_failed(exc)
    except (KeyboardInterrupt, click.exceptions.Abort) as exc:
        if isinstance(exc, Terminated) or isinstance(exc.__cause__, Terminated):
            _say("Terminated.")
            return EXIT_TERMINATED
        _say("\nInterrupted.")
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        try:
            exc.show()
        except OSError as error:
            return _stderr_failed(error)
        return exc.exit_code
    except Exception as exc:        # noqa: BLE001 - the last line of defence, named as such
        _say(_internal_error(exc))
        return EXIT_INTERNAL
    return code if isinstance(code, int) else 0


def _internal_error(exc):
    """One paragraph for an exception that escaped gradviz's own code (the user's file's
    errors are reported in its run): what it was and where in gradviz, never a traceback."""
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    message = " ".join(str(exc).split())[:500]
    return (f"gradviz: internal error{where}: {type(exc).__name__}: {message}\n"
            "This is a bug in gradviz, not in your file: please report it with the command "
            "and the file.")


if __name__ == "__main__":
    main()
