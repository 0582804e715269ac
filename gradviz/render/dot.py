"""Build Graphviz DOT source for the autograd graph in an inspection report.

Works from the report's plain data only (docs/report-schema.md), never from tensors. Two views:

- backward: grad_fn nodes and AccumulateGrad as boxes, edges from each node to its
  next_functions (as torch's backward runs), AccumulateGrad pointing to its leaf tensor.
- forward: the textbook computation graph, variables as ellipses, operators as boxes, edges in
  data-flow order.

DOT node ids come from a counter in traversal order, never id(), and every label and tooltip is
escaped, so the same report always gives the same bytes.
"""

import difflib
import re
from collections import deque

import graphviz

from ._format import format_shape, is_modified, saved_value, summarize, version

__all__ = [
    "LARGE_GRAPH",
    "build_dot",
    "count_nodes",
    "escape_label",
    "escape_tooltip",
    "forward_name",
]

# Above this many nodes a graph is hard to read; the CLI warns and suggests --max-depth/--collapse.
LARGE_GRAPH = 500

# ----- Styles -----
# One entry per kind of node; the legend shows the kinds that were drawn, in this order.
# Colours follow pytorchviz where it has one (lightblue leaves, darkolivegreen1 outputs, orange
# saved tensors, lightgrey functions). Each kind also differs by outline or shape, so the
# difference survives a greyscale print.
_STYLES = {
    "root": {"style": "filled", "fillcolor": "darkolivegreen1", "penwidth": "2"},
    "leaf": {"style": "filled", "fillcolor": "lightblue"},
    "parameter": {"style": "filled", "fillcolor": "lightblue", "peripheries": "2"},
    "no_grad": {"style": "dashed", "color": "gray40", "fontcolor": "gray40"},
    "variable": {"style": "filled", "fillcolor": "white"},
    "function": {"style": "filled", "fillcolor": "lightgrey"},
    "collapsed": {"style": "filled", "fillcolor": "lightgrey"},
    "saved": {"style": "filled", "fillcolor": "orange"},
    "anomaly": {"style": "filled", "fillcolor": "mistyrose", "color": "red", "fontcolor": "red",
                "penwidth": "3"},
    "const": {},
    "elided": {},
}

_LEGEND = {
    "root": "root (nothing consumes it)",
    "leaf": "leaf (requires grad)",
    "parameter": "parameter (nn.Parameter)",
    "no_grad": "does not require grad",
    "variable": "intermediate tensor",
    "function": "grad_fn node",
    "collapsed": "folded chain of one op",
    "saved": "saved tensor (version saved at)",
    "anomaly": "anomaly (NaN/inf or error)",
    "const": "constant (Python scalar)",
    "elided": "deeper nodes hidden (max_depth)",
}

# Edge from a saved tensor that was modified in place after it was saved.
_MODIFIED_EDGE = {"color": "red", "fontcolor": "red", "penwidth": "2"}
_SAVED_EDGE = {"style": "dashed", "dir": "none"}


# ----- Escaping -----

def _clean(text):
    # Control characters (and the non-characters XML forbids) would make the SVG invalid XML.
    out = []
    for ch in str(text):
        if ch == "\t":
            ch = " "
        bad = ch < " " or ch in "\ufffe\uffff" or "\ud800" <= ch <= "\udfff"
        out.append("\ufffd" if bad else ch)
    return "".join(out)


def escape_label(lines):
    """Return DOT label text showing each line literally, one line per list item.

    Backslashes are doubled so Graphviz's escString sequences (\\N, \\G, \\l...) stay text;
    '&' becomes '&amp;' because Graphviz decodes entities in labels; the result is marked
    non-HTML so '<...>' is never read as an HTML label. Quotes are escaped by the graphviz
    package when it quotes the attribute.

    >>> print(escape_label(["a<b> & c", "x\\\\N"]))
    a<b> &amp; c\\nx\\\\N
    """
    text = "\\n".join(_clean(line).replace("\\", "\\\\").replace("&", "&amp;") for line in lines)
    return graphviz.nohtml(text)


