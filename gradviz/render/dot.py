"""Build Graphviz DOT source for the autograd graph in an inspection report.

Works from the report's plain data only (docs/report-schema.md), never from tensors. Two views:

- backward: grad_fn nodes and AccumulateGrad as boxes, edges from each node to its
  next_functions (as torch's backward runs), AccumulateGrad pointing to its leaf tensor.
- forward: the textbook computation graph, variables as ellipses, operators as boxes, edges in
  data-flow order.

A tensor used at many depths of a big graph (a weight shared by every step of an unrolled RNN)
is drawn once per depth it is used at: each copy is labelled "(shared: k of N uses)" and has a
bold dashed outline, explained in the legend. Graphviz's dot routes an edge through one virtual
node per rank it crosses, and its layout time grows much faster than the number of those: drawn
once, the three weights of a 999-step RNN needed over 16 GB. See _Builder.share_plan for which
tensors are split. In the backward view an AccumulateGrad and its leaf are copied together; in
the forward view the variable's ellipse is.

DOT node ids come from a counter in traversal order, never id(); the copies of a shared node are
that node's id plus "_k". Every label and tooltip is escaped, so the same report always gives
the same bytes.
"""

import difflib
import re
from collections import Counter, deque
from typing import NamedTuple

import graphviz
from graphviz.quoting import ID as _DOT_ID
from graphviz.quoting import KEYWORDS as _DOT_KEYWORDS
from graphviz.quoting import quote as _graphviz_quote

from .._gc import gc_paused
from ._format import (HARMLESS, changed_mark, format_shape, is_modified, saved_value, summarize,
                      version)
from .module_graph import box_label, module_layout

__all__ = [
    "LARGE_GRAPH",
    "SHARED_STRETCH",
    "BuiltGraph",
    "build_columns",
    "build_dot",
    "build_graph",
    "count_nodes",
    "escape_label",
    "escape_tooltip",
    "forward_name",
    "shared_tensors",
]

# Above this many nodes a graph is hard to read; the CLI warns and suggests --max-depth/--collapse.
LARGE_GRAPH = 500

# How many ranks, in all, the edges to shared tensors may cross before the most stretched of
# those tensors are drawn once per use (see _Builder.share_plan). Measured with graphviz-pure on
# a 999-step RNN whose 3 weights are split (11,000 nodes, 4.8 s then, 2.0 s since leaves sit
# beside their AccumulateGrad): leaving 500 more such ranks unsplit added 0.04 s, 1,000 added
# 0.3 s, 2,500 added 2.5 s. Drawn once, 3 weights shared by 12 steps (800 ranks) lay out in
# 0.03 s, by 24 steps (3,300) in 0.8 s, by 32 (6,000) in 4.4 s.
# The number of uses alone is no guide: 5,000 nodes with each leaf used by just 2 steps took
# 17 s (8 steps: 177 s), against 2.0 s split; 100,000 uses at one depth cross no rank at all.
SHARED_STRETCH = 1000

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
    "shared": {"style": "dashed", "penwidth": "2"},
    "saved": {"style": "filled", "fillcolor": "orange"},
    "anomaly": {"style": "filled", "fillcolor": "mistyrose", "color": "red", "fontcolor": "red",
                "penwidth": "3"},
    "module": {"style": "filled,rounded", "fillcolor": "lightyellow"},
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
    "shared": "shared tensor, drawn once per depth of use",
    "saved": "saved tensor (version saved at)",
    "anomaly": "anomaly (NaN/inf or error)",
    "module": "module call, folded (class, shapes, parameters)",
    "const": "constant (Python scalar)",
    "elided": "deeper nodes hidden (max_depth)",
}

# A node where the file registered a hook (or retain_grad): an extra outline and a label line.
_HOOK_BADGE = "[hook]"
_HOOKED = {"color": "purple", "peripheries": "2"}

# Edge from a saved tensor that was modified in place after it was saved.
_MODIFIED_EDGE = {"color": "red", "fontcolor": "red", "penwidth": "2"}
_SAVED_EDGE = {"style": "dashed", "dir": "none"}
# Edges to a copy of a shared AccumulateGrad and from it to its leaf (backward view): see
# _Builder.backward.
_USE_EDGE = {"weight": "0"}
_COPY_LEAF_EDGE = {"minlen": "0"}
# A module call's cluster (graphs by module).
_CLUSTER = {"fontsize": "10", "style": "rounded", "color": "gray50", "labeljust": "l"}
# Stands for the tooltip while a kind of node's other attributes are written (_Builder.style).
_TOOLTIP = "\x00tooltip"
# A tensor's tooltip lines after its name, filled with escaped pieces (_Builder.tensor_text).
_TENSOR_TOOLTIP = "\\n".join(["shape: {}", "dtype: {}", "requires_grad: {}", "is_leaf: {}",
                              "grad_fn: {}", "version: {}", "value: {}", "grad: {}"])


# ----- Escaping -----

# Control characters (and the non-characters XML forbids) would make the SVG invalid XML: a tab
# becomes a space, the others U+FFFD. One regex pass, not a loop per character (a 100,000-node
# graph has millions of label characters).
_UNSAFE = re.compile("[\x00-\x1f\ufffe\uffff\ud800-\udfff]")
# The same, newline aside: lines joined by newlines are checked in one search.
_UNSAFE_IN_LINE = re.compile("[\x00-\x09\x0b-\x1f\ufffe\uffff\ud800-\udfff]")


def _clean(text):
    return _UNSAFE.sub("\ufffd", str(text).replace("\t", " "))


def _escaped(lines, backslash):
    """The lines joined by DOT's "\\n", each cleaned, a backslash written as `backslash` and
    '&' as '&amp;'. The usual lines (no control character, no newline of their own) are
    joined first and escaped in one pass over the whole text."""
    lines = [line if type(line) is str else str(line) for line in lines]
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1 or _UNSAFE_IN_LINE.search(text):
        return "\\n".join(_clean(line).replace("\\", backslash).replace("&", "&amp;")
                           for line in lines)
    return text.replace("\\", backslash).replace("&", "&amp;").replace("\n", "\\n")


