"""Render an inspection report (plain data, docs/report-schema.md) as DOT, SVG/PNG/PDF or tables.

Nothing here imports the autograd core: every function reads the report's dicts and lists.

>>> from gradviz.render import build_dot
>>> build_dot({"tensors": [], "nodes": [], "roots": []}).startswith("digraph backward {")
True
"""

from .dot import LARGE_GRAPH, build_dot, count_nodes, escape_label, escape_tooltip, forward_name
from .renderer import FORMATS, RenderError, find_renderer, render
from .tables import print_report, report_renderables

__all__ = [
    "FORMATS",
    "LARGE_GRAPH",
    "RenderError",
    "build_dot",
    "count_nodes",
    "escape_label",
    "escape_tooltip",
    "find_renderer",
    "forward_name",
    "print_report",
    "render",
    "report_renderables",
]
