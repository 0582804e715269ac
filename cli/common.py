"""What every command shares: the console, library errors turned into click errors."""

import contextlib
import os

import click


class UsageFailure(click.ClickException):
    """A usage error from the library (exit code 2)."""

    exit_code = 2


def make_console(no_color=False, stderr=False):
    """A rich Console created per command, so NO_COLOR, COLUMNS and CliRunner all apply."""
    from rich.console import Console
    width = None
    if not os.isatty(1) and "COLUMNS" not in os.environ:
        width = 100
    return Console(no_color=True if no_color else None, highlight=False, width=width,
                   stderr=stderr, soft_wrap=False)


@contextlib.contextmanager
def library_errors():
    """Turn gradviz.inspect.UsageError (and friends) into exit code 2 at the CLI boundary."""
    from gradviz.inspect import UsageError
    try:
        yield
    except UsageError as exc:
        raise UsageFailure(str(exc)) from None


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
