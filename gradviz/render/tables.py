"""Rich tables for `gradviz run`: tensors, graph, hooks, anomalies and the user's error.

Works from the report's plain data only (docs/report-schema.md). Every cell is a rich Text, never
a markup string, so a tensor named "[bold]x" prints as it is, and every text that came from the
user's file goes through terminal.printable, so an escape sequence in a name or a message is
shown, not obeyed. Highlights are also spelled out in words, so nothing is lost without colour.
"""

from rich import box
from rich.console import Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ._format import (HARMLESS, briefs, changed_mark, format_shape, is_modified, saved_value,
                      summarize, version)
from ._fit import Fit, Hanging, needed_width
from .grouping import View
from .modules_table import modules_table
from .steps import steps_renderable, user_hooks_table
from .terminal import printable

__all__ = ["print_report", "report_renderables"]

# A folding column gets at least this many characters before a table gives way to blocks.
_FOLDED = 12
# Without --full, a long table shows its first _HEAD and last _TAIL rows.
_HEAD = 30
_TAIL = 10


def _capped(items, full):
    """(items to show, number left out, where the gap is): head and tail of a long sequence
    (only those are read: a lazy report builds only the entries a table prints)."""
    if full or len(items) <= _HEAD + _TAIL:
        return list(items), 0, None
    return list(items[:_HEAD]) + list(items[-_TAIL:]), len(items) - _HEAD - _TAIL, _HEAD


def _with_gap(table, left_out, what):
    """The table, then a line saying how many rows the "…" row stands for."""
    if not left_out:
        return table
    return Group(table, Text(f"… {left_out:,} more {what} — --full or --json for all",
                             style="dim"))


def _table(title, *columns, folding=None):
    """A plain table; only the columns in folding (default: all) may wrap their text."""
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False, collapse_padding=True)
    for name in columns:
        fold = folding is None or name in folding
        table.add_column(name, overflow="fold", no_wrap=not fold)
    return table


def _where(item):
    if not item.get("file"):
        return ""
    # no line: an error of the whole file (the parser's MemoryError)
    return f"{item['file']}:{item['line']}" if item.get("line") else item["file"]


_TENSOR_FIELDS = ("requires_grad", "is_leaf", "grad_fn", "version", "retains_grad")
# Column headers are the attributes the learner types (`_version` is torch's name for the
# version counter); short ones are used only where those do not fit. The words are in the README.
_LONG = {"version": "_version"}
_SHORT = {"requires_grad": "req_grad", "is_leaf": "leaf", "version": "ver",
          "retains_grad": "retains"}
_TENSOR_HEADERS = ("name", "shape", "dtype") + tuple(_SHORT.get(k, k) for k in _TENSOR_FIELDS) \
    + ("grad", "data")
_LONG_HEADERS = ("name", "shape", "dtype") + tuple(_LONG.get(k, k) for k in _TENSOR_FIELDS) \
    + ("grad", "data")
_TENSOR_FOLDING = ("name", "grad", "data")


def _flag(value):
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return "None" if value is None else str(value)


def _tensors_table(view, full=False):
    """The Tensors table: one row per named tensor, in order of first assignment.

    Where its columns do not fit, each tensor is shown as a short indented block instead.
    """
    title = "Tensors" + view.tensor_note
    blocks, rows = [Text(title, style="italic")], []
    shown, left_out, gap = _capped(view.tensors, full)
    for i, t in enumerate(shown):
        if i == gap:
            rows.append(["…"] + [""] * (len(_TENSOR_HEADERS) - 1))
            blocks.append(Text("…", style="dim"))
        shape, grad, data = (format_shape(t.get("shape")), summarize(t.get("grad"), full),
                             summarize(t.get("data"), full))
        grad += changed_mark(t.get("grad_changed_by"))
        cells = [t["name"], shape, t.get("dtype")] + [_flag(t.get(k)) for k in _TENSOR_FIELDS]
        rows.append([printable(cell, keep="") for cell in cells + [grad, data]])
        fields = "  ".join(f"{_LONG.get(k, k)}={printable(t.get(k), keep='')}"
                           for k in _TENSOR_FIELDS)
        body = Text(f"{fields}\ngrad: {grad}\ndata: {data}")
        blocks += [Text(" ".join(rows[-1][:3]), style="bold"), Padding(body, (0, 0, 0, 2))]
    # A name is read whole (`pow(sub(step[1].y, …))`); only a very long one may wrap.
    whole = _TENSOR_FOLDING
    if max(len(row[0]) for row in rows) <= 2 * _FOLDED:
        whole = tuple(c for c in _TENSOR_FOLDING if c != "name")
    choices = []
    # The learner's attribute names as headers only while values still have room to be read.
    for headers, fold_at, folding in ((_LONG_HEADERS, 2 * _FOLDED, whole),
                                      (_TENSOR_HEADERS, _FOLDED, whole),
                                      (_TENSOR_HEADERS, _FOLDED, _TENSOR_FOLDING)):
        table = _table(title, *headers, folding=folding)
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))
        choices.append((table, needed_width(headers, rows, folding, fold_at)))
    return _with_gap(Fit(choices, Group(*blocks)), left_out, "tensors")


