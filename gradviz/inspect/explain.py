"""explain: why is this tensor's .grad None, zero, or NaN?

Every cause is read off the recorded graph and the tracer (where each tensor was made and in
which grad mode, which backward calls ran from which roots, what gradient each node received
in each call, every write into a .grad and what the file did to it in between, which hook
replaced a gradient), never guessed from the source text. A number explain prints is the one
torch gives on the same file: the tests run each kind of cause on torch 2.13 and compare.

>>> from gradviz.inspect.explain import explain                     # doctest: +SKIP
>>> explain("examples/relu_zero_grad.py", "x", root="loss")["causes"][1]["kind"]
'partly_zero'
"""

import contextlib
import difflib
import io
import warnings

import numpy as np

from .report import _array, _next_functions, to_json_value
from .inplace import version_counter
from .runner import UsageError, describe, execute, tracing_for
from .session import Run
from .tracer import Tracer

__all__ = ["explain", "KINDS"]

# Every kind of cause explain can print (the README and the tests list the same).
KINDS = ("file_raised", "not_leaf", "no_requires_grad", "inputs_no_grad", "no_grad", "detached",
         "no_root", "not_connected", "backward_not_called", "other_root", "autograd_grad",
         "not_reached", "backward_failed", "zero_gradient", "partly_zero", "nan_gradient",
         "accumulated", "hook", "grad_edited", "grad_cleared", "ok")

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

_CREATION = {"tensor", "ones", "zeros", "full", "empty", "ones_like", "zeros_like",
             "full_like", "empty_like", "rand", "randn", "randint", "rand_like", "randn_like",
             "arange", "linspace", "eye", "from_numpy", "as_tensor"}


# ----- What the tracer records for explain -------------------------------------------------------

class _GradHistory:
    """The writes backward made into one tensor's .grad, since the file last reset it.

    `count` backward calls are summed in .grad since it was None or zero (`reset`), or, when
    `reset` is "changed", since the file put a value of its own there. `after` is a copy of
    .grad as the last write left it: comparing with it tells what the file did in between.
    """

    __slots__ = ("count", "reset", "calls", "after", "before", "writes")

    def __init__(self):
        self.count, self.reset, self.calls = 0, None, []
        self.after = None
        self.before = None       # state at the start of the current backward call
        self.writes = 0          # every write, resets included

    def state(self, grad):
        """What .grad holds now, compared with the last write: none, same, zero or changed."""
        if grad is None:
            return "none"
        data = _values(grad)
        if self.after is not None and data.shape == self.after.shape and \
                np.array_equal(data, self.after, equal_nan=data.dtype.kind in "fc"):
            return "same"
        return "changed" if np.any(data) else "zero"

    def write(self, before, grad, call):
        if before == "same" and self.writes:
            self.count += 1
            self.calls.append(call)
        else:
            self.count, self.reset, self.calls = 1, before, [call]
        self.writes += 1
        self.after = np.array(_values(grad), copy=True)


