"""Where each node of a report's graph sits among the module calls, and which calls are folded.

Works from the report's plain data ("nodes", "module_calls"; docs/report-schema.md). A node sits
in the clusters of the calls it ran inside, outermost first. With a fold depth N, every call of
a module deeper than N (`module_depth`) is folded, with everything it ran, into one box of its
outermost folded call; `expand` opens named modules (and the modules around them) again. The
graph between boxes stays the autograd graph: an edge into or out of a box is a real edge of one
of its nodes, drawn once per pair of drawn nodes.

A parameter's AccumulateGrad sits where the first node using it does, as far in as its owning
module goes (so `layers.0.linear.weight` is inside `layers.0.linear`, and inside its box).

>>> report = {"nodes": [{"id": "n0", "name": "AddBackward0", "next_functions": [],
...                      "module_call": 1}],
...           "module_calls": [{"index": 0, "module": "", "class": "Net", "parent": None},
...                            {"index": 1, "module": "fc", "class": "Linear", "parent": 0}]}
>>> layout = module_layout(report, depth=0)
>>> [(n["id"], n["name"]) for n in layout.nodes.values()], layout.alias
([('m1', 'Linear')], {'n0': 'm1'})
"""

import difflib

__all__ = ["ModuleOptionError", "ModuleLayout", "module_layout", "module_depth", "module_options",
           "cluster_label", "box_label"]


class ModuleOptionError(ValueError):
    """--expand names no module call, or comes without --depth-modules."""


def module_depth(name):
    """How deep a qualified module name is: the root "" is 0, `encoder` 1, `encoder.layers` 2.

    >>> [module_depth(n) for n in ("", "encoder", "encoder.layers.3")]
    [0, 1, 3]
    """
    return 0 if not name else name.count(".") + 1


class ModuleLayout:
    """What the DOT builder draws: `nodes` ({id: node dict}, folded boxes replacing their
    members), `alias` (folded node id -> its box id), `place` (drawn node id -> the indices
    of the open calls around it, outermost first) and `calls` ({index: module call})."""

    def __init__(self, nodes, alias, place, calls):
        self.nodes = nodes
        self.alias = alias
        self.place = place
        self.calls = calls

    def label(self, index):
        """A cluster's or box's first line: `encoder.layers.3: Block` (`(call 2)` when the
        module ran several times)."""
        call = self.calls[index]
        repeated = self._repeats().get((call.get("root"), call["module"]), 0) > 1
        return cluster_label(call, repeated)

    def _repeats(self):
        counts = getattr(self, "_counts", None)
        if counts is None:
            counts = self._counts = {}
            for c in self.calls.values():
                key = (c.get("root"), c["module"])
                counts[key] = counts.get(key, 0) + 1
        return counts


def cluster_label(call, repeated=False):
    """`encoder.layers.3: Block`; the root module (named "") by its class alone.

    >>> cluster_label({"module": "fc", "class": "Linear", "call": 2}, repeated=True)
    'fc: Linear (call 2)'
    """
    text = f"{call['module']}: {call['class']}" if call["module"] else call["class"]
    return f"{text} (call {call.get('call')})" if repeated else text


def box_label(call, first_line, format_shape):
    """The lines of a folded module's box: name and class, input and output shapes,
    parameter count (torchview's box)."""
    def shapes(value):
        if value is None:
            return "?"
        return ", ".join(format_shape(s) for s in value) or "-"
    return [first_line, f"in: {shapes(call.get('inputs'))}",
            f"out: {shapes(call.get('outputs'))}", f"params: {call.get('parameters', 0):,}"]


def module_options(clusters=True, depth=None, expand=()):
    """The `modules` argument of build_dot for the graph command's options: None draws no
    cluster; folding (depth) or opening (expand) draws them whatever clusters says.

    >>> module_options(False), module_options(True, 1, ["encoder"])
    (None, {'depth': 1, 'expand': ['encoder']})
    """
    if not clusters and depth is None and not expand:
        return None
    if expand and depth is None:
        raise ModuleOptionError("--expand opens a module folded by --depth-modules N: give N too")
    return {"depth": depth, "expand": list(expand)}