def _history_text(report):
    """One line per in-place edit of a tensor: `b  version 1: CopySlices at line 4` (a leaf's
    edits under no_grad, such as initialisation and optimizer steps, are left to --json)."""
    lines = []
    tensors = report.get("tensors") or []
    for i, brief in enumerate(briefs(tensors)):
        if brief.get("edits") == 0:
            continue
        t = tensors[i]
        for h in t.get("history") or []:
            if not h.get("grad_enabled", True) and t.get("is_leaf"):
                continue    # a leaf's update under no_grad (init, opt.step()): nothing to see
            what = h.get("grad_fn") or h.get("op")
            if not h.get("grad_enabled", True):
                what += " under no_grad (not recorded)"
            at = f" at line {h['line']}" if h.get("line") else ""
            lines.append(printable(f"{t['name']}  version {h['version']}: {what}{at}", keep=""))
    if not lines:
        return None
    return Group(Text("In-place edits", style="italic"), Text("\n".join(lines)))


def _node_title(node):
    if node["name"] == "AccumulateGrad" and node.get("variable") is not None:
        return printable(f"AccumulateGrad ({node['variable']})", keep="")
    if node.get("tensor") is not None:
        return printable(f"{node['name']} ({node['tensor']})", keep="")
    return printable(node["name"], keep="")


def _saved_text(entry):
    if entry.get("shape") is None:
        return Text(printable(saved_value(entry), keep=""))
    held = entry.get("tensor")
    if held is None and entry.get("value") is not None:
        held = f"tensor({entry['value']})"      # a Python number saved as a 0-d tensor
    text = Text(printable(f"{entry['name']} {held} {format_shape(entry['shape'])} ", keep=""))
    versions = f"v{version(entry.get('saved_version'))}->v{version(entry.get('version'))}"
    if is_modified(entry) and entry.get("freed"):
        # Nothing will read it again (backward freed it), as after opt.step(): not an alarm.
        text.append(versions + " " + HARMLESS, style="dim")
        return text
    if is_modified(entry):
        text.append(versions + " MODIFIED", style="bold red")
    else:
        text.append(versions)
    if entry.get("freed"):
        text.append(" (freed)", style="dim")
    return text


def _chain_title(node, chain, nodes):
    """A folded chain (run --collapse): `MulBackward0 × 998 (h … mul(x, …))`."""
    last = nodes.get(chain[-1], {})
    ends = [n.get("tensor") for n in (node, last) if n.get("tensor") is not None]
    return printable(f"{node['name']} × {len(chain)} ({chain[0]} … {chain[-1]}"
                     + (f": {' … '.join(ends)})" if ends else ")"), keep="")


class _ById:
    """A report's node briefs by id, for the few a table looks up: "n3" is read where it
    should be (the report numbers its nodes in order), a dict of all of them is made only for
    an id found elsewhere (no 100,000-entry dict for the 40 rows of a big graph)."""

    def __init__(self, entries):
        self.entries, self.by_id = entries, None

    def get(self, nid, default=None):
        if type(nid) is str and nid[:1] == "n" and nid[1:].isdigit():
            k = int(nid[1:])
            if k < len(self.entries) and self.entries[k]["id"] == nid:
                return self.entries[k]
        if self.by_id is None:
            self.by_id = {n["id"]: n for n in self.entries}
        return self.by_id.get(nid, default)