def escape_tooltip(lines):
    """Return DOT tooltip text showing each line literally.

    Like escape_label, except that a backslash is shown as U+29F5 (reverse solidus operator):
    Graphviz's dot keeps "\\\\" doubled in tooltips, while graphviz-pure expands "\\\\N" to the
    node's name, so no backslash escape reads the same in both.

    >>> print(escape_tooltip(["shape: (2,)", "name: a\\\\b"]))
    shape: (2,)\\nname: a\u29f5b
    """
    text = "\\n".join(_clean(line).replace("\\", "\u29f5").replace("&", "&amp;") for line in lines)
    return graphviz.nohtml(text)


def forward_name(name):
    """Return the forward op's name for a grad_fn name.

    >>> [forward_name(n) for n in ("MulBackward0", "LogSoftmaxBackward0", "CopySlices")]
    ['mul', 'log_softmax', 'copy_slices']
    """
    base = re.sub(r"Backward\d*$", "", name or "?") or name
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", base).lower()


# ----- Traversal -----

def _walk(nodes, starts, max_depth):
    """Breadth-first from the start node ids: returns their order. Iterative, never recursive.

    Nodes at max_depth are kept but not expanded.
    """
    depth, order, queue = {}, [], deque()
    for nid in starts:
        if nid in nodes and nid not in depth:
            depth[nid] = 0
            queue.append(nid)
    while queue:
        nid = queue.popleft()
        order.append(nid)
        if max_depth is not None and depth[nid] >= max_depth:
            continue
        for nxt, _ in nodes[nid].get("next_functions") or []:
            if nxt in nodes and nxt not in depth:
                depth[nxt] = depth[nid] + 1
                queue.append(nxt)
    return order


def _fold_chains(order, nodes, kept):
    """Group runs of the same op, each node feeding only the one above it: {node id: top id}.

    The walk is breadth-first, so the top of a chain comes before its members.
    """
    consumers = {}
    for nid in order:
        for nxt, _ in nodes[nid].get("next_functions") or []:
            if nxt in kept:
                consumers[nxt] = consumers.get(nxt, 0) + 1
    group = {}
    for top in order:
        if top in group:
            continue
        group[top] = top
        cur = top
        while True:
            same = [n for n, _ in nodes[cur].get("next_functions") or []
                    if n in kept and nodes[n]["name"] == nodes[top]["name"]]
            if len(same) != 1 or consumers.get(same[0]) != 1 or same[0] in group:
                break
            cur = same[0]
            group[cur] = top
    return group


