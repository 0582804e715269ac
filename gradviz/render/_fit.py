"""Layouts decided at print time, from the console's width: the first table that fits, and
lines that wrap under themselves (a traceback keeps its shape at any width)."""

from rich.text import Text

__all__ = ["Fit", "Hanging", "hang", "needed_width"]


class Fit:
    """Render the first of `choices` ((renderable, columns needed), widest first) that fits
    the console, else `narrow`.

    >>> import io
    >>> from rich.console import Console
    >>> console = Console(file=io.StringIO(), width=10)
    >>> console.print(Fit([("a wide layout", 13)], "narrow"))
    >>> console.file.getvalue()
    'narrow\\n'
    """

    def __init__(self, choices, narrow):
        self.choices = choices
        self.narrow = narrow

    def __rich_console__(self, console, options):
        for renderable, needed in self.choices:
            if needed <= options.max_width:
                yield renderable
                return
        yield self.narrow


def needed_width(headers, rows, folding, fold_at=12):
    """Columns the table needs: the fixed columns whole, at most fold_at for folding ones."""
    total = 2 * (len(headers) - 1)  # a space of padding and a space of border between columns
    for i, header in enumerate(headers):
        longest = max([len(header)] + [len(row[i]) for row in rows])
        total += min(longest, fold_at) if header in folding else longest
    return total


def hang(console, text, width, lead=0, more=4):
    """text wrapped to width: the first line indented by lead, the ones it wraps onto by
    lead + more, so a wrapped line never starts at the left edge like a new one.

    >>> from rich.console import Console
    >>> [line.plain for line in hang(Console(), Text("File x, line 6, in function"), 20,
    ...                               lead=2)]
    ['  File x, line 6, in', '      function']
    """
    first = text.wrap(console, max(width - lead, 8), overflow="fold")[0]
    rest = text[len(first.plain):]
    rest = rest[len(rest.plain) - len(rest.plain.lstrip(" ")):]
    first.rstrip()
    out = [Text(" " * lead) + first]
    if rest.plain:
        for line in rest.wrap(console, max(width - lead - more, 8), overflow="fold"):
            line.rstrip()
            out.append(Text(" " * (lead + more)) + line)
    return out


class Hanging:
    """Lines of (indent, text), each wrapped with hang() at the width it is printed in."""

    def __init__(self, lines, more=4):
        self.lines = lines
        self.more = more

    def __rich_console__(self, console, options):
        for lead, text in self.lines:
            text = text if isinstance(text, Text) else Text(text)
            yield from hang(console, text, options.max_width, lead, self.more)
