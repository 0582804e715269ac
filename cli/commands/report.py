"""gradviz report: one self-contained, interactive HTML page of a run."""

import os
import shlex

import click

from ..common import (Command, arg_option, backend_option, debug_option, drawing_options,
                      file_argument, library_errors, make_console, no_color_option)


@click.command(cls=Command)
@file_argument
@click.argument("file_args", nargs=-1, type=click.UNPROCESSED)
@click.option("-o", "--output", metavar="FILE", default="report.html", show_default=True,
              help="Write the page to FILE ('-': stdout).")
@click.option("--root", "roots", multiple=True, metavar="NAME",
              help="Draw the graph of NAME (repeatable; default: every root).")
@click.option("--view", type=click.Choice(["backward", "forward"]), default="backward",
              show_default=True, help="The view the page opens on (the other is a toggle).")
@click.option("--backward", "backward", metavar="NAME",
              help="Call NAME.backward() first: the page plays it step by step.")
@click.option("--gradient", type=click.Choice(["ones"]),
              help="Gradient for a non-scalar --backward root.")
@click.option("--show-saved", is_flag=True, help="Draw saved tensors with their versions.")
@click.option("--anomaly", is_flag=True, help="Run with anomaly detection: mark the node that "
                                              "produced NaN/inf.")
@click.option("--gradcheck", "with_gradcheck", is_flag=True,
              help="Also check the gradients numerically (as `gradviz gradcheck`) and show "
                   "the results.")
@drawing_options
@backend_option
@arg_option
@no_color_option
@debug_option
def report(file, file_args, output, roots, view, backward, gradient, show_saved, anomaly,
           with_gradcheck, max_depth, collapse, by_module, depth_modules, expand, no_legend,
           renderer, backend, args_opt, no_color, debug):
    """Write one interactive HTML page of FILE's run (default report.html).

    The page is self-contained and works offline: the backward graph as `gradviz graph`
    draws it (pan, zoom, fit, search, a forward-view toggle); click a node or tensor for its
    run table row, value, gradient, saved tensors, hooks and source line; play backward step
    by step in the engine's order (arrow keys, Home, End, space); in-place findings,
    anomalies, --gradcheck results and the file's output. Exit 0, or 1 when the file
    raised, backward failed or --gradcheck found a mismatch (the page is written all the
    same); 2 usage error; 3 no Graphviz renderer, 4 the renderer failed (no page written).

    \b
    Examples:
      gradviz report examples/mul_chain_backward.py --backward e
      gradviz report examples/hooks_marked.py -o hooks.html
      gradviz report examples/hooks_marked.py -o - > hooks.html
      gradviz report examples/nan_grad_where.py --backward loss --anomaly --gradcheck
    """
    from gradviz.inspect import UsageError, run_file
    from gradviz.inspect.report import report_json
    from gradviz.render.html import build_page, draw_views, explain_candidates
    from gradviz.render.module_graph import ModuleOptionError, module_options
    from gradviz.render.output import check_output, loaded_sources, write_output
    from gradviz.render.terminal import printable
    from gradviz_cli.main import _version
    err = make_console(no_color, stderr=True)
    argv = list(args_opt) + list(file_args)
    if not output:
        raise click.BadParameter("needs a file name ('-' for standard output)",
                                 param_hint="'-o' / '--output'")
    with library_errors():
        to_stdout = output == "-"
        if not to_stdout:
            check_output(output, loaded_sources(file))
        resolved = os.path.abspath(output)    # the user's file may change directory
        result = run_file(file, argv=argv, backend=backend, anomaly=anomaly, backward=backward,
                          gradient=gradient, retain_graph=True, debug=debug)
        for r in roots:
            result.tensor(r)
        data = result.report()
        try:
            drawings = draw_views(data, view=view,
                                  roots=[result.canonical(r) for r in roots] or None,
                                  show_saved=show_saved, max_depth=max_depth, collapse=collapse,
                                  legend=not no_legend, renderer=renderer,
                                  modules=module_options(by_module, depth_modules, expand))
        except ModuleOptionError as exc:
            raise click.UsageError(str(exc)) from None
        for note in drawings.notes:
            err.print(note)
        explained = {}
        from gradviz.inspect.explain import explain
        for name in explain_candidates(data):
            try:
                explained[name] = explain(file, name, root=backward, argv=argv, backend=backend)
            except UsageError:
                continue             # a name the second run did not make: no verdict shown
        checked = None
        if with_gradcheck:
            from gradviz.inspect.gradcheck import gradcheck_file
            checked = gradcheck_file(file, argv=argv, root=backward, backend=backend)
        page = build_page(data, drawings.views, command=_command(click.get_current_context()),
                          version=_version(), notes=drawings.page_notes, explain=explained,
                          gradcheck=checked, view=view, report_text=report_json(data))
        if to_stdout:
            click.echo(page, nl=False)
        else:
            path = output if os.path.abspath(output) == resolved else resolved
            write_output(path, lambda: page.encode("utf-8"), loaded_sources(file))
            drawn = max((v.count for v in drawings.views.values() if v is not None), default=0)
            size = len(page.encode("utf-8"))
            err.print(printable(f"wrote {path} ({drawn} nodes, {size // 1024} KiB, HTML)",
                                keep=""), markup=False, highlight=False)
    failed = result.failed or (checked is not None and not checked["passed"])
    raise click.exceptions.Exit(1 if failed else 0)


def _command(ctx):
    """The command line that made the page, from its parameters (shown in the page's header):
    the file, each option that differs from its default, then the file's arguments."""
    words = ["gradviz", "report", ctx.params["file"]]
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        if not isinstance(param, click.Option) or value in (None, False, ()) or \
                value == param.default:
            continue
        name = max(param.opts, key=len)
        for item in value if param.multiple else [value]:
            words += [name] if param.is_flag else [name, str(item)]
    if ctx.params["file_args"]:
        words += ["--", *ctx.params["file_args"]]
    return shlex.join(words)