class _ExplainRecords:
    """explain's records, on top of either backend's tracer: which backward call each gradient
    came from and every write into a .grad. Once `frozen`, the calls are explain's own and
    change no history."""

    def _start_records(self):
        self.calls = []          # {"roots", "site", "capture", "inputs", "start", "by_gradviz"}
        self.histories = {}      # id(tensor) -> _GradHistory
        self.tensors = {}        # id(tensor) -> tensor, keeping ids unique
        self.call_of_hook = []   # call index of each entry of hook_changes
        self.call_of_nonfinite = []
        self.frozen = False
        self._pending = {}       # AccumulateGrad -> state of its leaf's .grad before it ran

    def _history(self, t):
        h = self.histories.get(id(t))
        if h is None:
            h = self.histories[id(t)] = _GradHistory()
            self.tensors[id(t)] = t
        return h

    def _began(self, roots, site, capture, inputs):
        self.calls.append({"roots": roots, "site": site, "capture": capture,
                           "inputs": None if inputs is None else list(inputs),
                           "start": len(self.events), "by_gradviz": self.frozen})
        # A retained non-leaf's .grad is written before the tracer hears of it: remember what
        # the file left there since the last call.
        for key, h in self.histories.items():
            t = self.tensors[key]
            if t.grad_fn is not None:
                h.before = h.state(t._grad)

    def grad(self, node, grads):
        super().grad(node, grads)
        if self.frozen:
            return
        call = len(self.calls) - 1
        if _is_accumulator(node):
            var = node.variable
            h = self.histories.get(id(var))
            self._pending[node] = h.state(var._grad) if h else _GradHistory().state(var._grad)
            return
        for nr, t in self.retained(node):
            if t._grad is None or nr >= len(grads) or grads[nr] is None:
                continue
            h = self._history(t)
            if h.writes:
                before = h.before
            else:
                # First write: .grad was None if it now holds exactly this gradient.
                same = np.array_equal(_values(t._grad), _values(grads[nr]))
                before = "none" if same else "changed"
            h.write(before, t._grad, call)

    def produced(self, node, outs):
        n = len(self.nonfinite)
        super().produced(node, outs)
        self.call_of_nonfinite += [len(self.calls) - 1] * (len(self.nonfinite) - n)
        before = self._pending.pop(node, None)
        if before is not None and not self.frozen and node.variable._grad is not None:
            self._history(node.variable).write(before, node.variable._grad, len(self.calls) - 1)

    def hooked(self, node, nr, hook):
        super().hooked(node, nr, hook)
        self.call_of_hook.append(len(self.calls) - 1)

    def grads_in(self, k):
        """node -> the gradients it received in call k."""
        end = self.calls[k + 1]["start"] if k + 1 < len(self.calls) else len(self.events)
        return dict(self.events[self.calls[k]["start"]:end])


class _ExplainTracer(_ExplainRecords, Tracer):
    """The inspector's tracer on the built-in core, with explain's records."""

    def __init__(self):
        super().__init__(retain_grad=False, keep_history=True)
        self._start_records()

    def begin(self, roots, inputs, capture):
        super().begin(roots, inputs, capture)
        self._began([n for n, _ in roots], self.backward_calls[-1][1], capture, inputs)

    @staticmethod
    def retained(node):
        """[(output nr, tensor)] for the outputs of node that retain their grad."""
        if node._retain is None:
            return []
        return [(nr, t) for nr, t in ((nr, ref()) for nr, ref in node._retain.items())
                if t is not None]

    @staticmethod
    def accumulator(t):
        """The AccumulateGrad of leaf t, once an op used it (None before)."""
        ref = t._acc
        return None if ref is None else ref()


def _torch_tracer_class():
    """The torch backend's tracer with explain's records (made once torch is asked for)."""
    global _TorchExplainTracer
    if _TorchExplainTracer is not None:
        return _TorchExplainTracer
    from .torch_tracer import TorchTracer

    class _TorchExplain(_ExplainRecords, TorchTracer):
        """The torch tracer (torch_tracer.py), with explain's records."""

        def __init__(self):
            super().__init__(retain_grad=False, keep_history=True)
            self._start_records()
            self._inputs = None

        def _begin_backward(self, kind, args, kwargs):
            self._inputs = _backward_inputs(kind, args, kwargs, self.torch.Tensor)
            super()._begin_backward(kind, args, kwargs)

        def begin_at(self, roots, capture, site):
            super().begin_at(roots, capture, site)
            self._began([n for n, _ in roots], site, capture, self._inputs)
            self._inputs = None

        def _no_backward(self):
            super()._no_backward()
            self.calls.pop()

        def retained(self, node):
            """[(output nr, tensor)] for the outputs of node that retain their grad."""
            entry = self._entry(node)
            outs = None if entry is None else entry[2]
            found = [(nr, None if ref is None else ref()) for nr, ref in enumerate(outs or ())]
            return [(nr, t) for nr, t in found if t is not None and t.retains_grad]

        def accumulator(self, t):
            """The AccumulateGrad of leaf t, once an op used it (None before); the torch
            tracer keys it by its leaf (torch_tracer._key)."""
            entry = self._nodes.get(("leaf", id(t)))
            return None if entry is None else entry[1]()

    _TorchExplainTracer = _TorchExplain
    return _TorchExplain


