"""A renderable that picks, at print time, the first layout that fits the console's width."""

__all__ = ["Fit", "needed_width"]


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
