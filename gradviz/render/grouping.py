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

from collections.abc import Sequence

from ._format import briefs

__all__ = ["View", "FEW"]

# A loop that ran this many times or fewer is shown whole (step[1].y beside step[2].y reads
# well; a thousand rows do not).
FEW = 2


class View:
    """The tensors and nodes to show, the folded chains and the notes for the titles.

    Which to show is read off the entries' briefs (a lazy report's Entries builds only the
    entries a table then reads); `tensors` and `nodes` are sequences of whole entries.
    """

    def __init__(self, report, full=False, collapse=False):
        groups = [g if g["count"] > FEW else None for g in report.get("iterations") or []]
        tensors = report.get("tensors") or []
        nodes = report.get("nodes") or []
        kept_tensors, _, self.tensor_note = _kept(briefs(tensors), groups, full)
        node_briefs = briefs(nodes)
        kept_nodes, hidden, self.node_note = _kept(node_briefs, groups, full)
        self.hidden_nodes = {node_briefs[i]["id"] for i in hidden}
        self.hidden_calls = set()
        for g in groups:
            if g is not None and g["kind"] == "backward" and not full:
                self.hidden_calls.update(range(g["calls"][0], g["calls"][1]))
        self.chains = {}        # top node id -> [member ids, top first]
        self.by_id = {}         # node id -> its entry, for the nodes a chain folded
        if collapse:
            from .dot import _fold_chains     # (the DOT writer and graphviz: only here)
            by_id = self.by_id = {nodes[i]["id"]: nodes[i] for i in kept_nodes}
            top_of = _fold_chains(list(by_id), by_id, set(by_id))
            for nid, top in top_of.items():
                self.chains.setdefault(top, []).append(nid)
            folded = {nid for nid, top in top_of.items() if nid != top}
            kept_nodes = [i for i in kept_nodes if nodes[i]["id"] not in folded]
            before = len(kept_tensors)
            kept_tensors = [i for i in kept_tensors
                            if briefs(tensors)[i].get("node") not in folded]
            if folded:
                self.node_note += f" (--collapse folded {len(folded)} nodes into chains)"
            if before != len(kept_tensors):
                self.tensor_note += f" (--collapse folded {before - len(kept_tensors)})"
        self.tensors = _Picked(tensors, kept_tensors)
        self.nodes = _Picked(nodes, kept_nodes)

    def chain(self, node_id):
        """The ids of the chain node_id is the top of ([node_id] when nothing is folded)."""
        return self.chains.get(node_id) or [node_id]


class _Picked(Sequence):
    """The items of a sequence at some of its indices, each read when it is asked for."""

    def __init__(self, items, indices):
        self.items, self.indices = items, indices

    def __len__(self):
        return len(self.indices)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.items[k] for k in self.indices[i]]
        return self.items[self.indices[i]]


def _kept(items, groups, full):
    """The indices of the items to show, in order, those of the items left out, and the
    note for the title: " (× 1000 iterations, showing the last)" for each group that made
    some of the items. One pass over the items."""
    kept, hidden = [], []
    present, earlier = set(), set()     # groups with members here, with earlier ones
    counts = [None if g is None else g["count"] for g in groups]
    for i, item in enumerate(items):
        k = item.get("loop")
        if k is None or counts[k] is None:
            kept.append(i)
            continue
        present.add(k)
        # made by an earlier iteration of a loop than the last?
        if item.get("iteration") == counts[k]:
            kept.append(i)
        else:
            earlier.add(k)
            (kept if full else hidden).append(i)
    notes = []
    for k in sorted(present):
        g = groups[k]
        # Without full, what is shown is the last iteration: the earlier ones were left out
        # here, or freed by the run (a training loop's graphs go with each step).
        what = "showing the last"
        if full:
            what = "showing all" if k in earlier or g["kind"] == "line" else \
                "showing the last: the run freed the earlier ones"
        elif k not in earlier and g["kind"] == "line":      # none left out
            what = "showing all"
        if g["kind"] == "backward":
            notes.append(f"× {g['count']} iterations, {what}")
        else:
            notes.append(f"× {g['count']} {g['grad_fn']} made at line {g['line']}, {what}")
    return kept, hidden, "".join(f" ({n})" for n in notes)