_TorchExplainTracer = None


def _backward_inputs(kind, args, kwargs, tensor_type):
    """The inputs= of a backward call (always given to autograd.grad, its second argument),
    or None."""
    kwargs = kwargs or {}
    if kind == "grad" and len(args) > 1:
        inputs = args[1]
    else:
        inputs = kwargs.get("inputs")
    if inputs is None:
        return None
    return [inputs] if isinstance(inputs, tensor_type) else list(inputs)


def _values(x):
    """A tensor's (or a gradient's) values as a NumPy array, on either backend."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "_data") or hasattr(x, "detach"):
        return _array(x)
    return np.asarray(x)


def _grad_of(t):
    """t's .grad, without torch's warning about reading the .grad of a non-leaf (explain reads
    it to say why it is None)."""
    if t.grad_fn is None or t.retains_grad:
        return t._grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return t._grad


def _is_accumulator(node):
    return type(node).__name__ == "AccumulateGrad"


# ----- Names -----------------------------------------------------------------------------------

class _Names:
    """The file's tensor names, plus the `%N` names the tables print for unnamed tensors."""

    def __init__(self, run):
        self.run = run
        from .report import _Builder
        b = _Builder(run, False)
        b.traverse()
        b.output_names()
        self.pairs = list(run.named) + [(n, t) for n, t, _, _ in b.generated if t is not None]
        self.generated = {n for n, _, _, _ in b.generated}
        self.aliases = b.aliases
        self.of = {}
        for n, t in self.pairs:
            self.of.setdefault(id(t), n)
        self.by_node = {}           # id(grad_fn) -> name, `%N` names included
        self.file_by_node = {}      # id(grad_fn) -> a name the file itself assigned
        for n, t in self.pairs:
            fn = t.grad_fn
            if fn is not None:
                self.by_node.setdefault(id(fn), n)
                if n not in self.generated:
                    self.file_by_node.setdefault(id(fn), n)

    def tensor(self, name):
        name = self.aliases.get(name, name)
        for n, t in self.pairs:
            if n == name:
                return t
        names = [n for n, _ in self.pairs]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UsageError(f"no tensor named {name!r} in {self.run.path}.{hint} (tensors: "
                         f"{', '.join(names) or 'none'})")

    def label(self, node):
        if _is_accumulator(node):
            return f"AccumulateGrad ({self.of.get(id(node.variable), 'a leaf')})"
        name = self.by_node.get(id(node))
        return f"{node.name()} ({name})" if name else node.name()

    def root_of(self, call):
        return next((self.file_by_node[id(n)] for n in call["roots"]
                     if id(n) in self.file_by_node), "another tensor")


# ----- Graph walks -----------------------------------------------------------------------------

def _cause(kind, message, site=None, **extra):
    site = site or (None, None)
    return dict({"kind": kind, "message": message, "file": site[0], "line": site[1]}, **extra)


def _edge_node(tracer, t):
    """The node through which gradient reaches t (grad_fn, or the leaf's AccumulateGrad)."""
    if not t.requires_grad:
        return None
    if t.grad_fn is not None:
        return t.grad_fn
    return tracer.accumulator(t)


def _path(root_node, target):
    """Nodes from root_node down to target along next_functions (BFS), or None."""
    if root_node is None or target is None:
        return None
    parent = {id(root_node): None}
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


def _nearest_named(start, names, consumers):
    """The closest named tensor downstream of start (what the tensor does feed into)."""
    seen = {id(start)}
    queue = [start]
    while queue:
        nxt = []
        for node in queue:
            for c in consumers.get(id(node), ()):
                if id(c) in seen:
                    continue
                if id(c) in names.file_by_node:
                    return names.file_by_node[id(c)]
                seen.add(id(c))
                nxt.append(c)
        queue = nxt
    return None


def _site(tracer, node):
    return tracer.site_of(node)


