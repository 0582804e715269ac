"""What every command shares: the console, library errors turned into click errors."""

import contextlib
import errno
import json
import os
import sys

import click


class StdoutFailed(Exception):
    """Writing to standard output failed (a closed pipe, a full disk); main() says so once."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


class StderrFailed(StdoutFailed):
    """Writing to standard error failed; main() exits as for stdout, with nothing to say."""


class GuardedStream:
    """A standard stream whose write errors are told apart from gradviz's own: any other
    OSError reaching main() is a bug, this one is where the output went. failure is the
    exception raised (StdoutFailed or StderrFailed); stream None is fd 1 closed when gradviz
    started (`>&-`)."""

    def __init__(self, stream, failure=StdoutFailed):
        self._stream, self._failure = stream, failure

    def write(self, text):
        if self._stream is None:
            raise self._failure(OSError(errno.EBADF, "it is closed"))
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._failure(exc) from None

    def flush(self):
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except OSError as exc:
            raise self._failure(exc) from None

    @property
    def buffer(self):
        """The binary stream below (`graph --png -` writes there), guarded the same way."""
        return GuardedStream(None if self._stream is None else self._stream.buffer,
                             self._failure)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class UsageFailure(click.ClickException):
    """A usage error from the library (exit code 2)."""

    exit_code = 2

    def format_message(self):
        # The message quotes the user's paths and names: never let them drive the terminal.
        from gradviz.render.terminal import printable
        return printable(self.message)


class LibraryFailure(UsageFailure):
    """A library error that carries its own exit code (see the table in cli/main.py)."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


# Narrower than this, tables and panels cannot be read: COLUMNS=1 or 5 gets this width.
MIN_WIDTH = 40
# Panels fill the width: COLUMNS=100000000 made `run` write 700 MB in 223 s (1.8 GB of memory).
MAX_WIDTH = 10_000


def console_width(fd=None):
    """Columns to print at: COLUMNS when it is a positive number, else the terminal's width,
    else 100 (output to a file or pipe); never less than MIN_WIDTH nor more than MAX_WIDTH.
    fd: the descriptor printed to (default: sys.stdout's, which is not fd 1 under main())."""
    if fd is None:
        try:
            fd = sys.stdout.fileno()
        except (AttributeError, OSError, ValueError):
            fd = 1
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        width = int(columns)
    elif _isatty(fd):
        try:
            width = os.get_terminal_size(fd).columns or 80
        except OSError:
            width = 80
    else:
        width = 100
    return min(max(width, MIN_WIDTH), MAX_WIDTH)


def _isatty(fd):
    try:
        return os.isatty(fd)
    except (OSError, TypeError):
        return False


def make_console(no_color=False, stderr=False):
    """A rich Console created per command, so NO_COLOR, COLUMNS and CliRunner all apply."""
    from rich.console import Console
    # stderr is guarded here, not replaced: the user's file writes to the real sys.stderr
    file = GuardedStream(sys.stderr, StderrFailed) if stderr else None
    return Console(file=file, no_color=True if no_color else None, highlight=False,
                   width=console_width(2 if stderr else None), soft_wrap=False)


@contextlib.contextmanager
def library_errors():
    """Turn gradviz.inspect.UsageError into exit code 2, and rendering and output errors into
    their own codes, at the CLI boundary."""
    from gradviz.inspect import UsageError
    from gradviz.render.output import OutputError, on_waiting_reader
    from gradviz.render.renderer import RenderError, on_slow_renderer
    on_slow_renderer(_say_slow)
    on_waiting_reader(_say_slow)
    try:
        yield
    except UsageError as exc:
        raise UsageFailure(str(exc)) from None
    except (RenderError, OutputError) as exc:
        raise LibraryFailure(str(exc), exc.exit_code) from None


