"""The backward engine: backward(), grad(), hooks and anomaly checks.

Iterative, never recursive: a dependency count per node (how many edges reach it from the
roots), then a ready queue ordered as torch's CPU queue orders it (AccumulateGrad first, then
the most recently created node first). A graph of a million nodes runs without touching
Python's recursion limit.
"""

import heapq
import itertools
import sys
import threading
import warnings

import numpy as np

from .. import _tensor  # imported before gradviz.autograd (gradviz._tensor imports it)
from .._fperr import enter_pass, leave_pass
from . import tracing as _tracing
from .callsite import user_stacklevel
from .grad_mode import _GradMode, _state
from .grad_mode import no_grad as _no_grad
from .graph import _NO_EDGE, AccumulateGrad, accumulate, edge_of, edges

__all__ = ["backward", "grad"]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate d(tensors)/d(leaf) into each leaf's .grad.

    >>> import gradviz as torch
    >>> a = torch.tensor(2.0, requires_grad=True)
    >>> torch.autograd.backward([a * 3]); a.grad
    tensor(3.)
    """
    Tensor = _tensor.Tensor
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments "
                               "both passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    if isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    if inputs is not None:
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        inputs = tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    roots, grads = _roots(tensors, grad_tensors, create_graph)
    if inputs is not None:
        for t in inputs:
            # torch calls retain_grad() on every input: a non-leaf's .grad is then filled by
            # the retain mechanism (and retains_grad reads True afterwards); leaves ignore it.
            t.retain_grad()
    _run(roots, grads, retain_graph, create_graph, inputs, capture=False)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching any .grad.

    With is_grads_batched=True the first dimension of each grad_output is a batch: the
    result has one vector-Jacobian product per batch entry (one backward pass each).

    >>> import gradviz as torch
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> (g,) = torch.autograd.grad(x ** 3, x, create_graph=True); g
    tensor(27., grad_fn=<MulBackward0>)
    """
    Tensor = _tensor.Tensor
    single = isinstance(inputs, Tensor)
    if isinstance(outputs, Tensor):
        outputs = (outputs,)
    if single:
        inputs = (inputs,)
    inputs = tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    for t in inputs:
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(tuple(outputs), inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    roots, grads = _roots(outputs, grad_outputs, create_graph)
    found = _run(roots, grads, retain_graph, create_graph, inputs, capture=True)
    return _results(inputs, found, allow_unused, materialize_grads)


def _results(inputs, found, allow_unused, materialize_grads):
    result = []
    for k, (t, g) in enumerate(zip(inputs, found)):
        if g is None:
            if materialize_grads:
                g = np.zeros_like(t._data)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
        result.append(None if g is None else _to_tensor(g))
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """grad(..., is_grads_batched=True) as one backward pass per batch entry (torch runs one
    vmapped pass; the values are the same, and without create_graph so is the result)."""
    from .._ops.views import stack
    Tensor = _tensor.Tensor
    if create_graph:
        raise NotImplementedError(
            "gradviz: torch.autograd.grad(is_grads_batched=True, create_graph=True) is not "
            "implemented by gradviz's core; run with --backend torch to use PyTorch")
    if grad_outputs is None or len(grad_outputs) != len(outputs) or any(
            not isinstance(g, Tensor) for g in grad_outputs):
        raise NotImplementedError(
            "gradviz: torch.autograd.grad(is_grads_batched=True) without a Tensor grad_output "
            "per output is not implemented by gradviz's core; run with --backend torch to use "
            "PyTorch")
    grad_outputs = tuple(grad_outputs)
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g.dim() == 0 or g.shape[1:] != out.shape:
            # torch prints the shape of grad_output[i][0] without its first dimension.
            inner = "torch.Size([" + ", ".join(str(s) for s in g.shape[2:]) + "])"
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {inner} and output[{i}] has a shape "
                f"of {out.shape}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap.")
    n = grad_outputs[0].shape[0]
    per_input = [[] for _ in inputs]
    for b in range(n):
        last = b == n - 1
        roots, grads = _roots(outputs, tuple(g[b].detach() for g in grad_outputs), False)
        found = _run(roots, grads, retain_graph or not last, False, inputs, capture=True)
        for k, g in enumerate(found):
            per_input[k].append(g)
    result = []
    for k, (t, gs) in enumerate(zip(inputs, per_input)):
        if all(g is None for g in gs):
            if materialize_grads:
                result.append(_to_tensor(np.zeros_like(t._data)))
            elif allow_unused:
                result.append(None)
            else:
                raise RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
            continue
        with _no_grad():
            result.append(stack([_to_tensor(np.zeros_like(t._data) if g is None else g)
                                 for g in gs]))
    return tuple(result)


