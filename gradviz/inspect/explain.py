"""explain: why is this tensor's .grad None, zero, or NaN?

Every cause is read off the recorded graph and the tracer (where each tensor was made and in
which grad mode, which backward calls ran from which roots, what gradient each node received,
which hook replaced one), never guessed from the source text.

>>> from gradviz.inspect.explain import explain                     # doctest: +SKIP
>>> explain("examples/relu_zero_grad.py", "x", root="loss")["causes"][0]["kind"]
'zero_gradient'
"""

import numpy as np

from ..autograd.graph import AccumulateGrad
from .report import _next_functions, to_json_value
from .session import run_file

__all__ = ["explain"]

# Nodes that can turn a non-zero gradient into zeros, and why.
_ZEROING = {
    "ReluBackward0": "relu passes no gradient where its input was <= 0",
    "ClampBackward1": "clamp passes no gradient where the value was outside [min, max]",
    "ClampBackward0": "clamp passes no gradient where the value was outside [min, max]",
    "MaxBackward0": "max over a dim sends the gradient only to the element it chose",
    "MaxBackward1": "max sends the gradient only to the largest element(s)",
    "MinBackward0": "min over a dim sends the gradient only to the element it chose",
    "MinBackward1": "min sends the gradient only to the smallest element(s)",
    "MaximumBackward0": "maximum sends the gradient to the larger input only",
    "MinimumBackward0": "minimum sends the gradient to the smaller input only",
    "WhereBackward0": "where sends the gradient only to the branch the condition chose",
    "MulBackward0": "a multiplication by zero",
    "IndexBackward0": "indexing passes gradient only to the selected elements",
    "SelectBackward0": "select passes gradient only to the selected elements",
    "SliceBackward0": "slicing passes gradient only to the selected elements",
}


def _cause(kind, message, site=None):
    site = site or (None, None)
    return {"kind": kind, "message": message, "file": site[0], "line": site[1]}


def _edge_node(t):
    """The node through which gradient reaches t (grad_fn, or the leaf's AccumulateGrad)."""
    if not t._rg:
        return None
    if t._fn is not None:
        return t._fn
    ref = t._acc
    return None if ref is None else ref()


def _path(root_node, target):
    """Nodes from root_node down to target along next_functions (BFS), or None."""
    parent = {id(root_node): None}
    nodes = {id(root_node): root_node}
    queue = [root_node]
    while queue:
        nxt = []
        for node in queue:
            if node is target:
                out = []
                cur = node
                while cur is not None:
                    out.append(cur)
                    cur = parent[id(cur)]
                return out[::-1]
            for fn, _ in _next_functions(node):
                if fn is not None and id(fn) not in parent:
                    parent[id(fn)] = node
                    nodes[id(fn)] = fn
                    nxt.append(fn)
        queue = nxt
    return None


def _consumers(nodes):
    out = {}
    for node in nodes:
        for fn, _ in _next_functions(node):
            if fn is not None:
                out.setdefault(id(fn), []).append(node)
    return out


def _nearest_named(start, run, consumers):
    """The closest named tensor downstream of start (what the tensor does feed into)."""
    by_node = {id(t._fn): n for n, t in run.named if t._fn is not None}
    seen = {id(start)}
    queue = [start]
    while queue:
        nxt = []
        for node in queue:
            for c in consumers.get(id(node), ()):
                if id(c) in seen:
                    continue
                if id(c) in by_node:
                    return by_node[id(c)], c
                seen.add(id(c))
                nxt.append(c)
        queue = nxt
    return None, None


def _site(node):
    return getattr(node, "_where", None)


def _label(node, run):
    if isinstance(node, AccumulateGrad):
        name = next((n for n, t in run.named if t is node.variable), "a leaf")
        return f"AccumulateGrad ({name})"
    name = next((n for n, t in run.named if t._fn is node), None)
    return f"{node.name()} ({name})" if name else node.name()


def _default_root(run, target_node):
    """The root to explain from: the file's own backward root if it reaches NAME, else a root
    that reaches NAME, else the file's backward root, else the first root."""
    by_node = {id(t._fn): n for n, t in run.named if t._fn is not None}
    called = [by_node[id(node)] for roots, _, _ in run.tracer.backward_calls for node in roots
              if id(node) in by_node]
    report_roots = run.report()["roots"]
    if target_node is not None:
        for r in called + report_roots:
            if _path(run.tensor(r)._fn, target_node) is not None:
                return r
    if called:
        return called[0]
    return report_roots[0] if report_roots else None


