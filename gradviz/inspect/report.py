"""build_report: a Run as plain data (the `gradviz run --json` document).

Works from public autograd attributes (requires_grad, is_leaf, grad_fn, next_functions,
_version, retains_grad, grad, `_saved_*`), so a run on the real torch gives the same tables;
gradviz adds what only it records (file:line of every node, saved versions, forward inputs,
the gradient each node received). See docs/report-schema.md.
"""

import json
import math
import warnings

import numpy as np

from .saved import saved_entries

__all__ = ["build_report", "report_json", "to_json_value", "VALUE_LIMIT"]

VALUE_LIMIT = 10_000      # elements written in full in JSON without --full


def to_json_value(x, full=False):
    """Nested lists / numbers; nan and inf become the strings "nan", "inf", "-inf"."""
    if x is None:
        return None
    a = np.asarray(x)
    if a.size > VALUE_LIMIT and not full:
        lo, hi, mean = summary_stats(a)
        return (f"<{a.size} elements, shape {list(a.shape)}: min {lo:.4g}, "
                f"max {hi:.4g}, mean {mean:.4g}; --full for all values>")
    return _clean(a.tolist())


_CHUNK = 1 << 18


def summary_stats(a):
    """(min, max, mean) of an array, ignoring NaN, 262,144 elements at a time: a summary of
    a 2e8-element tensor must not cost a float64 copy of it (1.6 GB).

    >>> summary_stats(np.array([1.0, np.nan, 3.0], dtype=np.float32))
    (1.0, 3.0, 2.0)
    """
    flat = a.reshape(-1)        # a copy only for a non-contiguous array
    if flat.dtype.kind not in "fiub":
        return float("nan"), float("nan"), float("nan")
    lo, hi, total, count = math.inf, -math.inf, 0.0, 0
    for start in range(0, flat.size, _CHUNK):
        chunk = flat[start:start + _CHUNK].astype(np.float64)
        ok = ~np.isnan(chunk)
        n = int(np.count_nonzero(ok))
        if n:
            lo = min(lo, float(np.min(chunk, where=ok, initial=math.inf)))
            hi = max(hi, float(np.max(chunk, where=ok, initial=-math.inf)))
            total += float(np.sum(chunk, where=ok))
            count += n
    if count == 0:
        return float("nan"), float("nan"), float("nan")
    return lo, hi, total / count


def report_json(report):
    """The report as JSON text: one key per line, and one line per tensor, node, hook, ...

    Each item goes through the C encoder on its own (json's `indent` forces the pure-Python
    encoder, 4x slower on a 100,000-node graph).

    >>> print(report_json({"file": "f.py", "tensors": [{"name": "x"}, {"name": "y"}]}))
    {
      "file": "f.py",
      "tensors": [
        {"name": "x"},
        {"name": "y"}
      ]
    }
    """
    strict = json.JSONEncoder(ensure_ascii=True, allow_nan=False).encode

    def dumps(value):
        try:
            return strict(value)
        except ValueError:      # a nan that no value cleaner saw: JSON has none, say "nan"
            return strict(_clean_deep(value))

    lines = ["{"]
    items = list(report.items())
    for i, (key, value) in enumerate(items):
        end = "," if i < len(items) - 1 else ""
        if isinstance(value, list) and value:
            lines.append(f"  {dumps(key)}: [")
            last = len(value) - 1
            lines.extend(f"    {dumps(v)}{',' if j < last else ''}" for j, v in enumerate(value))
            lines.append(f"  ]{end}")
        else:
            lines.append(f"  {dumps(key)}: {dumps(value)}{end}")
    lines.append("}")
    return "\n".join(lines)