def _roots(tensors, grad_tensors, create_graph):
    Tensor = _tensor.Tensor
    tensors = tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    grad_tensors = tuple(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    roots, grads = [], []
    for k, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not t._rg:
            raise _no_edge(k)
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t._data.dtype.kind != "f":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {t.dtype}")
            # ones (np.ones is a Python function over these two C calls; np.ones_like does
            # twice the work)
            g = _np_empty(t._data.shape, t._data.dtype)
            g.fill(1)
            if create_graph:
                g = _to_tensor(g)
        else:
            if not isinstance(g, Tensor):
                g = _to_tensor(np.asarray(g, dtype=t._data.dtype))
            if g._data.shape != t._data.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{k}] has a shape of "
                                   f"{g.shape} and output[{k}] has a shape of {t.shape}.")
            if g._data.dtype != t._data.dtype:
                g = g.to(t.dtype)       # torch casts before the backward (ToCopyBackward0)
            if not create_graph:
                g = g._data
        edge = edge_of(t)
        if edge[0] is None:     # a view that requires grad only through its base: torch's check
            raise _no_edge(k)
        roots.append(edge)
        grads.append(g)
    return roots, grads


def _no_edge(k):
    return RuntimeError(f"element {k} of tensors does not require grad and does not have a "
                        "grad_fn")


def _to_tensor(g):
    if isinstance(g, _tensor.Tensor):
        return g
    return _tensor._make(g if type(g) is np.ndarray else np.asarray(g))


def _discover(roots):
    """Dependency counts: how many edges reach each node from the roots (iterative DFS)."""
    deps = {}
    stack = []
    for node, _ in roots:
        if node not in deps:
            deps[node] = 0
            stack.append(node)
    while stack:
        node = stack.pop()
        nexts = node._next          # edges(node), without the call
        if type(nexts) is not tuple:
            nexts = (nexts,) if node._next1 is _NO_EDGE else (nexts, node._next1)
        for nxt in nexts:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    return deps


def _needed(deps, targets):
    """The strict ancestors of the target nodes: the nodes torch marks needed for them."""
    parents = {}
    for node in deps:
        for nxt in edges(node):
            if nxt is not None:
                parents.setdefault(nxt, []).append(node)
    needed = set()
    stack = [p for t in targets for p in parents.get(t, ())]
    while stack:
        node = stack.pop()
        if node in needed:
            continue
        needed.add(node)
        stack.extend(parents.get(node, ()))
    return needed


def _run(roots, root_grads, retain_graph, create_graph, inputs, capture):
    trace = _tracing.active
    if trace is None:
        return _pass(roots, root_grads, retain_graph, create_graph, inputs, capture)
    trace.begin(roots, inputs, capture)
    try:
        return _pass(roots, root_grads, retain_graph, create_graph, inputs, capture)
    finally:
        trace.end()     # (raised too: a tracer holding frames for the pass lets them go)