def _retain_advice(run, name, made_site):
    """How to keep NAME's .grad, in code the user can write where they can write it: at
    module level `y.retain_grad()`; for a function's local (`step[2].y`), `y.retain_grad()`
    inside that function, after the line that made it."""
    local = _function_local(run, name)
    if local is None:
        return f"call {name}.retain_grad() before backward to keep it"
    function, expr = local
    where = ""
    if made_site:
        file, line = made_site
        where = f", after line {line}" if file == run.path else f", after {file}:{line}"
    return (f"write {expr}.retain_grad() inside {function}(){where}, before backward runs, to "
            "keep it")


def _function_local(run, name):
    """(function, local expression) for a function's local such as `step[2].y` -> ("step",
    "y") or `Net.forward.h` -> ("Net.forward", "h"); None for a module-level name."""
    from .names import frame_prefixes
    if not run.made_in_function(name):
        return None
    prefixes = sorted(set(frame_prefixes(run.tracer.frames)), key=len, reverse=True)
    for prefix in prefixes:
        if name.startswith(prefix + ".") or name.startswith(prefix + "["):
            rest = name[len(prefix):].lstrip(".")
            return prefix.split("[")[0], rest
    return None


def _delivered(tracer, k, t, target):
    """Did call k give t a gradient? A leaf only gets one when the call's inputs= (always
    given to autograd.grad) name it; a non-leaf when gradient flowed through it."""
    inputs = tracer.calls[k]["inputs"]
    if t.grad_fn is None and inputs is not None and not any(i is t for i in inputs):
        return False
    return target in tracer.grads_in(k)


def _reaches(call, target):
    return any(_path(n, target) is not None for n in call["roots"])


def _default_root(run, names, target_node):
    """The root to explain from: the file's own backward root if it reaches NAME, else a root
    that reaches NAME, else the file's backward root, else the first root. The last
    backward() call comes first: it wrote .grad (autograd.grad(y, x, create_graph=True) then
    g.backward() gives x.grad from g, not from y)."""
    calls = run.tracer.calls
    calls = [c for c in reversed(calls) if not c["capture"]] + [c for c in calls if c["capture"]]
    called = [names.file_by_node[id(node)] for c in calls for node in c["roots"]
              if id(node) in names.file_by_node]
    report_roots = run.report(lazy=True, loops=False, saved=False, hooks=False)["roots"]
    if target_node is not None:
        for r in called + report_roots:
            if _path(names.tensor(r).grad_fn, target_node) is not None:
                return r
    if called:
        return called[0]
    return report_roots[0] if report_roots else None


# ----- explain ---------------------------------------------------------------------------------

def _run(path, argv, backend):
    from .runner import backend_module
    module = backend_module(backend)        # without torch: the exit-2 error of every command
    tracer = _torch_tracer_class()() if backend == "torch" else _ExplainTracer()
    ns, out, error = execute(path, argv, backend, False, tracer)
    return Run(path, backend, ns, out, error, tracer, module)