class _Escapes(dict):
    """{text: the text as it reads inside a quoted DOT label or tooltip}, each distinct text
    escaped once: cleaned (_clean), a backslash written as `backslash`, '&' as '&amp;' and '"'
    as '\\"'."""

    def __init__(self, backslash):
        super().__init__()
        self.backslash = backslash

    def __missing__(self, text):
        if type(text) is not str:  # kept under its str only: 1 and True would share an entry
            return self[str(text)]
        if _plain(text):
            escaped = text
        else:
            escaped = _clean(text).replace("\\", self.backslash).replace("&", "&amp;")
            escaped = escaped.replace('"', '\\"')
        self[text] = escaped
        return escaped

    def once(self, text):
        """The escaped text, kept only when it needs escaping: for the texts each written
        once (a tensor's name, a node's id), most of which read the same escaped."""
        return text if type(text) is str and _plain(text) else self[text]


def _plain(text):
    """Whether text reads the same escaped (_Escapes): no control character, non-character or
    surrogate (isprintable), no backslash, '&' or '"'."""
    return text.isprintable() and "\\" not in text and "&" not in text and '"' not in text


def _joined(lines, escapes):
    """Lines as one escaped text: each escaped by `escapes` (an _Escapes), joined by "\\n"."""
    return "\\n".join([escapes[line] for line in lines])


def _quoted(text):
    """Escaped text (its lines each from _Escapes, joined by "\\n") as graphviz.quote writes
    it when marked non-HTML: bare when a DOT ID that is no keyword, else in quotes.

    graphviz escapes a quote with the backslashes before it (`(\\\\)*\\?"`); in escaped text
    none stands right before a quote but pairs (a label doubles each backslash, a tooltip has
    none, and "\\n" ends in n), so that is the '"' -> '\\"' _Escapes did.

    >>> _quoted("AccumulateGrad"), _quoted("node"), _quoted("a\\\\nb")
    ('AccumulateGrad', '"node"', '"a\\\\nb"')
    """
    if "\\" not in text and _DOT_ID.match(text) and text.lower() not in _DOT_KEYWORDS:
        return text
    return f'"{text}"'


def escape_label(lines):
    """Return DOT label text showing each line literally, one line per list item.

    Backslashes are doubled so Graphviz's escString sequences (\\N, \\G, \\l...) stay text;
    '&' becomes '&amp;' because Graphviz decodes entities in labels; the result is marked
    non-HTML so '<...>' is never read as an HTML label. Quotes are escaped by the graphviz
    package when it quotes the attribute.

    >>> print(escape_label(["a<b> & c", "x\\\\N"]))
    a<b> &amp; c\\nx\\\\N
    """
    return graphviz.nohtml(_escaped(lines, "\\\\"))


def escape_tooltip(lines):
    """Return DOT tooltip text showing each line literally.

    Like escape_label, except that a backslash is shown as U+29F5 (reverse solidus operator):
    Graphviz's dot keeps "\\\\" doubled in tooltips, while graphviz-pure expands "\\\\N" to the
    node's name, so no backslash escape reads the same in both.

    >>> print(escape_tooltip(["shape: (2,)", "name: a\\\\b"]))
    shape: (2,)\\nname: a\u29f5b
    """
    return graphviz.nohtml(_escaped(lines, "\u29f5"))


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


def _depths(tops, children):
    """Longest distance of each node from the roots along children: Graphviz's dot starts
    from this ranking, and keeps it where nothing pulls a node closer."""
    indegree = dict.fromkeys(tops, 0)
    for top in tops:
        for child in children(top):
            indegree[child] += 1
    depth = dict.fromkeys(tops, 0)
    queue = deque(top for top in tops if indegree[top] == 0)
    while queue:
        top = queue.popleft()
        for child in children(top):
            depth[child] = max(depth[child], depth[top] + 1)
            indegree[child] -= 1
            if indegree[child] == 0:
                queue.append(child)
    return depth


class _Share:
    """How a shared tensor is drawn: one copy per depth it is used at, numbered in the order
    their first users are drawn; uses are numbered copy by copy."""

    def __init__(self, users, depth):
        groups = {}  # depth -> users there, in drawing order
        for user in users:
            groups.setdefault(depth[user], []).append(user)
        self.groups = list(groups.values())
        self.uses = len(users)
        self.copy = {user: k for k, users in enumerate(self.groups, 1) for user in users}
        self.first = [1]  # first use number of each copy
        for group in self.groups[:-1]:
            self.first.append(self.first[-1] + len(group))
        # The copy its producer points to (forward view): the one used deepest, nearest to it.
        deepest = max(groups)
        self.anchor = next(k for k, g in enumerate(self.groups, 1) if depth[g[0]] == deepest)


# ----- Builder -----

