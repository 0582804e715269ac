"""Which tensors and nodes `gradviz run` shows: a loop's last iteration, chains folded.

Works from the report's plain data: "iterations" and the "loop" / "iteration" keys of tensors
and nodes (docs/report-schema.md, "Loops"). Without `full`, a tensor or node that an earlier
iteration of a loop made is left out and the table's title says so (a loop that ran FEW times
or fewer is shown whole); `collapse` folds a chain of
one op, each node feeding only the one above it, into one row, as `gradviz graph --collapse`
folds it into one box.

>>> report = {"iterations": [{"kind": "backward", "count": 3, "line": 8, "calls": [0, 2]}],
...           "tensors": [{"name": "w", "loop": None}, {"name": "y", "loop": 0, "iteration": 2},
...                       {"name": "y2", "loop": 0, "iteration": 3}], "nodes": []}
>>> view = View(report)
>>> [t["name"] for t in view.tensors], view.tensor_note
(['w', 'y2'], ' (× 3 iterations, showing the last)')
"""

from .dot import _fold_chains

__all__ = ["View", "FEW"]

# A loop that ran this many times or fewer is shown whole (step[1].y beside step[2].y reads
# well; a thousand rows do not).
FEW = 2


class View:
    """The tensors and nodes to show, the folded chains and the notes for the titles."""

    def __init__(self, report, full=False, collapse=False):
        groups = [g if g["count"] > FEW else None for g in report.get("iterations") or []]
        tensors = report.get("tensors") or []
        nodes = report.get("nodes") or []
        self.tensors = tensors if full else [t for t in tensors if not _earlier(t, groups)]
        shown = nodes if full else [n for n in nodes if not _earlier(n, groups)]
        self.hidden_nodes = {n["id"] for n in nodes} - {n["id"] for n in shown}
        self.tensor_note = _note(groups, tensors, self.tensors, full)
        self.node_note = _note(groups, nodes, shown, full)
        self.hidden_calls = set()
        for g in groups:
            if g is not None and g["kind"] == "backward" and not full:
                self.hidden_calls.update(range(g["calls"][0], g["calls"][1]))
        self.chains = {}        # top node id -> [member ids, top first]
        if collapse:
            by_id = {n["id"]: n for n in shown}
            top_of = _fold_chains([n["id"] for n in shown], by_id, set(by_id))
            for nid, top in top_of.items():
                self.chains.setdefault(top, []).append(nid)
            folded = {nid for nid, top in top_of.items() if nid != top}
            shown = [n for n in shown if n["id"] not in folded]
            before = len(self.tensors)
            self.tensors = [t for t in self.tensors if t.get("node") not in folded]
            if folded:
                self.node_note += f" (--collapse folded {len(folded)} nodes into chains)"
            if before != len(self.tensors):
                self.tensor_note += f" (--collapse folded {before - len(self.tensors)})"
        self.nodes = shown

    def chain(self, node_id):
        """The ids of the chain node_id is the top of ([node_id] when nothing is folded)."""
        return self.chains.get(node_id) or [node_id]


def _earlier(item, groups):
    """Made by an earlier iteration of a loop than the last?"""
    group = item.get("loop")
    if group is None or groups[group] is None:
        return False
    return item.get("iteration") != groups[group]["count"]


def _note(groups, items, shown, full):
    """" (× 1000 iterations, showing the last)" for each group that made some of items."""
    kept = {id(item) for item in shown}
    present, left_out, earlier = set(), set(), set()     # groups with members here, ...
    for item in items:
        k = item.get("loop")
        if k is None or groups[k] is None:
            continue
        present.add(k)
        if id(item) not in kept:
            left_out.add(k)
        if _earlier(item, groups):
            earlier.add(k)
    notes = []
    for k in sorted(present):
        g = groups[k]
        # Without full, what is shown is the last iteration: the earlier ones were left out
        # here, or freed by the run (a training loop's graphs go with each step).
        what = "showing the last"
        if full:
            what = "showing all" if k in earlier or g["kind"] == "line" else \
                "showing the last: the run freed the earlier ones"
        elif k not in left_out and g["kind"] == "line":
            what = "showing all"
        if g["kind"] == "backward":
            notes.append(f"× {g['count']} iterations, {what}")
        else:
            notes.append(f"× {g['count']} {g['grad_fn']} made at line {g['line']}, {what}")
    return "".join(f" ({n})" for n in notes)