def explain(path, name, root=None, argv=(), backend="gradviz"):
    """Explain NAME's gradient as plain data: tensor, root, grad, computed, causes, path, error.

    NAME is a name the file assigned (`x`, `model.weight`, `hs[0]`) or a `%N` name from the
    tables. When the file raised, `error` describes it and the first cause says so. On
    backend "torch" the file runs on PyTorch and every fact comes from that run.
    """
    run = _run(path, argv, backend)
    tracer = run.tracer
    tracer.frozen = True                 # from here on, nothing explain does is history
    names = _Names(run)
    causes = []
    if run.error is not None:
        e = run.error
        if e.type == "SyntaxError":
            msg = f"nothing ran: the file has a SyntaxError: {e.message}"
            missing = f", so there is no tensor named {name!r} to explain"
        else:
            msg = f"the file raised {e.type}: {e.message}"
            missing = f"; when it stopped there was no tensor named {name!r} to explain"
        try:
            t = names.tensor(name)
        except UsageError:
            causes.append(_cause("file_raised", msg + missing, (e.file, e.line)))
            return _result(run, names, name, root, None, causes, [])
        causes.append(_cause("file_raised", f"{msg} — what follows describes the state when "
                             "it stopped", (e.file, e.line)))
    else:
        t = names.tensor(name)
    target = _edge_node(tracer, t)
    if root is None:
        root = _default_root(run, names, target)
    try:
        root_t = names.tensor(root) if root is not None else None
    except UsageError:
        if run.error is None:
            raise
        causes[0]["message"] = causes[0]["message"].split(" — ")[0] + \
            f"; when it stopped there was no tensor named {root!r} to run backward from"
        return _result(run, names, name, root, t, causes, [])
    made = tracer.made_of(t)
    made_site = made[1] if made else None
    if t.grad_fn is not None:
        made_site = _site(tracer, t.grad_fn) or made_site

    # ----- Does NAME take part in autograd at all? ---------------------------------------
    if not t.requires_grad:
        causes.append(_why_no_grad(t, name, made))
        return _result(run, names, name, root, t, causes, [])
    if root_t is None or root_t.grad_fn is None:
        what = "no root" if root_t is None else f"'{root}' has no grad_fn"
        causes.append(_cause("no_root", f"there is no graph to run backward through ({what})"))
        return _result(run, names, name, root, t, causes, [])

    # ----- Does a path lead from ROOT to NAME? -------------------------------------------
    path_nodes = _path(root_t.grad_fn, target)
    if path_nodes is None:
        near = _nearest_named(target, names, _consumers(tracer.nodes)) if target else None
        msg = f"'{name}' is not connected to '{root}': no path in the graph leads from " \
              f"{root}'s grad_fn to {name}"
        msg += f"; the nearest tensor it does feed into is '{near}'" if near else \
            "; nothing in the graph uses it"
        causes.append(_cause("not_connected", msg, made_site))
        return _result(run, names, name, root, t, causes, [])

    # ----- Which backward call from ROOT does the gradient come from? ---------------------
    held = _grad_of(t)
    file_grad = None if held is None else np.array(_values(held))
    history = tracer.histories.get(id(t))
    final_state = history.state(held) if history else None
    after_causes = _after_last_write(run, name, t, history, final_state)
    file_calls = [k for k, c in enumerate(tracer.calls) if not c["by_gradviz"]]
    root_fn = root_t.grad_fn
    from_root = [k for k in file_calls if any(n is root_fn for n in tracer.calls[k]["roots"])]
    reached = [k for k in from_root if _delivered(tracer, k, t, target)]
    if reached:
        call = reached[-1]
    else:
        causes += _why_not_called(tracer, names, name, root, target, file_calls, from_root)
        call, failure = _compute(run, root_t, t)
        if failure is not None:
            causes.append(failure)
            return _result(run, names, name, root, t, causes, path_nodes, None, file_grad)
    grads = tracer.grads_in(call)
    computed = _grad_reaching(t, target, grads)

    # ----- Why .grad holds what it holds ------------------------------------------------
    if t.grad_fn is not None and not t.retains_grad:
        fix = _retain_advice(run, name, made_site) \
            if name not in names.generated and name not in names.aliases else "the file has no name for it either"
        causes.append(_cause(
            "not_leaf", f"'{name}' is not a leaf (it was made by {t.grad_fn.name()}), so its .grad "
            f"is not kept: {fix} (gradviz shows the gradient that reached it)", made_site))
    elif file_grad is None and reached and history is None and \
            all(tracer.calls[k]["capture"] for k in from_root):
        lines = sorted({tracer.calls[k]["site"][1] for k in from_root
                        if tracer.calls[k]["site"]})
        at = f" (lines {', '.join(map(str, lines))})" if len(lines) > 1 else ""
        causes.append(_cause(
            "autograd_grad", f"the file computed the gradient from '{root}' with "
            f"torch.autograd.grad{at}, which returns gradients instead of storing them in "
            f".grad: '{name}.grad' stays None", tracer.calls[reached[-1]]["site"]))
    causes += after_causes

    # ----- The value of the gradient from ROOT -------------------------------------------
    if computed is not None:
        g = np.asarray(computed)
        if not np.all(np.isfinite(g)):
            causes.append(_nan_cause(tracer, names, call, grads, path_nodes, name))
        elif not np.any(g):
            causes.append(_zero_cause(grads, names, path_nodes, name))
        elif g.size > 1 and not np.all(g):
            c = _zero_cause(grads, names, path_nodes, name)
            zeros = int(g.size - np.count_nonzero(g))
            c["kind"] = "partly_zero"
            c["message"] = c["message"].replace("is zero", f"is zero in {zeros} of {g.size} "
                                                "elements", 1)
            causes.append(c)
    if history is not None and final_state == "same" and \
            (history.count > 1 or history.reset == "changed"):
        causes.append(_accumulated(tracer, name, history))
    counted = set(history.calls) if history is not None and final_state == "same" else set()
    for (node, nr, hook), k in zip(tracer.hook_changes, tracer.call_of_hook):
        if node is target and (k == call or k in counted):
            code = getattr(hook, "__code__", None)
            site = (code.co_filename, code.co_firstlineno) if code else None
            causes.append(_cause("hook", f"a hook on '{name}' replaced its gradient "
                                 f"({getattr(hook, '__name__', 'hook')})", site))
            break
    causes += _post_accumulate_causes(tracer, name, t, target, {call} | counted)
    quiet = ("backward_not_called", "file_raised")
    if not [c for c in causes if c["kind"] not in quiet]:
        causes.append(_ok(t, name, root, file_grad, made_site))
    return _result(run, names, name, root, t, causes, path_nodes, computed, file_grad)


