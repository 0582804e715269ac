"""The tracer: what the autograd core tells the inspector while a user's file runs.

Installed as `gradviz.autograd.grad_mode._state.trace` for the duration of a run. It keeps every
node and every result in creation order (so tensors reachable only through the graph can get
generated names), every gradient a node received (in firing order), and every in-place edit
with the user's file and line.
"""

import os
import sys

from ..autograd.graph import _PKG_DIR, _internal, user_site
from ..autograd.grad_mode import _state

__all__ = ["Tracer", "InplaceEvent", "tracing"]

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
