"""build_report: a Run as plain data (the `gradviz run --json` document).

Works from public autograd attributes (requires_grad, is_leaf, grad_fn, next_functions,
_version, retains_grad, grad, `_saved_*`), so a run on the real torch gives the same tables;
gradviz adds what only it records (file:line of every node, saved versions, forward inputs,
the gradient each node received). See docs/report-schema.md.
"""

import json
import math
import re
import warnings
from collections.abc import Sequence

import numpy as np

from .._gc import gc_paused
from ..autograd.callsite import site_at
from ..autograd.graph import edges as _core_edges
from ..autograd.saved import saved_names, saved_values, was_freed
from .loops import add_iterations
from .modules import add_modules

__all__ = ["build_report", "report_json", "to_json_value", "step_value", "VALUE_LIMIT",
           "STEP_LIMIT", "GradSummary", "Entries"]

VALUE_LIMIT = 10_000      # elements written in full in JSON without --full
STEP_LIMIT = 16           # elements of a gradient written in full in a backward step
_HISTORY = 20             # in-place edits of one tensor listed without --full (the last ones)


def _grad_fn(t):
    """t.grad_fn, or None where torch refuses to read it: a view made in no_grad mode whose
    base was then edited in place (torch's RuntimeError; its repr shows grad_fn=<Invalid>).
    The core's inspector reads its slot, None there too: on both backends such a view is
    described as a leaf without a grad_fn."""
    try:
        return t.grad_fn
    except RuntimeError:
        return None


def to_json_value(x, full=False):
    """Nested lists / numbers; nan and inf become the strings "nan", "inf", "-inf"."""
    if x is None:
        return None
    if isinstance(x, GradSummary):
        return x.text("; whole values were not kept" if full else "; --full for all values")
    a = np.asarray(x)
    if a.size > VALUE_LIMIT and not full:
        return _summary(a, "; --full for all values")
    if a.dtype.kind in "biuc" or a.dtype.kind == "f" and np.isfinite(a).all():
        return a.tolist()       # nothing to clean: 5x faster on a model's ~500 tensors
    return _clean(a.tolist())


def step_value(x):
    """A gradient in a backward step: whole up to STEP_LIMIT elements, else a summary."""
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, GradSummary):
        return x.text("")
    a = np.asarray(x)
    return _clean(a.tolist()) if a.size <= STEP_LIMIT else _summary(a, "")


class GradSummary:
    """A large gradient as a tracer may keep it instead of a copy: what to_json_value and
    step_value print of it (size, shape, min, max and mean of the values that are not NaN,
    and how many are NaN) and whether all its values are finite (what anomaly detection asks).

    >>> GradSummary(np.array([1.0, np.nan, 3.0])).text("")
    '<3 elements, shape [3]: min 1, max 3, mean 2, 1 NaN>'
    """

    __slots__ = ("size", "shape", "stats", "finite", "nans")

    def __init__(self, a):
        self.size, self.shape = a.size, list(a.shape)
        lo, hi, mean, count = _stats(a)
        self.stats = lo, hi, mean
        self.finite = count == a.size and math.isfinite(lo) and math.isfinite(hi)
        self.nans = a.size - count if a.dtype.kind == "f" else 0

    def text(self, tail):
        lo, hi, mean = self.stats
        # a NaN among 20,000 values must show: min/max/mean leave it out
        nans = f", {self.nans} NaN" if self.nans else ""
        return (f"<{self.size} elements, shape {self.shape}: min {lo:.4g}, "
                f"max {hi:.4g}, mean {mean:.4g}{nans}{tail}>")


def _summary(a, tail):
    return GradSummary(a).text(tail)


_CHUNK = 1 << 18


def summary_stats(a):
    """(min, max, mean) of an array, ignoring NaN, 262,144 elements at a time: a summary of
    a 2e8-element tensor must not cost a float64 copy of it (1.6 GB).

    >>> summary_stats(np.array([1.0, np.nan, 3.0], dtype=np.float32))
    (1.0, 3.0, 2.0)
    """
    return _stats(a)[:3]


def _stats(a):
    """summary_stats(a) and the number of values that are not NaN."""
    flat = a.reshape(-1)        # a copy only for a non-contiguous array
    if flat.dtype.kind not in "fiub":
        return float("nan"), float("nan"), float("nan"), 0
    lo, hi, total, count = math.inf, -math.inf, 0.0, 0
    for start in range(0, flat.size, _CHUNK):
        chunk = flat[start:start + _CHUNK]
        # min propagates NaN: a chunk without one (the usual case) needs neither a float64
        # copy nor a mask, 3x faster (a model's report summarises ~2,000 tensors); the sum
        # is still taken in float64
        first = chunk.min() if chunk.size else math.nan
        if not math.isnan(first):
            lo, hi = min(lo, float(first)), max(hi, float(chunk.max()))
            total += float(chunk.sum(dtype=np.float64))
            count += chunk.size
            continue
        chunk = chunk.astype(np.float64)
        ok = ~np.isnan(chunk)
        n = int(np.count_nonzero(ok))
        if n:
            lo = min(lo, float(np.min(chunk, where=ok, initial=math.inf)))
            hi = max(hi, float(np.max(chunk, where=ok, initial=-math.inf)))
            total += float(np.sum(chunk, where=ok))
            count += n
    if count == 0:
        return float("nan"), float("nan"), float("nan"), 0
    return lo, hi, total / count, count