def _graph_table(view, report, full=False):
    """The Graph table: every grad_fn node, named after the tensor it made."""
    nodes = _ById(briefs(report.get("nodes") or []))
    table = _table("Graph" + view.node_note, "id", "node", "next_functions", "saved",
                   folding=("node", "next_functions", "saved"))
    shown, left_out, gap = _capped(view.nodes, full)
    for i, node in enumerate(shown):
        if i == gap:
            table.add_row(Text("…", style="dim"))
        chain = view.chain(node["id"])
        nexts = []
        last = node if len(chain) == 1 else view.by_id[chain[-1]]
        for nid, _ in last.get("next_functions") or []:
            if nid is None:
                nexts.append("None")
            else:
                nexts.append(f"{nid} {_node_title(nodes.get(nid, {'name': '?'}))}")
        saved = [_saved_text(s) for s in node.get("saved") or []] if len(chain) == 1 else []
        title = _node_title(node) if len(chain) == 1 else _chain_title(node, chain, nodes)
        title = Text(title, style="bold red" if node.get("anomaly") else "")
        # One sub-row per edge / saved value, so a wrapped line stays beside its own node.
        for j in range(max(1, len(nexts), len(saved))):
            first = j == 0
            table.add_row(Text(node["id"] if first else ""), title if first else Text(""),
                          Text(nexts[j] if j < len(nexts) else ""),
                          saved[j] if j < len(saved) else Text(""))
    return _with_gap(table, left_out, "nodes")


def _hooks_table(view, report, full=False):
    """The Hooks table, in firing order (without the nodes a loop's earlier iterations made)."""
    nodes = {n["id"]: n for n in briefs(report.get("nodes") or [])}
    tensors = {t["name"] for t in briefs(report.get("tensors") or [])}
    table = _table("Hooks (firing order)", "#", "target", "kind", "grad")
    hooks = [(i, h) for i, h in enumerate(report.get("hooks") or [], start=1)
             if h.get("node") not in view.hidden_nodes]
    earlier = len(report.get("hooks") or []) - len(hooks)
    shown, left_out, gap = _capped(hooks, full)
    for k, (i, hook) in enumerate(shown):
        if k == gap:
            table.add_row(Text("…", style="dim"))
        target = hook.get("target")
        if target in nodes and target not in tensors:
            target = f"{target} {_node_title(nodes[target])}"
        table.add_row(*(Text(printable(cell, keep="")) for cell in (
            i, target, hook.get("kind"), summarize(hook.get("grad")))))
    shown_table = _with_gap(table, left_out, "gradients")
    if not earlier:
        return shown_table
    return Group(shown_table, Text(f"… {earlier} gradients at nodes of a loop's earlier "
                                   "iterations not shown — --full shows them", style="dim"))


def _traceback_lines(frames):
    """[(indent, text)]: a traceback's lines as Python prints them, without the indent."""
    lines = []
    for frame in frames or []:
        if "repeated" in frame:
            what = "line" if frame.get("frames", 1) == 1 else f"{frame['frames']} frames"
            lines.append((2, f"[Previous {what} repeated {frame['repeated']} more times]"))
            continue
        lines.append((2, printable(f'File "{frame.get("file")}", line {frame.get("line")}, '
                                   f'in {frame.get("function")}', keep="")))
        if frame.get("code"):
            lines.append((4, printable(_shortened(frame["code"], _CODE_SHOWN), keep="")))
    return lines


# A traceback shows this much of a source line, an error panel this much of a message: a
# 10,000-character line filled 100 rows of the panel (--json keeps them whole).
_CODE_SHOWN, _MESSAGE_SHOWN = 240, 4000


def _shortened(text, limit):
    """text, or its first limit characters and how many more there are.

    >>> _shortened("x" * 300, 240)[-26:]
    'xxxx… (60 more characters)'
    """
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def _labelled(rows):
    """Rows of (label, text), the text wrapping under itself: `fix: …`, `see: …`."""
    grid = Table.grid()
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for label, text in rows:
        grid.add_row(label, text)
    return grid