def _say_slow(message):
    """A renderer running long, an output FIFO with no reader: one line on stderr, so that it
    does not look like a hang."""
    from gradviz.render.terminal import printable
    try:
        click.echo(printable(message, keep=""), err=True)
    except OSError:
        pass


def print_result(result, code, as_json, no_color, printer):
    """Print a library result, as one JSON document or as tables, then exit with code. printer
    names the function of gradviz.render.text that prints the tables; it is imported only when
    they are printed, so --json does not pay for loading the renderer."""
    if as_json:
        click.echo(json.dumps(result, indent=2, allow_nan=False))
    else:
        from gradviz.render import text
        getattr(text, printer)(make_console(no_color), result)
    raise click.exceptions.Exit(code)


class Command(click.Command):
    """A click command whose options that take one value refuse to be given twice: click
    keeps the last one silently, and `graph f.py --svg a.svg --svg b.svg` wrote only b.svg,
    `-o a.dot -o -` only stdout, `--backend torch --backend gradviz` ran on gradviz."""

    def make_parser(self, ctx):
        parser = super().make_parser(ctx)
        parse = parser.parse_args

        def parse_once(args):
            opts, rest, order = parse(args=args)
            seen = set()
            for param in order:
                if not isinstance(param, click.Option) or param.multiple or param.count or \
                        param.is_flag:
                    continue
                if param.name in seen and not ctx.resilient_parsing:
                    names = "/".join(param.opts)
                    raise click.UsageError(f"Option '{names}' is given more than once; it "
                                           "takes one value", ctx)
                seen.add(param.name)
            return opts, rest, order

        parser.parse_args = parse_once
        return parser


file_argument = click.argument("file", type=click.Path(dir_okay=True, path_type=str))
no_color_option = click.option("--no-color", is_flag=True, help="No colours (NO_COLOR works too).")
json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print one JSON document instead of tables.")
backend_option = click.option("--backend", type=click.Choice(["gradviz", "torch"]),
                              default="gradviz", show_default=True,
                              help="Run on the built-in core, or on the real PyTorch.")
arg_option = click.option("--arg", "args_opt", multiple=True, metavar="ARG",
                          help="An argument for the file's sys.argv (repeatable); or put them "
                               "after --.")
debug_option = click.option("--debug", is_flag=True,
                            help="Show gradviz's own frames in tracebacks.")


def _renderer_path(ctx, param, value):
    """--renderer "" (an unset variable, `--renderer "$DOT"`) is a usage error: it was taken
    as no --renderer at all, and the automatic search drew with another program."""
    if value is not None and not value.strip():
        raise click.BadParameter("needs the path of a Graphviz executable", ctx, param)
    return value


def drawing_options(command):
    """The options that shape a drawing, shared by `graph` and `report`: --max-depth N,
    --collapse, --modules/--no-modules, --depth-modules N, --expand NAME, --no-legend,
    --renderer PATH."""
    for option in reversed([
            click.option("--max-depth", type=click.IntRange(min=1), metavar="N",
                         help="Draw only N levels below the roots."),
            click.option("--collapse", is_flag=True,
                         help="Fold repeated chains of the same op."),
            click.option("--modules/--no-modules", "by_module", default=True, show_default=True,
                         help="Draw each nn.Module call as a cluster labelled name: Class."),
            click.option("--depth-modules", type=click.IntRange(min=0), metavar="N",
                         help="Fold every module deeper than N (the model is 0, its children "
                              "1) into one box: class, input and output shapes, parameter "
                              "count."),
            click.option("--expand", "expand", multiple=True, metavar="NAME",
                         help="Open module NAME (qualified, e.g. encoder.layers.0) under "
                              "--depth-modules (repeatable)."),
            click.option("--no-legend", is_flag=True, help="Leave out the legend."),
            click.option("--renderer", metavar="PATH", callback=_renderer_path,
                         help="The Graphviz executable to use (also GRADVIZ_DOT).")]):
        command = option(command)
    return command
