"""Rich output for check-inplace, gradcheck and explain (plain data in, text out)."""

import io
import os

from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ._fit import hang
from .terminal import printable, program_output

__all__ = ["print_program_output", "run_header", "OutputFrame", "print_inplace",
           "print_gradcheck", "print_explain", "where"]


def run_header(file, backward=None, backend="gradviz"):
    """The first line of `gradviz run`: the file, then what gradviz did after it."""
    head = _t(f"gradviz run {where(file, None)}", style="bold")
    if backward:
        head.append(printable(f"  (then {backward}.backward())", keep=""))
    if backend != "gradviz":
        head.append(printable(f"  [backend: {backend}]"))
    return head


class OutputFrame:
    """What the user's file writes, in a frame of its own, printed line by line as it arrives.

    Beyond `head` lines only the last `tail` are kept, and the frame says how many were left
    out (`full=True` shows every line); a line longer than `rows` rows of the frame shows its
    start and says how many characters it has more. Warnings print in yellow, in their place.
    Nothing is printed (not even the frame) when the file writes nothing.

    >>> import io
    >>> from rich.console import Console
    >>> console = Console(file=io.StringIO(), width=30, no_color=True)
    >>> frame = OutputFrame(console, "f.py", head=1, tail=1)
    >>> frame.write("stdout", "one\\ntwo\\nthree\\n")
    >>> frame.close()
    >>> print(console.file.getvalue(), end="")
    ╭─ output of f.py ───────────╮
    │ one                        │
    │ … 1 more line — --full or  │
    │ --json for all             │
    │ three                      │
    ╰────────────────────────────╯
    """

    def __init__(self, console, file, *, full=False, head=50, tail=20, rows=20):
        from collections import deque
        self.console = console
        self.title = printable(f"output of {os.path.basename(file)}", keep="")
        self.full = full
        self.head = head
        self.tail = deque(maxlen=max(tail, 0))
        self.shown = 0
        self.skipped = 0
        self.partial = ""
        # `print("x" * 5_000_000)`: one line, wrapped into 50,000 rows of the frame, took 50 s
        # to show (python: 0.05 s); the characters beyond these are counted, not kept
        self.line_chars = max(console.width - 4, 1) * rows
        self.more = 0           # characters of the partial line beyond line_chars
        self.opened = False
        from rich.console import Console
        self.render = Console(file=io.StringIO(), width=console.width,
                              color_system=console.color_system, no_color=console.no_color,
                              force_terminal=console.is_terminal, highlight=False,
                              soft_wrap=False, markup=False, emoji=False)
        # While the file runs, fd 1 is the capture's pipe: the frame writes to a copy of the
        # stdout it was given (an fd taken now, before the run).
        self.target, self.own = console.file, False
        self.failed = None      # the error writing to target gave (a reader gone: `| head`)
        try:
            fd = self.target.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None
        if fd is not None:
            self.target.flush()
            self.target = open(os.dup(fd), "w", encoding=getattr(console.file, "encoding",
                                                                 None) or "utf-8",
                               errors="replace")
            self.own = True

    def write(self, stream, text):
        """Take a piece of the output: stream "stdout" or "warning"."""
        if stream == "warning":
            self._end_partial()
            for line in text.rstrip("\n").split("\n"):
                self._line(line, "yellow")
            return
        lines = (self.partial + text).split("\n")
        self.partial = lines.pop()
        if lines:
            more, self.more = self.more, 0
            self._line(lines[0], "", more)
            for line in lines[1:]:
                self._line(line, "")
        if not self.full and len(self.partial) > self.line_chars:
            self.more += len(self.partial) - self.line_chars
            self.partial = self.partial[:self.line_chars]

    def _end_partial(self):
        if self.partial or self.more:
            self._line(self.partial, "", self.more)
            self.partial, self.more = "", 0

    def _line(self, line, style, more=0):
        if not self.full and len(line) > self.line_chars:
            more += len(line) - self.line_chars
            line = line[:self.line_chars]
        if self.full or self.shown < self.head:
            self.shown += 1
            self._print(line, style, more)
            return
        if self.tail.maxlen == 0 or len(self.tail) == self.tail.maxlen:
            self.skipped += 1
        if self.tail.maxlen:
            self.tail.append((line, style, more))

    def _print(self, line, style, more=0):
        width = self.console.width
        rows = []
        if not self.opened:
            self.opened = True
            title = f"─ {self.title} "
            top = "╭" + title + "─" * max(width - 2 - len(title), 0) + "╮"
            rows.append(Text(top[:width - 1] + "╮" if len(top) > width else top, style="dim"))
        inner = max(width - 4, 1)
        # The file's colours are kept; its other control sequences never reach the terminal.
        text = program_output(line.expandtabs())
        if style:
            text.stylize(style)
        # An indented line (a traceback's, a table's) wraps under itself, keeping its shape.
        lead = min(len(text.plain) - len(text.plain.lstrip(" ")), inner // 2)
        pieces = hang(self.console, text[lead:], inner, lead, 2) if lead else \
            text.wrap(self.console, inner)
        if more:
            s = "" if more == 1 else "s"
            note = Text(f"… {more:,} more character{s} on this line — --full or --json for all",
                        style="dim")
            pieces = list(pieces) + list(note.wrap(self.console, inner))
        for piece in pieces:
            piece.pad_right(inner - piece.cell_len)
            rows.append(Text.assemble(("│ ", "dim"), piece, (" │", "dim")))
        self._emit(rows)

    def _emit(self, rows):
        # Rendered on a console of the frame's own, into a string: the reader thread calls
        # this while the file runs, when sys.stdout is the capture's pipe.
        if self.failed is not None:
            return
        out = self.render.file
        out.seek(0)
        out.truncate()
        for row in rows:
            self.render.print(row, no_wrap=True, crop=True)
        try:
            self.target.write(out.getvalue())
            self.target.flush()
        except OSError as exc:
            # kept for close(), which the main thread calls: raised here, in the reader
            # thread, it was a thread's traceback and the exit code of a file that raised
            self.failed = exc

    def close(self):
        """Print the last lines, say how many were left out, and close the frame."""
        self._end_partial()
        if self.skipped:
            s = "" if self.skipped == 1 else "s"
            self._print(f"… {self.skipped:,} more line{s} — --full or --json for all", "dim")
        for line, style, more in self.tail:
            self._print(line, style, more)
        self.tail.clear()
        if self.opened:
            width = self.console.width
            self._emit([Text("╰" + "─" * max(width - 2, 0) + "╯", style="dim")])
            self.opened = False
        if self.own:
            self.own = False
            target, self.target = self.target, self.console.file
            try:
                target.close()
            except OSError as exc:
                self.failed = self.failed or exc
        if self.failed is not None:
            failed, self.failed = self.failed, None
            raise failed


def print_program_output(console, report, full=False):
    """The header line, then what the user's file printed (and warned), in a frame of its own,
    before gradviz's tables."""
    console.print(run_header(report["file"], report.get("backward"), report.get("backend")))
    frame = OutputFrame(console, report["file"], full=full)
    frame.write("stdout", report.get("stdout") or "")
    for w in report.get("warnings") or []:
        frame.write("warning", f"{w['file']}:{w['line']}: {w['category']}: {w['message']}")
    if report.get("stdout_cut"):
        frame.write("warning", f"gradviz: {report['stdout_cut']}")
    frame.close()
    console.print()


def _t(text, style=""):
    """Text for a string built from the user's names, paths and messages: never read as
    markup, control characters shown escaped (terminal.printable)."""
    return Text(printable(text), style=style)


def where(file, line):
    """`file:line` relative to the working directory, or '' when unknown. Control characters
    of the path are escaped, a newline too: a file named `a<newline>b.py` broke the line."""
    if not file:
        return ""
    try:
        rel = os.path.relpath(file)
    except ValueError:
        rel = file
    if rel.startswith(".." + os.sep):
        rel = file
    rel = printable(rel, keep="")
    return f"{rel}:{line}" if line else rel


def _indented(console, text, style="", indent=3):
    """Print text so that wrapped lines keep the indent."""
    t = text if isinstance(text, Text) else _t(text, style=style)
    console.print(Padding(t, (0, 0, 0, indent)))


def print_inplace(console, result, strict=False):
    """The findings and warnings of gradviz.inspect.inplace.check_inplace."""
    findings, warnings = result["findings"], result["warnings"]
    console.print(_t(f"check-inplace {where(result['file'], None)}", style="bold"))
    if result.get("error"):
        e = result["error"]
        console.print(_t(f"the file raised {e['type']}: {e['message']} "
                           f"({where(e['file'], e['line'])})", style="red"))
    if not findings and not warnings:
        e = result.get("error")
        if e is None:
            console.print(Text("No in-place edit breaks backward.", style="green"))
        elif e["type"] == "SyntaxError" and e["file"] == result["file"]:
            # The file never ran: saying that it has no bad edit would be a verdict on nothing.
            console.print(Text("Nothing ran, so nothing was checked.", style="yellow"))
        else:
            console.print(_t("No in-place edit breaks backward in what ran before the error "
                             f"(up to {where(e['file'], e['line'])}); the rest was not "
                             "checked.", style="yellow"))
        return
    for i, f in enumerate(findings, 1):
        console.print()
        head = _t(f"{i}. ", style="bold red")
        if f["kind"] == "modified_saved_tensor":
            via = f" (through {f['via']})" if f.get("via") else ""
            head.append(printable(f"{f['op']} on '{f['tensor']}'{via} at "
                                  f"{where(f['file'], f['line'])}"),
                        style="bold")
            console.print(head)
            _indented(console, f"saved by {f['saved_by']} ({f['saved_as']}) at "
                      f"{where(f['saved_file'], f['saved_line'])}, version "
                      f"{f['saved_version']} -> now {f['version']}")
            _indented(console, f"backward of {', '.join(f['roots'])} will fail: 'one of the "
                      "variables needed for gradient computation has been modified by an "
                      "inplace operation'")
        else:
            head.append(printable(f"in-place on '{f['tensor']}' at {where(f['file'], f['line'])}"),
                        style="bold")
            console.print(head)
            _indented(console, f["message"])
        _indented(console, f"fix: {f['fix']}", style="cyan")
    for w in warnings:
        console.print()
        label = "warning" + (" (fails with --strict)" if strict else "")
        console.print(_t(f"{label}: {w['op']} on '{w['tensor']}' at "
                           f"{where(w['file'], w['line'])}", style="yellow"))
        _indented(console, w["message"])
        _indented(console, f"fix: {w['fix']}", style="cyan")
    console.print()
    console.print(_t(f"{len(findings)} finding(s), {len(warnings)} warning(s)",
                       style="bold red" if findings else "bold yellow"))


def _num(x):
    return "-" if x is None else f"{x:.3g}"


_LEAF_WORDS = {"pass": ("pass", "green"), "mismatch": ("FAIL", "bold red"),
               "nonfinite": ("nan/inf", "bold red"), "raised": ("raised", "bold red"),
               "not_differentiable": ("not differentiable", "yellow"),
               "step_too_small": ("eps too small", "yellow"), "skipped": ("skipped", "yellow")}


def _at(name, index):
    return f"{name}[{', '.join(map(str, index))}]" if index else name


def _val(x):
    """A number from gradcheck's plain data (the strings "nan", "inf" stay as they are)."""
    return x if isinstance(x, str) else f"{x:.6g}"


def print_gradcheck(console, result):
    """One table per root: each leaf's error against finite differences, then the verdict."""
    console.print(_t(f"gradcheck {where(result['file'], None)} (float64, eps "
                       f"{result['eps']:g}, atol {result['atol']:g}, rtol {result['rtol']:g})",
                       style="bold"))
    for r in result["roots"]:
        if r.get("error"):
            at = f" ({where(r['file'], r['line'])})" if r.get("file") else ""
            console.print(_t(f"root {r['root']}: {r['error']}{at}", style="red"))
            continue
        table = Table(title=_t(f"d {r['root']} / d leaf"), title_justify="left")
        for col in ("leaf", "shape", "checked", "max abs err", "max rel err", "result"):
            table.add_column(col, overflow="fold")
        for lf in r["leaves"]:
            word, style = _LEAF_WORDS[lf["status"]]
            table.add_row(_t(lf["name"]), _t(str(lf["shape"])), f"{lf['checked']}/{lf['total']}",
                          _num(lf["max_abs_error"]), _num(lf["max_rel_error"]),
                          Text(word, style=style))
        console.print(table)
        for lf in r["leaves"]:
            _print_leaf_details(console, lf)
        if not r["leaves"]:
            console.print(_t(f"  no named leaf that requires grad reaches {r['root']}"))
    console.print(_t(result["message"], style="bold green" if result["passed"] else "bold red"))


def _print_leaf_details(console, lf):
    """One line per element that did not match, at most three of each kind."""
    name = lf["name"]
    if lf["skipped"]:
        console.print(_t(f"  {name}: {lf['skipped']}", style="yellow"))
        return
    if lf["mismatched"] and lf["worst"]:
        w = lf["worst"]
        console.print(_t(f"  {_at(name, w['index'])}: analytic {_val(w['analytic'])} vs "
                           f"numeric {_val(w['numeric'])}", style="red"))
    for e in lf["nonfinite"][:3]:
        console.print(_t(f"  {_at(name, e['index'])}: analytic {_val(e['analytic'])}, numeric "
                           f"{_val(e['numeric'])} (value {_val(e['value'])}): not finite",
                           style="red"))
    for k in lf["kinks"][:3]:
        console.print(_t(f"  {_at(name, k['index'])}: not differentiable: slope "
                           f"{_val(k['left'])} from the left, {_val(k['right'])} from the right "
                           f"(analytic {_val(k['analytic'])})", style="yellow"))
    if lf["error"]:
        e = lf["error"]
        console.print(_t(f"  {_at(name, e['index'])} moved by eps: the file raised "
                           f"{e['type']}: {e['message']} ({where(e['file'], e['line'])})",
                           style="red"))
    hidden = max(0, len(lf["nonfinite"]) - 3) + max(0, len(lf["kinks"]) - 3)
    if hidden:
        console.print(_t(f"  ... {hidden} more (--json for all)", style="dim"))


def print_explain(console, result):
    """NAME's gradient, the path from the root to it, then the causes, one sentence each."""
    name = result["tensor"]
    if not result.get("found", True):
        console.print(_t(f"cannot explain '{name}'", style="bold red"))
        _print_causes(console, result["causes"])
        return
    head = _t(f"{name}.grad = ", style="bold")
    head.append(printable(_grad_word(result["grad"])), style="bold cyan")
    if result["root"] is not None and result.get("computed") is not None \
            and result["computed"] != result["grad"]:
        head.append(printable(f"   (gradient from {result['root']}: "))
        head.append(printable(_grad_word(result["computed"])), style="cyan")
        head.append(")")
    console.print(head)
    if result["path"]:
        steps = " -> ".join(p["node"] + (f" [{p['tensor']}]" if p["tensor"] else "")
                            for p in result["path"])
        _indented(console, _t(f"path from {result['root']}: {steps}", style="dim"), indent=0)
    _print_causes(console, result["causes"])


def _print_causes(console, causes):
    for c in causes:
        style = "green" if c["kind"] == "ok" else ("yellow" if c["kind"] in (
            "backward_not_called", "accumulated", "hook", "autograd_grad") else "red")
        line = _t(c["message"])
        if c["file"]:
            line.append(printable(f"  ({where(c['file'], c['line'])})"), style="dim")
        grid = Table.grid()
        grid.add_column(width=2, style=style)
        # folded, never cut with an ellipsis: a long path would lose the file's line number
        grid.add_column(overflow="fold")
        grid.add_row("-", line)
        console.print(grid)


def _grad_word(grad):
    if grad is None:
        return "None"
    if isinstance(grad, list):
        flat = list(_flatten(grad))
        if len(flat) > 6:
            return f"a {len(flat)}-element tensor"
        return str(grad)
    return str(grad)


def _flatten(v):
    if isinstance(v, list):
        for x in v:
            yield from _flatten(x)
    else:
        yield v
