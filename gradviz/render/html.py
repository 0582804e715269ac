"""Build `gradviz report`'s page: one self-contained, offline HTML file of a run.

The page is the run's report document (docs/report-schema.md, the same data as `run --json`,
embedded as JSON and equal to it), the SVG Graphviz lays out from the same DOT as `graph`
(inlined), and what links the two: which report node or tensor each drawn node shows. The
script and the style sheet are package data (gradviz/render/assets/) inlined in the page, so
it opens from disk and makes no network request.

Nothing from the user's file reaches the page as markup: JSON sits in
`<script type="application/json">` with `<`, `>` and `&` written as \\u escapes (so a name
holding `</script>` stays a string), the SVG's labels are escaped by dot.py and checked to hold
only the elements Graphviz draws, and the script shows every name and value with textContent.

>>> page = build_page({"file": "f.py", "backend": "gradviz", "tensors": [], "nodes": [],
...                    "roots": []}, {"backward": None}, command="gradviz report f.py")
>>> page.startswith("<!DOCTYPE html>") and "</script>\\"" not in page
True
"""

import json
import linecache
import re
from importlib import resources
from typing import NamedTuple

from rich.text import Text

from .drawing import GraphDrawing
from .renderer import RenderError, render_svg

__all__ = ["Drawings", "View", "build_page", "draw_views", "embedded_json", "explain_candidates",
           "script_json"]

# Above this many drawn nodes only the chosen view is laid out: the other would double the
# layout time (the page says so, and `gradviz graph --view` draws it).
OTHER_VIEW_LIMIT = 500

# What Graphviz's SVG is made of; anything else in the renderer's output is refused.
_SVG_ELEMENTS = {"svg", "g", "title", "polygon", "polyline", "path", "ellipse", "text", "a",
                 "tspan", "desc"}
_TAG = re.compile(r"<[^>]*>")
_TAG_NAME = re.compile(r"<\s*/?\s*([A-Za-z][\w:.-]*)")
_QUOTED = re.compile(r'"[^"]*"')
_PLACEHOLDER = re.compile(r"\{\{(TITLE|CSS|DRAWINGS|REPORT|PAGE|JS)\}\}")
_EVENT_ATTRIBUTE = re.compile(r"\son\w+\s*=|\s(?:xlink:)?href\s*=|\sstyle\s*=", re.I)
# Kept once per file: the example doctest and big pages read them from the package.
_ASSETS = {}

# Every source line a report points at: tensors, nodes, hooks, anomalies, the error.
_LINE_LISTS = ("tensors", "nodes", "user_hooks", "anomalies", "warnings", "backward_calls")


class View(NamedTuple):
    """One laid-out view: its inline SVG and {DOT node id: [kind, key]} (see BuiltGraph)."""

    svg: str
    refs: dict
    count: int


