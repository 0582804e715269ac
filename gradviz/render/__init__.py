"""Render an inspection report (plain data, docs/report-schema.md) as DOT, SVG/PNG/PDF or tables.

Nothing here imports the autograd core: every function reads the report's dicts and lists.

>>> from gradviz.render import build_dot
>>> build_dot({"tensors": [], "nodes": [], "roots": []}).startswith("digraph backward {")
True
"""

from .dot import (LARGE_GRAPH, build_dot, build_graph, count_nodes, escape_label, escape_tooltip,
                  forward_name)
from .drawing import GraphDrawing, output_targets
from .output import OutputError, check_output, write_output
from .renderer import FORMATS, RenderError, find_renderer, render
from .tables import print_report, report_renderables
from .terminal import printable

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