def _post_accumulate_causes(tracer, name, t, target, calls):
    """Hooks above NAME that changed the gradient on its way (it is what reached NAME), and a
    post-accumulate-grad hook that changed NAME's .grad in place after backward wrote it, in
    one of `calls` (the first such hook: it is why .grad is not what backward computed)."""
    out = []
    # (a hook on NAME itself is the "a hook on NAME replaced its gradient" cause)
    upstream = sorted({k for tensor, call, taint in tracer.changed_grads
                       if tensor is t and call in calls for k in taint
                       if tracer.hook_events[k].kind != "post_accumulate"
                       and tracer.hook_events[k].node is not target})
    if upstream:
        where = [_hook_where(tracer.hook_events[k].hook) for k in upstream]
        out.append(_cause("hook", f"hooks above '{name}' changed the gradient on its way to "
                          f"it: {', '.join(where)}"))
    for e in tracer.hook_events:
        if e.kind != "post_accumulate" or not e.changed or e.call not in calls or \
                getattr(e.node, "variable", None) is not t:
            continue
        code = getattr(e.hook, "__code__", None)
        site = (code.co_filename, code.co_firstlineno) if code else None
        return out + [_cause("hook", f"a post-accumulate-grad hook on '{name}' "
                             f"({getattr(e.hook, '__name__', 'hook')}) changed its .grad in "
                             "place after backward wrote it, so .grad is not the gradient "
                             "shown", site)]
    return out


def _hook_where(hook):
    """`scale (line 18)`: a hook's function and the line that defines it."""
    code = getattr(hook, "__code__", None)
    at = f" (line {code.co_firstlineno})" if code else ""
    return f"{getattr(hook, '__name__', 'hook')}{at}"


def _why_no_grad(t, name, made):
    func, site, enabled = made if made else (None, None, True)
    if func in ("detach", "data"):
        how = "detach()" if func == "detach" else ".data"
        return _cause("detached", f"'{name}' was made by {how}, which cuts it from the graph: "
                      "it does not require grad and nothing flows back through it", site)
    if not enabled:
        return _cause("no_grad", f"'{name}' was made while grad mode was off (torch.no_grad() "
                      "or set_grad_enabled(False)), so it does not require grad", site)
    if t.grad_fn is None and func in _CREATION:
        return _cause("no_requires_grad", f"'{name}' was created by {func}() without "
                      f"requires_grad=True: add requires_grad=True, or call "
                      f"{name}.requires_grad_()", site)
    return _cause("inputs_no_grad", f"'{name}' was computed ({func or 'an operation'}) from "
                  "inputs none of which require grad, so it does not require grad either",
                  site)