def module_layout(report, depth=None, expand=()):
    """Lay a report's nodes out by module call; fold calls deeper than depth (None: none).

    Raises ModuleOptionError for an `expand` name no call has (with the names closest to it).
    """
    calls = {c["index"]: c for c in report.get("module_calls") or []}
    nodes = {n["id"]: n for n in report.get("nodes") or []}
    names = {c["module"] for c in calls.values()}
    opened = set()
    for name in expand:
        if name not in names:
            close = difflib.get_close_matches(name, sorted(names), n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ModuleOptionError(f"--expand: no module call named {name!r}{hint}")
        parts = name.split(".")
        opened.update(".".join(parts[:k]) for k in range(len(parts) + 1))

    def is_open(call):
        return depth is None or module_depth(call["module"]) <= depth or \
            call["module"] in opened

    chains = _chains(nodes, calls)
    place, owner_box = {}, {}
    for nid, chain in chains.items():
        path = []
        for index in chain:
            if not is_open(calls[index]):
                owner_box[nid] = index
                break
            path.append(index)
        place[nid] = path
    if not owner_box:
        return ModuleLayout(nodes, {}, {nid: p for nid, p in place.items() if p}, calls)
    alias = {nid: f"m{index}" for nid, index in owner_box.items()}
    drawn, boxes = {}, {}
    for nid, node in nodes.items():
        box = alias.get(nid)
        if box is None:
            drawn[nid] = dict(node, next_functions=_remap(node, alias, None))
            continue
        if box not in boxes:
            index = owner_box[nid]
            boxes[box] = drawn[box] = {
                "id": box, "name": calls[index]["class"], "tensor": None, "variable": None,
                "next_functions": [], "inputs": None, "saved": [], "grad": None,
                "anomaly": None, "hooks": [], "file": None, "line": None,
                "module_box": index}
            place[box] = place[nid]
        edges = boxes[box]["next_functions"]
        for edge in _remap(node, alias, box):
            if edge not in edges:
                edges.append(edge)
    place = {nid: p for nid, p in place.items() if p and nid in drawn}
    return ModuleLayout(drawn, alias, place, calls)


def _remap(node, alias, box):
    """node's next_functions with folded nodes replaced by their box: an edge to a box once
    (per node), an edge inside box dropped."""
    out, seen = [], set()
    for nxt, nr in node.get("next_functions") or []:
        head = alias.get(nxt, nxt)
        if head is not None and head == box:
            continue
        if head != nxt or box is not None:
            if head in seen:
                continue
            seen.add(head)
        out.append([head, nr if head == nxt else 0])
    return out


def _chains(nodes, calls):
    """{node id: [call index, ...] outermost first} for the nodes made in module calls, and
    for the AccumulateGrads of parameters (placed by their first user, within their owner)."""
    def chain_of(index):
        out = []
        while index is not None and index in calls:
            out.append(index)
            index = calls[index].get("parent")
        out.reverse()
        return out

    chains, first_user = {}, {}
    for nid, node in nodes.items():
        if node.get("module_call") is not None:
            chains[nid] = chain_of(node["module_call"])
        for nxt, _ in node.get("next_functions") or []:
            if nxt is not None:
                first_user.setdefault(nxt, nid)
    for nid, node in nodes.items():
        owner = node.get("module")
        if node.get("name") != "AccumulateGrad" or owner is None or nid in chains:
            continue
        user = chains.get(first_user.get(nid), [])
        kept = [i for i in user if _within(owner, calls[i]["module"])]
        if kept:
            chains[nid] = kept
    return chains


def _within(name, outer):
    """name is outer or inside it (the root "" holds every name)."""
    return not outer or name == outer or name.startswith(outer + ".")
