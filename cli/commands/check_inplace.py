"""gradviz check-inplace: in-place edits that break backward, found before backward runs."""

import json

import click

from ..common import (Command, arg_option, backend_option, debug_option, file_argument,
                      json_option, library_errors, make_console, no_color_option)


@click.command("check-inplace", cls=Command)
@file_argument
@click.argument("file_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--strict", is_flag=True, help="Warnings (.data edits) fail too (exit 1).")
@json_option
@backend_option
@arg_option
@no_color_option
@debug_option
def check_inplace(file, file_args, strict, as_json, backend, args_opt, no_color, debug):
    """Find in-place edits of tensors saved for backward, without calling backward.

    Reports every in-place op (add_, mul_, a[i] = v, ...) that modified a tensor some node
    saved for backward (directly or through a view), with where it happened, which op saved
    the tensor, both versions, the roots whose backward would fail, and a fix. In-place on a
    leaf that requires grad is reported where it raised; edits through .data (invisible to
    autograd) are warnings. Exit 0 clean, 1 something would fail, 2 usage error.

    \b
    Examples:
      gradviz check-inplace examples/inplace_version_error.py
      gradviz check-inplace examples/inplace_ok_when_not_saved.py --json
      gradviz check-inplace examples/inplace_version_error.py --backend torch
    """
    from gradviz.inspect.inplace import check_inplace as check
    with library_errors():
        result = check(file, argv=list(args_opt) + list(file_args), debug=debug,
                       backend=backend)
    failed = bool(result["findings"]) or (strict and bool(result["warnings"]))
    code = 1 if failed or result["error"] else 0
    if as_json:
        click.echo(json.dumps(result, indent=2))
        raise click.exceptions.Exit(code)
    from gradviz.render.text import print_inplace
    print_inplace(make_console(no_color), result, strict=strict)
    raise click.exceptions.Exit(code)
