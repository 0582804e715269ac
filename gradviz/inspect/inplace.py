"""check_inplace: find the in-place edits that will break backward, before backward runs.

A finding is an edit that bumped the version counter of a tensor some node saved for backward
(directly, or through a view or a detach() sharing its counter), where that node is still
needed by a named root: exactly the check torch's backward makes, so the verdicts agree with
it. Edits through `.data` change saved values without bumping the counter: torch cannot see
them and backward silently uses the new values; they are warnings. In-place edits of a leaf
that requires grad (or of a view of one) raise at once; they are findings at the line that
raised.

>>> from gradviz.inspect.inplace import check_inplace                  # doctest: +SKIP
>>> check_inplace("examples/inplace_version_error.py")["findings"][0]["tensor"]
'b'
"""

import numpy as np

from .report import _next_functions
from .session import run_file

__all__ = ["check_inplace"]

_LEAF_ERRORS = {
    "a leaf Variable that requires grad is being used in an in-place operation.":
        "leaf_inplace",
    "a view of a leaf Variable that requires grad is being used in an in-place operation.":
        "view_of_leaf_inplace",
}


def _saved_tensors(node, tracer):
    """(label, tensor or None, data, version counter, saved_version, node) still needed."""
    from ..autograd.saved import saved_values
    entries = tracer.saved_of(node) if hasattr(tracer, "saved_of") else saved_values(node)
    for e in entries or ():
        if e.is_tensor:
            yield e.label, e.tensor, e.data, e.vc, e.saved_version, node


def _reach(start):
    seen = set()
    stack = [start]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(fn for fn, _ in _next_functions(node) if fn is not None)
    return seen


def _fix(name, op):
    if op in ("setitem", "index_put_"):
        return (f"clone before assigning into it ({name} = {name}.clone()), or build a new "
                f"tensor instead (torch.where, torch.cat) so the saved value stays intact")
    plain = op.rstrip("_")
    return (f"use the out-of-place form ({name} = {name}.{plain}(...)), or clone before "
            f"editing ({name} = {name}.clone()) so the saved value stays intact")


def version_counter(t, tracer):
    """What identifies t's version counter, compared with ==: the core's counter object; on
    torch, which keeps counters out of sight, the memory of the tensor a chain of views was
    made from: views and detach() aliases share their base's counter, as in torch. A tensor
    made by `.data` has a counter of its own (and its views share it)."""
    if t is None:
        return None
    if hasattr(t, "_vc"):
        # the core's: views share their base's; a tensor without one yet shares it with none
        return ("own", id(t)) if t._vc is None else t._vc
    while t._base is not None:
        t = t._base
    made = tracer.made_of(t)
    if made is not None and made[0] == "data":
        return ("data", id(t))
    return ("storage", t.untyped_storage().data_ptr())


def _site(run, node):
    return run.tracer.site_of(node) or (None, None)