def _clean_deep(v):
    if isinstance(v, dict):
        return {k: _clean_deep(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean_deep(x) for x in v]
    return _clean(v)


def _clean(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(v, list):
        return [_clean(x) for x in v]
    return v


def _array(t):
    """A tensor's values as a NumPy array, for either backend."""
    if hasattr(t, "_data") and not hasattr(t, "__torch_function__"):
        return np.asarray(t._data)
    return t.detach().cpu().numpy()


def _dtype_name(t):
    data = getattr(t, "_data", None)
    key = getattr(data, "dtype", None) if data is not None else None
    name = _DTYPE_NAMES.get(key) if key is not None else None
    if name is None:
        name = str(t.dtype).replace("torch.", "")
        if key is not None and not hasattr(t, "__torch_function__"):
            _DTYPE_NAMES[key] = name
    return name


_DTYPE_NAMES = {}       # NumPy dtype of a gradviz tensor's data -> its dtype's name


def _node_type(node):
    return type(node).__name__


class _Builder:
    def __init__(self, run, full):
        self.run = run
        self.full = full
        self.gv = run.backend == "gradviz"
        self.named = run.named
        self.name_of = {id(t): n for n, t in self.named}
        self.node_ids = {}
        self.nodes = []
        self.generated = []          # (name, tensor or None, node, nr)
        self._accumulators = None
        self._edges = {}             # id(node) -> next_functions, read once per node

    # ----- graph traversal (iterative, stable: preorder in next_functions order) ------------

    def traverse(self):
        """Number the nodes: roots' graphs first, then the rest, each in preorder."""
        starts = [t.grad_fn for _, t in self.named if t.grad_fn is not None]
        began = self._walk(starts)
        consumed = {id(fn) for node in self.nodes for fn, _ in self.edges(node)
                    if fn is not None}
        if all(id(fn) not in consumed for fn in began):
            return      # every walk began at a root: walking roots first gives the same order
        roots = [fn for fn in starts if id(fn) not in consumed]
        self.node_ids, self.nodes = {}, []
        self._walk(roots + starts)

    def _walk(self, starts):
        """Preorder from each start not seen yet; returns those starts."""
        began = []
        for start in starts:
            if id(start) in self.node_ids:
                continue
            began.append(start)
            stack = [start]
            while stack:
                node = stack.pop()
                if id(node) in self.node_ids:
                    continue
                self.node_ids[id(node)] = f"n{len(self.nodes)}"
                self.nodes.append(node)
                nexts = [fn for fn, _ in self.edges(node) if fn is not None]
                stack.extend(reversed(nexts))
        return began

    def output_names(self):
        """(node id, nr) -> tensor name; unnamed outputs get generated names like %3."""
        outs = {}
        for name, t in self.named:
            fn = t.grad_fn
            if fn is not None and id(fn) in self.node_ids:
                outs.setdefault((id(fn), t.output_nr), name)
        for i, node in enumerate(self.nodes):
            if _node_type(node) == "AccumulateGrad":
                var = node.variable
                if id(var) not in self.name_of:
                    name = f"%{i}"
                    self.name_of[id(var)] = name
                    self.generated.append((name, var, None, 0))
                outs[(id(node), 0)] = self.name_of[id(var)]
                continue
            if (id(node), 0) not in outs:
                t = self.run.tracer.output_of(node, 0) if self.gv else None
                name = f"%{i}"
                outs[(id(node), 0)] = name
                if t is not None and id(t) not in self.name_of:
                    self.name_of[id(t)] = name
                self.generated.append((name, t, node, 0))
        self.outs = outs

    # ----- pieces ---------------------------------------------------------------------------

    def site(self, node):
        where = getattr(node, "_where", None) if self.gv else None
        if not where:
            return None, None
        return where[0], where[1]

    def tensor_entry(self, name, t, consumed, generated=False, node=None):
        if t is None:
            # Only the node is known (no tracer): describe the node's output.
            return {"name": name, "shape": None, "dtype": None, "requires_grad": True,
                    "is_leaf": False, "grad_fn": _node_type(node),
                    "node": self.node_ids.get(id(node)), "accumulator": None,
                    "next_functions": self.next_names(node), "version": None,
                    "retains_grad": False, "is_parameter": False, "is_root": False,
                    "data": None, "grad": None, "file": None, "line": None,
                    "generated": True}
        fn = t.grad_fn
        grad = t.grad        # build_report ignores the non-leaf .grad warning
        file = line = None
        if fn is not None:
            file, line = self.site(fn)
        elif not generated:
            line = self.run.assignment_lines().get(name.split(".")[0].split("[")[0])
            file = self.run.path if line else None
        acc = self.accumulators().get(id(t)) if fn is None and t.requires_grad else None
        return {
            "name": name,
            "shape": list(t.shape),
            "dtype": _dtype_name(t),
            "requires_grad": bool(t.requires_grad),
            "is_leaf": bool(t.is_leaf),
            "grad_fn": None if fn is None else _node_type(fn),
            "node": None if fn is None else self.node_ids.get(id(fn)),
            "accumulator": acc,
            "next_functions": None if fn is None else self.next_names(fn),
            "version": int(t._version),
            "retains_grad": bool(t.retains_grad),
            "is_parameter": type(t).__name__ == "Parameter",
            "is_root": fn is not None and (id(fn), t.output_nr) not in consumed,
            "data": to_json_value(_array(t), self.full),
            "grad": None if grad is None else to_json_value(_array(grad), self.full),
            "file": file,
            "line": line,
            "generated": generated,
        }

    def edges(self, node):
        """node.next_functions, computed once per node."""
        e = self._edges.get(id(node))
        if e is None:
            e = self._edges[id(node)] = _next_functions(node)
        return e

    def accumulators(self):
        """id(leaf) -> id of the first AccumulateGrad node for it (built once)."""
        if self._accumulators is None:
            self._accumulators = {}
            for node in self.nodes:
                if _node_type(node) == "AccumulateGrad":
                    self._accumulators.setdefault(id(node.variable), self.node_ids[id(node)])
        return self._accumulators

    def next_names(self, node):
        return [[None if fn is None else _node_type(fn), nr] for fn, nr in self.edges(node)]

    def saved(self, node):
        """Saved values of a node; after backward freed them, as the tracer saw them before."""
        if not self.gv:
            return self._saved_public(node)
        tracer = self.run.tracer
        entries = saved_entries(node, tracer.output_of(node, 0))
        freed = False
        if entries == [] and _was_freed(node):
            entries, freed = tracer.saved_snapshot.get(node), True
            if entries is None:
                return [{"name": "_saved_" + n, "tensor": None, "shape": None, "dtype": None,
                         "saved_version": None, "version": None, "value": None, "freed": True}
                        for n in _saved_names(node)]
        out = []
        for e in entries or ():
            if not e.is_tensor:
                out.append({"name": e.label, "tensor": None, "shape": None, "dtype": None,
                            "saved_version": None, "version": None,
                            "value": _plain_value(e.value), "freed": freed})
                continue
            d = np.asarray(e.data)
            saved_t = e.tensor
            if saved_t is None and e.label == "_saved_result":
                saved_t = tracer.output_of(node, 0)
            out.append({"name": e.label,
                        "tensor": None if saved_t is None else self.name_of.get(id(saved_t)),
                        "shape": list(d.shape), "dtype": d.dtype.name,
                        "saved_version": int(e.saved_version), "version": int(e.version),
                        "value": None, "freed": freed})
        return out

    def _saved_public(self, node):
        out = []
        for attr in sorted(dir(node)):
            if not attr.startswith("_saved_"):
                continue
            try:
                v = getattr(node, attr)
            except RuntimeError:
                out.append({"name": attr, "tensor": None, "shape": None, "dtype": None,
                            "saved_version": None, "version": None, "value": None,
                            "freed": True})
                continue
            if hasattr(v, "shape") and hasattr(v, "grad_fn"):
                out.append({"name": attr, "tensor": self.name_of.get(id(v)),
                            "shape": list(v.shape), "dtype": _dtype_name(v),
                            "saved_version": None, "version": int(v._version), "value": None,
                            "freed": False})
            else:
                out.append({"name": attr, "tensor": None, "shape": None, "dtype": None,
                            "saved_version": None, "version": None,
                            "value": _plain_value(v), "freed": False})
        return out

    def node_entry(self, node, anomalies):
        nid = self.node_ids[id(node)]
        file, line = self.site(node)
        inputs = None
        raw_inputs = getattr(node, "_inputs", None) if self.gv else None
        if raw_inputs is not None:
            inputs = [None if t is None else self.name_of.get(id(t)) for t in raw_inputs]
        grads = self.run.tracer.last_grad.get(node) if self.gv else None
        grad = None
        if grads is not None:
            grad = to_json_value(grads[0], self.full) if len(grads) == 1 else \
                [None if g is None else to_json_value(g, self.full) for g in grads]
        is_acc = _node_type(node) == "AccumulateGrad"
        return {
            "id": nid,
            "name": _node_type(node),
            "tensor": self.outs.get((id(node), 0)),
            "variable": self.name_of.get(id(node.variable)) if is_acc else None,
            "next_functions": [[None if fn is None else self.node_ids.get(id(fn)), nr]
                               for fn, nr in self.edges(node)],
            "inputs": inputs,
            "saved": self.saved(node),
            "grad": grad,
            "anomaly": anomalies.get(id(node)),
            "file": file,
            "line": line,
        }


def _was_freed(node):
    return bool(getattr(node, "_released", False) or getattr(node, "_freed", False)
                or getattr(getattr(node, "_fn", None), "_released", False))


def _saved_names(node):
    fn = getattr(node, "_fn", node)
    e = getattr(fn, "_entry", None)
    return e.saved_names(fn._mask) if e is not None else ()


def _next_functions(node):
    try:
        return tuple(node.next_functions)
    except RuntimeError:
        return ()


def _plain_value(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return _clean(v) if isinstance(v, float) else v
    if isinstance(v, np.generic):
        return _clean(v.item())
    if isinstance(v, np.ndarray):
        return to_json_value(v)
    if isinstance(v, (tuple, list)):
        return [_plain_value(x) for x in v]
    if isinstance(v, np.dtype):
        return v.name
    if hasattr(v, "shape") and hasattr(v, "tolist"):
        return to_json_value(np.asarray(v.tolist()))
    return repr(v)


def _error_anomaly(info, builder):
    node = info.node
    if node is None or id(node) not in builder.node_ids:
        return None
    stack = getattr(node, "_stack", None) or []
    return {"node": builder.node_ids[id(node)], "name": _node_type(node),
            "message": info.message, "file": info.forward[0] if info.forward else None,
            "line": info.forward[1] if info.forward else None,
            "traceback": [{"file": f.filename, "line": f.lineno, "function": f.name,
                           "code": f.line} for f in stack]}


def build_report(run, full=False):
    """The plain-data report of a Run (see docs/report-schema.md)."""
    with warnings.catch_warnings():
        # Reading .grad of a non-leaf warns; the report shows None without the noise.
        warnings.simplefilter("ignore")
        return _build(run, full)


def _build(run, full):
    b = _Builder(run, full)
    b.traverse()
    b.output_names()
    consumed = set()
    for node in b.nodes:
        for fn, nr in b.edges(node):
            if fn is not None:
                consumed.add((id(fn), nr))
    anomalies = []
    by_node = {}
    for info in (run.error, run.backward_error):
        if info is not None:
            a = _error_anomaly(info, b)
            if a is not None:
                anomalies.append(a)
                by_node[id(info.node)] = a["message"]
    if b.gv:
        for node, i in run.tracer.nonfinite:
            if id(node) not in b.node_ids or id(node) in by_node:
                continue
            file, line = b.site(node)
            msg = f"Function '{node.name()}' returned nan or inf values in its {i}th output."
            anomalies.append({"node": b.node_ids[id(node)], "name": _node_type(node),
                              "message": msg, "file": file, "line": line, "traceback": []})
            by_node[id(node)] = msg
    tensors = [b.tensor_entry(n, t, consumed) for n, t in b.named]
    for name, t, node, _ in b.generated:
        tensors.append(b.tensor_entry(name, t, consumed, generated=True, node=node))
    nodes = [b.node_entry(n, by_node) for n in b.nodes]
    roots = [t["name"] for t in tensors if t["is_root"] and not t["generated"]]
    hooks = []
    if b.gv:
        for node, grads in run.tracer.events:
            if id(node) not in b.node_ids:
                continue
            for nr, g in enumerate(grads):
                if g is None:
                    continue
                target = b.outs.get((id(node), nr))
                hooks.append({"target": target or b.node_ids[id(node)],
                              "node": b.node_ids[id(node)],
                              "kind": "tensor" if target else "node",
                              "grad": to_json_value(g, full)})
    else:
        hooks = [{"target": name, "node": None, "kind": "tensor",
                  "grad": to_json_value(g, full)} for name, g in run.torch_hooks]
    error = run.error or run.backward_error
    return {
        "file": run.path,
        "backend": run.backend,
        "tensors": tensors,
        "nodes": nodes,
        "roots": roots,
        "backward": run.backward_root,
        "hooks": hooks,
        "anomalies": anomalies,
        "stdout": run.stdout,
        "warnings": [dict(w) for w in getattr(run, "warnings", ())],
        "exit_code": getattr(run, "exit_code", None),
        "error": None if error is None else error.to_dict(),
    }
