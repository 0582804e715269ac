"""The file's own hooks and the engine's steps, as `gradviz run --hooks --step` prints them.

Works from the report's plain data only (docs/report-schema.md: "user_hooks" and
"backward_calls"). Every text from the user's file goes through terminal.printable.
"""

import os

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from ._fit import Fit, needed_width
from ._format import briefs, summarize
from .terminal import printable

__all__ = ["user_hooks_table", "steps_renderable", "hook_label"]

_KIND_WORDS = {"tensor": "tensor hook", "pre": "node pre-hook", "post": "node post-hook",
               "retain_grad": "retain_grad", "post_accumulate": "post-accumulate-grad hook",
               "module_forward_pre": "forward pre-hook", "module_forward": "forward hook",
               "module_backward_pre": "full backward pre-hook",
               "module_backward": "full backward hook"}
# Hooks that receive one value per slot (a tuple of gradients, or a module's args).
_SLOTTED = ("pre", "post", "module_forward_pre", "module_backward_pre", "module_backward")


def hook_label(hook, file=None):
    """How a hook is named everywhere: its number, function and where it is defined (only
    the line when that is in `file`, the file that ran).

    >>> hook_label({"index": 0, "function": "double", "file": "f.py", "line": 3})
    '#1 double (f.py:3)'
    >>> hook_label({"index": 0, "function": "double", "file": "f.py", "line": 3}, "f.py")
    '#1 double (line 3)'
    """
    at = ""
    if hook.get("file") and file and os.path.abspath(hook["file"]) == os.path.abspath(file):
        at = f" (line {hook.get('line')})"
    elif hook.get("file"):
        at = f" ({_rel(hook['file'])}:{hook.get('line')})"
    return f"#{hook['index'] + 1} {hook.get('function')}{at}"


def _rel(path):
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith(".." + os.sep) else rel


def _slots(v):
    """Per-slot gradients (a node's outputs) as one text: g0, or (g0, g1, ...)."""
    if not isinstance(v, list):
        return summarize(v)
    if len(v) == 1:
        return summarize(v[0])
    return "(" + ", ".join(summarize(x) for x in v) + ")"


def _hook_in_out(hook):
    """(what the hook got, what it returned), as the tables print them."""
    kind = hook["kind"]
    show = _slots if kind in _SLOTTED else summarize
    given = show(hook.get("grad_in"))
    if kind == "module_forward_pre":
        given = "args " + given
    elif kind == "module_forward":
        given = "output " + given
    if kind == "retain_grad":
        return given, "stored in .grad"
    if kind == "post_accumulate":
        # It returns nothing; what counts is whether it changed .grad in place.
        if not hook.get("changed"):
            return ".grad " + given, ".grad unchanged"
        return ".grad " + given, ".grad " + show(hook.get("grad_out")) + " (changed)"
    if hook.get("grad_out") is None:
        return given, "None (unchanged)"
    out = show(hook["grad_out"])
    return given, out + (" (changed)" if hook.get("changed") else " (same values)")


def _on(hook):
    target = hook.get("target")
    if hook["kind"].startswith("module_"):
        return hook.get("module") or "a module"
    node = f"{hook.get('node') or '?'} {hook.get('node_name')}"
    if hook["kind"] in ("tensor", "retain_grad", "post_accumulate") and target is not None:
        return target
    return node + (f" ({target})" if target else "")


def user_hooks_table(report, hidden_calls=()):
    """The hooks the file registered, in firing order, with what each got and returned;
    firings during the backward calls in hidden_calls (a loop's earlier iterations) are
    counted in the title instead. Where the table does not fit, each hook is two lines."""
    hooks = [h for h in report.get("user_hooks") or [] if h.get("call") not in hidden_calls
             and h.get("before_call") not in hidden_calls]
    title = "Your hooks (firing order)"
    left_out = len(report.get("user_hooks") or []) - len(hooks)
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False, collapse_padding=True)
    rows = []
    for hook in hooks:
        given, out = _hook_in_out(hook)
        rows.append([printable(cell, keep="") for cell in (
            hook_label(hook, report.get("file")), _KIND_WORDS.get(hook["kind"], hook["kind"]),
            _on(hook), given, out)])
    # A hook's name and kind are read whole; the values fold.
    for col in ("hook", "kind", "on", "grad in", "grad out"):
        table.add_column(col, overflow="fold", no_wrap=col in ("hook", "kind"))
    blocks = [Text(title, style="italic")]
    for hook, row in zip(hooks, rows):
        style = "bold yellow" if hook.get("changed") else ""
        table.add_row(*(Text(cell) for cell in row[:4]), Text(row[4], style=style))
        blocks.append(Text(f"{row[0]}  {row[1]} on {row[2]}", style="bold"))
        line = Text(f"    in: {row[3]}  out: ")
        line.append(row[4], style=style)
        blocks.append(line)
    headers = ("hook", "kind", "on", "grad in", "grad out")
    needed = needed_width(headers, rows, headers[2:])
    fit = Fit([(table, needed)], Group(*blocks))
    if not left_out:
        return fit
    return Group(fit, Text(f"… {left_out} firings in a loop's earlier iterations not shown — "
                           "--full shows them", style="dim"))


