"""The tracer: what the autograd core tells the inspector while a user's file runs.

Installed as `gradviz.autograd.grad_mode._state.trace` for the duration of a run. It keeps every
node and every result in creation order (so tensors reachable only through the graph can get
generated names), every gradient a node received (in firing order), every in-place edit
with the user's file and line, every firing of a hook the file registered (what it got and
returned) and every node the engine ran, in the engine's order (the steps of `run --step`).
"""

import os
import sys
from typing import NamedTuple

from ..autograd.graph import _PKG_DIR, _internal, user_site
from ..autograd.grad_mode import _state

__all__ = ["Tracer", "InplaceEvent", "HookEvent", "Step", "tracing"]

_INSPECT_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class InplaceEvent:
    """One in-place edit: the tensor edited, the op, where, and the state at that moment."""

    __slots__ = ("tensor", "op", "site", "version", "grad_enabled", "seq")

    def __init__(self, tensor, op, site, version, grad_enabled, seq):
        self.tensor = tensor
        self.op = op
        self.site = site
        self.version = version
        self.grad_enabled = grad_enabled
        self.seq = seq


class HookEvent(NamedTuple):
    """One firing of a hook the file registered (or of retain_grad), in firing order.

    kind is "tensor" (Tensor.register_hook), "pre" (Node.register_prehook), "post"
    (Node.register_hook) or "retain_grad". `given` is what the hook received (one array for
    tensor hooks and retain_grad, a list per gradient slot for node hooks: a pre-hook's
    grad_outputs, a post-hook's grad_inputs) and `returned` what it returned (None when it
    returned nothing, so the gradient went on unchanged). `changed` is True when it returned
    values different from the ones it was given; `taint` is the set of earlier changing hooks
    (indices into Tracer.hook_events) whose change reached this gradient.
    """

    call: int
    node: object
    kind: str
    nr: object
    hook: object
    given: object
    returned: object
    changed: bool
    taint: frozenset


class Step(NamedTuple):
    """One node the engine ran in backward call `call`: the gradients it received (after its
    hooks), what it sent along each edge (after its post-hooks, large ones summarized), and
    the hooks that fired (indices into Tracer.hook_events)."""

    call: int
    node: object
    grads: object
    outs: list
    hooks: list