class Entries(Sequence):
    """A report's "tensors" or "nodes" (build_report(lazy=True)): each entry is built whole
    when it is first read. Until then it is known by its brief, a dict of the keys every
    command reads of every entry: a node's "id", "name", "tensor", "variable", "file" and
    "line", a tensor's "name", "node", "accumulator", "is_root", "generated" and "edits", and
    what the loop, module and hook annotations add. A terminal `run` of a 100,000-node chain
    prints 2 nodes: it builds those 2 entries whole, not 100,000.

    >>> entries = Entries([{"id": "n0"}, {"id": "n1"}], lambda i, brief: dict(brief, name="M"))
    >>> entries[-1], len(entries), [e["id"] for e in entries.briefs]
    ({'id': 'n1', 'name': 'M'}, 2, ['n0', 'n1'])
    """

    def __init__(self, briefs, build):
        self.briefs = briefs
        self._build = build         # (index, brief) -> the whole entry
        self._whole = [None] * len(briefs)

    def __len__(self):
        return len(self.briefs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        whole = self._whole[i]
        return self._built(range(len(self))[i]) if whole is None else whole

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def whole(self):
        """Every entry, built: a list."""
        return [self._built(i) if w is None else w for i, w in enumerate(self._whole)]

    def _built(self, i):
        # The whole entry's keys in build order, then what annotations added to the brief
        # (the order `--json` writes them in).
        brief = self.briefs[i]
        whole = self._whole[i] = self._build(i, brief)
        whole.update(brief)
        return whole

    def __eq__(self, other):
        return isinstance(other, (list, Entries)) and list(self) == list(other)

    __hash__ = None


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
    # the report is a tree of fresh dicts and lists: no cycle to look for
    strict = json.JSONEncoder(ensure_ascii=True, allow_nan=False, check_circular=False).encode

    def dumps(value):
        try:
            return strict(value)
        except ValueError:      # a nan that no value cleaner saw: JSON has none, say "nan"
            return strict(_clean_deep(value))

    with gc_paused():   # the lines are all kept: a collection would only walk them again
        return _json_lines(report, dumps)


def _json_lines(report, dumps):
    """report_json's text, each value written by dumps."""
    lines = ["{"]
    items = list(report.items())
    for i, (key, value) in enumerate(items):
        end = "," if i < len(items) - 1 else ""
        if isinstance(value, (list, Entries)) and value:
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


def _core_value(d, full):
    """to_json_value of a core tensor's storage (an array or a NumPy scalar), without the
    0-d array a scalar would be wrapped in."""
    if isinstance(d, np.generic) or type(d) is np.ndarray and not d.ndim:
        return _clean(d.item())     # a 0-d array's tolist() is its item(): 5x faster
    return to_json_value(d, full)


def _array(t):
    """A tensor's values as a NumPy array, for either backend."""
    if hasattr(t, "_data") and not hasattr(t, "__torch_function__"):
        return np.asarray(t._data)
    return t.numpy(force=True)     # a torch ZeroTensor too (see torch_tracer._numpy)


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


def _op_name(node):
    """The op a node stands for, as the learner wrote it: MulBackward0 -> mul,
    NativeLayerNormBackward0 -> native_layer_norm; other nodes keep their name (CopySlices)."""
    name = _node_type(node)
    op = _OP_NAMES.get(name)
    if op is None:
        stem = re.sub(r"Backward\d*$", "", name)
        op = name if stem == name or not stem else \
            re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", stem).lower()
        _OP_NAMES[name] = op
    return op


_OP_NAMES = {}          # node type name -> its op name (one regex pair per type, not per node)


class _Builder:
    def __init__(self, run, full, saved=True):
        self.run = run
        self.full = full
        self.with_saved = saved      # node entries list what their node saved
        self.gv = run.backend == "gradviz"
        # the torch backend's tracer records what the core's does (torch_tracer.py); the
        # node attributes the core keeps (_where, _inputs, _seq) it answers for instead
        self.on_torch = run.backend == "torch"
        self.traced = self.gv or self.on_torch
        self.named = run.named
        self.name_of = {id(t): n for n, t in self.named}
        self.nodes = []
        self.index = {}              # id(node) -> its number (3 for "n3")
        self._node_ids = None        # id(node) -> its report id, "n3" (node_ids)
        self.made = []               # name of each node's output 0, after output_names
        self.outs = {}               # (id(node), nr) -> name of an output nr > 0 the file named
        self.generated = []          # (name, tensor or None, node, nr)
        self._short = {}             # id(tensor) -> "%3", for a generated name too long to nest
        self._edits_of = None        # id(tensor) -> its in-place edits (tracer events)
        self._version_of = None      # id(node) -> (tensor, version) it made, for edited tensors
        self._module_names = None    # id(module) -> its attribute name in the file
        self._accumulators = None
        self._edges = {}             # id(node) -> next_functions, for the entries built whole
        self._outputs = {}           # id(node) -> its output 0 (tracer), looked up once
        self._sites = {}             # id(node) -> (file, line) of the code that made it
        # what the edges consume, after traverse: per node number, 1 when its output 0 is
        # some edge's, 2 when another output is (those are in fed_other as (number, nr))
        self.fed = bytearray()
        self.fed_other = set()

    # ----- graph traversal (iterative, stable: preorder in next_functions order) ------------

    def traverse(self):
        """Number the nodes: roots' graphs first, then the rest, each in preorder."""
        starts = [fn for fn in map(_grad_fn, (t for _, t in self.named)) if fn is not None]
        began = self._walk(starts)
        if len(began) < 2:
            return      # one walk: its start is a root (a graph has no cycle to consume it)
        index, fed = self.index, self.fed
        if not any(fed[index[id(fn)]] for fn in began):
            return      # every walk began at a root: walking roots first gives the same order
        roots = [fn for fn in starts if not fed[index[id(fn)]]]
        self._walk(roots + starts)

    def _walk(self, starts):
        """Preorder from each start not seen yet; returns those starts. Numbers the nodes
        (nodes, index) and sets what their edges consume (fed, fed_other)."""
        if self.gv:
            return self._core_walk(starts)
        edges = self.edges
        nodes, index, _, began = _preorder(starts, lambda node: [fn for fn, _ in edges(node)])
        self._numbered(nodes, index)
        for node in nodes:
            for fn, nr in edges(node):
                if fn is not None:
                    self._feed(index[id(fn)], nr)
        return began

    def _core_walk(self, starts):
        """_walk on gradviz's core: each node's edges read once from its slots."""
        nodes, index, edges, began = _preorder(starts, _core_edges)
        self._numbered(nodes, index)
        self.walked_edges = edges       # each node's edges, as autograd.graph.edges reads them
        fed = self.fed
        for node, e in zip(nodes, edges):
            nrs = node._nrs
            if nrs is None:
                for fn in e:
                    if fn is not None:
                        fed[index[id(fn)]] |= 1
                continue
            for fn, nr in zip(e, nrs):
                if fn is not None:
                    self._feed(index[id(fn)], nr)
        return began

    def _numbered(self, nodes, index):
        self.nodes, self.index, self._node_ids = nodes, index, None
        self.fed, self.fed_other = bytearray(len(nodes)), set()

    @property
    def node_ids(self):
        """id(node) -> its report id, "n3" (made when first asked for: a drawing from
        graphdata's columns numbers its nodes without them)."""
        ids = self._node_ids
        if ids is None:
            ids = self._node_ids = {k: f"n{i}" for k, i in self.index.items()}
        return ids

    def _feed(self, i, nr):
        """An edge consumes output nr of node number i."""
        if nr == 0:
            self.fed[i] |= 1
        else:
            self.fed[i] |= 2
            self.fed_other.add((i, nr))

    def is_root(self, fn, nr):
        """Whether no edge consumes output nr of node fn (a node not numbered: none does)."""
        i = self.index.get(id(fn))
        if i is None:
            return True
        return not self.fed[i] & 1 if nr == 0 else (i, nr) not in self.fed_other

    def out_name(self, k, nr):
        """The name of output nr of the node whose id() is k, after output_names; None for an
        output with no name (one the file did not name, but output 0) or a node not
        numbered."""
        if nr:
            return self.outs.get((k, nr))
        i = self.index.get(k)
        return None if i is None else self.made[i]

    def output_names(self):
        """The name of each node's output 0 (made, by node number), and of the other outputs
        the file named (outs). Unnamed outputs get a name from what made them, `relu(h)` or
        `mul(w, …)` (… for a number or an unnamed constant), or `%3` (the node's index) when
        that would be long or taken; `%3` is accepted for every one of them."""
        outs, index = self.outs, self.index
        nodes, name_of, generated = self.nodes, self.name_of, self.generated
        made = self.made = [None] * len(nodes)
        taken = set(name_of.values())
        for name, t in self.named:
            fn = _grad_fn(t)
            i = None if fn is None else index.get(id(fn))
            if i is None:
                continue
            nr = t.output_nr
            if nr:
                outs.setdefault((id(fn), nr), name)
            elif made[i] is None:
                made[i] = name
        order = range(len(nodes))       # the nodes' indices, inputs before their outputs
        if self.gv:
            seqs = [getattr(node, "_seq", 0) for node in nodes]
            order = sorted(order, key=seqs.__getitem__)
        elif self.on_torch:
            order = sorted(order, key=lambda i: self.run.tracer.order(nodes[i]) or 0)
        versions = self._versions()
        shorts = self._short
        output_of = self.run.tracer.output_of if self.traced else None
        # only a module call's output can be named after the call (`fc1(x)`)
        calls = self.traced and bool(self.run.tracer.module_output)
        inputs_of = None if self.gv else self._inputs
        # One pass over every node: a name depends on the names before it (its inputs', and
        # every earlier one it must not repeat).
        add = taken.add
        for i in order:
            node = nodes[i]
            kind = type(node).__name__
            if kind == "AccumulateGrad":
                var = node.variable
                if id(var) not in name_of:
                    name = f"%{i}"
                    name_of[id(var)] = name
                    generated.append((name, var, None, 0))
                made[i] = name_of[id(var)]
                continue
            if made[i] is not None:
                continue
            earlier = versions.get(id(node)) if versions else None
            if earlier is not None:
                # A named tensor edited in place since: this node made an earlier version
                # of it. One tensor stays one row; the node is labelled with that version.
                base, v = earlier
                made[i] = f"{name_of[id(base)]} (v{v})"
                continue
            t = None if output_of is None else output_of(node, 0)
            name = None
            inputs = getattr(node, "_inputs", None) if inputs_of is None else inputs_of(node)
            if inputs is not None:
                if t is not None and calls:
                    name = self._call_name(t, taken)
                if name is None:
                    # `relu(h)`, `mul(w, …)`: kept when at most 40 characters and not taken
                    name = _op_call(node, kind, inputs, name_of, shorts, self._node_arg)
                    if len(name) > 40 or name in taken:
                        name = None
            if name is None:
                name = f"%{i}"
            add(name)
            made[i] = name
            if t is not None and id(t) not in name_of:
                name_of[id(t)] = name
                if len(name) > 24:      # the only names an input is given by `%3` for
                    shorts[id(t)] = f"%{i}"
            generated.append((name, t, node, 0))

    def _node_arg(self, x):
        """The name of an input given as (node, nr) (the torch tracer's inputs_of) in an op's
        generated name: its output's name, `%3` for one longer than 24 characters."""
        name = self.out_name(id(x[0]), x[1])
        if name is not None and len(name) > 24:
            name = f"%{self.node_ids[id(x[0])][1:]}"
        return name

    @property
    def aliases(self):
        """"%3" -> the generated name printed for it, after output_names."""
        node_ids, out = self.node_ids, {}
        for name, _, node, _ in self.generated:
            if node is not None:
                short = f"%{node_ids[id(node)][1:]}"
                if name != short:
                    out[short] = name
        return out

    def _edits(self):
        if self._edits_of is None:
            self._edits_of = edits = {}
            # the core's tracer: an _EditRows per tensor recorded; else an edit at a time
            groups = getattr(self.run.tracer, "edit_groups", None)
            groups = None if groups is None else groups()
            if groups is None:
                groups = [(e.tensor, [e]) for e in self.run.tracer.inplace_events]
            for base, group in groups:
                # an edit through a view (b[0] = 1) edits its base
                while getattr(base, "_base", None) is not None:
                    base = base._base
                earlier = edits.get(id(base))
                if earlier is None:
                    edits[id(base)] = group if type(group) is not list else list(group)
                elif type(group) is list:
                    earlier += group
                else:
                    edits[id(base)] = earlier.extended(group)
        return self._edits_of

    def _chain(self, t):
        """[(node, version it made)] for t's recorded in-place edits, oldest first, starting
        with the node that made t: each in-place node's first edge is the version before."""
        recorded = [e for e in self._edits().get(id(t), ()) if e.grad_enabled]
        nodes, node = [], _grad_fn(t)
        for _ in range(len(recorded) + 1):
            if node is None:
                break
            nodes.append(node)
            nexts = self.edges(node)
            node = nexts[0][0] if nexts else None
        if len(nodes) != len(recorded) + 1:
            return []
        nodes.reverse()
        first = recorded[0].version - 1 if recorded else int(t._version)
        return list(zip(nodes, [first] + [int(e.version) for e in recorded]))

    def _versions(self):
        """id(node) -> (named tensor, version) for nodes that made an earlier version of a
        named tensor edited in place since."""
        if self._version_of is None:
            self._version_of = {}
            if self.traced and self._edits():
                for _, t in self.named:
                    if id(t) in self._edits_of and self.name_of.get(id(t)):
                        for node, v in self._chain(t)[:-1]:
                            self._version_of[id(node)] = (t, v)
        return self._version_of

    def history(self, t, last=None):
        """[{"version", "grad_fn", "op", "grad_enabled", "file", "line"}] for each in-place edit
        of t (the `last` ones only, when given); grad_fn is the node that edit recorded (None
        under no_grad)."""
        edits = self._edits().get(id(t)) if self.traced else None
        if not edits:
            return []
        if last is not None and len(edits) > last:
            # (an optimizer edits a parameter at every step: a dict per step was made, and
            # all but the last few dropped)
            edits = edits[len(edits) - last:]
        made = {v: _node_type(node) for node, v in self._chain(t)[1:]}
        out = []
        for e in edits:
            site = e.site or (None, None)
            out.append({"version": int(e.version),
                        "grad_fn": made.get(int(e.version)) if e.grad_enabled else None,
                        "op": e.op, "grad_enabled": bool(e.grad_enabled),
                        "file": site[0], "line": site[1]})
        return out

    def _module_name(self, module):
        """The attribute name a module has in the file (`fc1` of model.fc1), or None."""
        name = self.module_path(module)
        return None if name is None else name.split(".")[-1]

    def module_path(self, module):
        """The name a module has in the file (`model.fc1`, `net.0`), or None."""
        if self._module_names is None:
            self._module_names = {}
            spaces = [self.run.namespace] + [f.f_locals for f, _, _ in self.run.tracer.frames]
            for space in spaces:
                for name, value in list(space.items()):
                    if not isinstance(name, str) or not _is_module_value(value):
                        continue
                    for path, m in value.named_modules():
                        self._module_names.setdefault(id(m), f"{name}.{path}" if path else name)
        return self._module_names.get(id(module))

    def _call_name(self, t, taken):
        """`fc1(x)` for the output of a module call the user wrote."""
        call = self.run.tracer.module_output.get(id(t))
        if call is None:
            return None
        module, first = call[0](), call[1]     # (weak references: the tracer's)
        name = None if module is None else self._module_name(module)
        if name is None:
            return None
        first = None if first is None else first()
        arg = None if first is None else self.name_of.get(id(first))
        if arg is not None and len(arg) > 24:
            arg = self._short.get(id(first))
        name = f"{name}({arg or '…'})"
        return name if name not in taken else None

    # ----- pieces ---------------------------------------------------------------------------

    def _inputs(self, node):
        """The tensors the call that made node was given (None: not recorded)."""
        if self.on_torch:
            return self.run.tracer.inputs_of(node)
        return getattr(node, "_inputs", None) if self.gv else None

    def _input_name(self, t):
        """The name of one of a node's inputs: a tensor, or (node, nr) for an output torch made
        inside one call with no Python object (the torch tracer's inputs_of)."""
        if t is None:
            return None
        if type(t) is tuple:
            return self.out_name(id(t[0]), t[1])
        return self.name_of.get(id(t))

    def site(self, node):
        """(file, line) of the code that made node, computed once per node (its tensor's
        entry and its own ask)."""
        k = id(node)
        site = self._sites.get(k)
        if site is None:
            where = self.run.tracer.site_of(node) if self.traced else None
            site = self._sites[k] = (where[0], where[1]) if where else (None, None)
        return site

    def _node_sites(self):
        """site(node) for each node in order (core_sites on gradviz's core)."""
        return core_sites(self.nodes) if self.gv else map(self.site, self.nodes)

    def tensor_briefs(self, made):
        """The keys of tensor_entry that every command reads (see Entries), for each (name,
        tensor or None, generated, node that made it) of made: one pass, names bound once."""
        node_ids, is_root, gv = self.node_ids, self.is_root, self.gv
        edits = self._edits() if self.traced else {}
        briefs = []
        for name, t, generated, node in made:
            if t is None:
                briefs.append({"name": name, "node": node_ids.get(id(node)),
                               "accumulator": None, "is_root": False, "generated": True,
                               "edits": 0})
                continue
            # the core's slots (grad_fn, output_nr): the same values, for less
            fn, nr = (t._fn, t._nr) if gv else (_grad_fn(t), None)
            if fn is None:
                briefs.append({"name": name, "node": None,
                               "accumulator": self.accumulators().get(id(t))
                               if t.requires_grad else None,
                               "is_root": False, "generated": generated,
                               "edits": len(edits.get(id(t), ())) if edits else 0})
                continue
            if nr is None:
                nr = t.output_nr
            briefs.append({"name": name, "node": node_ids.get(id(fn)), "accumulator": None,
                           "is_root": is_root(fn, nr), "generated": generated,
                           "edits": len(edits.get(id(t), ())) if edits else 0})
        return briefs

    def tensor_entry(self, t, brief, node=None):
        """The whole entry of tensor t (None: only the node that made it is known), its brief
        from tensor_briefs."""
        name, generated, history = brief["name"], brief["generated"], []
        if t is None:
            # Only the node is known (no tracer): describe the node's output.
            return {"name": name, "shape": None, "dtype": None, "requires_grad": True,
                    "is_leaf": False, "grad_fn": _node_type(node),
                    "node": brief["node"], "accumulator": None,
                    "next_functions": self.next_names(node), "version": None,
                    "retains_grad": False, "is_parameter": False, "is_root": False,
                    "data": None, "grad": None, "file": None, "line": None,
                    "generated": True, "history": history, "edits": 0}
        fn = _grad_fn(t)
        if brief["edits"]:
            history = self.history(t, None if self.full else _HISTORY)
        # gradviz's own slot: the property warns on a non-leaf, which costs more than the
        # rest of the entry (build_report ignores that warning on torch)
        grad = t._grad if self.gv else t.grad
        file, line = self.tensor_site(t, name, generated, fn)
        if self.gv:     # the core's slots, not its properties: the same values, for less
            shape = list(t._data.shape)
            data = _core_value(t._data, self.full)
        else:
            shape = list(t.shape)
            data = to_json_value(_array(t), self.full)
        return {
            "name": name,
            "shape": shape,
            "dtype": _dtype_name(t),
            "requires_grad": bool(t.requires_grad),
            "is_leaf": fn is None,     # torch's is_leaf (which refuses where grad_fn does)
            "grad_fn": None if fn is None else type(fn).__name__,
            "node": brief["node"],
            "accumulator": brief["accumulator"],
            "next_functions": None if fn is None else self.next_names(fn),
            "version": int(t._version),
            "retains_grad": bool(t.retains_grad),
            "is_parameter": type(t).__name__ == "Parameter",
            "is_root": brief["is_root"],
            "data": data,
            "grad": None if grad is None else to_json_value(_array(grad), self.full),
            "file": file,
            "line": line,
            "generated": generated,
            "history": history,
            "edits": brief["edits"],
        }

    def tensor_site(self, t, name, generated, fn):
        """(file, line) where tensor t (named name, its grad_fn fn) was made: its node's site,
        a function's local's recorded site, or the file's last top-level assignment to a
        leaf's name; (None, None) when unknown."""
        if fn is not None:
            return self.site(fn)
        if not generated and self.traced and self.run.made_in_function(name):
            made = self.run.tracer.made_of(t)
            return made[1] if made and made[1] else (None, None)
        if not generated:
            line = self.run.assignment_lines().get(name.split(".")[0].split("[")[0])
            return (self.run.path if line else None), line
        return None, None

    def output(self, node):
        """The tensor node made (its output 0) while it is alive; None without the tracer."""
        k = id(node)
        if k in self._outputs:
            return self._outputs[k]
        t = self._outputs[k] = self.run.tracer.output_of(node, 0) if self.traced else None
        return t

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
        if not self.traced:
            return self._saved_public(node)
        tracer = self.run.tracer
        if self.on_torch:
            entries = tracer.saved_of(node)
            freed = entries is None
            gone = freed
        else:
            entries = saved_values(node, self.output(node))
            freed = False
            gone = entries == [] and was_freed(node)
        if gone:
            entries, freed = tracer.saved_snapshot.get(node), True
            if entries is None:
                return [{"name": n, "tensor": None, "shape": None, "dtype": None,
                         "saved_version": None, "version": None, "value": None, "freed": True}
                        for n in (tracer.saved_names(node) if self.on_torch
                                  else saved_names(node))]
        # Backward frees saved tensors only: numbers, sizes and flags stay readable.
        kept = getattr(getattr(node, "_fn", node), "_kept", None) is not None
        out = []
        for e in entries or ():
            if not e.is_tensor:
                out.append({"name": e.label, "tensor": None, "shape": None, "dtype": None,
                            "saved_version": None, "version": None,
                            "value": _plain_value(e.value), "freed": freed and not kept})
                continue
            d = e.data
            if not isinstance(d, (np.ndarray, np.generic)):
                d = np.asarray(d)
            saved_t = e.tensor
            if saved_t is None and e.label == "_saved_result":
                saved_t = self.output(node)
            out.append({"name": e.label,
                        "tensor": None if saved_t is None else self.name_of.get(id(saved_t)),
                        "shape": list(d.shape), "dtype": d.dtype.name,
                        "saved_version": int(e.saved_version),
                        # after backward freed it, the version the tensor has now
                        "version": int(e.tensor._version if freed and e.tensor is not None
                                       else e.version),
                        # a Python number saved as a 0-d tensor (torch's wrapped number)
                        "value": None if e.value is None else _plain_value(e.value),
                        "freed": freed})
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

    def node_briefs(self):
        """The keys of node_entry that every command reads (see Entries), for every node:
        one pass, names bound once."""
        node_ids, name_of = self.node_ids, self.name_of
        briefs = []
        for node, made, (file, line) in zip(self.nodes, self.made, self._node_sites()):
            kind = type(node).__name__
            briefs.append({"id": node_ids[id(node)], "name": kind, "tensor": made,
                           "variable": name_of.get(id(node.variable))
                           if kind == "AccumulateGrad" else None,
                           "file": file, "line": line})
        return briefs

    def node_entry(self, node, anomalies, brief):
        """The whole entry of node, its brief from node_briefs."""
        inputs = None
        raw_inputs = self._inputs(node)
        if raw_inputs is not None:
            inputs = [self._input_name(t) for t in raw_inputs]
        grads = self.run.tracer.last_grad.get(node) if self.traced else None
        grad = None
        if grads is not None:
            grad = to_json_value(grads[0], self.full) if len(grads) == 1 else \
                [None if g is None else to_json_value(g, self.full) for g in grads]
        node_ids = self.node_ids
        return {
            "id": brief["id"],
            "name": brief["name"],
            "tensor": brief["tensor"],
            "variable": brief["variable"],
            "next_functions": [[None if fn is None else node_ids.get(id(fn)), nr]
                               for fn, nr in self.edges(node)],
            "inputs": inputs,
            "saved": self.saved(node) if self.with_saved else [],
            "grad": grad,
            "anomaly": anomalies.get(id(node)),
            "file": brief["file"],
            "line": brief["line"],
        }


def _is_module_value(value):
    from .names import _is_module
    try:
        return _is_module(value)
    except Exception:  # noqa: BLE001 - a user's object may raise anything when looked at
        return False


def _preorder(starts, edges_of):
    """Preorder from each start not seen yet, the edges of a node (its next nodes, None for
    an edge to nothing) in the order edges_of(node) gives them: (nodes, {id(node): index},
    each node's edges as edges_of gave them, the starts a walk began at)."""
    nodes, index, edges, began = [], {}, [], []
    for start in starts:
        if id(start) in index:
            continue
        began.append(start)
        stack = [start]
        while stack:
            node = stack.pop()
            k = id(node)
            if k in index:
                continue
            index[k] = len(nodes)
            nodes.append(node)
            e = edges_of(node)
            edges.append(e)
            if len(e) == 1:     # most nodes: no list to build
                if e[0] is not None:
                    stack.append(e[0])
            elif e:
                stack.extend(reversed([fn for fn in e if fn is not None]))
    return nodes, index, edges, began


def _op_call(node, kind, inputs, name_of, shorts, node_arg):
    """An op's generated name, `mul(w, …)`: each input's name (name_of: id(tensor) -> name),
    `…` for a number or an unnamed constant, `%3` for a name longer than 24 characters
    (shorts: id(tensor) -> `%3`); an input given as (node, nr) is named by node_arg."""
    args = []
    for x in inputs:
        if x is None:
            arg = None
        elif type(x) is tuple:
            arg = node_arg(x)
        else:
            arg = name_of.get(id(x))
            if arg is not None and len(arg) > 24:
                arg = shorts.get(id(x))
        args.append("…" if arg is None else arg)
    return f"{_OP_NAMES.get(kind) or _op_name(node)}({', '.join(args)})"


def core_sites(nodes):
    """(file, line) of the code that made each core node, in order: read from its slots (as
    Node._where does), once for a run of nodes made by the same instruction (a loop's chain),
    and not kept per node."""
    last_code = last_lasti = site = None
    for node in nodes:
        code, lasti = node._code, node._lasti
        if code is not last_code or lasti != last_lasti or site is None:
            last_code, last_lasti = code, lasti
            site = (None, None) if code is None else site_at(code, lasti)
        yield site


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
    if not stack and builder.traced and hasattr(builder.run.tracer, "forward_stack"):
        stack = builder.run.tracer.forward_stack(node)     # the torch tracer's node
    file, line = info.forward or builder.site(node)     # the torch tracer's node: its site
    return {"node": builder.node_ids[id(node)], "name": _node_type(node),
            "message": info.message, "file": file, "line": line,
            "traceback": [{"file": f.filename, "line": f.lineno, "function": f.name,
                           "code": f.line} for f in stack]}


def build_report(run, full=False, *, saved=True, loops=True, lazy=False, hooks=True):
    """The plain-data report of a Run (see docs/report-schema.md).

    A caller that reads only part of it may leave out the costly parts it does not read:
    saved=False leaves every node's "saved" list empty, loops=False leaves out "iterations"
    and the "loop" / "iteration" of tensors and nodes (`graph` without --show-saved reads
    neither: 0.7 s of its 3.5 s report on a 100,000-node chain), hooks=False leaves "hooks"
    (every gradient a live node received) empty (`run` without --hooks prints none; a
    training loop's parameters receive one each a step). lazy=True makes "tensors" and
    "nodes" Entries, which build each entry when it is first read (the terminal tables
    read the rows they print); the counts, roots, hooks, anomalies and annotations are
    computed over everything either way.
    """
    with warnings.catch_warnings(), gc_paused():
        # Reading .grad of a non-leaf warns; the report shows None without the noise.
        warnings.simplefilter("ignore")
        report = _build(run, full, saved, loops, lazy, hooks)
        if not lazy:
            report["tensors"], report["nodes"] = report["tensors"].whole(), report["nodes"].whole()
    return report


def _quiet(build):
    """build, with the warnings build_report ignores ignored (for an entry built later)."""
    def quietly(i, brief):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return build(i, brief)
    return quietly


def _build(run, full, saved=True, loops=True, lazy=False, with_hooks=True):
    b = _Builder(run, full, saved)
    b.traverse()
    b.output_names()
    anomalies = []
    by_node = {}
    for info in (run.error, run.backward_error):
        if info is not None:
            a = _error_anomaly(info, b)
            if a is not None:
                anomalies.append(a)
                by_node[id(info.node)] = a["message"]
    if b.traced:
        for node, i in run.tracer.nonfinite:
            if id(node) not in b.node_ids or id(node) in by_node:
                continue
            file, line = b.site(node)
            msg = f"Function '{node.name()}' returned nan or inf values in its {i}th output."
            anomalies.append({"node": b.node_ids[id(node)], "name": _node_type(node),
                              "message": msg, "file": file, "line": line, "traceback": []})
            by_node[id(node)] = msg
    made = [(n, t, False, None) for n, t in b.named] + \
        [(n, t, True, node) for n, t, node, _ in b.generated]
    tensors = b.tensor_briefs(made)
    nodes = b.node_briefs()
    roots = [t["name"] for t in tensors if t["is_root"] and not t["generated"]]
    hooks = []
    if b.traced and with_hooks:
        for node, grads in run.tracer.events:
            if id(node) not in b.node_ids:
                continue
            for nr, g in enumerate(grads):
                if g is None:
                    continue
                target = b.out_name(id(node), nr)
                hooks.append({"target": target or b.node_ids[id(node)],
                              "node": b.node_ids[id(node)],
                              "kind": "tensor" if target else "node",
                              "grad": to_json_value(g, full)})
    user_hooks, calls = _hooks_and_steps(run, b, tensors, nodes, full)
    error = run.error or run.backward_error
    report = {
        "file": run.path,
        "backend": run.backend,
        "tensors": tensors,
        "nodes": nodes,
        "roots": roots,
        "backward": run.backward_root,
        "hooks": hooks,
        "user_hooks": user_hooks,
        "backward_calls": calls,
        "anomalies": anomalies,
        "stdout": run.stdout,
        "stdout_cut": getattr(run, "stdout_cut", None),
        "warnings": [dict(w) for w in getattr(run, "warnings", ())],
        "exit_code": getattr(run, "exit_code", None),
        "error": None if error is None else _error_dict(error, run.path,
                                                         [t["name"] for t in tensors]),
    }
    if loops:
        add_iterations(report, run, b.nodes)
    add_modules(report, getattr(run.tracer, "modules", None), b.nodes)

    def tensor(i, brief):
        _, t, _, node = made[i]
        return b.tensor_entry(t, brief, node)

    def node(i, brief):
        return b.node_entry(b.nodes[i], by_node, brief)

    # an entry built later is built outside build_report's catch_warnings
    report["tensors"] = Entries(tensors, _quiet(tensor) if lazy else tensor)
    report["nodes"] = Entries(nodes, _quiet(node) if lazy else node)
    return report


# ----- The file's own hooks, and the engine's steps ------------------------------------------

_HOOK_KINDS = (("_tpre", "tensor"), ("_prehooks", "pre"), ("_hooks", "post"))


def _hook_site(hook):
    """(function name, file, line) of a hook: where its function is defined."""
    if hook is None:
        return "retain_grad", None, None
    # register_multi_grad_hook's tensor hooks are named by the file's function they call
    hook = getattr(hook, "_gradviz_for", hook)
    fn = getattr(hook, "__func__", hook)
    code = getattr(fn, "__code__", None)
    if code is None:
        code = getattr(getattr(type(hook), "__call__", None), "__code__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) \
        or type(hook).__name__
    if code is None:
        return name, None, None
    return name, code.co_filename, code.co_firstlineno


def _registered_hooks(node):
    """[(kind, input_nr, hook or None)] registered on a gradviz node now (retain_grad too)."""
    out = []
    if _node_type(node) == "AccumulateGrad":
        for hook in (getattr(node.variable, "_hooks", None) or {}).values():
            out.append(("tensor", 0, hook))
        for hook in (getattr(node.variable, "_post_hooks", None) or {}).values():
            out.append(("post_accumulate", 0, hook))
        return out
    for nr, hooks in sorted((getattr(node, "_tpre", None) or {}).items()):
        out += [("tensor", nr, hook) for hook in hooks.values()]
    for nr in sorted(getattr(node, "_retain", None) or {}):
        out.append(("retain_grad", nr, None))
    out += [("pre", None, hook) for hook in (getattr(node, "_prehooks", None) or {}).values()]
    # a module's backward hooks run inside gradviz's own post-hook: they are reported one by
    # one as they fire (Tracer.module_hook), the wrapper never
    out += [("post", None, hook) for hook in (getattr(node, "_hooks", None) or {}).values()
            if not getattr(hook, "_gradviz_module_hook", False)]
    return out


def _hook_value(v, full):
    if isinstance(v, list):
        return [None if g is None else to_json_value(g, full) for g in v]
    return to_json_value(v, full)


def _grads_value(grads):
    if grads is None:
        return None
    return [step_value(g) for g in grads]


def _hooks_and_steps(run, b, tensors, nodes, full):
    """The report's "user_hooks" and "backward_calls"; marks "hooks" on node entries and
    "grad_changed_by" on tensor entries (see docs/report-schema.md)."""
    for entry in nodes:
        entry["hooks"] = []
    for entry in tensors:
        entry["grad_changed_by"] = []
    if not b.traced:
        return [], []
    tracer = run.tracer
    # a node's entry by its id: built once a hook needs it
    by_id = _LazyIndex(nodes, "id")

    def target(node, kind, nr):
        if _node_type(node) == "AccumulateGrad":
            return b.name_of.get(id(node.variable))
        name = b.out_name(id(node), nr or 0)
        if name is None:
            t = tracer.output_of(node, nr or 0)
            name = None if t is None else b.name_of.get(id(t))
        return name

    user_hooks = []
    seen = set()
    modules = getattr(tracer, "hook_modules", {})
    n_calls = len(tracer.call_marks)
    for k, e in enumerate(tracer.hook_events):
        function, file, line = _hook_site(e.hook)
        nid = b.node_ids.get(id(e.node))
        forward = e.node is None
        user_hooks.append({
            "index": k, "call": None if forward else e.call, "kind": e.kind, "node": nid,
            # a forward hook: the backward call that came after it (null: none did)
            "before_call": (e.call + 1 if e.call + 1 < n_calls else None) if forward else None,
            "node_name": None if forward else _node_type(e.node),
            "target": None if forward else target(e.node, e.kind, e.nr),
            "module": b.module_path(modules[k]) if k in modules else None,
            "input_nr": e.nr, "function": function, "file": file, "line": line,
            "grad_in": _hook_value(e.given, full), "grad_out": _hook_value(e.returned, full),
            "changed": e.changed, "changed_upstream": sorted(e.taint)})
        if nid is not None:
            seen.add((nid, e.kind, e.nr, id(e.hook)))
            by_id[nid]["hooks"].append({"kind": e.kind, "input_nr": e.nr, "function": function,
                                        "file": file, "line": line})
    for node in b.nodes:
        if getattr(node, "_plain", False):
            continue        # no hook and no retain_grad was ever added to it (a core node)
        nid = b.node_ids[id(node)]
        for kind, nr, hook in _registered_hooks(node):
            if (nid, kind, nr, id(hook)) in seen:
                continue
            seen.add((nid, kind, nr, id(hook)))
            function, file, line = _hook_site(hook)
            by_id[nid]["hooks"].append({"kind": kind, "input_nr": nr, "function": function,
                                        "file": file, "line": line})

    by_name = _LazyIndex(tensors, "name")
    for t, call, hooks in tracer.changed_grads:
        name = b.name_of.get(id(t))
        if name in by_name:
            marks = by_name[name]["grad_changed_by"]
            marks += [k for k in sorted(hooks) if k not in marks]
            marks.sort()

    cli_call = getattr(run, "backward_call", None)
    calls = []
    for k, (roots, site, capture) in enumerate(tracer.backward_calls):
        by_gradviz = k == cli_call
        calls.append({
            "call": k, "kind": "grad" if capture else "backward",
            "roots": [None if r is None else (b.out_name(id(r), 0) or _node_type(r))
                      for r in roots],
            "file": None if by_gradviz or site is None else site[0],
            "line": None if by_gradviz or site is None else site[1],
            "by_gradviz": by_gradviz, "steps": [],
            # a long loop's earlier calls: their steps were let go (the tracer keeps the last
            # two calls' steps), so "steps" is empty without meaning that no node ran
            "steps_kept": k >= getattr(tracer, "steps_from_call", 0)})
    for step in tracer.steps:
        node = step.node
        acc = _node_type(node) == "AccumulateGrad"
        sent = []
        for i, (nxt, nr) in enumerate(_next_functions(node)):
            g = step.outs[i] if i < len(step.outs) else None
            sent.append({"node": None if nxt is None else b.node_ids.get(id(nxt)),
                         "name": None if nxt is None else _node_type(nxt), "input_nr": nr,
                         "grad": step_value(g)})
        calls[step.call]["steps"].append({
            "node": b.node_ids.get(id(node)), "name": _node_type(node),
            "tensor": None if acc else target(node, None, 0),
            "grad_in": _grads_value(step.grads), "grad_out": sent,
            "hooks": list(step.hooks),
            "accumulated": b.name_of.get(id(node.variable)) if acc else None})
    return user_hooks, calls


class _LazyIndex:
    """{entry[key]: entry} of a list of entries, built when first read (`in`, [])."""

    def __init__(self, entries, key):
        self._entries, self._key, self._index = entries, key, None

    def _built(self):
        if self._index is None:
            key = self._key
            self._index = {entry[key]: entry for entry in self._entries}
        return self._index

    def __contains__(self, k):
        return k in self._built()

    def __getitem__(self, k):
        return self._built()[k]


def _error_dict(error, path, names=()):
    """The error as plain data, with a fix hint for autograd's classic errors (names: the
    report's tensor names, so the hint names a function's local as the tables do)."""
    from .hints import hint_for
    d = error.to_dict()
    frames = [f for f in d["traceback"] if "function" in f]
    d["hint"] = hint_for(error.type, error.message, path, error.code,
                         function=frames[-1]["function"] if frames else None, names=names)
    return d