class _Builder:
    def __init__(self, report, view, roots, show_saved, max_depth, collapse, show_grads,
                 split_shared=SHARED_STRETCH, modules=None):
        if view not in ("backward", "forward"):
            raise ValueError(f"unknown view {view!r}: expected 'backward' or 'forward'")
        self.tensors = {t["name"]: t for t in report.get("tensors") or []}
        self.nodes = {n["id"]: n for n in report.get("nodes") or []}
        # Graphs by module: None, or the layout (module_graph.ModuleLayout) of the nodes in
        # module clusters, folded calls replacing their nodes.
        self.layout = None
        if modules is not None:
            self.layout = module_layout(report, modules.get("depth"), modules.get("expand", ()))
            self.nodes = self.layout.nodes
        self.clusters = {}  # call index -> its cluster's graph (backward view)
        self.where = None   # the clusters the nodes drawn now go into
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
        self.split_shared = split_shared
        attrs = {"ordering": "out"} if view == "backward" else {"rankdir": "LR"}
        self.graph = graphviz.Digraph(view, graph_attr=attrs, node_attr={"fontsize": "10"},
                                      edge_attr={"fontsize": "10"})
        self.count = 0  # nodes drawn
        self.next_id = 0
        self.kinds = {}  # kind -> shape, in order first drawn
        self.modified = False
        self.hooked = False  # a node with the file's hooks was drawn (the legend says so)
        self.shared = {}  # tensor name (or node id) drawn more than once -> copies drawn
        self.quoted = {}  # plain string -> as graphviz quotes it
        self.label_text = _Escapes("\\\\")  # see escape_label
        self.tooltip_text = _Escapes("\u29f5")  # see escape_tooltip
        self.tensor_texts = {}  # tensor name -> its label line, tooltip lines (escaped), kind
        self.tensor_tails = {}  # a tensor's pieces but its name -> their escaped label, tooltip
        self.styles = {}  # (kind, shape, extra, shared) -> node attributes around the tooltip
        self.refs = {}  # dot id -> ("node", report node id) or ("tensor", name): what it shows

    # -- drawing primitives --

    def new_id(self):
        dot_id = f"n{self.next_id}"
        self.next_id += 1
        return dot_id

    def node(self, kind, shape, label, tooltip, dot_id=None, share=None, extra=None):
        """Draw a node from its label and tooltip lines (at least one each); share=(label
        line, tooltip lines) draws a copy of a shared one; extra attributes (a hook badge's
        outline) go over the kind's style."""
        return self.write(kind, shape, _joined(label, self.label_text),
                          _joined(tooltip, self.tooltip_text), dot_id, share, extra)

    def write(self, kind, shape, label, tooltip, dot_id=None, share=None, extra=None):
        """node(), from the label and tooltip as escaped text (_joined)."""
        if dot_id is None:
            dot_id = self.new_id()
        self.count += 1
        if kind not in self.kinds:
            self.kinds[kind] = shape
        if share is not None:
            self.kinds.setdefault("shared", shape)
            label = f"{label}\\n{self.label_text[share[0]]}"
            tooltip = f"{tooltip}\\n{_joined(share[1], self.tooltip_text)}"
        before, after = self.style(kind, shape, extra, share is not None)
        # The statement graphviz.Digraph.node would write, without its per-call argument
        # checks and quoting (most of the time of a 100,000-node graph). Node ids (n<k>, and
        # n<k>_<copy> for copies) are DOT IDs that graphviz writes bare.
        (self._target() if self.where else self.graph).body.append(
            f"\t{dot_id} [label={_quoted(label)} {before}{_quoted(tooltip)}{after}]\n")
        return dot_id

    def style(self, kind, shape, extra, shared):
        """A node's attributes but its label and tooltip, written once per kind of node: the
        text before the tooltip's value (ending in `tooltip=`) and after it."""
        key = (kind, shape, None if extra is None else tuple(extra.items()), shared)
        written = self.styles.get(key)
        if written is None:
            style = dict(_STYLES[kind], **(extra or {}))
            if shared:
                style = dict(style, penwidth="2")
                parts = style.get("style", "").split(",") if style.get("style") else []
                style["style"] = ",".join(parts + ([] if "dashed" in parts else ["dashed"]))
            style["shape"] = shape
            text = self.attr_list(None, dict(style, tooltip=_TOOLTIP))[2:-1]
            before, after = text.split(self.quote(_TOOLTIP))
            written = self.styles[key] = before, after
        return written

    def edge(self, tail, head, **attrs):
        """The statement graphviz.Digraph.edge would write (node ids are bare, with no
        ports)."""
        label = attrs.pop("label", None)
        listed = self.attr_list(label, attrs) if attrs or label is not None else ""
        self.graph.body.append(f"\t{tail} -> {head}{listed}\n")

    def quote(self, text):
        """graphviz's quoting of an id or attribute value; plain strings (ids, styles) repeat
        and are quoted once. Labels and tooltips (graphviz.nohtml) are not cached: a nohtml
        and a plain string of the same text may quote differently (`<b>`)."""
        if type(text) is not str:
            # graphviz.nohtml text: quoted unless a plain DOT id (which has no space), with \"
            # escapes only where it has a quote (graphviz's own regexes, 3 a call, are the
            # cost of a big graph)
            if '"' in text or text.endswith("\\") or " " not in text and _DOT_ID.match(text):
                return _graphviz_quote(text)
            return f'"{text}"'
        quoted = self.quoted.get(text)
        if quoted is None:
            quoted = self.quoted[text] = _graphviz_quote(text)
        return quoted

    def attr_list(self, label, attrs):
        """graphviz's attribute list: ` [label=... key=value ...]`, the keys sorted as graphviz
        sorts a dict's, None values left out; "" when empty."""
        parts = [] if label is None else [f"label={self.quote(label)}"]
        parts += [f"{self.quote(k)}={self.quote(v)}" for k, v in sorted(attrs.items())
                  if v is not None]
        return f" [{' '.join(parts)}]" if parts else ""

    # -- text --

    def tensor_kind(self, name, t):
        """How tensor `name` (its entry t, or {}) is drawn."""
        # A tensor edited in place has a new grad_fn: it is a root only where the node that
        # made it is still its grad_fn.
        return _tensor_kind(t.get("is_root") and t.get("node") == self.made_by.get(name),
                            t.get("requires_grad", True), t.get("is_parameter"),
                            t.get("is_leaf"))

    # -- graph pieces --

    def tensor_text(self, name):
        """A tensor's label line and tooltip lines, as escaped text, and its kind: worked out
        once per name. What follows the name is escaped once for all the tensors that show
        the same (every step of a chain)."""
        text = self.tensor_texts.get(name)
        if text is not None:
            return text
        t = self.tensors.get(name)
        label, tip = self.label_text, self.tooltip_text
        if t is None:
            text = label[name], tip[f"{name} (not a named tensor)"], self.tensor_kind(name, {})
        else:
            pieces = (format_shape(t.get("shape")), f"{t.get('dtype')}",
                      f"{t.get('requires_grad')}", f"{t.get('is_leaf')}", f"{t.get('grad_fn')}",
                      f"{t.get('version')}", summarize(t.get("data")),
                      summarize(t.get("grad")) + changed_mark(t.get("grad_changed_by")))
            text = self.tensor_lines(name, pieces) + (self.tensor_kind(name, t),)
        self.tensor_texts[name] = text
        return text

    def tensor_lines(self, name, pieces):
        """A tensor's label line and tooltip lines (escaped) from its name and the pieces
        that follow it (see tensor_tail)."""
        tail = self.tensor_tail(pieces)
        return f"{self.label_text.once(name)} {tail[0]}", \
            f"{self.tooltip_text.once(name)}\\n{tail[1]}"

    def tensor_tail(self, pieces):
        """What follows a tensor's name in its label and tooltip (escaped), from the pieces
        (shape, dtype, requires_grad, is_leaf, grad_fn, version, value and grad, as text):
        escaped once for all the tensors that show the same."""
        tail = self.tensor_tails.get(pieces)
        if tail is None:
            label, tip = self.label_text, self.tooltip_text
            tail = self.tensor_tails[pieces] = (
                f"{label[pieces[0]]} {label[pieces[1]]}",
                _TENSOR_TOOLTIP.format(*map(tip.__getitem__, pieces)))
        return tail

    def var(self, name, grad=None, dot_id=None, share=None):
        """Draw a tensor as an ellipse; grad defaults to the tensor's own .grad."""
        t = self.tensors.get(name) or {}
        grad = t.get("grad") if grad is None else grad
        label, tooltip, kind = self.tensor_text(name)
        if grad is not None and self.show_grads:
            label = f"{label}\\n{self.label_text[_grad_line(grad)]}"
        if t.get("file"):
            tooltip = f"{tooltip}\\n{self.tooltip_text[_where(t)]}"
        dot_id = self.write(kind, "ellipse", label, tooltip, dot_id, share)
        self.refs[dot_id] = ("tensor", name)
        return dot_id

    def describe(self, top, members):
        """How a tooltip names a drawn grad_fn node (or folded chain)."""
        node = self.nodes[top]
        name = node["name"] if self.view == "backward" else forward_name(node["name"])
        count = len(members[top])
        return f"{name}{f' x{count}' if count > 1 else ''} ({top})"

    def share_text(self, share, k, members):
        """The label line and tooltip lines of copy k of a shared tensor."""
        users = share.groups[k - 1]
        first = share.first[k - 1]
        span = f"{first}" if len(users) == 1 else f"{first}-{first + len(users) - 1}"
        shown = ", ".join(self.describe(u, members) for u in users[:5])
        more = f" and {len(users) - 5} more" if len(users) > 5 else ""
        copies = len(share.groups)
        return (f"(shared: {span} of {share.uses} uses)",
                [f"shared: one tensor drawn {copies} times, once for each depth it is used at",
                 f"this copy: use {span} of {share.uses}, by {shown}{more}"])

    def share_plan(self, candidates, depth):
        """Which tensors to draw once per use: {key: _Share}.

        candidates maps a tensor's key to (its users in drawing order, the depth of the node
        that makes it when that is drawn, else None). Drawn once, each use at a shallower depth
        than the deepest costs dot one virtual node per rank between them (or between the use
        and the producer). The tensors saving the most are split, every tensor that saves as
        much as one that is split too, until what is left costs at most split_shared ranks.
        A tensor with one user saves nothing: callers leave those out.
        """
        if self.split_shared is None:
            return {}
        saving = {}
        for key, (users, anchor) in candidates.items():
            deepest = max((depth[u] for u in users), default=0)
            at = deepest + 1 if anchor is None else anchor
            saving[key] = sum(at - 1 - depth[u] for u in users if depth[u] < deepest)
        left, limit = 0, 0
        for value, count in sorted(Counter(v for v in saving.values() if v > 0).items()):
            left += value * count
            if left > self.split_shared:
                break
            limit = value
        return {key: _Share(candidates[key][0], depth)
                for key, value in saving.items() if value > limit}

    def function(self, members, label_name, dot_id=None, share=None):
        """Draw a grad_fn node, or a folded chain of them (members, top first)."""
        top = self.nodes[members[0]]
        count = len(members)
        if self.layout is not None:  # (only a module layout has folded calls)
            self._place(members[0])
            if top.get("module_box") is not None and count == 1:
                return self.module_box(top, dot_id, share)
        # The label and tooltip as escaped text, line by line (the tensor made's come escaped).
        esc_label, esc_tooltip = self.label_text, self.tooltip_text
        name = top["name"]
        # AccumulateGrad makes no tensor: its leaf is drawn beside it.
        made = None if name == "AccumulateGrad" else top.get("tensor")
        backward = self.view == "backward"  # the forward view draws the tensor made apart
        if count == 1:
            label = esc_label[label_name]
            tooltip = f"{esc_tooltip[name]} ({esc_tooltip.once(top['id'])})"
        else:
            bottom = self.nodes[members[-1]].get("tensor")
            label = esc_label[f"{label_name} x{count}"]
            tooltip = esc_tooltip[f"{count} consecutive {name} nodes: {bottom} ... {made}"]
        if top.get("variable") is not None:
            tooltip += "\\n" + esc_tooltip[f"accumulates into {top['variable']}"]
        if made is not None:
            made_line, made_tooltip, made_kind = self.tensor_text(made)
            tooltip += "\\n" + made_tooltip
            if backward:
                label += "\\n" + made_line
        grad = top.get("grad")
        if grad is not None:
            if backward and self.show_grads:
                label += "\\n" + esc_label[_grad_line(grad)]
            tooltip += "\\n" + esc_tooltip[f"grad at node: {summarize(grad)}"]
        # Anomalies, saved values and hooks: rare lines, each node's own.
        drawn = [top] if count == 1 else [self.nodes[m] for m in members]
        anomalies = [node["anomaly"] for node in drawn if node.get("anomaly")]
        lines, more = [], []  # the label's and the tooltip's
        for message in anomalies:
            lines.append("anomaly: " + _first_line(message, 60))
            more.append(f"anomaly: {message}")
        if self.show_saved and count == 1:
            lines += [saved_value(s) for s in top.get("saved") or [] if s.get("shape") is None]
        hooks = [h for node in drawn for h in node.get("hooks") or ()]
        if hooks:
            self.hooked = True
            lines += [f"{_HOOK_BADGE} {_hook_text(hook)}" for hook in hooks[:3]]
            if len(hooks) > 3:
                lines.append(f"{_HOOK_BADGE} ... {len(hooks) - 3} more")
            more += [f"hook: {_hook_text(h)} at {h.get('file')}:{h.get('line')}"
                     for h in hooks if h.get("file")]
        if lines:
            label += "\\n" + _joined(lines, esc_label)
        if more:
            tooltip += "\\n" + _joined(more, esc_tooltip)
        if top.get("file"):
            tooltip += "\\n" + esc_tooltip[_where(top)]
        kind = "collapsed" if count > 1 else "function"
        if anomalies:
            kind = "anomaly"
        elif made is not None and backward and made_kind == "root":
            kind = "root"
        dot_id = self.write(kind, "box3d" if count > 1 else "box", label, tooltip, dot_id, share,
                            _HOOKED if hooks else None)
        self.refs[dot_id] = ("node", top["id"])
        return dot_id

    # -- graphs by module --

    def _place(self, nid):
        """Draw what comes next (the node, its leaf, its saved tensors) in nid's clusters."""
        if self.layout is not None and self.view == "backward":
            self.where = self.layout.place.get(nid)

    def _target(self):
        """The graph to draw a node in: the innermost cluster of self.where, or the graph."""
        if not self.where:
            return self.graph
        index = self.where[-1]
        sub = self.clusters.get(index)
        if sub is None:
            sub = self.clusters[index] = graphviz.Digraph(name=f"cluster_m{index}")
            sub.attr(label=escape_label([self.layout.label(index)]), **_CLUSTER)
            for outer in self.where[:-1]:   # every cluster around it exists too
                if outer not in self.clusters:
                    self.clusters[outer] = graphviz.Digraph(name=f"cluster_m{outer}")
                    self.clusters[outer].attr(label=escape_label([self.layout.label(outer)]),
                                              **_CLUSTER)
        return sub

    def module_box(self, node, dot_id=None, share=None):
        """Draw a folded module call as one box: class, input and output shapes, parameters."""
        index = node["module_box"]
        call = self.layout.calls[index]
        label = box_label(call, self.layout.label(index), format_shape)
        tooltip = label + [f"{call.get('class')} folded: "
                           f"{sum(1 for b in self.layout.alias.values() if b == node['id'])} "
                           "autograd nodes inside"]
        return self.node("module", "box", label, tooltip, dot_id, share)

    def nest_clusters(self):
        """Put each cluster in the one around it (innermost first), the outermost in the graph."""
        calls = self.layout.calls
        for index in sorted(self.clusters, key=lambda i: (-_call_depth(calls, i), i)):
            parent = calls[index].get("parent")
            outer = self.clusters.get(parent) if parent is not None else None
            (self.graph if outer is None else outer).subgraph(self.clusters[index])
        self.clusters = {}

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
            self.refs[saved_id] = ("saved", node["id"])
            if is_modified(s) and s.get("freed"):
                text = [f"saved v{before}, now v{now}: {HARMLESS}"]
                self.edge(saved_id, dot_id, label=escape_label(text), **_SAVED_EDGE)
            elif is_modified(s):
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
            extra = len(kinds)
            if self.modified:
                text = ["red edge: saved tensor modified in place", "(version saved, now)"]
                sub.node(f"legend{extra}", escape_label(text), shape="plaintext",
                         fontcolor="red", tooltip=escape_tooltip(text))
                extra += 1
            if self.hooked:
                text = [f"{_HOOK_BADGE}, double purple outline:",
                        "the file registered a hook here", "(tensor hook, node pre/post hook,",
                        "post-accumulate-grad hook, module", "backward hook or retain_grad)"]
                sub.node(f"legend{extra}", escape_label(text), shape="box",
                         tooltip=escape_tooltip(text), **_HOOKED)

    # -- views --

    def start_nodes(self):
        starts, leaf_roots = [], []
        for name in self.roots:
            t = self.tensors.get(name)
            if t is None:
                close = difflib.get_close_matches(str(name), list(self.tensors), n=3)
                hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
                raise ValueError(f"unknown tensor {name!r}{hint}")
            node = t.get("node")
            if self.layout is not None:
                node = self.layout.alias.get(node, node)
            if node in self.nodes:
                starts.append(node)
            else:
                leaf_roots.append(name)
        return starts, leaf_roots

    def build(self, legend):
        # a 100,000-node drawing makes millions of strings that are all kept: every collection
        # of the cyclic garbage collector would walk them (and the report) again
        with gc_paused():
            return self._build(legend)

    def _build(self, legend):
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
        self.where = None
        if self.clusters:
            self.nest_clusters()
        if self.count == 0:
            self.graph.attr(label="(no autograd graph)")
        if legend and self.kinds:
            self.legend()
        return self.graph.source

    def children(self, top, group, members):
        """The drawn nodes a drawn node's next_functions point to, with repeats."""
        return [group[n] for m in members[top] for n, _ in self.next_functions(m)
                if n in group and group[n] != top]

    def backward(self, group, members, leaf_roots):
        for name in leaf_roots:
            self.var(name)
        # An AccumulateGrad may be drawn, with its leaf, once per depth it is used at (one
        # used once never is: without such a candidate, no depth is needed). A chain never
        # folds one into another node, so its users are the nodes with an edge to it.
        nodes = self.nodes
        accs = {top for top, inner in members.items() if nodes[top]["name"] == "AccumulateGrad"
                and len(inner) == 1 and not nodes[top].get("next_functions")}
        users = {}  # such an AccumulateGrad -> the nodes that use it, in edge order
        for top, inner in members.items() if accs else ():
            for m in inner:
                for n, _ in nodes[m].get("next_functions") or ():
                    if n in accs and n != top:
                        users.setdefault(n, {})[top] = None
        candidates = {top: (list(users[top]), None) for top in members
                      if len(users.get(top, ())) > 1}
        # the drawn nodes each one points to: only a graph with candidates needs them
        kids = {top: self.children(top, group, members) for top in members} if candidates \
            else {}
        depth = _depths(list(members), kids.__getitem__) if candidates else {}
        shared = self.share_plan(candidates, depth)
        ids, copies, bases = {}, {}, {}  # copies: (AccumulateGrad, copy number) -> dot id
        body, show_saved = self.graph.body, self.show_saved
        for top, inner in members.items():
            node = nodes[top]
            if top not in shared:
                ids[top] = self.function(inner, node["name"])
                if node["name"] == "AccumulateGrad" and node.get("variable") is not None:
                    body.append(f"\t{ids[top]} -> {self.var(node['variable'])}\n")  # self.edge
                if show_saved and len(inner) == 1:
                    self.saved(node, ids[top])
            # Each copy is drawn right after the first node that uses it.
            for head in dict.fromkeys(kids[top]) if shared else ():
                share = shared.get(head)
                if share is None or (head, share.copy[top]) in copies:
                    continue
                acc, k = self.nodes[head], share.copy[top]
                if head not in bases:  # the ids the copies derive from
                    bases[head] = self.new_id(), self.new_id()
                    self.shared[acc.get("variable") or head] = len(share.groups)
                text = self.share_text(share, k, members)
                copies[head, k] = self.function(members[head], acc["name"],
                                                f"{bases[head][0]}_{k}", text)
                if acc.get("variable") is not None:
                    # minlen=0 lets the leaf sit beside its AccumulateGrad: one rank tall, the
                    # copies of a weight used at every step of a chain each sit beside their
                    # user, instead of a staircase of overlapping pairs (and lay out faster).
                    leaf = self.var(acc["variable"], dot_id=f"{bases[head][1]}_{k}", share=text)
                    self.edge(copies[head, k], leaf, **_COPY_LEAF_EDGE)
        for top, inner in members.items():
            single, seen, cut = len(inner) == 1, set(), False
            for nid in inner:
                for nxt, _ in nodes[nid].get("next_functions") or ():
                    to = group.get(nxt)  # None for a node not drawn (and for nxt None)
                    if to is None:
                        cut = cut or nxt in nodes
                        continue
                    if to == top:
                        continue
                    share = shared.get(to)
                    head = ids[to] if share is None else copies[to, share.copy[top]]
                    # A folded chain gets each outside edge once; single nodes keep duplicates.
                    if single or head not in seen:
                        # weight=0 on an edge to a copy keeps the chain above it straight:
                        # centring each node over its copies made a diagonal drawing 4 times
                        # as wide, whose layout took 2.6 times as long (999-step RNN).
                        if share:
                            self.edge(ids[top], head, **_USE_EDGE)
                        else:
                            body.append(f"\t{ids[top]} -> {head}\n")  # self.edge(...)
                        seen.add(head)
            if cut:
                self.elided(ids[top])

    def forward(self, starts, group, members, leaf_roots):
        def children(top):
            return [c for c in self.children(top, group, members)
                    if self.nodes[c]["name"] != "AccumulateGrad"]

        tops = _postorder([group[s] for s in starts], children)
        # Each op's inputs first, so that a variable used at many depths can be drawn once per
        # depth, its copies numbered in the order the ops are drawn.
        plan, users, made = {}, {}, {}
        for top in tops:
            if self.nodes[top]["name"] != "AccumulateGrad":
                plan[top] = self.op_inputs(top, group, members)
                for key in plan[top][0]:
                    if key is not None:
                        users.setdefault(key, {})[top] = None
                made.setdefault(self.output_key(top), top)
        # A variable used once is never split: without one used twice, no depth is needed.
        reused = {key: u for key, u in users.items() if len(u) > 1}
        depth = _depths(list(members), lambda top: self.children(top, group, members)) \
            if reused else {}
        shared = self.share_plan(
            {key: (list(u), depth[made[key]] if key in made else None)
             for key, u in reused.items()}, depth)
        var_ids = {}  # key, or (key, copy number) for a shared one -> dot id

        def var_id(key, user=None):
            share = shared.get(key)
            if share is None:
                if key not in var_ids:
                    var_ids[key] = self.draw_var(key)
                return var_ids[key]
            k = share.copy.get(user, share.anchor)
            if key not in var_ids:  # the id the copies derive from
                var_ids[key] = self.new_id()
                self.shared[key[1] if isinstance(key, tuple) else key] = len(share.groups)
            if (key, k) not in var_ids:
                text = self.share_text(share, k, members)
                var_ids[key, k] = self.draw_var(key, f"{var_ids[key]}_{k}", text)
            return var_ids[key, k]

        for name in leaf_roots:
            var_id(name)
        for top in tops:
            node = self.nodes[top]
            if node["name"] == "AccumulateGrad":
                var_id(node.get("variable"))
                continue
            inputs, cut = plan[top]
            input_ids = []
            for key in inputs:
                if key is None:
                    input_ids.append(self.node("const", "plaintext", ["const"],
                                               ["a Python scalar or an unnamed constant"]))
                else:
                    input_ids.append(var_id(key, top))
            for key in dict.fromkeys(cut):
                self.elided(var_id(key, top), head=False)
            op_id = self.function(members[top], forward_name(node["name"]))
            if self.show_saved and len(members[top]) == 1:
                self.saved(node, op_id)
            for input_id in input_ids:
                self.edge(input_id, op_id)
            self.edge(op_id, var_id(self.output_key(top)))

    def draw_var(self, key, dot_id=None, share=None):
        if isinstance(key, tuple):  # output of a node whose tensor has no name
            return self.node("variable", "ellipse", ["?"], [f"output of {key[1]}"], dot_id, share)
        producer = self.nodes.get(self.made_by.get(key)) or {}
        return self.var(key, grad=producer.get("grad"), dot_id=dot_id, share=share)

    def op_inputs(self, top, group, members):
        """The variable keys an op (or folded chain) draws edges from, and those of them whose
        producer max_depth hides."""
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
        return inputs, cut

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


