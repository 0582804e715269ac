"""graph_columns: what `gradviz graph`'s default drawing shows of a run, read in one pass.

The report (report.py) describes every tensor and node in full, as dicts; a drawing of a
100,000-node graph reads a few fields of each. For the plain case (the backward view of a run
on gradviz's core, nothing but forward ops recorded), this reads those fields straight from the
recorded graph into columns indexed by node number: per node its type, edges, tensor made and
site, per tensor the pieces its label and tooltip show, from the report's numbering and names
(_Builder.traverse and output_names, without the entries). render/dot.py draws them
(build_columns) with the same bytes as from the report. Anything else the drawing would show
(a hook, a gradient, an in-place edit, an anomaly, a module call, a leaf used by two nodes, an
error) makes graph_columns answer None: the caller builds the report.

>>> graph_columns(None) is None     # not a Run on gradviz's core
True
"""

import math
from typing import NamedTuple

from ..autograd.graph import AccumulateGrad
from .report import _Builder, _clean, _core_value, _dtype_name, core_sites

__all__ = ["GraphColumns", "graph_columns"]

_INFINITE = (math.inf, -math.inf)


class GraphColumns(NamedTuple):
    """A run's graph as plain data, node i standing for the report's node "n<i>".

    kinds[i] is the node's type name, nexts[i] the indices of its next functions (None ones
    left out, repeats kept), made[i] the name of its output 0 (a key of tensors), or of the
    leaf an AccumulateGrad accumulates into, sites[i] its (file, line). tensors maps a name to
    (shape, dtype, requires_grad, is_leaf, grad_fn name, version, value, grad, is_root,
    index of the node that made it or None, is_parameter, file, line), as the report's
    tensor entry has them. roots are the report's "roots"."""

    file: str
    roots: list
    kinds: list
    nexts: list
    made: list
    sites: list
    tensors: dict


def graph_columns(run):
    """The GraphColumns of a Run, or None when its drawing needs the report (see above)."""
    if not _plain_run(run):
        return None
    b = _Builder(run, False, saved=False)
    b.traverse()
    b.output_names()
    if any(t is None for _, t, _, _ in b.generated):
        return None     # an output the tracer did not keep: the report says less of it
    columns = _links(b.nodes, b.index, b.walked_edges)
    if columns is None:
        return None
    kinds, nexts = columns
    tensors = _tensors(b)
    roots = [name for name, t in b.named if t._fn is not None and b.is_root(t._fn, t._nr)]
    return GraphColumns(run.path, roots, kinds, nexts, b.made, list(core_sites(b.nodes)),
                        tensors)


def _plain_run(run):
    """Whether the run's drawing shows nothing but its forward graph (see the module's text)."""
    if getattr(run, "backend", None) != "gradviz" or run.failed:
        return False
    tracer = run.tracer
    return not (tracer.backward_calls or tracer.hook_events or tracer.inplace_events
                or tracer.nonfinite or tracer.changed_grads or tracer.module_output
                or tracer.modules._count)


def _links(nodes, index, edges):
    """(kinds, nexts) of the numbered nodes; None when a node's drawing needs the report (a
    hook on it or on a leaf, a leaf used by two nodes)."""
    kinds, nexts = [], []
    user = {}       # AccumulateGrad -> the node that uses it
    for i, (node, e) in enumerate(zip(nodes, edges)):
        kind = type(node).__name__
        kinds.append(kind)
        if kind == "AccumulateGrad":
            var = node.variable
            if getattr(var, "_hooks", None) or getattr(var, "_post_hooks", None):
                return None
            nexts.append(())
            continue
        if not node._plain:     # a hook or retain_grad was added to it
            return None
        if len(e) == 1:     # most nodes: no list to build
            out = () if e[0] is None else (index[id(e[0])],)
        else:
            out = tuple([index[id(fn)] for fn in e if fn is not None])
        for j in out:
            # one with two users may be drawn once per depth of use (render/dot.py's
            # share_plan, which reads the report)
            if type(nodes[j]) is AccumulateGrad and user.setdefault(j, i) != i:
                return None
        nexts.append(out)
    return kinds, nexts


def _tensors(b):
    """name -> the pieces of the tensor's report entry that a drawing shows (tensor_entry's
    values, read from the core's slots), for the named tensors, then the generated ones."""
    index, fed, fed_other = b.index, b.fed, b.fed_other
    dtypes = {}     # NumPy dtype -> its name (_dtype_name)
    out = {}
    pairs = [(name, t) for name, t, _, _ in b.generated]
    for generated, made in ((False, b.named), (True, pairs)):
        for name, t in made:
            fn, data, grad = t._fn, t._data, t._grad
            if fn is None:
                root = node = kind = None
                file, line = b.tensor_site(t, name, generated, None)
            else:
                # b.is_root, inline
                node, nr = index.get(id(fn)), t._nr
                root = node is None or (not fed[node] & 1 if nr == 0
                                        else (node, nr) not in fed_other)
                kind = type(fn).__name__
                file = line = None      # a node's tensor: the node says where
            dtype = dtypes.get(data.dtype)
            if dtype is None:
                dtype = dtypes[data.dtype] = _dtype_name(t)
            if data.ndim:
                value = _core_value(data, False)
            else:       # a NumPy scalar or 0-d array: _core_value's case, inline
                value = data.item()
                if value != value or value in _INFINITE:
                    value = _clean(value)
            out[name] = (data.shape, dtype, bool(t._rg), fn is None, kind, int(t._version),
                         value, None if grad is None else _core_value(grad._data, False),
                         bool(root), node, type(t).__name__ == "Parameter", file, line)
    return out