def explain(path, name, root=None, argv=()):
    """Explain NAME's gradient as plain data: tensor, root, grad, causes, path."""
    run = run_file(path, argv=argv, retain_grad=False)
    t = run.tensor(name)
    causes = []
    if run.error is not None:
        e = run.error
        causes.append(_cause("file_raised", f"the file raised {e.type}: {e.message} — what "
                             "follows describes the state when it stopped", (e.file, e.line)))
    target = _edge_node(t)
    if root is None:
        root = _default_root(run, target)
    root_t = run.tensor(root) if root is not None else None
    made = run.tracer.made_by.get(id(t))
    made_site = made[1] if made else None
    if t._fn is not None:
        made_site = _site(t._fn) or made_site

    # ----- Does NAME take part in autograd at all? ---------------------------------------
    if not t._rg:
        causes.append(_why_no_grad(t, name, made, run))
        return _result(run, name, root, t, causes, [])

    # ----- Did backward run from ROOT, and does it reach NAME? ---------------------------
    path_nodes = None
    if root_t is not None and root_t._fn is not None and target is not None:
        path_nodes = _path(root_t._fn, target)
    called = [c for c in run.tracer.backward_calls
              if root_t is not None and any(n is root_t._fn for n in c[0])]
    other_calls = [c for c in run.tracer.backward_calls if c not in called]
    if root_t is None or root_t._fn is None:
        what = "no root" if root_t is None else f"'{root}' has no grad_fn"
        causes.append(_cause("no_root", f"there is no graph to run backward through ({what})"))
        return _result(run, name, root, t, causes, [])
    if path_nodes is None:
        consumers = _consumers(run.tracer.nodes)
        start = target if target is not None else None
        near, _ = _nearest_named(start, run, consumers) if start is not None else (None, None)
        msg = f"'{name}' is not connected to '{root}': no path in the graph leads from " \
              f"{root}'s grad_fn to {name}"
        if near:
            msg += f"; the nearest tensor it does feed into is '{near}'"
        else:
            msg += "; nothing in the graph uses it"
        causes.append(_cause("not_connected", msg, made_site))
        return _result(run, name, root, t, causes, [])
    file_grad = None if t._grad is None else np.array(t._grad._data)
    if not called:
        if other_calls:
            where = other_calls[0][1]
            by_node = {id(x._fn): n for n, x in run.named if x._fn is not None}
            other = next((by_node[id(n)] for n in other_calls[0][0] if id(n) in by_node),
                         "another tensor")
            causes.append(_cause(
                "other_root", f"backward was called on '{other}', not on '{root}', and "
                f"'{other}' does not depend on '{name}': gradviz ran {root}.backward() "
                "afterwards to show what it gives", where))
        else:
            causes.append(_cause(
                "backward_not_called", f"the file never called backward; gradviz ran "
                f"{root}.backward() afterwards to explain what it would give"))
        _run_backward(run, root_t)

    # ----- What gradient arrived? ----------------------------------------------------------
    grad = _grad_reaching(run, t, target)
    if t._fn is not None and not t._retains:
        causes.append(_cause(
            "not_leaf", f"'{name}' is not a leaf (it was made by {t._fn.name()}), so its .grad "
            f"is not kept: call {name}.retain_grad() before backward to keep it (gradviz shows "
            "the gradient that reached it)", made_site))
    edited = _grad_edit(run, t)
    if edited is not None:
        causes.append(_cause("grad_edited", f"'{name}.grad' was changed in place ({edited.op}) "
                             "after backward computed it", edited.site))
    elif grad is not None:
        g = np.asarray(grad)
        if not np.all(np.isfinite(g)):
            causes.append(_nan_cause(run, path_nodes, name))
        elif not np.any(g):
            causes.append(_zero_cause(run, path_nodes, name))
        elif g.size > 1 and not np.all(g):
            c = _zero_cause(run, path_nodes, name)
            c["kind"] = "partly_zero"
            c["message"] = c["message"].replace("is zero", f"is zero in {int(g.size - np.count_nonzero(g))} of {g.size} elements", 1)
            causes.append(c)
    if t._fn is None:
        n = sum(1 for node, _ in run.tracer.events if node is target)
        if n > 1:
            last_call = run.tracer.backward_calls[-1][1] if run.tracer.backward_calls else None
            causes.append(_cause("accumulated", f"'{name}.grad' is the sum of {n} backward "
                                 "calls: gradients accumulate until zero_grad() or "
                                 f"{name}.grad = None", last_call))
    for node, nr, hook in run.tracer.hook_changes:
        if node is target:
            code = getattr(hook, "__code__", None)
            site = (code.co_filename, code.co_firstlineno) if code else None
            causes.append(_cause("hook", f"a hook on '{name}' replaced its gradient "
                                 f"({getattr(hook, '__name__', 'hook')})", site))
    if not [c for c in causes if c["kind"] not in ("backward_not_called", "file_raised")]:
        causes.append(_cause("ok", f"'{name}' is a leaf that requires grad and is reached from "
                              f"'{root}'; its gradient is what backward computed", made_site))
    return _result(run, name, root, t, causes, path_nodes, grad, file_grad)


