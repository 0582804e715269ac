"""The `gradviz` command: one click group, each command registered explicitly.

Exit codes (one table for every command):

    0    it ran, and there was nothing wrong to report
    1    the user's file raised, backward failed or found an anomaly, or a check failed
    2    usage error: missing or unreadable file, not a Python file, unknown tensor name,
         bad option, unwritable output path, backend not installed
    3    graph: no Graphviz renderer was found (the .dot file is written anyway)
    130  interrupted (Ctrl-C)
"""

import sys

import click

from .commands.check_inplace import check_inplace
from .commands.explain import explain
from .commands.gradcheck import gradcheck
from .commands.graph import graph
from .commands.run import run

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_RENDERER, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _version():
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("gradviz")
    except PackageNotFoundError:
        return "0.1.0"


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(_version(), "--version", prog_name="gradviz", message="%(prog)s %(version)s")
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
    2 usage error, 3 no Graphviz renderer, 130 interrupted.
    """


cli.add_command(run)
cli.add_command(graph)
cli.add_command(check_inplace)
cli.add_command(gradcheck)
cli.add_command(explain)


def main(argv=None):
    """Entry point of the console script; Ctrl-C is handled here, once."""
    try:
        code = cli.main(args=argv, prog_name="gradviz", standalone_mode=False)
    except (KeyboardInterrupt, click.exceptions.Abort):
        click.echo("\nInterrupted.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