_CHUNK = 4096      # statements joined and encoded as one chunk (_ColumnBuilder)


class _ColumnBuilder(_Builder):
    """The backward view drawn from GraphColumns (gradviz/inspect/graphdata.py) rather than
    a report: one pass over the nodes and one over the edges, reading only what the drawing
    shows. graph_columns answers only for a run whose drawing has no gradient, hook, anomaly,
    saved tensor, module or shared leaf, so each node is the plain case of function().

    A node that makes a tensor is written from a template kept per node type, site and
    tensor pieces (every step of a chain shares one): its statement around the node's ids
    and the tensor's name. The text is kept as UTF-8 chunks of _CHUNK statements (build()
    returns them), each written out in turn: a 100,000-node chain's 34 MB of DOT is never
    joined into one string, nor encoded whole."""

    def __init__(self, columns):
        super().__init__({}, "backward", [], False, None, False, True)
        self.columns = columns
        kinds, made = columns.kinds, columns.made
        # tensor name -> the first node that makes it: the last of a reversed zip
        makers = [None if kind == "AccumulateGrad" else name for kind, name in zip(kinds, made)]
        self.made_by = dict(zip(reversed(makers), range(len(makers) - 1, -1, -1)))
        self.made_by.pop(None, None)
        self.shapes = {}        # shape -> format_shape(shape)
        self.templates = {}     # what sets a node's statement but its names -> template()
        self.encoded = []       # the node and edge statements, as UTF-8 chunks
        self.order, self.ids = [], []   # the nodes drawn, in order; each node's DOT id

    def pieces(self, t):
        """The text pieces of a tensor (see tensor_tail) from its GraphColumns entry."""
        shape, dtype, requires_grad, is_leaf, fn, version, data, grad = t[:8]
        shown = self.shapes.get(shape)
        if shown is None:
            shown = self.shapes[shape] = format_shape(shape)
        return (shown, f"{dtype}", f"{requires_grad}", f"{is_leaf}", f"{fn}", f"{version}",
                summarize(data), summarize(grad))

    def kind_of(self, name, t):
        """tensor_kind of a tensor from its GraphColumns entry."""
        return _tensor_kind(t[8] and t[9] == self.made_by.get(name), t[2], t[10], t[3])

    def tensor_text(self, name):
        t = self.columns.tensors.get(name)
        if t is None:
            return super().tensor_text(name)
        return self.tensor_lines(name, self.pieces(t)) + (self.kind_of(name, t),)

    def var(self, name, grad=None, dot_id=None, share=None):
        t = self.columns.tensors.get(name)
        label, tooltip, kind = self.tensor_text(name)
        if t is not None and t[7] is not None:
            label = f"{label}\\n{self.label_text[_grad_line(t[7])]}"
        if t is not None and t[11]:
            tooltip = f"{tooltip}\\n{self.tooltip_text[f'made at {t[11]}:{t[12]}']}"
        dot_id = self.write(kind, "ellipse", label, tooltip)
        self.refs[dot_id] = ("tensor", name)
        return dot_id

    def template(self, kind, site, t, root):
        """The statement of a node that makes tensor t (its GraphColumns entry; root: whether
        it is drawn as a root), as function() writes it: 4 parts around the node's DOT id,
        its tensor's name (label), its report id and the name again (tooltip)."""
        drawn = "root" if root else "function"
        self.kinds.setdefault(drawn, "box")
        before, after = self.style(drawn, "box", None, False)
        label, tip = self.label_text, self.tooltip_text
        tail = self.tensor_tail(self.pieces(t))
        where = f"\\n{tip[f'made at {site[0]}:{site[1]}']}" if site[0] else ""
        # label and tooltip hold "\\n": _quoted puts both in quotes
        return (f' [label="{label[kind]}\\n', f' {tail[0]}" {before}"{tip[kind]} (', ')\\n',
                f'\\n{tail[1]}{where}"{after}]\n')

    def accumulate(self, i, name):
        """Draw AccumulateGrad node i, and its leaf `name` beside it (function(), var())."""
        tip = self.tooltip_text
        tooltip = f"AccumulateGrad ({tip.once(f'n{i}')})"
        if name is not None:
            tooltip += "\\n" + tip[f"accumulates into {name}"]
        file, line = self.columns.sites[i]
        if file:
            tooltip += "\\n" + tip[f"made at {file}:{line}"]
        dot_id = self.write("function", "box", self.label_text["AccumulateGrad"], tooltip)
        self.refs[dot_id] = ("node", f"n{i}")
        if name is not None:
            self.graph.body.append(f"\t{dot_id} -> {self.var(name)}\n")
        return dot_id

    def flush(self, lines):
        """What the graph's body holds (an AccumulateGrad and its leaf), then lines, as
        chunks."""
        body, encoded = self.graph.body, self.encoded
        if body:
            encoded.append("".join(body).encode())
            body.clear()
        if lines:
            encoded.append("".join(lines).encode())
            lines.clear()

    def _build(self, legend):
        """The whole DOT text as UTF-8 chunks (build_graph's text, joined)."""
        self.draw()
        if legend and self.kinds:
            self.legend()
        lines = list(self.graph)
        rest = len(self.graph.body) + 1     # the legend (or a label), then the closing brace
        return ["".join(lines[:-rest]).encode(), *self.encoded, "".join(lines[-rest:]).encode()]

    def draw(self):
        """Write the nodes and edges to self.encoded; the graph's body is left empty."""
        c = self.columns
        kinds, nexts, made, sites, tensors = c.kinds, c.nexts, c.made, c.sites, c.tensors
        starts = []
        for name in c.roots:
            node = tensors[name][9]
            if node is None:
                self.var(name)
            else:
                starts.append(node)
        order = _walk_columns(nexts, starts)
        made_by, templates, label_text, tooltip_text = \
            self.made_by, self.templates, self.label_text, self.tooltip_text
        lines = []
        ids = self.ids = [None] * len(kinds)
        self.order = order
        next_id, count = self.next_id, self.count
        for i in order:
            kind, name = kinds[i], made[i]
            if kind == "AccumulateGrad":
                self.flush(lines)
                self.next_id, self.count = next_id, count
                ids[i] = self.accumulate(i, name)
                next_id, count = self.next_id, self.count
                continue
            t = tensors[name]       # (graph_columns: every other node makes a named tensor)
            site, root = sites[i], t[8] and t[9] == made_by.get(name)
            # what sets the statement's text but the names: one template for every step of
            # a chain (whose values differ, but not as summarize shows them)
            value, grad = t[6], t[7]
            key = (kind, site, t[:6], f"{value:.4g}" if type(value) is float
                   else summarize(value), None if grad is None else summarize(grad), root)
            parts = templates.get(key)
            if parts is None:
                parts = templates[key] = self.template(kind, site, t, root)
            p1, p2, p3, p4 = parts
            if _plain(name):
                label_name = tip_name = name
            else:
                label_name, tip_name = label_text[name], tooltip_text[name]
            dot_id = ids[i] = f"n{next_id}"
            next_id += 1
            lines.append(f"\t{dot_id}{p1}{label_name}{p2}n{i}{p3}{tip_name}{p4}")
            count += 1
            if len(lines) == _CHUNK:
                self.flush(lines)
        self.next_id, self.count = next_id, count
        self.flush(lines)
        for i in order:
            heads = nexts[i]
            if len(heads) == 1:     # most nodes: no list to build
                lines.append(f"\t{ids[i]} -> {ids[heads[0]]}\n")
            elif heads:
                tail = ids[i]
                lines.extend([f"\t{tail} -> {ids[j]}\n" for j in heads])
            if len(lines) >= _CHUNK:
                self.flush(lines)
        self.flush(lines)
        if self.count == 0:
            self.graph.attr(label="(no autograd graph)")

    def all_refs(self):
        """refs, with the nodes written from templates, in drawing order as _Builder keeps
        them (made when asked: only the interactive report reads them)."""
        refs, kinds, ids = dict(self.refs), self.columns.kinds, self.ids
        refs.update((ids[i], ("node", f"n{i}")) for i in self.order if kinds[i] != "AccumulateGrad")
        # every DOT id here is n<k>, k counting the nodes as they were drawn
        return dict(sorted(refs.items(), key=_drawn_number))