def _why_no_grad(t, name, made, run):
    func, site, enabled = made if made else (None, None, True)
    if func in ("detach", "data"):
        how = "detach()" if func == "detach" else ".data"
        return _cause("detached", f"'{name}' was made by {how}, which cuts it from the graph: "
                      "it does not require grad and nothing flows back through it", site)
    if not enabled:
        return _cause("no_grad", f"'{name}' was made while grad mode was off (torch.no_grad() "
                      "or set_grad_enabled(False)), so it does not require grad", site)
    if t._fn is None and func in _CREATION:
        return _cause("no_requires_grad", f"'{name}' was created by {func}() without "
                      f"requires_grad=True: add requires_grad=True, or call "
                      f"{name}.requires_grad_()", site)
    return _cause("inputs_no_grad", f"'{name}' was computed ({func or 'an operation'}) from "
                  "inputs none of which require grad, so it does not require grad either",
                  site)


_CREATION = {"tensor", "ones", "zeros", "full", "empty", "ones_like", "zeros_like",
             "full_like", "empty_like", "rand", "randn", "randint", "rand_like", "randn_like",
             "arange", "linspace", "eye", "from_numpy", "as_tensor"}


def _run_backward(run, root_t):
    from .tracer import tracing
    grad = None if root_t.numel() == 1 else run.module.ones_like(root_t)
    try:
        with tracing(run.tracer):
            root_t.backward(grad, retain_graph=True)
    except RuntimeError:
        pass


def _grad_reaching(run, t, target):
    if t._fn is None:
        g = t._grad
        if g is not None:
            return np.asarray(g._data)
    grads = run.tracer.last_grad.get(target)
    if grads is None:
        return None
    nr = t._nr if t._fn is not None else 0
    return grads[nr] if nr < len(grads) else None


def _grad_edit(run, t):
    """The in-place edit of t.grad made after backward filled it, if any."""
    g = t._grad
    if g is None or not g._version:
        return None
    for ev in run.tracer.inplace_events:
        if ev.tensor is g or (g._vc is not None and ev.tensor._vc is g._vc):
            return ev
    return None


def _zeros(grads):
    """Number of zero elements among a node's received gradients (None if it got none)."""
    if grads is None:
        return None
    return sum(int(np.size(g) - np.count_nonzero(g)) for g in grads if g is not None)


def _zero_cause(run, path_nodes, name):
    last = run.tracer.last_grad
    for node, nxt in zip(path_nodes, path_nodes[1:]):
        g_in = last.get(node)
        g_out = last.get(nxt)
        got = g_in is not None and any(g is not None and np.any(g) for g in g_in)
        zero_after = g_out is None or all(g is None or not np.any(g) for g in g_out)
        more_zeros = (g_in is not None and g_out is not None and
                      _zeros(g_out) > 0 and _zeros(g_in) == 0)
        if got and (zero_after or more_zeros):
            why = _ZEROING.get(node.name(), "its backward formula gave zeros")
            return _cause("zero_gradient", f"the gradient reaching '{name}' is zero: "
                          f"{_label(node, run)} turned a non-zero gradient into zeros ({why})",
                          _site(node))
    return _cause("zero_gradient", f"the gradient reaching '{name}' is zero (the root's own "
                  "gradient was zero)", None)


def _nan_cause(run, path_nodes, name):
    on_path = {id(n) for n in path_nodes}
    for node, i in run.tracer.nonfinite:
        if id(node) in on_path:
            return _cause("nan_gradient", f"the gradient reaching '{name}' has NaN/inf: "
                          f"{_label(node, run)} produced it first (in its {i}th output), from "
                          "the forward line shown", _site(node))
    return _cause("nan_gradient", f"the gradient reaching '{name}' has NaN/inf values "
                  "(the root's gradient already had them)", None)


def _result(run, name, root, t, causes, path_nodes, grad=None, file_grad=False):
    path = []
    for node in path_nodes or []:
        site = _site(node) or (None, None)
        tensor = None
        if isinstance(node, AccumulateGrad):
            tensor = next((n for n, x in run.named if x is node.variable), None)
        else:
            tensor = next((n for n, x in run.named if x._fn is node), None)
        path.append({"node": node.name() if not isinstance(node, AccumulateGrad)
                     else "AccumulateGrad", "tensor": tensor, "file": site[0],
                     "line": site[1]})
    if file_grad is False:
        file_grad = None if t._grad is None else t._grad._data
    return {"file": run.path, "tensor": name, "root": root,
            "grad": None if file_grad is None else to_json_value(np.asarray(file_grad)),
            "computed": None if grad is None else to_json_value(np.asarray(grad)),
            "causes": causes, "path": path}