def _pass(roots, root_grads, retain_graph, create_graph, inputs, capture):
    """One backward pass (see _run, which tells a tracer where it begins and ends)."""
    deps = _discover(roots)
    captures = needed = None
    run = None      # torch's should_execute: the nodes needed or captured (None: every node)
    if inputs is not None:
        # Where each input's gradient is read: at its AccumulateGrad (leaf) or at the input
        # buffer of its grad_fn (non-leaf), exactly where torch captures it.
        where = {}
        for k, t in enumerate(inputs):
            node, nr = edge_of(t)
            where.setdefault(node, []).append((nr, k))
        run = needed = _needed(deps, where)
        if capture:
            captures = where
            run = needed | where.keys()
        else:
            # torch's backward(inputs=...) marks each input's node needed: a leaf's
            # AccumulateGrad accumulates, a non-leaf's grad_fn runs (its hooks too, with no
            # next node to send to) while retain_grad fills its .grad.
            needed.update(where)
    found = [None] * (len(inputs) if inputs is not None else 0)

    buffers = {}
    for (node, nr), g in zip(roots, root_grads):
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_out
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    ready = []
    pushed = set()
    for node, _ in roots:
        if node is not None and deps[node] == 0 and node not in pushed:
            pushed.add(node)
            heapq.heappush(ready, (-node._seq, node))

    tasks = _running()
    tasks.append((next(_task_ids), deps, run, captures))
    # torch's backward never warns about inf or nan (0 * inf in a formula, say): NumPy's
    # floating-point warnings are silenced once for the whole pass, not per node.
    mode = _PassMode(create_graph)
    quiet = enter_pass()        # np.errstate(divide, invalid, over = "ignore"), cheaper
    try:
        _loop(ready, buffers, deps, create_graph, retain_graph, captures, found, needed, mode)
    finally:
        leave_pass(quiet)
        mode.off()
        tasks.pop()
    return found


class _PassMode:
    """Grad mode for one backward pass: create_graph, as torch sets it, from the first node
    that may read it on. With create_graph the formulas record, so from the start; without it,
    only user code can tell (a hook, a custom Function's backward, a tracer's callback: every
    node but a built-in one on the engine's plain path), and a pass of built-in nodes alone
    never switches: two writes of the thread's mode fewer per backward."""

    __slots__ = ("_create_graph", "_mode", "_on")

    def __init__(self, create_graph):
        self._create_graph = create_graph
        self._on = False
        if create_graph:
            self.on()

    def on(self):
        if not self._on:
            self._mode = _GradMode(self._create_graph)     # (made only by a pass that switches)
            self._mode.__enter__()
            self._on = True

    def off(self):
        if self._on:
            self._on = False
            self._mode.__exit__()


# The backward passes running in each thread (a hook may start another), innermost last: (id,
# dependency counts, the nodes that run or are captured or None for all, grad()'s captures or
# None), for register_multi_grad_hook.
_threads = threading.local()
_task_ids = itertools.count()


def _running():
    """The calling thread's stack of running backward passes."""
    try:
        return _threads.tasks
    except AttributeError:
        _threads.tasks = []
        return _threads.tasks


def current_task():
    """(id, will_execute) of the innermost running backward pass; torch's
    _current_graph_task_id and _will_engine_execute_node."""
    tasks = _running()
    if not tasks:
        raise AssertionError("expected this hook to be called inside a backward call")
    tid, deps, run, captures = tasks[-1]

    def will_execute(node):
        if node not in deps or run is not None and node not in run:
            return False
        # torch refuses a captured node with no next function (topological_nr 0)
        if captures is not None and node in captures and all(n is None for n in edges(node)):
            raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                               "currently running autograd.grad(). This is currently not "
                               "supported.")
        return True
    return tid, will_execute