def _drawn_number(item):
    return int(item[0][1:])


def _walk_columns(nexts, starts):
    """_walk over GraphColumns' node indices (no max_depth): breadth-first from starts."""
    seen, order = bytearray(len(nexts)), []
    queue = deque()
    for i in starts:
        if not seen[i]:
            seen[i] = 1
            queue.append(i)
    while queue:
        i = queue.popleft()
        order.append(i)
        for j in nexts[i]:
            if not seen[j]:
                seen[j] = 1
                queue.append(j)
    return order


def build_columns(columns, *, legend=True):
    """build_graph's drawing (backward view, no other option) of graphdata's GraphColumns,
    its DOT text as UTF-8 chunks (BuiltGraph.chunks; source None) and its refs made when
    asked (a function)."""
    builder = _ColumnBuilder(columns)
    chunks = builder.build(legend)
    return BuiltGraph(None, builder.count, {}, builder.all_refs, chunks)


def _tensor_kind(root, requires_grad, is_parameter, is_leaf):
    if root:
        return "root"
    if not requires_grad:
        return "no_grad"
    if is_parameter:
        return "parameter"
    if is_leaf:
        return "leaf"
    return "variable"


def _call_depth(calls, index):
    depth = 0
    while calls[index].get("parent") is not None:
        index = calls[index]["parent"]
        depth += 1
    return depth


