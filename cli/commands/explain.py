"""gradviz explain: why a tensor's .grad is None, zero or NaN."""

import click

from ..common import (Command, arg_option, backend_option, file_argument, json_option,
                      library_errors, no_color_option, print_result)


@click.command(cls=Command)
@file_argument
@click.argument("name")
@click.argument("file_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--root", metavar="ROOT", help="The root backward runs from (default: the one "
                                             "the file used, or the first root).")
@json_option
@backend_option
@arg_option
@no_color_option
def explain(file, name, file_args, root, as_json, backend, args_opt, no_color):
    """Explain in plain sentences why NAME's gradient is what it is.

    Runs FILE (and computes the gradient from ROOT afterwards when the file did not, without
    changing any value or .grad it left), then reads the graph: not a leaf, does not require
    grad, made under no_grad or by detach()/.data, not connected to ROOT, backward never
    called or called on another root, autograd.grad used instead of backward, a zero or NaN
    gradient and the node that made it, backward calls summed since the last zero_grad(),
    hooks, .grad edited or set to None afterwards. NAME may be a %N name from the tables.
    Exit 1 when the file raised (the error and its line come first). With --backend torch
    the file runs on PyTorch and every sentence is read off that run.

    \b
    Examples:
      gradviz explain examples/relu_zero_grad.py x --root loss
      gradviz explain examples/mul_chain_backward.py c
      gradviz explain examples/no_grad_and_detach.py y_detached --json
      gradviz explain examples/relu_zero_grad.py x --root loss --backend torch
    """
    from gradviz.inspect.explain import explain as run_explain
    with library_errors():
        result = run_explain(file, name, root=root, argv=list(args_opt) + list(file_args),
                             backend=backend)
    print_result(result, 1 if result["error"] else 0, as_json, no_color, "print_explain")