def _why_not_called(tracer, names, name, root, target, file_calls, from_root):
    """Why no backward call of the file's sends a gradient from ROOT to NAME."""
    if from_root:
        c = tracer.calls[from_root[-1]]
        limit = " (its inputs= did not include it)" if c["inputs"] is not None else ""
        return [_cause("not_reached", f"backward from '{root}' did not send a gradient to "
                       f"'{name}'{limit}: gradviz computed the gradient from {root} afterwards "
                       "to show what it would give", c["site"])]
    if not file_calls:
        return [_cause("backward_not_called", f"the file never called backward; gradviz "
                       f"computed the gradient from {root} afterwards to explain what "
                       f"{root}.backward() would give")]
    c = tracer.calls[file_calls[-1]]
    other = names.root_of(c)
    if _reaches(c, target):
        link = f"'{name}.grad' comes from that call"
    else:
        link = f"'{other}' does not depend on '{name}'"
    return [_cause("other_root", f"backward was called on '{other}', not on '{root}', and "
                   f"{link}: gradviz computed the gradient from {root} afterwards to show what "
                   "it gives", c["site"])]


def _compute(run, root_t, t):
    """Run backward from ROOT to NAME after the file, leaving every .grad as the file left it.

    Returns (call index, None), or (None, a backward_failed cause)."""
    seed = None if root_t.numel() == 1 else run.module.ones_like(root_t)
    try:
        # Hooks in the file may print: not onto explain's own output.
        with tracing_for(run.tracer, run.backend), contextlib.redirect_stdout(io.StringIO()):
            run.module.autograd.grad(root_t, t, seed, retain_graph=True, allow_unused=True)
    except Exception as exc:  # noqa: BLE001 - reported as a cause
        info = describe(exc, run.path)
        site = info.forward or _last_reached(run.tracer) or (info.file, info.line)
        return None, _cause("backward_failed", "gradviz could not compute the gradient "
                            f"after the file ran: {str(exc).split('. ')[0].rstrip('.')}.", site)
    return len(run.tracer.calls) - 1, None


def _last_reached(tracer):
    """The forward line of the node backward was running when it raised: the last one that
    received a gradient in the last call (torch's error does not name the node; the core's
    does, as describe's `forward`)."""
    call = tracer.calls[-1] if tracer.calls else None
    events = tracer.events[call["start"]:] if call is not None else ()
    return tracer.site_of(events[-1][0]) if events else None


def _grad_reaching(t, target, grads):
    received = grads.get(target)
    if received is None:
        return None
    nr = t.output_nr if t.grad_fn is not None else 0
    return received[nr] if nr < len(received) else None


def _after_last_write(run, name, t, history, state):
    """What the file did to .grad after backward last wrote it."""
    if history is None:
        if _grad_of(t) is not None:
            return [_cause("grad_edited", f"'{name}.grad' was set by the file: no backward "
                           "call wrote it")]
        return []
    if state == "none":
        return [_cause("grad_cleared", f"'{name}.grad' is None because it was set to None "
                       f"(zero_grad() or {name}.grad = None) after the last backward call "
                       "that wrote it")]
    if state == "same":
        return []
    edit = _grad_edit(run, t)
    if edit is not None:
        return [_cause("grad_edited", f"'{name}.grad' was changed in place ({edit.op}) "
                       "after backward computed it", edit.site)]
    how = "zeroed (zero_grad(set_to_none=False)" if state == "zero" else "changed (a new value"
    return [_cause("grad_edited", f"'{name}.grad' was {how} or an edit gradviz does not see) "
                   "after the last backward call that wrote it")]


def _grad_edit(run, t):
    """The in-place edit of t.grad made after backward filled it, if any."""
    g = _grad_of(t)
    if g is None or not g._version:
        return None
    mine = version_counter(g, run.tracer)
    for ev in reversed(run.tracer.inplace_events):
        if ev.tensor is g or version_counter(ev.tensor, run.tracer) == mine:
            return ev
    return None


def _accumulated(tracer, name, history):
    n = history.count
    last = tracer.calls[history.calls[-1]]["site"]
    calls = f"{n} backward call{'s' if n > 1 else ''}"
    if history.reset == "changed":
        return _cause("accumulated", f"'{name}.grad' is {calls} added to a value the file put "
                      f"in .grad: gradients accumulate until zero_grad() or {name}.grad = None",
                      last, calls=n)
    since = {"none": "", "zero": " since it was last zeroed"}[history.reset] \
        if history.writes == n else {"none": " since it was last set to None",
                                     "zero": " since it was last zeroed"}[history.reset]
    return _cause("accumulated", f"'{name}.grad' is the sum of {calls}{since}: gradients "
                  f"accumulate until zero_grad() or {name}.grad = None", last, calls=n)


