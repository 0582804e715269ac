"""gradviz graph: draw the autograd graph to SVG, PNG, PDF or DOT."""

import os

import click

from ..common import (UsageFailure, arg_option, backend_option, debug_option, file_argument,
                      library_errors, make_console, no_color_option)

_WARN_NODES = 500
_EXTENSIONS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}


@click.command()
@file_argument
@click.argument("file_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--svg", "svg", metavar="FILE", help="Write SVG to FILE.")
@click.option("--png", "png", metavar="FILE", help="Write PNG to FILE.")
@click.option("--pdf", "pdf", metavar="FILE", help="Write PDF to FILE (needs Graphviz's dot).")
@click.option("--dot", "dot", metavar="FILE", help="Write the DOT source to FILE.")
@click.option("-o", "--output", metavar="FILE",
              help="Write to FILE, format by extension (.svg .png .pdf .dot); '-' writes DOT "
                   "to stdout.")
@click.option("--root", "roots", multiple=True, metavar="NAME",
              help="Draw the graph of NAME (repeatable; default: every root).")
@click.option("--view", type=click.Choice(["backward", "forward"]), default="backward",
              show_default=True,
              help="backward: grad_fn nodes; forward: variables as ellipses, ops as boxes.")
@click.option("--backward", "backward", metavar="NAME",
              help="Call NAME.backward() first and draw the gradient that reached each node.")
@click.option("--gradient", type=click.Choice(["ones"]),
              help="Gradient for a non-scalar --backward root.")
@click.option("--show-saved", is_flag=True, help="Draw saved tensors with their versions.")
@click.option("--anomaly", is_flag=True, help="Mark the node that produced NaN/inf.")
@click.option("--max-depth", type=click.IntRange(min=1), metavar="N",
              help="Draw only N levels below the roots.")
@click.option("--collapse", is_flag=True, help="Fold repeated chains of the same op.")
@click.option("--no-legend", is_flag=True, help="Leave out the legend.")
@click.option("--renderer", metavar="PATH",
              help="The Graphviz executable to use (also GRADVIZ_DOT).")
@backend_option
@arg_option
@no_color_option
@debug_option
def graph(file, file_args, svg, png, pdf, dot, output, roots, view, backward, gradient,
          show_saved, anomaly, max_depth, collapse, no_legend, renderer, backend, args_opt,
          no_color, debug):
    """Draw FILE's autograd graph (every root, or --root NAME).

    Nodes that stand for named tensors carry name, shape and dtype; leaves, roots,
    parameters, tensors that don't require grad and saved tensors each have their own
    style, explained in the legend. Every SVG node has a tooltip with the details.
    Without any renderer the .dot file is written anyway and the exit code is 3.

    \b
    Examples:
      gradviz graph examples/graph_z_wx_b.py --svg z.svg
      gradviz graph examples/graph_z_wx_b.py --view forward -o z_forward.svg
      gradviz graph examples/retain_grad_and_hooks.py --backward loss --show-saved --svg g.svg
      gradviz graph examples/mul_chain_backward.py -o -
    """
    from gradviz.inspect import run_file
    from gradviz.render.dot import build_dot, count_nodes
    from gradviz.render.renderer import RenderError, render
    targets = [(fmt, path) for fmt, path in (("svg", svg), ("png", png), ("pdf", pdf),
                                              ("dot", dot)) if path]
    if output:
        if output == "-":
            targets.append(("dot", "-"))
        else:
            ext = os.path.splitext(output)[1].lower()
            if ext not in _EXTENSIONS:
                raise UsageFailure(f"cannot tell the format of {output!r} from its extension "
                                   f"(use {', '.join(sorted(_EXTENSIONS))}, or --svg/--png/"
                                   "--pdf/--dot)")
            targets.append((_EXTENSIONS[ext], output))
    if not targets:
        raise UsageFailure("say where to draw: --svg FILE, --png FILE, --pdf FILE, --dot FILE "
                           "or -o FILE (-o - for DOT on stdout)")
    with library_errors():
        result = run_file(file, argv=list(args_opt) + list(file_args), backend=backend,
                          anomaly=anomaly, backward=backward, gradient=gradient,
                          retain_graph=True, debug=debug)
        for r in roots:
            result.tensor(r)
        report = result.report()
    err = make_console(no_color, stderr=True)
    if result.failed:
        e = result.error or result.backward_error
        err.print(f"[red]{e.type}: {e.message}[/red] ({e.file}:{e.line}) — drawing what was "
                  "recorded up to there")
    options = dict(view=view, roots=list(roots) or None, show_saved=show_saved,
                   max_depth=max_depth, collapse=collapse)
    n = count_nodes(report, **options)
    if n == 0:
        err.print(f"{file}: no graph to draw (no tensor that requires grad has a grad_fn or "
                  "an AccumulateGrad)")
    if n > _WARN_NODES and not collapse and max_depth is None:
        err.print(f"[yellow]warning:[/yellow] {n} nodes: the drawing will be hard to read; try "
                  "--collapse, --max-depth N or --root NAME")
    source = build_dot(report, legend=not no_legend, **options)
    code = 1 if result.failed else 0
    for fmt, path in targets:
        if path == "-":
            click.echo(source, nl=False)
            continue
        try:
            written = render(source, fmt, path, renderer=renderer)
        except RenderError as exc:
            err.print(f"[red]error:[/red] {exc}", markup=True)
            raise click.exceptions.Exit(exc.exit_code)
        err.print(f"wrote {written} ({n} nodes, {fmt.upper()})")
    raise click.exceptions.Exit(code)