def _loop(ready, buffers, deps, create_graph, retain_graph, captures, found, needed, mode):
    """Run ready nodes until none is left, handing each output gradient to its next node.

    Sequence numbers are unique, so the heap never compares two nodes. A node with no hooks,
    no tracer, no captures and no anomaly mode takes the short path straight to its formula.
    """
    heappop, heappush = heapq.heappop, heapq.heappush
    trace = _tracing.active
    plain = needed is None and trace is None and not _state.anomaly
    if plain and not create_graph:
        return _plain_loop(ready, buffers, deps, retain_graph, mode)
    # A tracer listens: a node without hooks runs between its two calls (grad, sent), not
    # through _execute's full path
    traced = needed is None and trace is not None and not _state.anomaly
    private = None          # _layout_private(deps), found when a node first asks
    release = not retain_graph      # (the saved values are freed by _apply itself then)
    while ready:
        node = heappop(ready)[1]
        grads = buffers.pop(node, None)
        if grads is None:
            # No gradient reached node (what it gets is all None): torch runs it all the same,
            # its hooks seeing None, its saved values unpacked and then freed; a custom
            # Function's backward runs on zeros (or None).
            outs = _execute(node, [None] * node._n_out, create_graph, retain_graph, captures,
                            found, needed, mode)
        elif plain and node._plain:
            if grads[0] is None and len(grads) == 1:
                outs = _execute(node, grads, create_graph, retain_graph, captures, found, needed,
                                mode)
            else:
                try:
                    if not node._builtin:
                        mode.on()       # a custom Function's backward
                    if node._into is None or create_graph:
                        outs = node._apply(grads, create_graph, None, release)
                    else:
                        if private is None:
                            private = _layout_private(deps)
                        # (earlier nodes' values first, so they hold no reference to the
                        # gradient it may add into)
                        outs = g = old = None
                        if private and node._into(grads[0], buffers):
                            outs = ()
                            if not retain_graph:
                                node._release()
                        else:
                            outs = node._apply(grads, create_graph, None, release)
                except Exception as exc:
                    _annotate(exc, node)
                    raise
        elif traced and (grads[0] is not None or len(grads) > 1) and (
                node._plain or type(node) is AccumulateGrad and node._hooks is None
                and node._prehooks is None and not node.variable._hooks
                and not node.variable._post_hooks):
            # (a leaf without hooks too: _execute would do no more for it)
            mode.on()       # (the tracer's calls may read the grad mode)
            whole = trace.applies       # one call once it ran, or grad before and sent after
            if not whole:
                trace.grad(node, grads)
            try:
                outs = node._apply(grads, create_graph, None)
            except Exception as exc:
                if whole:
                    trace.grad(node, grads)
                _annotate(exc, node)
                raise
            if whole:
                trace.applied(node, grads, outs)
            else:
                trace.sent(node, outs)
            if not retain_graph and not trace.retain_all:
                node._release()
        elif (plain and type(node) is AccumulateGrad and not create_graph
              and node._hooks is None and node._prehooks is None):
            # A leaf without hooks: AccumulateGrad's plain case, here (it has no next node).
            g = grads[0]
            if g is not None:
                var = node.variable
                if var._hooks or var._post_hooks:
                    _execute(node, grads, create_graph, retain_graph, captures, found, needed, mode)
                else:
                    outs = old = None       # earlier nodes' values, so they hold no reference
                    # Referenced only by `grads`, `g` and getrefcount's argument: no one else
                    # can see this gradient, so it may become the first .grad as it is.
                    unshared = _getrefcount(g) <= _UNSHARED - 1
                    accumulate(var, g, unshared)
            continue
        else:
            outs = _execute(node, grads, create_graph, retain_graph, captures, found, needed, mode)
        nexts = node._next          # edges(node), without the call
        if type(nexts) is not tuple:
            nexts = (nexts,) if node._next1 is _NO_EDGE else (nexts, node._next1)
        if len(outs) < len(nexts):      # (a node that sends nothing returns ())
            outs = (*outs, *(None,) * (len(nexts) - len(outs)))
        nrs = node._nrs
        for nxt, g, nr in zip(nexts, outs, _ZEROS if nrs is None else nrs):
            if nxt is None:
                continue
            if g is not None:
                buf = buffers.get(nxt)
                if buf is None:
                    if nxt._n_out == 1:
                        buffers[nxt] = [g]
                    else:
                        buf = buffers[nxt] = [None] * nxt._n_out
                        buf[nr] = g
                else:
                    old = buf[nr]
                    # small arrays are added as they are: _add's checks cost more than the
                    # allocation they may save
                    buf[nr] = g if old is None else old + g if (
                        type(old) is not _ndarray or old.size < _INPLACE_MIN) else _add(old, g)
            d = deps[nxt] - 1
            deps[nxt] = d
            if d == 0:
                heappush(ready, (-nxt._seq, nxt))