def _zeros(grads):
    """Number of zero elements among a node's received gradients (None if it got none)."""
    if grads is None:
        return None
    return sum(int(np.size(g) - np.count_nonzero(g)) for g in grads if g is not None)


def _zero_cause(grads, names, path_nodes, name):
    for node, nxt in zip(path_nodes, path_nodes[1:]):
        g_in = grads.get(node)
        g_out = grads.get(nxt)
        got = g_in is not None and any(g is not None and np.any(g) for g in g_in)
        zero_after = g_out is None or all(g is None or not np.any(g) for g in g_out)
        more_zeros = (g_in is not None and g_out is not None and
                      _zeros(g_out) > 0 and _zeros(g_in) == 0)
        if got and (zero_after or more_zeros):
            why = _ZEROING.get(node.name(), "its backward formula gave zeros")
            return _cause("zero_gradient", f"the gradient reaching '{name}' is zero: "
                          f"{names.label(node)} turned a non-zero gradient into zeros ({why})",
                          _site(names.run.tracer, node))
    first = grads.get(path_nodes[0])
    if first is not None and not any(g is not None and np.any(g) for g in first):
        return _cause("zero_gradient", f"the gradient reaching '{name}' is zero (the root's "
                      "own gradient was zero)")
    return _cause("zero_gradient", f"the gradient reaching '{name}' is zero")


def _nan_cause(tracer, names, call, grads, path_nodes, name):
    root, target = path_nodes[0], path_nodes[-1]
    for (node, i), k in zip(tracer.nonfinite, tracer.call_of_nonfinite):
        # any node between the root and NAME, on whichever branch
        if k == call and _path(node, target) is not None and _path(root, node) is not None:
            return _cause("nan_gradient", f"the gradient reaching '{name}' has NaN/inf: "
                          f"{names.label(node)} produced it first (in its {i}th output), from "
                          "the forward line shown", _site(tracer, node))
    seed = grads.get(root) or ()
    if any(g is not None and not np.all(np.isfinite(g)) for g in seed):
        return _cause("nan_gradient", f"the gradient reaching '{name}' has NaN/inf values "
                      "(the root's gradient already had them)")
    return _cause("nan_gradient", f"the gradient reaching '{name}' has NaN/inf values")


def _ok(t, name, root, file_grad, made_site):
    if t.grad_fn is None:
        what = f"'{name}' is a leaf that requires grad and is reached from '{root}'"
    else:
        what = f"'{name}' is not a leaf (it was made by {t.grad_fn.name()}), but retain_grad() " \
               f"keeps its .grad; it is reached from '{root}'"
    if file_grad is None:
        return _cause("ok", f"{what}: backward from '{root}' would give the gradient shown",
                      made_site)
    return _cause("ok", f"{what}; its .grad is what backward computed", made_site)


def _result(run, names, name, root, t, causes, path_nodes, computed=None, file_grad=False):
    path = []
    for node in path_nodes or []:
        site = _site(run.tracer, node) or (None, None)
        if _is_accumulator(node):
            tensor = names.of.get(id(node.variable))
        else:
            tensor = names.by_node.get(id(node))
        path.append({"node": node.name() if not _is_accumulator(node)
                     else "AccumulateGrad", "tensor": tensor, "file": site[0],
                     "line": site[1]})
    if file_grad is False:
        held = None if t is None else _grad_of(t)
        file_grad = None if held is None else _values(held)
    return {"file": run.path, "tensor": name, "root": root, "found": t is not None,
            "grad": None if file_grad is None else to_json_value(np.asarray(file_grad)),
            "computed": None if computed is None else to_json_value(np.asarray(computed)),
            "causes": causes, "path": path,
            "error": None if run.error is None else run.error.to_dict()}