class Tracer:
    """Collects nodes, results, gradients and in-place edits; optionally retains grads."""

    def __init__(self, retain_grad=False, keep_grads=True):
        self.nodes = []             # every node, in creation order
        self.outputs = {}           # node -> [tensor for output 0, 1, ...]
        self.events = []            # (node, grads) in the order nodes received them
        self.inplace_events = []
        self.retain_grad = retain_grad
        self.keep_grads = keep_grads
        self.last_grad = {}         # node -> grads it last received
        self.nonfinite = []         # (node, output index) that turned finite grads into nan/inf
        self.refusals = []          # (tensor, message, site): in-place edits autograd refused
        self.leaves = []            # tensors that were made to require grad, in order
        self.made_by = {}           # id(tensor) -> (function, site, grad enabled)
        self._alive = []            # keeps those tensors alive, so ids stay unique
        self.backward_calls = []    # (root nodes, site, capture) for each backward / grad
        self.hook_changes = []      # (node, output nr, hook) where a hook replaced a gradient
        self.saved_snapshot = {}    # node -> its saved values, as they were before backward
        self.retain_all = False     # never free saved tensors (gradcheck re-uses the graph)
        self.hook_events = []       # HookEvent per firing of a user's hook or retain_grad
        self.steps = []             # Step per node run, in the engine's order
        self.changed_grads = []     # (tensor, call, hook event indices): a .grad a hook changed
        self._taint = {}            # node -> indices of changing hooks upstream (this call)
        self.frames = []            # the user's function frames that made tensors, outer first
        self.module_calls = {}      # id(Module.__call__ frame) -> [frame, last tensor it made]
        self.module_output = {}     # id(tensor) -> the module call frame it is the output of
        self._frame_ids = set()
        self._last_frame = None

    # ----- protocol called by the core ----------------------------------------------------

    def node(self, node):
        self.nodes.append(node)

    def made(self, out, node):
        outs = self.outputs.setdefault(node, [])
        while len(outs) <= out._nr:
            outs.append(None)
        outs[out._nr] = out
        if self.retain_grad and out._rg and not out._retains:
            out.retain_grad()

    def grad(self, node, grads):
        if node not in self.saved_snapshot:
            from .saved import saved_entries
            entries = saved_entries(node, self.output_of(node, 0))
            if entries:
                self.saved_snapshot[node] = entries
        if self.keep_grads:
            snap = [None if g is None else _snapshot(g) for g in grads]
            self.events.append((node, snap))
            self.last_grad[node] = snap

    def produced(self, node, outs):
        import numpy as np
        received = self.last_grad.get(node, ())
        if any(g is not None and not np.all(np.isfinite(g)) for g in received):
            return
        for i, g in enumerate(outs):
            if g is not None and not np.all(np.isfinite(_snapshot(g))):
                self.nonfinite.append((node, i))

    def inplace(self, tensor, op):
        site = user_site(3)
        self.inplace_events.append(InplaceEvent(tensor, op, site, tensor._version,
                                                _state.enabled, len(self.nodes)))

    def created(self, tensor):
        func, site, frame, call = _maker()
        self.made_by[id(tensor)] = (func, site, _state.enabled)
        if call is not None:
            self._module_call(call, tensor)
        self._alive.append(tensor)
        if frame is not self._last_frame and frame is not None:
            self._saw_frame(frame)

    def begin(self, roots, inputs, capture):
        self.backward_calls.append(([n for n, _ in roots], user_site(3), capture))
        self._taint = {}

    def fired(self, node, kind, nr, hook, given, returned):
        """A hook the file registered ran at node (see HookEvent); retain_grad too."""
        if not self.keep_grads:
            return
        call = len(self.backward_calls) - 1
        given, returned = _copy(given), _copy(returned)
        changed = returned is not None and not _same(given, returned)
        taint = set(self._taint.get(node, ()))
        for k in range(len(self.hook_events) - 1, -1, -1):
            e = self.hook_events[k]
            if e.node is not node or e.call != call:
                break
            if e.changed and (kind != "retain_grad" or e.nr == nr):
                taint.add(k)
        event = HookEvent(call, node, kind, nr, hook, given, returned, changed,
                          frozenset(taint))
        self.hook_events.append(event)
        if kind == "retain_grad" and taint:
            t = self.output_of(node, nr)
            if t is not None:
                self.changed_grads.append((t, call, event.taint))

    def ran(self, node, outs):
        """The engine finished node: record the step, and carry a hook's change downstream."""
        if not self.keep_grads:
            return
        call = len(self.backward_calls) - 1
        hooks = []
        for k in range(len(self.hook_events) - 1, -1, -1):
            e = self.hook_events[k]
            if e.node is not node or e.call != call:
                break
            hooks.append(k)
        hooks.reverse()
        taint = set(self._taint.pop(node, ()))
        taint.update(k for k in hooks if self.hook_events[k].changed)
        from .report import step_value
        # Only a summary of a large gradient is kept: a training loop runs thousands of nodes.
        snap = [None if g is None else step_value(_snapshot(g)) for g in outs]
        self.steps.append(Step(call, node, self.last_grad.get(node), snap, hooks))
        if not taint:
            return
        variable = getattr(node, "variable", None)
        if variable is not None and type(node).__name__ == "AccumulateGrad":
            self.changed_grads.append((variable, call, frozenset(taint)))
        for i, (nxt, _) in enumerate(node.next_functions):
            if nxt is not None and i < len(snap) and snap[i] is not None:
                self._taint.setdefault(nxt, set()).update(taint)

    def hooked(self, node, nr, hook):
        self.hook_changes.append((node, nr, hook))

    def leaf(self, tensor):
        self.leaves.append(tensor)

    def refused(self, tensor, message):
        self.refusals.append((tensor, message, user_site(3)))

    # ----- the user's frames (for names like main.x) ---------------------------------------

    def _saw_frame(self, f):
        """Keep the user's frame that is making a tensor, and the user's frames around it.

        A function's frame, kept alive, still holds its locals after it returned: at the end
        of the run they name the tensors it made (`main.x`, `step[3].out`). Called by created()
        when the frame making a tensor is not the one that made the last.
        """
        self._last_frame = f
        chain = []
        while f is not None and not f.f_code.co_filename.startswith(_INSPECT_DIR):
            if id(f) in self._frame_ids:
                break
            if not f.f_code.co_filename.startswith(_PKG_DIR) and \
                    not f.f_code.co_name.startswith("<"):
                chain.append(f)
            f = f.f_back
        for f in reversed(chain):
            self._frame_ids.add(id(f))
            self.frames.append(f)

    def _module_call(self, call, tensor):
        """Note that `tensor` was made inside a module call the user wrote (`self.fc1(x)`):
        the last tensor a call made is its output."""
        entry = self.module_calls.get(id(call))
        if entry is None:
            entry = self.module_calls[id(call)] = [call, None]
        if entry[1] is not None:
            self.module_output.pop(id(entry[1]), None)
        entry[1] = tensor
        self.module_output[id(tensor)] = call

    # ----- queries --------------------------------------------------------------------------

    def output_of(self, node, nr=0):
        outs = self.outputs.get(node)
        if outs is None or nr >= len(outs):
            return None
        return outs[nr]


def _maker():
    """(innermost gradviz function name, user site, user frame, the Module.__call__ frame the
    user called, or None) of the current call, for created()."""
    f = sys._getframe(3)
    func = call = None
    internal = _internal
    while f is not None:
        code = f.f_code
        inside = internal.get(code)
        if inside is None:
            inside = internal[code] = code.co_filename.startswith(_PKG_DIR)
        if not inside:
            return func, (code.co_filename, f.f_lineno), f, call
        if func is None and not code.co_name.startswith("_"):
            func = code.co_name
        if code is _MODULE_CALL:
            call = f
        f = f.f_back
    return func, None, None, None


def _module_call_code():
    from ..nn.modules import Module
    return Module.__call__.__code__


_MODULE_CALL = _module_call_code()


def _copy(v):
    """A snapshot of what a hook got or returned: an array, a list of them, or None."""
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return [None if g is None else _snapshot(g) for g in v]
    return _snapshot(v)


def _same(a, b):
    import numpy as np
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(_same(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _snapshot(g):
    import numpy as np
    from .._tensor import Tensor
    return np.array(g._data if isinstance(g, Tensor) else g, copy=True)


class tracing:
    """Context manager installing a Tracer (and restoring whatever was there)."""

    def __init__(self, tracer):
        self.tracer = tracer

    def __enter__(self):
        self.prev = _state.trace
        _state.trace = self.tracer
        return self.tracer

    def __exit__(self, *exc):
        _state.trace = self.prev
        return False