def script_json(text):
    """JSON text made safe inside <script>: `<`, `>`, `&` and the two line separators
    JavaScript once treated as newlines become \\u escapes; JSON.parse gives the same value.

    >>> script_json('{"name": "</script><b>&"}')
    '{"name": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def embedded_json(page, element_id):
    """The JSON text a page embeds under element_id (what a test compares with `run --json`).

    >>> embedded_json('<script type="application/json" id="x">{"a": 1}</script>', "x")
    '{"a": 1}'
    """
    start = page.index(f'<script type="application/json" id="{element_id}">')
    start = page.index(">", start) + 1
    return page[start:page.index("</script>", start)]


def _asset(name):
    if name not in _ASSETS:
        _ASSETS[name] = resources.files("gradviz.render").joinpath("assets", name).read_text(
            encoding="utf-8")
    return _ASSETS[name]


def inline_svg(svg, prefix):
    """Graphviz's SVG document as an element to inline in HTML: no XML prolog, DOCTYPE,
    comments, namespace declarations or fixed size (the page sizes and zooms it), and its ids
    prefixed so two views can share the page. RenderError (exit 4) when it holds an element
    Graphviz does not draw or an event handler or link: a label can never become markup.

    >>> inline_svg('<?xml version="1.0"?><!-- c --><svg width="8pt" height="9pt" '
    ...            'viewBox="0 0 8 9" xmlns="x"><g id="graph0"></g></svg>', "b-")
    '<svg viewBox="0 0 8 9"><g id="b-graph0"></g></svg>'
    """
    start = svg.find("<svg")
    if start < 0:
        raise RenderError("the renderer's output is not an SVG")
    body = re.sub(r"<!--.*?-->\n?", "", svg[start:], flags=re.S)
    head_end = body.index(">")
    head = re.sub(r'\s(?:width|height|xmlns(?::\w+)?)="[^"]*"', "", body[:head_end])
    # Every text's font and whitespace rule, once in the style sheet instead (7,000 texts of
    # a 5,000-node graph carry 330 KB of them).
    body = head + body[head_end:].replace(' font-family="Times,serif"', "").replace(
        ' xml:space="preserve"', "")
    # Attribute values are always double-quoted by Graphviz (a quote inside is &quot;):
    # with them blanked, what is left of each tag is its name and its attribute names.
    tags = _QUOTED.sub('""', " ".join(_TAG.findall(body)))
    bad = {tag for tag in _TAG_NAME.findall(tags) if tag.lower() not in _SVG_ELEMENTS}
    if bad or _EVENT_ATTRIBUTE.search(tags):
        what = ", ".join(f"<{tag}>" for tag in sorted(bad)) or "an event handler or a link"
        raise RenderError(f"the renderer's SVG holds {what}, which gradviz does not inline")
    return body.replace(' id="', f' id="{prefix}').strip()


class Drawings(NamedTuple):
    """What draw_views returns: {view name: View, or None when not drawn}, the notes to show
    in the terminal (rich Texts: the file's error, an empty or big graph, a view left out) and
    the sentences the page shows about its drawings."""

    views: dict
    notes: list
    page_notes: list


def draw_views(report, *, view="backward", roots=None, show_saved=False, max_depth=None,
               collapse=False, legend=True, renderer=None, modules=None):
    """Lay out the backward and forward views of report, each as `graph --view` draws it.
    The view not asked for is left out above OTHER_VIEW_LIMIT drawn nodes (a note says so).

    >>> draw_views({"file": "f.py", "tensors": [], "nodes": [], "roots": []}).views
    {'backward': None, 'forward': None}
    """
    views, notes, page_notes = {}, [], []
    for name in [view] + [v for v in ("backward", "forward") if v != view]:
        drawing = GraphDrawing(report, view=name, roots=roots, show_saved=show_saved,
                               max_depth=max_depth, collapse=collapse, legend=legend,
                               modules=modules)
        if name == view:
            notes += drawing.notes
        if drawing.count == 0:
            views[name] = None
            continue
        if name != view and drawing.count > OTHER_VIEW_LIMIT:
            views[name] = None
            page_notes.append(f"The {name} view is not drawn: {drawing.count} nodes (over "
                              f"{OTHER_VIEW_LIMIT}) would double the layout time; "
                              f"`gradviz graph --view {name}` draws it.")
            notes.append(Text(page_notes[-1]))
            continue
        svg = inline_svg(render_svg(drawing.source, renderer), f"{name[0]}-")
        refs = {dot_id: list(ref) for dot_id, ref in drawing.refs.items()}
        views[name] = View(svg, refs, drawing.count)
    return Drawings(dict(sorted(views.items())), notes, page_notes)


def explain_candidates(report, limit=8):
    """Names of the tensors whose .grad the page explains: named tensors that require grad
    and are leaves or retain their grad, whose .grad is None or has a zero or a NaN, when
    the run called backward at all (without a call the page says that itself), at most
    limit of them (each explanation runs the file again).

    >>> t = {"name": "x", "requires_grad": True, "is_leaf": True, "grad": [0.0, 0.0]}
    >>> explain_candidates({"tensors": [t], "backward_calls": [{"call": 0}]})
    ['x']
    """
    if not report.get("backward_calls"):
        return []
    names = []
    for t in report.get("tensors") or []:
        if not t.get("requires_grad") or not (t.get("is_leaf") or t.get("retains_grad")):
            continue
        if str(t.get("name", "")).startswith("%") or t.get("grad_fn") is None and \
                not t.get("is_leaf"):
            continue
        if _needs_explaining(t.get("grad")):
            names.append(t["name"])
            if len(names) == limit:
                break
    return names


def _needs_explaining(grad):
    if grad is None:
        return True
    if isinstance(grad, str):          # a summary of a big value: "nan" or a "<...>" text
        return grad == "nan" or "nan=" in grad
    # Any zero: a gradient that is zero in some elements (relu, max, indexing) is the
    # question explain answers by naming the node that zeroed it.
    return any(x == 0 or x == "nan" for x in _flatten(grad))


def _flatten(value):
    out, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        else:
            out.append(item)
    return out


def source_lines(report):
    """{file: {line: text}} for every file:line the report points at, read from disk (a
    file that cannot be read is left out; the page then shows file:line alone)."""
    wanted = set()

    def add(item):
        if isinstance(item, dict) and item.get("file") and isinstance(item.get("line"), int):
            wanted.add((item["file"], item["line"]))

    for key in _LINE_LISTS:
        for item in report.get(key) or []:
            add(item)
            for frame in item.get("traceback") or [] if isinstance(item, dict) else []:
                add(frame)
    error = report.get("error")
    if isinstance(error, dict):
        add(error)
        for frame in error.get("traceback") or []:
            add(frame)
    lines = {}
    for path, number in sorted(wanted):
        text = linecache.getline(path, number)
        if text:
            lines.setdefault(path, {})[str(number)] = text.rstrip("\n")
    return lines


def build_page(report, views, *, command, version="", notes=(), explain=None,
               gradcheck=None, view="backward", report_text=None):
    """Return the page's HTML for a report and its laid-out views ({name: View or None}).

    report_text is the report's JSON exactly as `run --json` prints it (report_json), when
    the caller has it; explain maps tensor names to `gradviz explain` results and gradcheck
    is `gradcheck --json`'s document, both optional.
    """
    if report_text is None:
        from ..inspect.report import report_json
        report_text = report_json(report)
    meta = {
        "command": command, "version": version, "backend": report.get("backend"),
        "file": report.get("file"), "view": view if views.get(view) else "backward",
        "notes": list(notes),
        "views": {name: None if v is None else {"refs": v.refs, "count": v.count}
                  for name, v in views.items()},
        "lines": source_lines(report),
        "explain": explain or {},
        "gradcheck": gradcheck,
    }
    page_text = json.dumps(meta, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    drawings = []
    for name in ("backward", "forward"):
        v = views.get(name)
        if v is not None:
            drawings.append(f'<div class="gv-view" id="view-{name}" data-view="{name}" '
                            f'hidden>\n{v.svg}\n</div>')
    parts = {"TITLE": _escape_text(f"gradviz report: {report.get('file')}"),
             "CSS": _asset("report.css"), "DRAWINGS": "\n".join(drawings),
             "REPORT": script_json(report_text), "PAGE": script_json(page_text),
             "JS": _asset("report.js")}
    # One pass: a label in the drawings that reads "{{PAGE}}" is never substituted.
    return _PLACEHOLDER.sub(lambda m: parts[m.group(1)], _asset("report.html"))


def _escape_text(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))
