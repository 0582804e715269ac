"""The Tensors table of `gradviz run --by-module`: the file's tensors grouped by the nn.Module
call that made them (a parameter under the module that owns it).

Works from the report's plain data: the tensors' "module" key and the "modules" trees
(docs/report-schema.md). Groups follow the modules' registration order (`named_modules`), the
tensors made outside every module first; each group's heading row gives the module's qualified
name and class, the shapes its last call got and returned and its parameter count.

>>> import io
>>> from rich.console import Console
>>> report = {"tensors": [{"name": "x", "shape": [2], "dtype": "float32", "module": None},
...                       {"name": "fc.weight", "shape": [2, 2], "dtype": "float32",
...                        "module": "fc", "is_parameter": True}],
...           "modules": [{"name": "", "class": "Net", "parameters": 4, "inputs": [[2]],
...                        "outputs": [[2]], "calls": 1, "children": [
...               {"name": "fc", "class": "Linear", "parameters": 4, "inputs": [[2]],
...                "outputs": [[2]], "calls": 1, "children": []}]}]}
>>> console = Console(file=io.StringIO(), width=72, no_color=True)
>>> console.print(modules_table(report["tensors"], report))
>>> "fc: Linear  in [2]  out [2]  4 params" in console.file.getvalue()
True
"""

from rich import box
from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ._format import format_shape, summarize
from .module_graph import cluster_label
from .terminal import printable

__all__ = ["modules_table"]

_OUTSIDE = "(no module)"


def _flatten(trees):
    """{qualified name: module entry}, in registration order (the first root's first)."""
    out = {}
    for tree in trees or []:
        stack = [tree]
        while stack:
            entry = stack.pop()
            out.setdefault(entry["name"], entry)
            stack.extend(reversed(entry.get("children") or []))
    return out


def _shapes(value):
    if value is None:
        return "?"
    return ", ".join(format_shape(s) for s in value) or "-"


def modules_table(tensors, report, full=False):
    """The tensors (the report's, or the ones a View shows) grouped by module: a heading line
    per module, then its tensors' table."""
    modules = _flatten(report.get("modules"))
    groups = {}
    for t in tensors:
        groups.setdefault(t.get("module"), []).append(t)
    order = [None] if None in groups else []
    order += [name for name in modules if name in groups]
    order += [name for name in groups if name not in order]    # not in any tree: last
    parts = [Text("Tensors by module", style="italic")]
    for name in order:
        parts.append(Text(printable(_heading(name, modules.get(name)), keep=""), style="bold"))
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                      collapse_padding=True)
        for column in _COLUMNS:
            table.add_column(column, overflow="fold", no_wrap=column != "grad")
        for t in groups[name]:
            cells = [t["name"], format_shape(t.get("shape")), str(t.get("dtype")),
                     str(t.get("grad_fn")), summarize(t.get("grad"), full)]
            table.add_row(*(Text(printable(c, keep="")) for c in cells))
        parts.append(Padding(table, (0, 0, 0, 2)))
    return Group(*parts)


_COLUMNS = ("name", "shape", "dtype", "grad_fn", "grad")


def _heading(name, entry):
    """`encoder.blocks.0: Block  in [3, 4]  out [3, 4]  28 params`."""
    if name is None:
        return _OUTSIDE
    if entry is None:
        return name or "(root)"
    label = cluster_label({"module": name, "class": entry["class"]})
    return (f"{label}  in {_shapes(entry.get('inputs'))}  out {_shapes(entry.get('outputs'))}"
            f"  {entry.get('parameters', 0):,} params")
