"""Render an inspection report (plain data, docs/report-schema.md) as DOT, SVG/PNG/PDF or tables.

Nothing here imports the autograd core: every function reads the report's dicts and lists.

>>> from gradviz.render import build_dot
>>> build_dot({"tensors": [], "nodes": [], "roots": []}).startswith("digraph backward {")
True
"""

import importlib

__all__ = [
    "FORMATS",
    "GraphDrawing",
    "LARGE_GRAPH",
    "OutputError",
    "RenderError",
    "build_dot",
    "build_graph",
    "check_output",
    "count_nodes",
    "escape_label",
    "escape_tooltip",
    "find_renderer",
    "forward_name",
    "output_targets",
    "print_report",
    "printable",
    "render",
    "report_renderables",
    "write_output",
]

# Each name is imported from its module when first asked for: `graph --dot` needs neither the
# tables nor rich's table and panel modules they import, `run` not the DOT writer.
_MODULES = {"FORMATS": "renderer", "GraphDrawing": "drawing", "LARGE_GRAPH": "dot",
            "OutputError": "output", "RenderError": "renderer", "build_dot": "dot",
            "build_graph": "dot", "check_output": "output", "count_nodes": "dot",
            "escape_label": "dot", "escape_tooltip": "dot", "find_renderer": "renderer",
            "forward_name": "dot", "output_targets": "drawing", "print_report": "tables",
            "printable": "terminal", "render": "renderer", "report_renderables": "tables",
            "write_output": "output"}


def __getattr__(name):
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
