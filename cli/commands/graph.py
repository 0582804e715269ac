"""gradviz graph: draw the autograd graph to SVG, PNG, PDF or DOT."""

import click

from ..common import (Command, arg_option, backend_option, debug_option, drawing_options,
                      file_argument, library_errors, make_console, no_color_option)


@click.command(cls=Command)
@file_argument
@click.argument("file_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--svg", "svg", metavar="FILE", help="Write SVG to FILE ('-': stdout).")
@click.option("--png", "png", metavar="FILE",
              help="Write PNG to FILE ('-': stdout, unless it is a terminal).")
@click.option("--pdf", "pdf", metavar="FILE",
              help="Write PDF to FILE (needs Graphviz's dot; '-': stdout, unless it is a "
                   "terminal).")
@click.option("--dot", "dot", metavar="FILE", help="Write the DOT source to FILE ('-': stdout).")
@click.option("-o", "--output", metavar="FILE",
              help="Write to FILE, format by extension (.svg .png .pdf .dot); '-' writes DOT "
                   "to stdout. Only one output may go to stdout.")
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
@drawing_options
@backend_option
@arg_option
@no_color_option
@debug_option
def graph(file, file_args, svg, png, pdf, dot, output, roots, view, backward, gradient,
          show_saved, anomaly, max_depth, collapse, by_module, depth_modules, expand, no_legend,
          renderer, backend, args_opt, no_color, debug):
    """Draw FILE's autograd graph (every root, or --root NAME).

    Nodes that stand for named tensors carry name, shape and dtype; leaves, roots,
    parameters, tensors that don't require grad and saved tensors each have their own
    style, explained in the legend. Every SVG node has a tooltip with the details.
    Without any renderer the .dot file is written anyway and the exit code is 3.
    For the same drawing as one interactive HTML page (click a node for its values, play
    backward step by step), use `gradviz report`.

    \b
    Examples:
      gradviz graph examples/graph_z_wx_b.py --svg z.svg
      gradviz graph examples/graph_z_wx_b.py --view forward -o z_forward.svg
      gradviz graph examples/retain_grad_and_hooks.py --backward loss --show-saved --svg g.svg
      gradviz graph examples/mul_chain_backward.py -o -
      gradviz graph examples/mul_chain_backward.py --svg - > chain.svg
      gradviz graph examples/nested_modules.py --depth-modules 1 --svg nested.svg
    """
    from gradviz._gc import gc_paused
    from gradviz.inspect import run_file
    from gradviz.render.drawing import GraphDrawing, output_targets
    from gradviz.render.module_graph import ModuleOptionError, module_options
    from gradviz.render.output import loaded_sources
    err = make_console(no_color, stderr=True)
    with library_errors():
        targets = output_targets(svg=svg, png=png, pdf=pdf, dot=dot, output=output,
                                 protected=loaded_sources(file))
        result = run_file(file, argv=list(args_opt) + list(file_args), backend=backend,
                          anomaly=anomaly, backward=backward, gradient=gradient,
                          retain_graph=True, debug=debug)
        # From here on only gradviz's own code runs: the report and the drawing are all kept,
        # and each collection of the cyclic collector would walk them (and the file's graph)
        # again.
        with gc_paused():
            try:
                drawing = GraphDrawing.of_run(
                    result, roots=roots, view=view, show_saved=show_saved, max_depth=max_depth,
                    collapse=collapse, legend=not no_legend,
                    modules=module_options(by_module, depth_modules, expand))
            except ModuleOptionError as exc:
                raise click.UsageError(str(exc)) from None
            for note in drawing.notes:
                err.print(note)
            for line in drawing.write(targets, renderer=renderer, protected=loaded_sources(file)):
                err.print(line)
    raise click.exceptions.Exit(1 if result.failed else 0)