def _plain_loop(ready, buffers, deps, retain_graph, mode):
    """_loop when nothing listens to the pass nor is made by it: no tracer, no anomaly mode,
    no `inputs` (nothing captured, every node needed) and no create_graph. This is a training
    step's backward. A built-in node without hooks goes straight to its formulas, a leaf
    without hooks takes its gradient (without a copy when no one else holds it); any other
    node (hooks, retain_grad, a custom Function, no gradient) takes _execute's full path,
    as in _loop. The order of the nodes, and so of every sum of gradients, is _loop's."""
    heappop, heappush = heapq.heappop, heapq.heappush
    private = None          # _layout_private(deps), found when a node first asks
    release = not retain_graph      # (the saved values are freed by _apply itself then)
    while ready:
        node = heappop(ready)[1]
        grads = buffers.pop(node, None)
        if type(node) is AccumulateGrad:
            if grads is not None and node._hooks is None and node._prehooks is None:
                g = grads[0]
                var = node.variable
                if g is not None and not var._hooks and not var._post_hooks:
                    # Earlier nodes' values go first, so that they hold no reference to g:
                    # then only `grads`, `g` and getrefcount's argument do, no one else can
                    # see this gradient, and it may become the first .grad as it is.
                    outs = old = None
                    unshared = _getrefcount(g) <= _UNSHARED - 1
                    accumulate(var, g, unshared)
                    continue
            _execute(node, [None] if grads is None else grads, False, retain_graph, None, None,
                     None, mode)
            continue
        if grads is not None and node._plain and (grads[0] is not None or len(grads) > 1):
            try:
                if not node._builtin:
                    mode.on()       # a custom Function's backward
                    outs = node._apply(grads, False, None, release)
                elif node._into is None:
                    outs = node._apply(grads, False, None, release)
                else:
                    if private is None:
                        private = _layout_private(deps)
                    # (earlier nodes' values first, so they hold no reference to the
                    # gradient it may add into)
                    outs = g = old = None
                    if private and node._into(grads[0], buffers):
                        outs = ()
                        if not retain_graph:
                            node._release()
                    else:
                        outs = node._apply(grads, False, None, release)
            except Exception as exc:
                _annotate(exc, node)
                raise
        else:
            outs = _execute(node, [None] * node._n_out if grads is None else grads, False,
                            retain_graph, None, None, None, mode)
        nxt = node._next            # edges(node), without the call
        if type(nxt) is not tuple and node._nrs is None and len(outs) > (
                node._next1 is not _NO_EDGE):
            # One or two edges, both to output 0 (most nodes), each with its gradient: handed
            # on here, without the tuples of the general case below
            for k in (0, 1):
                if k:
                    nxt = node._next1
                    if nxt is _NO_EDGE:
                        break
                if nxt is None:
                    continue
                g = outs[k]
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        if nxt._n_out == 1:
                            buffers[nxt] = [g]
                        else:
                            buf = buffers[nxt] = [None] * nxt._n_out
                            buf[0] = g
                    else:
                        old = buf[0]
                        buf[0] = g if old is None else old + g if (
                            type(old) is not _ndarray or old.size < _INPLACE_MIN) else _add(old, g)
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    heappush(ready, (-nxt._seq, nxt))
            continue
        nexts = nxt
        if type(nexts) is not tuple:
            nexts = (nexts,) if node._next1 is _NO_EDGE else (nexts, node._next1)
        nrs = node._nrs
        if nrs is None:
            nrs = _ZEROS
        if len(outs) < len(nexts):      # (a node that sends nothing returns ())
            outs = (*outs, *(None,) * (len(nexts) - len(outs)))
        for nxt, g, nr in zip(nexts, outs, nrs):
            if nxt is None:
                continue
            if g is not None:
                buf = buffers.get(nxt)
                if buf is None:
                    if nxt._n_out == 1:
                        buffers[nxt] = [g]
                    else:
                        buf = buffers[nxt] = [None] * nxt._n_out
                        buf[nr] = g
                else:
                    old = buf[nr]
                    buf[nr] = g if old is None else old + g if (
                        type(old) is not _ndarray or old.size < _INPLACE_MIN) else _add(old, g)
            d = deps[nxt] - 1
            deps[nxt] = d
            if d == 0:
                heappush(ready, (-nxt._seq, nxt))