def _hook_text(hook):
    """A hook in a label: its function, its kind when not a tensor hook, and its line."""
    kind = {"pre": " (pre-hook)", "post": " (post-hook)",
            "post_accumulate": " (post-accumulate)", "module_backward_pre": " (module pre-hook)",
            "module_backward": " (module hook)"}.get(hook.get("kind"), "")
    name = "retain_grad()" if hook.get("kind") == "retain_grad" else hook.get("function")
    line = f" line {hook['line']}" if hook.get("line") else ""
    return f"{name}{kind}{line}"


def _where(item):
    return f"made at {item['file']}:{item.get('line')}"


def _grad_line(value):
    return f"grad: {summarize(value)}"


def _first_line(text, width):
    line = str(text).splitlines()[0] if str(text) else ""
    return line if len(line) <= width else line[: width - 3] + "..."


# ----- Public API -----

class BuiltGraph(NamedTuple):
    """What build_graph returns: the DOT source, how many nodes it draws (the legend not
    counted, each copy of a shared tensor counted), {tensor name: copies drawn} for the
    tensors drawn once per depth of use (see shared_tensors), and {DOT node id: ("node",
    report node id) | ("tensor", name) | ("saved", id of the node that saved it)}: what each
    drawn node shows (the interactive report links the drawing to the data with it)."""

    source: str
    count: int
    shared: dict
    refs: dict
    chunks: list = None     # build_columns: the source as UTF-8 chunks (source is None)