def _anomalies_table(report):
    """The Anomalies table: the node, where the user's code made it, and what went wrong,
    with the forward traceback below the message; where that does not fit, one block each."""
    table = _table("Anomalies", "node", "where", "message")
    blocks = [Text("Anomalies", style="italic")]
    rows = []
    for anomaly in report.get("anomalies") or []:
        trace = _traceback_lines(anomaly.get("traceback"))
        node = printable(f"{anomaly.get('node')} {anomaly.get('name')}", keep="")
        at = printable(_where(anomaly), keep="")
        message = Text(printable(anomaly.get("message")), style="red")
        text = message.copy()
        for lead, line in trace:
            text.append("\n" + " " * lead + line)
        table.add_row(Text(node), Text(at), text)
        rows.append([node, at] + [message.plain] + [" " * lead + line for lead, line in trace])
        blocks.append(Text(f"{node}  at {at}" if at else node, style="bold"))
        blocks.append(Hanging([(2, message)] + [(2 + lead, line) for lead, line in trace]))
    needed = max((len(r[0]) + len(r[1]) + max(map(len, r[2:])) + 4 for r in rows), default=0)
    return Fit([(table, needed)], Group(*blocks))


def _error_panel(error):
    """The Error panel: exception type and message, file:line, the user's own frames, and
    the fix hint; long lines wrap under themselves."""
    message = _shortened(f"{error.get('type')}: {error.get('message')}", _MESSAGE_SHOWN)
    parts = [Text(printable(message), style="bold red")]
    if _where(error):
        parts.append(Text("at " + printable(_where(error), keep="")))
    trace = _traceback_lines(error.get("traceback"))
    if trace:
        parts += [Text("Traceback (your code only):"), Hanging(trace)]
    hint = error.get("hint")
    if hint:
        parts.append(_labelled([(Text("fix: ", style="bold"),
                                 Text(printable(hint["fix"], keep=""), style="bold")),
                                (Text("see: "), Text(printable(hint["command"], keep="")))]))
    return Panel(Group(*parts), title="Error", title_align="left", border_style="red")


def report_renderables(report, *, full=False, hooks=False, steps=False, collapse=False,
                       by_module=False):
    """Return the rich renderables for a report, in the order `gradviz run` prints them.

    Tables with no rows are left out; a file without tensors gets one plain sentence, and so
    does a run whose hooks (hooks=True: the user asked for them) never fired. Each part but the
    last ends with a blank line, so printing them one after another reads well. A loop's
    earlier iterations are left out unless full; collapse folds chains of one op (see
    grouping.View); by_module groups the tensors by the module that made them
    (modules_table).

    >>> import io
    >>> from rich.console import Console
    >>> console = Console(file=io.StringIO(), width=60, no_color=True)
    >>> console.print(*report_renderables({"file": "f.py", "tensors": [], "nodes": []}))
    >>> console.file.getvalue()
    'No tensors found in f.py.\\n'
    """
    parts = []
    view = View(report, full=full, collapse=collapse)
    if report.get("tensors") and by_module:
        parts.append(modules_table(view.tensors, report, full))
    elif report.get("tensors"):
        parts.append(_tensors_table(view, full))
    else:
        parts.append(Text(printable(f"No tensors found in {report.get('file')}.", keep="")))
    history = _history_text(report)
    if history is not None:
        parts.append(history)
    if report.get("nodes"):
        parts.append(_graph_table(view, report, full))
    if report.get("hooks"):
        parts.append(_hooks_table(view, report, full))
    elif hooks:
        parts.append(Text("No hooks fired (nothing ran backward)."))
    if hooks and report.get("user_hooks"):
        parts.append(user_hooks_table(report, view.hidden_calls))
    if steps:
        parts.append(steps_renderable(report))
    if report.get("anomalies"):
        parts.append(_anomalies_table(report))
    if report.get("error"):
        parts.append(_error_panel(report["error"]))
    return [Padding(part, (0, 0, 1, 0)) for part in parts[:-1]] + parts[-1:]


def print_report(console, report, *, full=False, hooks=False, steps=False, collapse=False,
                 by_module=False):
    """Print a report's tables to a rich Console (see report_renderables).

    >>> import io
    >>> from rich.console import Console
    >>> console = Console(file=io.StringIO(), width=60, no_color=True)
    >>> print_report(console, {"file": "f.py", "tensors": [], "nodes": []})
    >>> console.file.getvalue()
    'No tensors found in f.py.\\n'
    """
    console.print(Group(*report_renderables(report, full=full, hooks=hooks, steps=steps,
                                            collapse=collapse, by_module=by_module)))