def _layout_private(deps):
    """Whether no user code sees a gradient of this backward pass (every node is a built-in
    one without hooks or retain_grad, every leaf's AccumulateGrad is without tensor hooks): only
    then may a node lay out the gradient it sends as torch would not (Node._into). A custom
    Function's backward or a hook anywhere below sees the strides torch gives."""
    for node in deps:
        if type(node) is AccumulateGrad:
            if node._hooks is not None or node._prehooks is not None or node.variable._hooks:
                return False
        elif not (node._builtin and node._plain):
            return False
    return True


def _add(old, g):
    """old + g for an input buffer, summed into old in place when nothing else can see old
    (torch's InputBuffer::accumulate steals a gradient no one else holds, likewise): an array
    of at least _INPLACE_MIN elements that owns its memory, referenced only by the buffer and
    this call, of g's shape and dtype. The values are the same either way; only an allocation
    and a pass over new memory are saved, which costs more than it saves on small arrays."""
    if (type(old) is _ndarray and old.size >= _INPLACE_MIN and type(g) is _ndarray
            and old.shape == g.shape
            and old.dtype == g.dtype and old.flags.owndata and old.flags.writeable
            and _getrefcount(old) <= _UNSHARED):
        return _np_add(old, g, out=old)
    return old + g


# References to an unshared buffer entry inside _add: the buffer list, _loop's `old`, _add's
# parameter and getrefcount's argument.
_UNSHARED = 4
_INPLACE_MIN = 4096
_ndarray = np.ndarray
_np_add = np.add
_np_empty = np.empty
_ZEROS = itertools.repeat(0)     # the output numbers of edges to output 0 (zip stops first)
_getrefcount = sys.getrefcount


def _execute(node, grads, create_graph, retain_graph, captures, found, needed, mode):
    """Run one node: tensor hooks, retain_grad, pre-hooks, apply, post-hooks; with `inputs`,
    as torch's evaluate_function: a node neither needed nor captured does nothing, a captured
    node that is not needed runs its tensor hooks only, and its gradient is captured after
    them (a needed node's before them). A node all of whose gradients are None runs too, as
    in torch: its hooks see None."""
    mode.on()
    need = None
    trace = _tracing.active
    if needed is not None:
        hit = None if captures is None else captures.get(node)
        if node not in needed:
            if hit is not None:
                _tensor_hooks(node, grads, create_graph)
                if trace is not None:
                    trace.grad(node, grads)
                _capture(hit, grads, found)
            return ()
        if hit is not None:
            _capture(hit, grads, found)
        # torch's task_should_compute_output: only the edges to a node that runs or is
        # captured get a gradient; the others get None (post-hooks see None there).
        need = 0
        for i, nxt in enumerate(edges(node)):
            if nxt is not None and (nxt in needed or captures is not None and nxt in captures):
                need |= 1 << i
    _tensor_hooks(node, grads, create_graph)
    if node._prehooks:
        for hook in list(node._prehooks.values()):
            r = hook(tuple(None if g is None else _to_tensor(g) for g in grads))
            if trace is not None:
                trace.fired(node, "pre", None, hook, grads, r)
            if r is not None:
                _check_hook_values(hook, grads, r)
                grads = [None if g is None else (g if create_graph else _raw(g)) for g in r]
    if trace is not None:
        trace.grad(node, grads)
    try:
        if node._apply_none or any(g is not None for g in grads):
            outs = node._apply(grads, create_graph, need)
        else:
            # torch's generated backward functions and CopySlices: no gradient defined in,
            # None to every edge (any_grad_defined); the post-hooks still run. The generated
            # ones unpack their saved values first, so a freed or modified one raises there.
            node._unpack(grads, create_graph)
            outs = [None] * len(edges(node))
    except Exception as exc:
        _annotate(exc, node)
        raise
    if node._hooks:
        if trace is not None:
            trace.produced(node, outs)
        gin = tuple(None if g is None else _to_tensor(g) for g in outs)
        gout = tuple(None if g is None else _to_tensor(g) for g in grads)
        for hook in list(node._hooks.values()):
            r = hook(gin, gout)
            if trace is not None:
                trace.fired(node, "post", None, hook, outs, r)
            if r is not None:
                _check_hook_values(hook, gin, r)
                outs = [None if g is None else (g if create_graph else _raw(g)) for g in r]
        if trace is not None:
            trace.ran(node, outs)
    elif trace is not None:
        trace.sent(node, outs)      # (no post-hook: what it produced is what it sends)
    if not retain_graph and (trace is None or not trace.retain_all):
        node._release()
    # torch's evaluate_function checks for nan last: after the post-hooks, with the saved
    # tensors already released
    if _state.anomaly and _state.anomaly_nan:
        try:
            _check_nan(node, outs)
        except RuntimeError as exc:
            _annotate(exc, node)
            raise
    return outs