def build_graph(report, *, view="backward", roots=None, show_saved=False, legend=True,
                max_depth=None, collapse=False, show_grads=True, split_shared=SHARED_STRETCH,
                modules=None):
    """Build the drawing once and return its source, node count and shared tensors: what
    build_dot, count_nodes and shared_tensors each give, for the cost of one of them.

    >>> build_graph({"tensors": [], "nodes": [], "roots": []}, legend=False).count
    0
    """
    builder = _Builder(report, view, roots, show_saved, max_depth, collapse, show_grads,
                       split_shared, modules)
    source = builder.build(legend)
    return BuiltGraph(source, builder.count, dict(builder.shared), builder.refs)


def build_dot(report, *, view="backward", roots=None, show_saved=False, legend=True,
              max_depth=None, collapse=False, show_grads=True, split_shared=SHARED_STRETCH,
              modules=None):
    """Return DOT source for the graph of a report's roots (report["roots"] unless given).

    A tensor used at several depths of a big graph is drawn once per depth it is used at, so
    that Graphviz can lay the graph out (see _Builder.share_plan); split_shared is how many
    ranks the edges to shared tensors may cross in all before that happens: 0 splits every
    tensor used at several depths, None none.

    modules={} draws module calls as nested clusters (report["module_calls"]);
    {"depth": N} folds every call of a module deeper than N into one box, and
    {"depth": N, "expand": [names]} opens those modules again (module_graph.module_layout).

    >>> report = {"tensors": [{"name": "a", "shape": [], "dtype": "float32", "version": 0,
    ...                        "requires_grad": True, "is_leaf": True, "is_root": True}],
    ...           "nodes": [], "roots": ["a"]}
    >>> dot = build_dot(report, legend=False)
    >>> dot.splitlines()[0], 'n0 [label="a [] float32"' in dot
    ('digraph backward {', True)
    """
    builder = _Builder(report, view, roots, show_saved, max_depth, collapse, show_grads,
                       split_shared, modules)
    return builder.build(legend)


def count_nodes(report, *, view="backward", roots=None, show_saved=False, max_depth=None,
                collapse=False, split_shared=SHARED_STRETCH):
    """Return how many nodes build_dot draws with these options (the legend not counted).

    Each copy of a shared tensor counts.

    >>> count_nodes({"tensors": [], "nodes": [], "roots": []})
    0
    """
    return _stats(report, view, roots, show_saved, max_depth, collapse, split_shared).count


def shared_tensors(report, *, view="backward", roots=None, show_saved=False, max_depth=None,
                   collapse=False, split_shared=SHARED_STRETCH):
    """Return {tensor name: copies drawn} for the tensors build_dot draws once per depth of
    use (a tensor with no name: its node's id), in drawing order.

    A caller that warns about a big drawing (count_nodes above LARGE_GRAPH) can name them:
    their copies are part of the count.

    >>> shared_tensors({"tensors": [], "nodes": [], "roots": []})
    {}
    """
    return _stats(report, view, roots, show_saved, max_depth, collapse, split_shared).shared


def _stats(report, view, roots, show_saved, max_depth, collapse, split_shared):
    builder = _Builder(report, view, roots, show_saved, max_depth, collapse, False, split_shared)
    builder.build(legend=False)
    return builder