def _postorder(starts, children):
    """Iterative depth-first postorder: producers before consumers, first argument first."""
    done, order = set(), []
    for start in starts:
        if start in done:
            continue
        done.add(start)
        stack = [(start, iter(children(start)))]
        while stack:
            node, it = stack[-1]
            for child in it:
                if child not in done:
                    done.add(child)
                    stack.append((child, iter(children(child))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


# ----- Builder -----

class _Builder:
    def __init__(self, report, view, roots, show_saved, max_depth, collapse, show_grads):
        if view not in ("backward", "forward"):
            raise ValueError(f"unknown view {view!r}: expected 'backward' or 'forward'")
        self.tensors = {t["name"]: t for t in report.get("tensors") or []}
        self.nodes = {n["id"]: n for n in report.get("nodes") or []}
        self.made_by = {}  # tensor name -> id of the first node that says it made it
        for node in self.nodes.values():
            if node["name"] != "AccumulateGrad" and node.get("tensor") is not None:
                self.made_by.setdefault(node["tensor"], node["id"])
        self.view = view
        self.roots = list(report.get("roots") or []) if roots is None else list(roots)
        self.show_saved = show_saved
        self.max_depth = max_depth
        self.collapse = collapse
        self.show_grads = show_grads
        attrs = {"ordering": "out"} if view == "backward" else {"rankdir": "LR"}
        self.graph = graphviz.Digraph(view, graph_attr=attrs, node_attr={"fontsize": "10"},
                                      edge_attr={"fontsize": "10"})
        self.count = 0
        self.kinds = {}  # kind -> shape, in order first drawn
        self.modified = False

    # -- drawing primitives --

    def node(self, kind, shape, label, tooltip):
        dot_id = f"n{self.count}"
        self.count += 1
        self.kinds.setdefault(kind, shape)
        self.graph.node(dot_id, escape_label(label), shape=shape, tooltip=escape_tooltip(tooltip),
                        **_STYLES[kind])
        return dot_id

    def edge(self, tail, head, **attrs):
        self.graph.edge(tail, head, **attrs)

    # -- text --

    def tensor_line(self, name):
        t = self.tensors.get(name)
        if t is None:
            return str(name)
        return f"{name} {format_shape(t.get('shape'))} {t.get('dtype')}"

    def tensor_tooltip(self, name):
        t = self.tensors.get(name)
        if t is None:
            return [f"{name} (not a named tensor)"]
        return [
            str(name),
            f"shape: {format_shape(t.get('shape'))}",
            f"dtype: {t.get('dtype')}",
            f"requires_grad: {t.get('requires_grad')}",
            f"is_leaf: {t.get('is_leaf')}",
            f"grad_fn: {t.get('grad_fn')}",
            f"version: {t.get('version')}",
            f"value: {summarize(t.get('data'))}",
            f"grad: {summarize(t.get('grad'))}",
        ]

    def tensor_kind(self, name):
        t = self.tensors.get(name) or {}
        # A tensor edited in place has a new grad_fn: it is a root only where the node that
        # made it is still its grad_fn.
        if t.get("is_root") and t.get("node") == self.made_by.get(name):
            return "root"
        if not t.get("requires_grad", True):
            return "no_grad"
        if t.get("is_parameter"):
            return "parameter"
        if t.get("is_leaf"):
            return "leaf"
        return "variable"

    def grad_line(self, value):
        if self.show_grads and value is not None:
            return [f"grad: {summarize(value)}"]
        return []

    # -- graph pieces --

    def var(self, name, grad=None):
        """Draw a tensor as an ellipse; grad defaults to the tensor's own .grad."""
        t = self.tensors.get(name) or {}
        grad = t.get("grad") if grad is None else grad
        label = [self.tensor_line(name)] + self.grad_line(grad)
        tooltip = self.tensor_tooltip(name) + _where(t)
        return self.node(self.tensor_kind(name), "ellipse", label, tooltip)

    def function(self, members, label_name):
        """Draw a grad_fn node, or a folded chain of them (members, top first)."""
        top = self.nodes[members[0]]
        # AccumulateGrad makes no tensor: its leaf is drawn beside it.
        made = None if top["name"] == "AccumulateGrad" else top.get("tensor")
        label = [label_name if len(members) == 1 else f"{label_name} x{len(members)}"]
        if self.view == "backward":  # the forward view draws the tensor made as its own node
            if made is not None:
                label.append(self.tensor_line(made))
            label += self.grad_line(top.get("grad"))
        if len(members) > 1:
            bottom = self.nodes[members[-1]].get("tensor")
            tooltip = [f"{len(members)} consecutive {top['name']} nodes: {bottom} ... {made}"]
        else:
            tooltip = [f"{top['name']} ({top['id']})"]
        if top.get("variable") is not None:
            tooltip.append(f"accumulates into {top['variable']}")
        if made is not None:
            tooltip += self.tensor_tooltip(made)
        if top.get("grad") is not None:
            tooltip.append(f"grad at node: {summarize(top['grad'])}")
        anomalies = [self.nodes[m]["anomaly"] for m in members if self.nodes[m].get("anomaly")]
        for message in anomalies:
            label.append("anomaly: " + _first_line(message, 60))
            tooltip.append(f"anomaly: {message}")
        if self.show_saved and len(members) == 1:
            label += [saved_value(s) for s in top.get("saved") or [] if s.get("shape") is None]
        tooltip += _where(top)
        kind = "collapsed" if len(members) > 1 else "function"
        if anomalies:
            kind = "anomaly"
        elif made is not None and self.view == "backward" and self.tensor_kind(made) == "root":
            kind = "root"
        shape = "box3d" if len(members) > 1 else "box"
        return self.node(kind, shape, label, tooltip)

    def saved(self, node, dot_id):
        """Draw a node's saved tensors (show_saved), linked to the node that saved them."""
        for s in node.get("saved") or []:
            if s.get("shape") is None:
                continue  # a saved scalar or dim, or a freed buffer: in the node's own label
            before, now = version(s.get("saved_version")), version(s.get("version"))
            desc = f"{s.get('tensor')} {format_shape(s['shape'])} {s.get('dtype')}"
            label = [s["name"], desc, f"saved at v{before}"]
            tooltip = [f"{s['name']} of {node['name']} ({node['id']})", desc,
                       f"saved at version {before}, now {now}"]
            saved_id = self.node("saved", "box", label, tooltip)
            if is_modified(s):
                self.modified = True
                text = [f"saved v{before}, now v{now}"]
                self.edge(saved_id, dot_id, label=escape_label(text), **_SAVED_EDGE,
                          **_MODIFIED_EDGE)
            else:
                self.edge(saved_id, dot_id, **_SAVED_EDGE)

    def elided(self, dot_id, head=True):
        tooltip = [f"deeper nodes hidden by max_depth={self.max_depth}"]
        marker = self.node("elided", "plaintext", ["..."], tooltip)
        if head:
            self.edge(dot_id, marker)
        else:
            self.edge(marker, dot_id)

    def legend(self):
        with self.graph.subgraph(name="cluster_legend") as sub:
            sub.attr(label="Legend", fontsize="10", color="gray60")
            kinds = [k for k in _STYLES if k in self.kinds]
            for i, kind in enumerate(kinds):
                name = _LEGEND[kind]
                if kind == "function" and self.view == "forward":
                    name = "operator"
                sub.node(f"legend{i}", escape_label([name]), shape=self.kinds[kind],
                         tooltip=escape_tooltip([name]), **_STYLES[kind])
            if self.modified:
                text = ["red edge: saved tensor modified in place", "(version saved, now)"]
                sub.node(f"legend{len(kinds)}", escape_label(text), shape="plaintext",
                         fontcolor="red", tooltip=escape_tooltip(text))

    # -- views --

    def start_nodes(self):
        starts, leaf_roots = [], []
        for name in self.roots:
            t = self.tensors.get(name)
            if t is None:
                close = difflib.get_close_matches(str(name), list(self.tensors), n=3)
                hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
                raise ValueError(f"unknown tensor {name!r}{hint}")
            if t.get("node") in self.nodes:
                starts.append(t["node"])
            else:
                leaf_roots.append(name)
        return starts, leaf_roots

    def build(self, legend):
        starts, leaf_roots = self.start_nodes()
        order = _walk(self.nodes, starts, self.max_depth)
        kept = set(order)
        group = _fold_chains(order, self.nodes, kept) if self.collapse else {n: n for n in order}
        members = {}
        for nid in order:
            members.setdefault(group[nid], []).append(nid)
        if self.view == "backward":
            self.backward(group, members, leaf_roots)
        else:
            self.forward(starts, group, members, leaf_roots)
        if self.count == 0:
            self.graph.attr(label="(no autograd graph)")
        if legend and self.kinds:
            self.legend()
        return self.graph.source

    def backward(self, group, members, leaf_roots):
        for name in leaf_roots:
            self.var(name)
        ids = {}
        for top in members:
            node = self.nodes[top]
            ids[top] = self.function(members[top], node["name"])
            if node["name"] == "AccumulateGrad" and node.get("variable") is not None:
                self.edge(ids[top], self.var(node["variable"]))
            if self.show_saved and len(members[top]) == 1:
                self.saved(node, ids[top])
        for top in members:
            seen, cut = set(), False
            for nid in members[top]:
                for nxt, _ in self.nodes[nid].get("next_functions") or []:
                    if nxt is None or group.get(nxt) == top:
                        continue
                    if nxt not in group:
                        cut = cut or nxt in self.nodes
                        continue
                    head = ids[group[nxt]]
                    # A folded chain gets each outside edge once; single nodes keep duplicates.
                    if len(members[top]) == 1 or head not in seen:
                        self.edge(ids[top], head)
                        seen.add(head)
            if cut:
                self.elided(ids[top])

    def forward(self, starts, group, members, leaf_roots):
        var_ids = {}

        def var_id(key):
            if key not in var_ids:
                if isinstance(key, tuple):  # output of a node whose tensor has no name
                    var_ids[key] = self.node("variable", "ellipse", ["?"], [f"output of {key[1]}"])
                else:
                    producer = self.nodes.get(self.made_by.get(key)) or {}
                    var_ids[key] = self.var(key, grad=producer.get("grad"))
            return var_ids[key]

        for name in leaf_roots:
            var_id(name)

        def children(top):
            return [group[n] for m in members[top] for n, _ in self.next_functions(m)
                    if n in group and self.nodes[group[n]]["name"] != "AccumulateGrad"]

        tops = [group[s] for s in starts]
        for top in _postorder(tops, children):
            node = self.nodes[top]
            if node["name"] == "AccumulateGrad":
                var_id(node.get("variable"))
                continue
            inner = {self.output_key(m) for m in members[top]}
            inputs, cut = [], []
            for m in reversed(members[top]):  # a folded chain's data enters at its bottom
                for key, producer in self.inputs(m):
                    if key in inner or (len(members[top]) > 1 and key in inputs):
                        continue
                    inputs.append(key)
                    # Only max_depth hides a producer (an in-place edit can make a tensor's
                    # grad_fn one that the walk never meets).
                    hidden = producer in self.nodes and producer not in group
                    if self.max_depth is not None and hidden and \
                            self.nodes[producer]["name"] != "AccumulateGrad":
                        cut.append(key)
            input_ids = []
            for key in inputs:
                if key is None:
                    input_ids.append(self.node("const", "plaintext", ["const"],
                                               ["a Python scalar or an unnamed constant"]))
                else:
                    input_ids.append(var_id(key))
            for key in dict.fromkeys(cut):
                self.elided(var_id(key), head=False)
            op_id = self.function(members[top], forward_name(node["name"]))
            if self.show_saved and len(members[top]) == 1:
                self.saved(node, op_id)
            for input_id in input_ids:
                self.edge(input_id, op_id)
            self.edge(op_id, var_id(self.output_key(top)))

    def next_functions(self, nid):
        return [(n, i) for n, i in self.nodes[nid].get("next_functions") or [] if n is not None]

    def output_key(self, nid):
        node = self.nodes[nid]
        name = node.get("variable") if node["name"] == "AccumulateGrad" else node.get("tensor")
        return ("node", nid) if name is None else name

    def inputs(self, nid):
        """The forward inputs of a node as (variable key or None, producer node id or None).

        Names come from "inputs"; an unknown name falls back to the tensor made by the
        next function in the same position, when the two lists line up.
        """
        node = self.nodes[nid]
        names = node.get("inputs") or []
        nexts = node.get("next_functions") or []
        aligned = not names or len(names) == len(nexts)
        result = []
        for i in range(max(len(names), len(nexts))):
            name = names[i] if i < len(names) else None
            producer = nexts[i][0] if aligned and i < len(nexts) else None
            if name is None and producer in self.nodes:
                name = self.output_key(producer)
            if name is not None and producer is None:
                producer = (self.tensors.get(name) or {}).get("node")
            if name is None and i >= len(names) and producer is None:
                continue  # a next function with no input behind it: nothing to draw
            result.append((name, producer))
        return result


def _where(item):
    return [f"made at {item['file']}:{item.get('line')}"] if item.get("file") else []


def _first_line(text, width):
    line = str(text).splitlines()[0] if str(text) else ""
    return line if len(line) <= width else line[: width - 3] + "..."


# ----- Public API -----

def build_dot(report, *, view="backward", roots=None, show_saved=False, legend=True,
              max_depth=None, collapse=False, show_grads=True):
    """Return DOT source for the graph of a report's roots (report["roots"] unless given).

    >>> report = {"tensors": [{"name": "a", "shape": [], "dtype": "float32", "version": 0,
    ...                        "requires_grad": True, "is_leaf": True, "is_root": True}],
    ...           "nodes": [], "roots": ["a"]}
    >>> dot = build_dot(report, legend=False)
    >>> dot.splitlines()[0], 'n0 [label="a [] float32"' in dot
    ('digraph backward {', True)
    """
    builder = _Builder(report, view, roots, show_saved, max_depth, collapse, show_grads)
    return builder.build(legend)


def count_nodes(report, *, view="backward", roots=None, show_saved=False, max_depth=None,
                collapse=False):
    """Return how many nodes build_dot draws with these options (the legend not counted).

    >>> count_nodes({"tensors": [], "nodes": [], "roots": []})
    0
    """
    builder = _Builder(report, view, roots, show_saved, max_depth, collapse, False)
    builder.build(legend=False)
    return builder.count