def check_inplace(path, argv=(), debug=False, backend="gradviz"):
    """Run the file and report the in-place hazards as plain data (see `gradviz check-inplace`).

    Returns {"file", "findings": [...], "warnings": [...], "error"}; each finding has kind,
    tensor, op, file, line, saved_by, saved_line, saved_version, version, roots and fix.
    """
    run = run_file(path, argv=argv, debug=debug, backend=backend)
    report = run.report(lazy=True, loops=False, saved=False, hooks=False)     # the roots only
    name_of = {}
    for name, t in run.named:
        name_of[id(t)] = name
    for node in run.tracer.nodes:
        out = run.tracer.output_of(node, 0)
        if out is not None and id(out) not in name_of:
            name_of[id(out)] = None
    roots = [(name, t) for name, t in run.named
             if t.grad_fn is not None and name in report["roots"]]
    reach = {name: _reach(t.grad_fn) for name, t in roots}

    findings, warnings = [], []
    seen = set()
    for node in run.tracer.nodes:
        for label, t, data, vc, want, owner in _saved_tensors(node, run.tracer):
            now = 0 if vc is None else vc.v
            affected = [r for r, ids in reach.items() if id(node) in ids]
            if not affected:
                continue
            tname = _tensor_name(t, owner, run, name_of)
            if now != want:
                counter = version_counter(t, run.tracer)
                ev = _breaking_event(run.tracer, vc if counter is None else counter, want)
                key = (id(node), id(t) if t is not None else label)
                if key in seen:
                    continue
                seen.add(key)
                via = None
                if ev is not None and ev.tensor is not t and ev.op != "setitem":
                    via = name_of.get(id(ev.tensor)) or _tensor_name(ev.tensor, node, run,
                                                                    name_of)
                site = ev.site if ev is not None else None
                op = ev.op if ev is not None else "in-place edit"
                where = _site(run, node)
                findings.append({
                    "kind": "modified_saved_tensor",
                    "tensor": tname, "op": op, "via": via,
                    "file": site[0] if site else None, "line": site[1] if site else None,
                    "saved_by": node.name(), "saved_as": label,
                    "saved_file": where[0], "saved_line": where[1],
                    "saved_version": int(want), "version": int(now),
                    "roots": affected, "fix": _fix(tname, op),
                    "message": (f"'{tname}' was saved by {node.name()} at version {want} and "
                                f"is at version {now} now: backward of "
                                f"{', '.join(affected)} will raise 'one of the variables "
                                "needed for gradient computation has been modified by an "
                                "inplace operation'"),
                })
            else:
                warnings.extend(_invisible_edits(run, node, label, tname, data, vc, affected))
    for tensor, message, site in run.tracer.refusals:
        site = site or (None, None)
        findings.append({
            "kind": _LEAF_ERRORS[message], "tensor": _refused_name(tensor, run, name_of),
            "op": "in-place", "via": None, "file": site[0], "line": site[1], "saved_by": None,
            "saved_as": None, "saved_file": None, "saved_line": None, "saved_version": None,
            "version": None, "roots": [],
            "fix": ("do the edit under torch.no_grad() if you mean to change the leaf's value "
                    "(as an optimizer does), or use an out-of-place op to make a new tensor"),
            "message": message + " It raised at once, at this line.",
        })
    other_error = None
    if run.error is not None and run.error.message not in _LEAF_ERRORS and \
            not run.error.message.startswith("one of the variables needed for gradient"):
        other_error = run.error.to_dict()
    return {"file": path, "findings": findings, "warnings": _dedupe(warnings),
            "error": other_error}


def _breaking_event(tracer, vc, want):
    for ev in tracer.inplace_events:
        if vc is not None and version_counter(ev.tensor, tracer) == vc and \
                ev.version == want + 1:
            return ev
    return None


def _invisible_edits(run, node, label, tname, data, vc, affected):
    """Edits of the saved storage that did not bump its version counter (.data)."""
    out = []
    if data is None or not isinstance(data, np.ndarray):
        return out
    idx = run.tracer.order(node)
    if hasattr(run.tracer, "saved_of"):
        return out      # torch: an edit through .data cannot be told from other edits yet
    for ev in run.tracer.inplace_events:
        if ev.seq <= idx or (vc is not None and ev.vc is vc):
            continue
        d = ev.data     # (the storage is kept weakly: a `.data` alias is freed at once)
        if isinstance(d, np.ndarray) and np.shares_memory(d, data):
            site = ev.site or (None, None)
            where = _site(run, node)
            out.append({
                "kind": "invisible_edit", "tensor": tname, "op": ev.op,
                "file": site[0], "line": site[1], "saved_by": node.name(),
                "saved_as": label, "saved_file": where[0], "saved_line": where[1],
                "saved_version": None, "version": None, "roots": affected,
                "fix": (f"edit '{tname}' out of place or before the forward pass that saves "
                        "it; an edit through .data is invisible to autograd"),
                "message": (f"'{tname}' was edited in place through .data after "
                            f"{node.name()} saved it: torch cannot see this edit, and backward "
                            "of " + ", ".join(affected) + " silently uses the new values"),
            })
    return out


def _tensor_name(t, node, run, name_of):
    if t is None:
        out = run.tracer.output_of(node, 0)
        t = out
    if t is None:
        return "(result)"
    if name_of.get(id(t)):
        return name_of[id(t)]
    base = getattr(t, "_base_", None)
    if base is not None and name_of.get(id(base)):
        return f"{name_of[id(base)]} (a view)"
    mine = version_counter(t, run.tracer)
    for n, other in run.named:
        counter = version_counter(other, run.tracer)
        if counter is not None and counter == mine:
            return n
    return "(unnamed tensor)"


def _refused_name(tensor, run, name_of):
    name = name_of.get(id(tensor))
    if name:
        return name
    base = getattr(tensor, "_base_", None)
    if base is not None and name_of.get(id(base)):
        return f"{name_of[id(base)]} (a view)"
    return "(unnamed tensor)"


def _dedupe(items):
    seen, out = set(), []
    for w in items:
        key = (w["tensor"], w["line"], w["saved_by"])
        if key not in seen:
            seen.add(key)
            out.append(w)
    return out
