"""gradviz run: inspect a file's tensors, graph, backward, hooks and anomalies."""

import contextlib

import click

from ..common import (Command, StdoutFailed, arg_option, backend_option, debug_option,
                      file_argument, json_option, library_errors, make_console, no_color_option)


# The run's on/off switches, in --help order: (flag, help).
_FLAGS = [
    ("--retain-graph", "Keep saved tensors after --backward."),
    ("--retain-grad", "Make every non-leaf retain its grad, so intermediate gradients show."),
    ("--hooks", "List, in firing order, which tensor or node received which gradient, and each "
                "hook the file registered: what it got and what it returned."),
    ("--step", "Step through each backward call: one entry per node in the order the engine ran "
               "it, with the gradient it received and sent, hooks that fired and where "
               "AccumulateGrad wrote."),
    ("--anomaly", "Run with anomaly detection: NaN/inf and backward errors point at the forward "
                  "line."),
    ("--full", "Whole values instead of summaries, every row, and every iteration of a loop (the "
               "tables show the last one)."),
    ("--collapse", "Fold repeated chains of the same op into one Graph row (as graph --collapse "
                   "folds them into one box)."),
    ("--by-module", "Group the Tensors table by the nn.Module call that made each tensor (a "
                    "parameter under the module that owns it)."),
]


def _flag_options(command):
    """Every _FLAGS switch as a click flag option, in _FLAGS order."""
    for flag, help_text in reversed(_FLAGS):
        command = click.option(flag, is_flag=True, help=help_text)(command)
    return command


@click.command(cls=Command)
@file_argument
@click.argument("file_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--backward", "backward", metavar="NAME",
              help="Call NAME.backward() after the file ran.")
@click.option("--gradient", type=click.Choice(["ones"]),
              help="Gradient for a non-scalar --backward root (ones_like(root)).")
@_flag_options
@json_option
@backend_option
@arg_option
@no_color_option
@debug_option
def run(file, file_args, backward, gradient, retain_graph, retain_grad, hooks, step, anomaly,
        full, collapse, by_module, as_json, backend, args_opt, no_color, debug):
    """Run FILE and show its tensors, graph, gradients, hooks and anomalies.

    FILE is a Python file using gradviz (`import gradviz as torch`); a file that says
    `import torch` runs on gradviz too. Arguments after `--` go to the file's sys.argv.

    \b
    Examples:
      gradviz run examples/mul_chain_backward.py --backward e
      gradviz run examples/retain_grad_and_hooks.py --hooks
      gradviz run examples/hooks_marked.py --hooks --step
      gradviz run examples/requires_grad_propagation.py --backward z --gradient ones
      gradviz run examples/nan_grad_where.py --backward loss --anomaly
      gradviz run examples/loop_in_main.py --full --collapse
      gradviz run examples/nested_modules.py --by-module
      gradviz run examples/mul_chain_backward.py --json
    """
    from gradviz._gc import gc_paused
    from gradviz.inspect import run_file
    from gradviz.inspect.report import report_json
    if gradient and not backward:
        # it was ignored: the run looked as if the gradient had been used
        raise click.UsageError("--gradient ones goes with --backward NAME (the gradient of that "
                               "root)")
    console = frame = None
    with library_errors():
        from gradviz.inspect.runner import check_file
        check_file(file, backend)
    if not as_json:
        from gradviz.render.text import OutputFrame, run_header
        # The header first, then the file's output as it runs.
        console = make_console(no_color)
        console.print(run_header(file, backward, backend))
        frame = OutputFrame(console, file, full=full)
    with contextlib.ExitStack() as after_run:
        try:
            with library_errors():
                result = run_file(file, argv=list(args_opt) + list(file_args), backend=backend,
                                  anomaly=anomaly, retain_grad=retain_grad, backward=backward,
                                  gradient=gradient, retain_graph=retain_graph, debug=debug,
                                  on_output=None if frame is None else frame.write, full=full)
                # From here on only gradviz's own code runs: the report and its tables are all
                # kept, and each collection of the cyclic collector would walk them (and the
                # file's graph) again.
                after_run.enter_context(gc_paused())
                report = result.report(full=full, lazy=not as_json, hooks=hooks)
                if frame is not None and report.get("stdout_cut"):
                    frame.write("warning", f"gradviz: {report['stdout_cut']}")
        finally:
            if frame is not None:
                try:
                    frame.close()
                except OSError as exc:  # stdout went away while the file ran (`| head -1`)
                    raise StdoutFailed(exc) from None
        if not hooks:
            report["hooks"] = []
            if not step:    # the steps name the hooks that fired by their place in user_hooks
                report["user_hooks"] = []
        if not step:
            for call in report["backward_calls"]:
                call["steps"] = []
        code = 1 if result.failed else 0
        if as_json:
            click.echo(report_json(report))
            raise click.exceptions.Exit(code)
        from gradviz.render.tables import print_report
        console.print()
        print_report(console, report, full=full, hooks=hooks, steps=step, collapse=collapse,
                     by_module=by_module)
        raise click.exceptions.Exit(code)