def _tensor_hooks(node, grads, create_graph):
    """The tensor hooks of each output of node, then retain_grad (torch's
    call_tensor_pre_hooks); a hook's return replaces the gradient in `grads`. As in torch, an
    output without a gradient (an unused output of a multi-output node) calls its hooks with
    None, and the outputs go in the order their first hook was registered (_tpre's keys)."""
    trace = _tracing.active
    for nr in node._tpre or range(len(grads)):
        hooks = node._tensor_hooks(nr)
        if hooks:
            for hook in list(hooks.values()):
                g = grads[nr]
                r = hook(None if g is None else _to_tensor(g))
                if trace is not None:
                    trace.fired(node, "tensor", nr, hook, g, r)
                if r is not None:
                    if g is None:
                        raise RuntimeError("can't replace a None gradient with a non-None value")
                    _check_hook_value(hook, g, r)
                    grads[nr] = r if create_graph else _raw(r)
                    if trace is not None:
                        trace.hooked(node, nr, hook)
    if node._retain is not None:
        for nr, ref in node._retain.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = grads[nr]
                if t._grad is None:
                    t._grad = _to_tensor(g if create_graph else np.array(g))
                elif create_graph:
                    t._grad = t._grad + g
                else:
                    t._grad = _to_tensor(t._grad._data + _raw(g))
                if trace is not None:
                    trace.fired(node, "retain_grad", nr, None, g, None)


def _capture(hit, grads, found):
    """grad()'s result for the inputs read at this node: [(output nr, input index)]."""
    for nr, k in hit:
        g = grads[nr]
        if g is not None:
            found[k] = g if found[k] is None else found[k] + g


def _hook_name(hook):
    return getattr(hook, "__name__", type(hook).__name__)


def _check_hook_values(hook, old, new):
    """torch's checks on what a node hook returned: one value per gradient, each as before."""
    new = tuple(new)
    if len(new) != len(old):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of "
                           f"values (got {len(new)}, but expected {len(old)})")
    for o, n in zip(old, new):
        if n is None:
            continue
        if o is None:
            raise RuntimeError("can't replace a None gradient with a non-None value")
        _check_hook_value(hook, o, n)


def _check_hook_value(hook, old, new):
    """torch's check_variable_result: a hook may not change a gradient's type or size."""
    Tensor, _TYPE_NAMES = _tensor.Tensor, _tensor._TYPE_NAMES
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    od = np.result_type(_raw(old))
    nd = new._data.dtype
    if od != nd:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was "
                           f"torch.{_TYPE_NAMES[od.name]} got torch.{_TYPE_NAMES[nd.name]})")
    if np.shape(_raw(old)) != new._data.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")


def _raw(t):
    return t._data if isinstance(t, _tensor.Tensor) else t


def _check_nan(node, outs):
    for i, g in enumerate(outs):
        if g is not None and np.isnan(np.sum(_raw(g))):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")


def _annotate(exc, node):
    """Remember which node failed (the inspector reads it); in anomaly mode warn with the
    forward stack, as torch does."""
    if getattr(exc, "_gradviz_node", None) is None:
        try:
            exc._gradviz_node = node
        except AttributeError:
            pass
    if _state.anomaly and node._stack is not None:
        import traceback
        stack = "".join(traceback.format_list(node._stack))
        # torch's text and category (its C++ warning names torch's own graph.py; this one
        # names the user's line that called backward)
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                      f"the error:\n{stack}", UserWarning, stacklevel=user_stacklevel())