def _node_text(node_id, name, tensor):
    text = f"{node_id} {name}" if node_id else name
    return text + (f" ({tensor})" if tensor else "")


def _call_title(call):
    roots = ", ".join(str(r) for r in call.get("roots") or [])
    what = f"torch.autograd.grad of {roots}" if call["kind"] == "grad" \
        else f"{roots}.backward()"
    if call.get("by_gradviz"):
        where = " (--backward)"
    elif call.get("file"):
        where = f" at {_rel(call['file'])}:{call.get('line')}"
    else:
        where = ""
    return f"Backward call {call['call'] + 1}: {what}{where}"


def steps_renderable(report):
    """The engine's execution, node by node, for every backward call of the run.

    >>> import io
    >>> from rich.console import Console
    >>> console = Console(file=io.StringIO(), width=60, no_color=True)
    >>> console.print(steps_renderable({"backward_calls": []}))
    >>> console.file.getvalue()
    'No backward ran (nothing to step through).\\n'
    """
    calls = report.get("backward_calls") or []
    if not calls and report.get("backend", "gradviz") != "gradviz":
        return Text(f"No steps: only the gradviz backend records the engine's steps "
                    f"(this run used {report['backend']}).")
    if not calls:
        return Text("No backward ran (nothing to step through).")
    hooks = report.get("user_hooks") or []
    nodes = {n["id"]: n for n in briefs(report.get("nodes") or [])}
    parts = []
    if len(calls) > 6:
        # A training loop: the first call, then the last ones (whose steps are kept).
        parts.append(Text(f"… {len(calls) - 3:,} earlier backward calls not shown (--json has "
                          "each call's roots and line)", style="dim"))
        calls = calls[-3:]
    for call in calls:
        parts.append(Text(printable(_call_title(call), keep=""), style="bold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(justify="right", no_wrap=True)
        grid.add_column(overflow="fold")
        if not call["steps"]:
            grid.add_row("", Text("(no node ran)" if call.get("steps_kept", True) else
                                  "(steps not kept: only the last two backward calls' are)"))
        for i, step in enumerate(call["steps"], start=1):
            _step_rows(grid, i, step, hooks, nodes, report.get("file"))
        parts.append(grid)
    return Group(*parts)


def _step_rows(grid, i, step, hooks, nodes, file):
    """One row for the node and what it received, then one sub-row per hook, edge, write."""
    head = _node_text(step.get("node"), step["name"], step.get("tensor") or
                      step.get("accumulated"))
    grid.add_row(f"{i}.", Text(printable(f"{head}  received {_slots(step.get('grad_in'))}",
                                         keep="")))
    # A post-accumulate-grad hook runs after AccumulateGrad wrote .grad: it is listed after.
    fired = [hooks[k] for k in step.get("hooks") or []]
    _hook_rows(grid, [h for h in fired if h["kind"] != "post_accumulate"], file)
    for edge in step.get("grad_out") or []:
        if edge.get("name") is None:
            continue
        target = nodes.get(edge.get("node")) or {}
        into = target.get("variable") if edge["name"] == "AccumulateGrad" else target.get("tensor")
        to = _node_text(edge.get("node"), edge["name"], into)
        grid.add_row("", Text(printable(f"  -> {to}: {summarize(edge.get('grad'))}", keep="")))
    if step.get("accumulated"):
        grid.add_row("", Text(printable(f"  wrote {step['accumulated']}.grad", keep=""),
                              style="cyan"))
    _hook_rows(grid, [h for h in fired if h["kind"] == "post_accumulate"], file)


def _hook_rows(grid, fired, file):
    for hook in fired:
        given, out = _hook_in_out(hook)
        line = f"  hook {hook_label(hook, file)}: {given} -> {out}"
        grid.add_row("", Text(printable(line, keep=""),
                              style="yellow" if hook.get("changed") else ""))
