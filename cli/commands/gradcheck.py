"""gradviz gradcheck: a file's gradients against central finite differences in float64."""

import click

from ..common import (Command, arg_option, backend_option, file_argument, json_option,
                      library_errors, no_color_option, print_result)


@click.command(cls=Command)
@file_argument
@click.argument("file_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--root", metavar="NAME", help="The root to differentiate (default: every root).")
@click.option("--max-elements", default=64, show_default=True, type=click.IntRange(min=1),
              help="Elements checked per leaf (each costs two runs of the file).")
@click.option("--eps", default=1e-6, show_default=True, type=float, help="Finite-difference step.")
@click.option("--atol", default=1e-5, show_default=True, type=float, help="Absolute tolerance.")
@click.option("--rtol", default=1e-3, show_default=True, type=float, help="Relative tolerance.")
@json_option
@backend_option
@arg_option
@no_color_option
def gradcheck(file, file_args, root, max_elements, eps, atol, rtol, as_json, backend, args_opt,
              no_color):
    """Check every gradient reaching a named leaf of the root numerically.

    Runs FILE in float64, takes the analytic gradient of the root (summed, if not a scalar)
    with respect to each named leaf it reaches, and compares it with central finite
    differences, re-running the file with each checked element moved by +eps and -eps.
    Prints a table per leaf, then one verdict. Exit 0 only when every checked gradient
    matches; exit 1 when the file raised, backward failed, a gradient mismatched, a value was
    nan or inf, or the point is not differentiable (the one-sided differences disagree).
    With --backend torch every run, and the analytic gradient, is PyTorch's (in float64).

    \b
    Examples:
      gradviz gradcheck examples/manual_derivative_x2_exp.py
      gradviz gradcheck examples/broadcast_grad_shape.py --root loss --max-elements 8
      gradviz gradcheck examples/manual_derivative_x2_exp.py --backend torch
    """
    from gradviz.inspect.gradcheck import gradcheck_file
    with library_errors():
        result = gradcheck_file(file, argv=list(args_opt) + list(file_args), root=root,
                                max_elements=max_elements, eps=eps, atol=atol, rtol=rtol,
                                backend=backend)
    print_result(result, 0 if result["passed"] else 1, as_json, no_color, "print_gradcheck")
