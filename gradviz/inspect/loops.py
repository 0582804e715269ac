"""What a loop made, grouped: the report's "iterations", and "loop" / "iteration" on tensors
and nodes (docs/report-schema.md, "Loops").

Two things the run recorded say that the file went round a loop:

- **Repeated backward calls.** Backward (or autograd.grad) called two or more times from the
  same line, a line that runs more than once (see below), is a training loop: each call closes
  one iteration. A node made after call k-1 of
  that line began and before call k began belongs to iteration k (the forward of step k). Nodes
  made before the first call are not grouped: they may be the set-up as well as iteration 1's
  forward, and the record cannot tell them apart; nodes made after the last call are after the
  loop. When several lines call backward repeatedly, the line with the most calls is the loop.
- **Repeated creation sites.** Without a backward between them, a loop's tensors all stay
  alive (`h = h * 1.001` a thousand times). Nodes of one op made at one line that runs more
  than once (inside a `for`/`while` body or a comprehension of its file, or inside a function
  that made tensors in more than one call) and not grouped by a backward loop form a group:
  the k-th of them, in creation order, is number k.

AccumulateGrad nodes (one per leaf) are never grouped. A group's last member is what `run`'s
tables show (gradviz/render/grouping.py); the others unless `--full`. The torch backend records
neither signal.

>>> loop_lines("for i in range(3):\\n    y = i\\nz = 1\\n")
{2}
"""

import ast
import bisect

from .sourcefacts import scan, source_facts

__all__ = ["add_iterations", "loop_lines"]


def add_iterations(report, run, nodes):
    """Add "iterations" to the report and "loop" / "iteration" to its tensors and nodes.

    `nodes` are the node objects of report["nodes"], in the same order.
    """
    groups = []
    marks = {}          # node id -> (group index, number)
    tracer = run.tracer
    entries = report.get("nodes") or []
    if tracer is not None:
        _backward_loop(report, tracer, nodes, entries, groups, marks)
        _line_groups(tracer, nodes, entries, groups, marks)
    for entry in entries:
        group, number = marks.get(entry["id"], (None, None))
        entry["loop"], entry["iteration"] = group, number
    for t in report.get("tensors") or []:
        group, number = marks.get(t.get("node"), (None, None))
        t["loop"], t["iteration"] = group, number
    report["iterations"] = groups
    return report


def _backward_loop(report, tracer, nodes, entries, groups, marks):
    """Group the nodes made between the calls of the line that called backward most often."""
    calls = [c for c in report.get("backward_calls") or [] if not c.get("by_gradviz")]
    by_site = {}
    for c in calls:
        if c.get("file") is not None:
            by_site.setdefault((c["file"], c["line"]), []).append(c["call"])
    sources = {}
    loops = [(len(ks), ks[-1], site, ks) for site, ks in by_site.items()
             if len(ks) > 1 and _repeats(tracer, site[0], site[1], sources)]
    if not loops:
        return
    _, _, (file, line), ks = max(loops)
    starts = [tracer.call_marks[k] for k in ks if k < len(tracer.call_marks)]
    if len(starts) != len(ks):
        return
    group = len(groups)
    members = 0
    for node, entry in zip(nodes, entries):
        if entry["name"] == "AccumulateGrad":
            continue
        order = tracer.order(node)
        if order is None or order < starts[0] or order >= starts[-1]:
            continue
        # starts[i - 1] <= order < starts[i]: made in iteration i + 1
        marks[entry["id"]] = (group, bisect.bisect_right(starts, order) + 1)
        members += 1
    groups.append({"kind": "backward", "count": len(ks), "file": file, "line": line,
                   "calls": [ks[0], ks[-1]], "nodes": members})


def _line_groups(tracer, nodes, entries, groups, marks):
    """Group the nodes of one op made at one repeating line (not in a backward loop)."""
    sites, sources = {}, {}
    for node, entry in zip(nodes, entries):
        if entry["id"] in marks or entry["name"] == "AccumulateGrad" or not entry.get("line"):
            continue
        if not _repeats(tracer, entry["file"], entry["line"], sources):
            continue
        key = (entry["file"], entry["line"], entry["name"])
        sites.setdefault(key, []).append((tracer.order(node) or 0, entry["id"]))
    for (file, line, name), members in sites.items():
        if len(members) < 2:
            continue
        group = len(groups)
        for number, (_, nid) in enumerate(sorted(members), start=1):
            marks[nid] = (group, number)
        groups.append({"kind": "line", "count": len(members), "file": file, "line": line,
                       "grad_fn": name, "nodes": len(members)})


def _repeats(tracer, file, line, sources):
    """Does the line run more than once: is it in a loop of its file, or in a function that
    made tensors in more than one call? `sources` keeps, for the length of one report, each
    file's lines that repeat."""
    lines = sources.get(file)
    if lines is None:
        # code from exec() ("<string>"), a file gone since: no loops
        lines = set(source_facts(file).loop_lines)
        for code, calls in tracer.function_calls.items():
            if calls > 1 and code.co_filename == file:
                lines.update(ln for _, _, ln in code.co_lines() if ln is not None)
        sources[file] = lines
    return line in lines


def loop_lines(source):
    """The lines of source inside a for/while body or a comprehension."""
    return set(scan(ast.parse(source)).loop_lines)
