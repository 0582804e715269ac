"""The tracer: what the autograd core tells the inspector while a user's file runs.

A gradviz.autograd.tracing.Tracer, installed for the duration of a run. It keeps, for
every node still alive, its creation order and outputs, the gradients it received (in firing
order), and every in-place edit with the user's file and line, every firing of a hook the file registered (what it got and
returned) and every node the engine ran, in the engine's order (the steps of `run --step`).

It never keeps a graph alive by itself: nodes are held weakly, so a training loop's earlier
steps are freed as they would be under plain Python, and what they received goes with them.
Nor does it keep the file's objects alive: output tensors, tensors edited in place and modules
are held weakly (a `__del__`, a `weakref.finalize` or a WeakValueDictionary of the file's sees
them go when plain Python would). What the report reads after the file ended is held strongly:
the tensors and modules a function's last calls had in their locals (`main.x`, named after
the run), and the nodes the engine ran in the last two backward calls (`run --step`).
"""

import array
import bisect
import collections
import math
import operator
import sys
import threading
import weakref
from typing import NamedTuple

import numpy as np

from .._tensor import Tensor
from ..autograd import callsite, tracing as _tracing
from ..autograd.callsite import edit_frame as _edit_frame, maker_frame as _maker_frame, \
    site_at, user_site
from ..autograd.grad_mode import _state
from ..autograd import engine as _engine, graph as _graph
from ..autograd.graph import AccumulateGrad
from ..autograd.saved import Held, hold
from .report import VALUE_LIMIT, GradSummary
from .modules import ModuleCalls
from .names import _is_module

__all__ = ["Tracer", "InplaceEvent", "HookEvent", "Step", "tracing"]

_FRAMES_PER_FUNCTION = 3   # a function's last calls whose frames name tensors (step[998].y)


class InplaceEvent:
    """One in-place edit: the tensor edited, the op, where, and the state at that moment."""

    __slots__ = ("tensor", "op", "site", "version", "grad_enabled", "seq")

    def __init__(self, tensor, op, site, version, grad_enabled, seq):
        self.tensor = tensor
        self.op = op
        self.site = site
        self.version = version
        self.grad_enabled = grad_enabled
        self.seq = seq              # nodes created before the edit (compare with order())


class _Edit(NamedTuple):
    """An in-place edit of the core's, with InplaceEvent's fields: the user's code object and
    instruction offset are kept, and the site read from them when asked (an optimizer edits
    every parameter at every step, and finding each edit's line as it happened cost a tenth
    of the tracer's time). Made with tuple.__new__ when the edits are read
    (Tracer.inplace_events), from the tracer's columns.

    The tensor is held weakly (an edited tensor the file dropped is freed, as under plain
    Python), with the tensor it is a view of, its version counter and its storage: `tensor` is
    the tensor, or once it is gone its base (an edit through a temporary view, `b[0] = 1`,
    edited b), or None; `vc` and `data` (None once freed) let an edit through a temporary
    `.data` alias still be matched with the storage it wrote."""

    ref: object             # weak reference to the tensor edited
    base: object            # weak reference to the tensor it is a view of (itself if none)
    vc: object              # its version counter
    data_ref: object        # weak reference to its NumPy storage (or a function giving None)
    op: str
    code: object
    offset: int
    version: int
    grad_enabled: bool
    seq: int

    @property
    def tensor(self):
        t = self.ref()
        return self.base() if t is None else t

    @property
    def data(self):
        return self.data_ref()

    @property
    def site(self):
        code = self.code
        return None if code is None else site_at(code, self.offset)


class _EditRows:
    """Some of a tracer's in-place edits (a list of their numbers): a sequence of _Edit
    tuples, each made when read (see Tracer.edit_groups)."""

    __slots__ = ("_tracer", "_rows")

    def __init__(self, tracer, rows):
        self._tracer, self._rows = tracer, rows

    def __len__(self):
        return len(self._rows)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return _EditRows(self._tracer, self._rows[i])
        return self._tracer._edit(self._rows[i])

    def __iter__(self):
        edit = self._tracer._edit
        return (edit(j) for j in self._rows)

    def extended(self, other):
        """The edits of both, in edit order."""
        return _EditRows(self._tracer, array.array("q", sorted(self._rows + other._rows)))


class HookEvent(NamedTuple):
    """One firing of a hook the file registered (or of retain_grad), in firing order.

    kind is "tensor" (Tensor.register_hook), "pre" (Node.register_prehook), "post"
    (Node.register_hook) or "retain_grad". `given` is what the hook received (one array for
    tensor hooks and retain_grad, a list per gradient slot for node hooks: a pre-hook's
    grad_outputs, a post-hook's grad_inputs) and `returned` what it returned (None when it
    returned nothing, so the gradient went on unchanged); a value of more than VALUE_LIMIT
    elements is kept as its GradSummary, unless whole_grads. `changed` is True when it returned
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


class Tracer(_tracing.Tracer):
    """Collects nodes, results, gradients and in-place edits; optionally retains grads."""

    applies = True      # grad reads only the gradients and saved values: `applied` once run

    def __init__(self, retain_grad=False, keep_grads=True, keep_history=False,
                 whole_grads=False):
        self._call_code = self._module_call_code()
        # id(node) -> [order, weakref to node, [weakref to output 0, 1, ...] (or output 0's
        #              alone) or None, grads it last received (a one-output node's gradient
        #              alone), its saved values before backward freed them (a Held, listed
        #              when asked), its last event's grads while they hold a large gradient];
        # an entry is dropped when its node dies.
        self._nodes = {}
        nodes = self._nodes

        def drop_entry(ref):
            # A node died: its entry goes, and with it the copy of the last gradient it got
            # when that was too large to keep whole (its event waits in _events for the next
            # pruning, and only a live node's events are read).
            entry = nodes.pop(ref.key, None)
            if entry is not None and entry[_LAST_EVENT] is not None:
                entry[_LAST_EVENT].clear()
        self._drop_entry = drop_entry
        self._count = 0             # nodes created so far
        self._recent = []           # outputs of several-output nodes made since the previous
        self._previous = []         # backward began, and in the generation before (see made)
        # The gradients nodes received, in order: (node, grads) pairs with keep_history (and
        # on torch); else one list, without an object per event, of the nodes' weak references
        # each followed by what it received (one gradient alone, several or a large one as a
        # list): [ref, grads, ref, grads, ...]. Each pair is added by one extend, which no
        # other thread can split (it runs no Python code).
        self._events = []
        self._event_log = []
        # Threads run backward and step optimizers at once (a thread per optimizer). The
        # records every thread adds to go in with one C call each (an append, an extend:
        # atomic under the GIL); this lock is taken where that is not enough: by one pruning
        # of the gradient history at a time (which leaves what is appended meanwhile alone),
        # for a new record of an in-place edit (its number is its list position) and for the
        # kept frames. Reentrant: a collection inside (a `__del__` or gc callback of the
        # file's) may edit.
        self._lock = threading.RLock()
        # In-place edits, by column (an optimizer edits every parameter at every step, and the
        # edits are all kept: one object per edit was one more for the cyclic collector to
        # walk at each collection, for the rest of the run). Each edit is four ints in
        # _edit_rows: its tensor's record in _edit_who, its site's in _edit_sites, the version
        # it made, the nodes created before it. inplace_events makes the _Edit tuples when
        # asked.
        self.inplace_events = []
        self.retain_grad = retain_grad
        self.keep_grads = keep_grads
        self.last_grad = _GradSlot(self, _LAST_GRAD)      # node -> grads it last received
        self.nonfinite = []         # (node, output index) that turned finite grads into nan/inf
        self.refusals = []          # (tensor, message, site): in-place edits autograd refused
        self._leaves = []           # weakrefs to tensors made to require grad, in order
        # (function, site, grad enabled) of each tensor: made_of(); a tensor of the core
        # carries its own (created), a backend's tensor is looked up here by id while alive
        self.made_by = {}
        self._makers = {}           # (function, id(code), offset, grad enabled) -> made_of's
        #                             (function, code, offset, grad enabled), shared
        self._made_ids = {}         # weakref(tensor) -> id(tensor), to forget dead tensors
        # per backward/grad call: (site, capture) in _calls and the weak reference to its
        # root node (a tuple of them for several) in _call_roots; (root nodes, site, capture)
        # in _calls alone with keep_history. (A training loop makes one call a step for the
        # whole run: the pair holds no object the cyclic collector tracks, once it looked.)
        self._calls = []
        self._call_roots = []
        self._call_keys = {}        # (site, capture) -> itself, shared by the calls made there
        self._call_of = {}          # thread ident -> index in _calls of its last call
        self._fired_at = {}         # node -> (call, indices in hook_events of the hooks that
        #                             fired at it), until it ran
        self.call_marks = array.array("q")  # nodes created before each backward/grad call
        #                                     began (8 bytes a call: a loop makes one a step)
        self._hook_changes = []     # (weakref node, output nr, hook)
        self.saved_snapshot = _SavedSlot(self, _SNAPSHOT)  # node -> its saved values before
        #                                                   backward freed them
        self.retain_all = False     # never free saved tensors (gradcheck re-uses the graph)
        # keep_history: events, hook changes and backward calls hold their nodes strongly and
        # are never summarized or pruned, so that positions in them stay valid (explain
        # indexes them per backward call). It keeps every step's graph alive, as before.
        self.keep_history = keep_history
        self.hook_events = []       # HookEvent per firing of a user's hook or retain_grad
        # what a hook got or returned is kept whole up to the size the report prints whole,
        # as a GradSummary beyond (a hook on a large tensor in a training loop would otherwise
        # keep a copy of every step's gradient); whole_grads (run --full) keeps them whole
        self._hook_limit = None if whole_grads or keep_history else VALUE_LIMIT
        self.hook_modules = {}      # index into hook_events -> the module of a module hook
        self.steps = []             # Step per node run, in the engine's order (the last two
        #                             backward calls' only, without keep_history)
        self.steps_from_call = 0    # steps of earlier calls were let go
        self.changed_grads = []     # (tensor, call, hook event indices): a .grad a hook changed
        self._taint = {}            # node -> indices of changing hooks upstream (this call)
        self._pruned_at = 0         # len(_events) after the last pruning
        # The user's function frames that made tensors (their locals name them: main.x,
        # step[3].y): the last few calls of each function, with their call numbers.
        self._frames = {}           # id(frame) -> (sequence, frame, call number)
        self._frames_of = {}        # code -> deque of the kept frames of that function
        self._frame_seq = 0
        self.function_calls = {}    # code -> how many of its calls made tensors
        self._last_frame = None
        # thread -> the kept frames it was running when last looked at (a frame runs on one
        # thread: each thread looks at its own stack only, see _let_go)
        self._open = {}
        # id(Module.__call__ frame) -> [frame, id of its last tensor], for the calls still open
        # (a finished call's frame holds its arguments, result and torch's closures: its
        # output is named in module_output, and the frame let go; see _drop_finished)
        self.module_calls = {}
        self.module_output = {}     # id(tensor) -> (weakrefs to module, to its first argument)
        self.modules = _ModuleCalls(self._nodes)    # which module call made each node
        self._module_stacks = self.modules._stacks
        # thread ident -> [(the engine's _run frame, the user's frame that called backward,
        # the outermost Module.__call__ frame between or None)] of the backward passes running
        # on that thread, innermost last (from begin to end: no frame is held after its pass)
        self._passes = {}

    _tensor_type = Tensor       # the tensors of the backend the file runs on

    @staticmethod
    def _module_call_code():
        """The code of the backend's Module call, whose frames are module calls (imported
        here, not with this module: the torch backend runs without gradviz's nn)."""
        from ..nn.modules import Module
        return Module.__call__.__code__

    # ----- the core's calls (gradviz.autograd.tracing.Tracer documents each) ---------------

    def node(self, node):
        k = id(node)
        # The entry goes when the node does (its snapshot holds the saved tensors, and with
        # them the graph above: that must not outlive the node).
        ref = _NodeRef(node, self._drop_entry)
        ref.key = k
        entry = self._nodes[k] = [self._count, ref, None, None, None, None, None]
        self._count += 1
        stack = self._module_stacks.get(_get_ident())     # (ModuleCalls.stack, inline)
        if stack and type(node).__name__ != "AccumulateGrad":
            # ModuleCalls.node's attribution, inline: a forward inside a module call makes
            # every node of a training loop's step here
            call = stack[-1]
            call.nodes += 1
            entry[_CALL] = call

    def recorded(self, node, out):
        """node(node), then made(out, node) for its output 0, in one call (every op makes
        one: the entry is made here and given its output at once)."""
        k = id(node)
        ref = _NodeRef(node, self._drop_entry)
        ref.key = k
        # (made's common case: output 0's weak reference alone, see made)
        entry = self._nodes[k] = [self._count, ref, None if out._nr else weakref.ref(out),
                                  None, None, None, None]
        self._count += 1
        stack = self._module_stacks.get(_get_ident())     # (see node)
        if stack and type(node).__name__ != "AccumulateGrad":
            call = stack[-1]
            call.nodes += 1
            entry[_CALL] = call
        if out._nr:
            self.made(out, node)
        elif self.retain_grad and out._rg and not out._retains:
            out.retain_grad()

    def made(self, out, node):
        entry = self._nodes.get(id(node))
        if entry is None or entry[_REF]() is not node:
            entry = self._entry(node, create=True)
        outs = entry[_OUTS]
        nr = out._nr
        if outs is None and not nr:
            # the common case, one output: its weak reference alone (a list would be one
            # more object per op for the cyclic collector to count and walk)
            entry[_OUTS] = weakref.ref(out)
        else:
            if outs is None:
                outs = entry[_OUTS] = []
            elif type(outs) is not list:
                outs = entry[_OUTS] = [outs]
                if outs[0]() is not None:
                    self._recent.append(outs[0]())
            while len(outs) <= nr:
                outs.append(None)
            outs[nr] = weakref.ref(out)
            # A node of several outputs (unbind, split, max along a dim) keeps them until the
            # backward after next: the report lists each output of a node it shows, and one the
            # file dropped while using its siblings (`for ii in x`) would be a row of '?'.
            self._recent.append(out)
        if self.retain_grad and out._rg and not out._retains:
            out.retain_grad()

    def grad(self, node, grads):
        entry = self._nodes.get(id(node))
        if entry is None or entry[_REF]() is not node:
            entry = self._entry(node, create=True)
        if entry[_SNAPSHOT] is None:
            # Held, not listed: most nodes die with their step, and the list is made only for
            # a node the report shows (it finds the output a `_saved_result` stands for with
            # output_of()). An AccumulateGrad saves nothing, and a training loop runs one per
            # parameter.
            entry[_SNAPSHOT] = _NOTHING_SAVED if type(node) is AccumulateGrad else \
                hold(node) or _NOTHING_SAVED
        if not self.keep_grads:
            return
        if self.keep_history:
            snap = [None if g is None else _snapshot(g) for g in grads]
            self._events.append((node, snap))
            entry[_LAST_GRAD] = snap
            return
        # A node that lives on (a parameter's AccumulateGrad in a training loop) keeps each
        # earlier gradient as a summary once the next one arrives: the entry holds its last
        # event's grads while they have a gradient too large to keep.
        last = entry[_LAST_EVENT]
        if last is not None:
            last[:] = [_summary(g) for g in last]
            entry[_LAST_EVENT] = None
        g = grads[0] if len(grads) == 1 else None
        if g is not None and type(g) is _ndarray:
            # the common case, one gradient: the copy alone (no list, and so no object the
            # cyclic collector counts and walks, per event)
            snap = entry[_LAST_GRAD] = g.copy()
            if not g.ndim:
                # the history keeps a 0-d one as its NumPy scalar, made a 0-d array again
                # when read (a third of the memory: a scalar parameter's AccumulateGrad adds
                # an event at every step, kept for the whole run)
                self._event_log.extend((entry[_REF], snap[()]))
                return
            if g.size > _KEPT_ELEMENTS:
                # (a list of its own, which the next gradient summarizes in place: the
                # backward steps kept hold the entry's last grads, whole)
                snap = entry[_LAST_EVENT] = [snap]
        else:
            snap = [None if g is None else _snapshot(g) for g in grads]
            entry[_LAST_GRAD] = snap
            if _large(snap):
                snap = entry[_LAST_EVENT] = list(snap)
        self._event_log.extend((entry[_REF], snap))     # (one call: see __init__)

    def applied(self, node, grads, outs):
        """grad(node, grads), then sent(node, outs), in one call (the engine makes one per
        node of a backward pass without hooks). The common case of a training loop is done
        here: one gradient in, arrays or None out, nothing pending from a hook; anything
        else takes the two calls."""
        g = grads[0] if len(grads) == 1 else None
        entry = self._nodes.get(id(node))
        if (type(g) is not _ndarray or entry is None or entry[_REF]() is not node
                or self.keep_history or not self.keep_grads or self._taint or self._fired_at
                or self._tensor_type is not Tensor):
            self.grad(node, grads)
            self._sent(node, outs)
            return
        # grad's part (see grad)
        if entry[_SNAPSHOT] is None:
            entry[_SNAPSHOT] = _NOTHING_SAVED if type(node) is AccumulateGrad else \
                hold(node) or _NOTHING_SAVED
        last = entry[_LAST_EVENT]
        if last is not None:
            last[:] = [_summary(x) for x in last]
            entry[_LAST_EVENT] = None
        got = entry[_LAST_GRAD] = g.copy()
        snap = got
        if not g.ndim:
            snap = got[()]
        elif g.size > _KEPT_ELEMENTS:
            snap = entry[_LAST_EVENT] = [got]
        self._event_log.extend((entry[_REF], snap))     # (one call: see __init__)
        # _sent's part (see _sent): copies of what it sent, and the quick finite check
        sent = []
        bad = False
        for x in outs:
            if x is None:
                sent.append(None)
                continue
            if x is g:
                # the gradient it received, passed on as it is (AddBackward0's): its copy is
                # got, and it cannot have turned finite values into nan or inf
                sent.append(got)
                continue
            if type(x) is _ndarray:
                sent.append(x.copy())
                if bad:
                    continue
                if x.dtype.char in "fd":
                    if not x.ndim:
                        # (a 0-d gradient, a scalar parameter's: its value, without a BLAS
                        # dot, which costs ten times more on one number)
                        if _isfinite_number(x.item()):
                            continue
                    else:
                        r = x if x.ndim < 2 else x.ravel()
                        if _isfinite_number(r.dot(r)):
                            continue
            else:
                sent.append(_snapshot(x))
                if bad:
                    continue
            bad = not _all_finite(x._data if isinstance(x, Tensor) else x, True)
        if bad:
            self._nonfinite(node, outs)
        call = self._call_of.get(_get_ident(), len(self._calls) - 1)
        self.steps.append(_new_tuple(Step, (call, node, [got], sent, [])))

    def produced(self, node, outs):
        self._sent(node, outs, True, False)

    def ran(self, node, outs):
        """The engine finished node: record the step, and carry a hook's change downstream."""
        self._sent(node, outs, False, True)

    def _sent(self, node, outs, check=True, record=True):
        """What node's backward sent: `check` whether it turned finite gradients into nan or
        inf (produced), `record` the step (ran); both in one pass over outs for a node
        without post-hooks (sent)."""
        # The core's engine runs backward with NumPy's overflow warnings off: its gradients
        # may take the quick look (a sum of squares, which can overflow).
        quick = self._tensor_type is Tensor
        # Copies: the report makes values of them (summaries of large ones), for the last two
        # backward calls only (see begin). A loop, not a comprehension: a comprehension is
        # one more Python call per node.
        snap = [] if record and self.keep_grads else None
        bad = False
        for g in outs:
            if g is None:
                if snap is not None:
                    snap.append(None)
                continue
            if type(g) is _ndarray:
                if snap is not None:
                    snap.append(g.copy())
                if not check or bad:
                    continue
                if quick and g.dtype.char in "fd":
                    # the common case, inline: a finite sum of squares (see _all_finite; a
                    # 0-d or 1-d array is its own ravel, without a new view)
                    r = g if g.ndim < 2 else g.ravel()
                    if _isfinite_number(r.dot(r)):
                        continue
            else:
                if snap is not None:
                    snap.append(_snapshot(g))
                if not check or bad:
                    continue
            bad = not _all_finite(g._data if isinstance(g, Tensor) else g, quick)
        if bad:
            self._nonfinite(node, outs)
        if snap is None:
            return
        # the step, with the hooks that fired at node; a hook's change is carried downstream
        # (call: this thread's backward call, where another thread may have begun one since)
        call = self._call_of.get(_get_ident(), len(self._calls) - 1)
        hooks = []
        taint = self._taint.pop(node, None) if self._taint else None
        if self._fired_at:
            hooks = self._hooks_fired(node, call, True)
            changed = [k for k in hooks if self.hook_events[k].changed]
            if changed:
                taint = set(taint or ())
                taint.update(changed)
        if self._tensor_type is Tensor:     # _entry, inline
            entry = self._nodes.get(id(node))
            if entry is not None and entry[_REF]() is not node:
                entry = None
        else:
            entry = self._entry(node)   # (the torch backend's tracer keys its entries its way)
        grads = None if entry is None else entry[_LAST_GRAD]
        if grads is not None and type(grads) is not list:
            grads = [grads]     # a one-output node's gradient is kept alone (_grad_list)
        self.steps.append(_new_tuple(Step, (call, node, grads, snap, hooks)))
        if not taint:
            return
        variable = getattr(node, "variable", None)
        if variable is not None and type(node).__name__ == "AccumulateGrad":
            self.changed_grads.append((variable, call, frozenset(taint)))
        for i, (nxt, _) in enumerate(node.next_functions):
            if nxt is not None and i < len(snap) and snap[i] is not None:
                self._taint.setdefault(nxt, set()).update(taint)

    sent = _sent

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # a subclass (or a class it mixes in) that changes produced or ran gets both called
        if cls.sent is Tracer.sent and (cls.produced is not Tracer.produced or
                                        cls.ran is not Tracer.ran):
            cls.sent = _tracing.Tracer.sent
        # and so with node or made for recorded, and with grad, sent, produced or ran for
        # applied
        if cls.recorded is Tracer.recorded and (cls.node is not Tracer.node or
                                                cls.made is not Tracer.made):
            cls.recorded = _tracing.Tracer.recorded
        if cls.applied is Tracer.applied and (cls.grad is not Tracer.grad or
                                              cls.sent is not Tracer.sent):
            cls.applied = _tracing.Tracer.applied
        if cls.grad is not Tracer.grad and "applies" not in vars(cls):
            # its grad may read what the node's backward changes (explain reads a leaf's
            # .grad before its AccumulateGrad runs): grad before the node runs, sent after
            cls.applies = False

    def _nonfinite(self, node, outs):
        """node sent a nan or an inf: note each output that did, when node received only
        finite gradients (only a node that turned finite gradients into nan/inf is where they
        came from)."""
        bad = [i for i, g in enumerate(outs)
               if g is not None and not _all_finite(g._data if isinstance(g, Tensor) else g)]
        received = self.last_grad.get(node, ())
        if any(g is not None and not _all_finite(g) for g in received):
            return
        for i in bad:
            self.nonfinite.append((node, i))

    def inplace(self, tensor, op):
        # frames: this method, the core's bump_version, the op that edited the tensor
        code, offset = _edit_frame(3)
        data = tensor._data
        if type(data) is not _ndarray:
            data = None
        vc = tensor._vc
        key = (op, id(code), offset, _state.enabled)
        # The tensor's record and the site's, known already (an optimizer edits the same
        # parameters from the same line at every step): read without the lock (a record,
        # once made, never changes place).
        k = self._edited.get(id(tensor))
        if k is not None:
            ref, _, counter, data_ref = self._edit_who[k]
            if ref() is not tensor or counter is not vc or data_ref() is not data:
                k = None    # another tensor with this id, or a new storage or counter
        site = self._edit_site.get(key)
        if k is None or site is None:
            k, site = self._new_records(tensor, vc, data, key, code, k, site)
        # (vc.v, not the _version property: bump_version just counted this edit on vc; one
        # extend, which no other thread can split)
        self._edit_rows.extend((k, site, vc.v, self._count))

    def _new_records(self, tensor, vc, data, key, code, k, site):
        """(record of tensor, record of its site) for an in-place edit, made when missing
        (k or site None), under the lock: a record's number is its list position."""
        with self._lock:
            if k is None:
                k = self._edited[id(tensor)] = self._new_who(tensor, vc, data)
            if site is None:
                site = self._edit_site.get(key)     # (another thread may have made it)
            if site is None:
                record = (key[0], code, key[2], key[3])     # (made first: no collection
                site = self._edit_site[key] = len(self._edit_sites)     # between len and
                self._edit_sites.append(record)                         # append)
        return k, site

    def _new_who(self, tensor, vc, data):
        """A record of an edited tensor: weak references to it, to the tensor it is a view of
        (itself if none) and to its storage, and its version counter (see _Edit)."""
        # (an object's plain weak reference is made once and shared)
        ref = base = _weakref(tensor)
        if tensor._base_ is not None:
            root = tensor._base_
            while root._base_ is not None:
                root = root._base_
            base = _weakref(root)
        self._edit_who.append((ref, base, vc, _none if data is None else _weakref(data)))
        return len(self._edit_who) - 1

    @property
    def inplace_events(self):
        """_Edit per in-place edit, oldest first (InplaceEvent's fields)."""
        rows, made = self._edit_rows, self._edit_list
        if 4 * len(made) < len(rows):
            who, sites = self._edit_who, self._edit_sites
            for j in range(4 * len(made), len(rows), 4):
                op, code, offset, enabled = sites[rows[j + 1]]
                made.append(_new_tuple(_Edit, who[rows[j]] + (
                    op, code, offset, rows[j + 2], enabled, rows[j + 3])))
        return made

    def edit_groups(self):
        """[(tensor, edits)]: the in-place edits grouped by the tensor each record names
        (`_Edit.tensor`, read once per tensor rather than once per edit), each group an
        _EditRows in edit order. A long loop's optimizer edits every parameter at every step:
        the report reads a few of them, and an _Edit tuple per edit of the run held 16 MB
        more at 6,000 steps. None from a tracer that keeps its edits its own way."""
        if type(self).inplace_events is not Tracer.inplace_events:
            return None     # (TorchTracer)
        rows_of = {}
        for j, k in enumerate(self._edit_rows[0::4]):
            rows = rows_of.get(k)
            if rows is None:
                rows = rows_of[k] = array.array("q")
            rows.append(j)
        return [(self._edit_tensor(k), _EditRows(self, rows)) for k, rows in rows_of.items()]

    def _edit_tensor(self, k):
        ref, base = self._edit_who[k][:2]
        t = ref()
        return base() if t is None else t

    def _edit(self, j):
        """The _Edit of edit number j (inplace_events[j]), made anew unless made already."""
        if j < len(self._edit_list):
            return self._edit_list[j]
        rows = self._edit_rows
        op, code, offset, enabled = self._edit_sites[rows[4 * j + 1]]
        return _new_tuple(_Edit, self._edit_who[rows[4 * j]] + (
            op, code, offset, rows[4 * j + 2], enabled, rows[4 * j + 3]))

    @inplace_events.setter
    def inplace_events(self, events):
        if events:
            raise ValueError("the core's tracer records in-place edits itself: only [] "
                             "(none yet) can be given")
        self._edit_rows = array.array("q")
        self._edit_who = []         # (ref, base, vc, data_ref) per edited tensor and storage
        self._edited = {}           # id(tensor) -> its latest record in _edit_who
        self._edit_sites = []       # (op, code, offset, grad enabled) per site
        self._edit_site = {}        # (op, id(code), offset, grad enabled) -> index in _edit_sites
        self._edit_list = []        # the _Edit tuples made so far

    def created(self, tensor):
        # frames: this method, the core's _make, the op that made the tensor
        # (the .grad an AccumulateGrad writes in a backward pass: the frames out from the
        # engine's to the user's line that called backward were found by begin, _pass_mark)
        made = self._passes and self._pass_mark()
        func, frame, call = made or _maker_frame(3, self._call_code)
        # kept on the tensor itself (see made_of): it goes when the tensor does, with no
        # weak reference and no table entry per tensor; one tuple per distinct maker, shared
        # (a new tuple per tensor would be two more objects per op for the cyclic collector
        # to count and walk: on a long chain it ran a third of the tracer's time). The user's
        # line is read from (code, instruction offset) when asked, not per tensor; the key
        # holds the code's id (a code object's hash covers all its constants).
        enabled = _state.enabled
        if frame is None:
            key = (func, None, 0, enabled)
        else:
            code = frame.f_code
            key = (func, id(code), frame.f_lasti, enabled)
        made = self._makers.get(key)
        if made is None:
            made = self._makers[key] = (func, None, enabled) if frame is None else \
                (func, code, key[2], enabled)
        tensor._gv_made = made
        if call is not None:
            self._module_call(call, id(tensor), tensor)
        if frame is not self._last_frame and frame is not None:
            with self._lock:    # (the kept frames are shared by the file's threads)
                self._saw_frame(frame)

    def begin(self, roots, inputs, capture):
        # A new backward: a training loop's step before the previous one is history now.
        # (One walk, from the engine's _run out to the user's frame, for the call's site and
        # for the .grad each AccumulateGrad of the pass makes: see _pass_mark.)
        # (the engine's _run: this method's caller, or a subclass's begin's that called it)
        run = callsite.frame_running(_RUN_CODE, 2)
        _, frame, call = _maker_frame(2, self._call_code)
        site = None if frame is None else site_at(frame.f_code, frame.f_lasti)
        marks = self._passes.get(_get_ident())
        if marks is None:
            marks = self._passes[_get_ident()] = []
        marks.append((run, frame, call))
        # (a call's number is its position in _calls and in call_marks: one thread at a time)
        with self._lock:
            self._taint = {}
            self._call_of[_get_ident()] = len(self._calls)
            if self._fired_at:
                # the firings at nodes that did not run (a grad() input's node that is not
                # needed runs its tensor hooks only): no thread's running call has them
                running = set(self._call_of.values())
                for node, (call, _) in list(self._fired_at.items()):
                    if call not in running:
                        self._fired_at.pop(node, None)
            self.call_marks.append(self._count)
            if self.keep_history:
                self._calls.append(([n for n, _ in roots], site, capture))
                return
            self._previous, self._recent = self._recent, []
            self._settle_history()
            # (one (site, capture) pair per place, shared)
            key = (site, capture)
            self._calls.append(self._call_keys.setdefault(key, key))
            self._call_roots.append(_weakref(roots[0][0]) if len(roots) == 1 else
                                    tuple(_weakref(n) for n, _ in roots))
            # The engine's steps of a long loop: the last two calls are kept, not every
            # step's (pruned in place: another thread's steps appended meanwhile stay).
            keep_from = len(self._calls) - 2
            if keep_from > self.steps_from_call:
                steps = self.steps
                n = len(steps)
                if len(self._call_of) == 1:
                    # one thread's calls only: its steps are in call order, the old ones first
                    # (found by bisection on each Step's call, its field 0, in C)
                    del steps[:_bisect_left(steps, keep_from, 0, n, key=_step_call)]
                else:
                    steps[:n] = [st for st in steps[:n] if st.call >= keep_from]
                self.steps_from_call = keep_from
            # The root of the call whose steps were just let go, dead by now in a training
            # loop, becomes one shared dead reference: a loop's calls keep no object per step
            # but the last ones' references.
            refs = self._call_roots
            j = len(refs) - 3
            if j >= 0 and type(refs[j]) is weakref.ref and refs[j]() is None:
                refs[j] = _DEAD_REF

    def end(self):
        # the pass's frames are let go as it ends (the user's frame may return right after)
        marks = self._passes.get(_get_ident())
        if marks:
            marks.pop()
            if not marks:
                del self._passes[_get_ident()]

    def _pass_mark(self):
        """(func, the user's frame, the outermost Module.__call__ frame or None) as created's
        maker_frame would find them for a tensor that `accumulate` makes inside this thread's
        innermost backward pass, without the walk: only the engine runs between that call and
        the pass's _run frame (checked frame by frame; None when anything else runs there, or
        for any other tensor: then created walks)."""
        marks = self._passes.get(_get_ident())
        if not marks:
            return None
        run, frame, call = marks[-1]
        # frames: _pass_mark, created, _make, accumulate
        if run is None or not _called_within(4, _ACCUMULATE_CODE, _ENGINE_CODES, run):
            return None
        return "accumulate", frame, call

    def fired(self, node, kind, nr, hook, given, returned):
        """A hook the file registered ran at node (see HookEvent); retain_grad too."""
        if not self.keep_grads or getattr(hook, "_gradviz_module_hook", False):
            return      # a module's backward hooks are reported by module_hook, one by one
        call = self._call_of.get(_get_ident(), len(self._calls) - 1)
        given, returned, changed = self._kept_firing(given, returned)
        taint = set(self._taint.get(node, ()))
        for k in self._hooks_fired(node, call):
            e = self.hook_events[k]
            if e.changed and (kind != "retain_grad" or e.nr == nr):
                taint.add(k)
        event = HookEvent(call, node, kind, nr, hook, given, returned, changed,
                          frozenset(taint))
        index = self._add_hook_event(event)
        at = self._fired_at.get(node)
        if at is None or at[0] != call:
            at = self._fired_at[node] = (call, [])
        at[1].append(index)
        if kind == "retain_grad" and taint:
            t = self.output_of(node, nr)
            if t is not None:
                self.changed_grads.append((t, call, event.taint))
        if kind == "post_accumulate" and changed:
            self.changed_grads.append((node.variable, call, frozenset([index])))
        return index

    def _hooks_fired(self, node, call, done=False):
        """The indices in hook_events of the hooks that fired at node in backward call `call`
        so far (done: node ran, and they are forgotten). Kept by node: another thread's
        firings may come in between."""
        fired = self._fired_at.pop(node, None) if done else self._fired_at.get(node)
        return () if fired is None or fired[0] != call else fired[1]

    def _add_hook_event(self, event):
        """Append event to hook_events; its index there (the lock: another thread's event
        must not come between the append and the count)."""
        with self._lock:
            self.hook_events.append(event)
            return len(self.hook_events) - 1

    def module_hook(self, kind, module, hook, given, returned, node):
        """A module hook of the file's ran: forward_pre / forward (node None: given and
        returned are the args or output) or backward_pre / backward at node (see HookEvent)."""
        given, returned = self._hook_tensors(given), self._hook_tensors(returned)
        index = None
        if node is not None:
            index = self.fired(node, "module_" + kind, None, hook, given, returned)
        elif self.keep_grads:
            given, returned, changed = self._kept_firing(given, returned)
            # call: the backward call before it (the report says which one came after)
            index = self._add_hook_event(HookEvent(len(self._calls) - 1, None,
                                                   "module_" + kind, None, hook, given,
                                                   returned, changed, frozenset()))
        if self.keep_grads:
            self.hook_modules[len(self.hook_events) - 1 if index is None else index] = module

    def _kept_firing(self, given, returned):
        """(given, returned, changed) of a firing as HookEvent keeps them: changed is decided
        on the whole values, before large ones become summaries."""
        given, returned = _values(given), _values(returned)
        changed = returned is not None and not _same(given, returned)
        return _copy(given, self._hook_limit), _copy(returned, self._hook_limit), changed

    @staticmethod
    def _hook_tensors(v):
        """A module hook's args or output as fired() takes them (see _tensors)."""
        return _tensors(v)

    def module_call(self, module, args):
        self.modules.enter(module, args)

    def module_return(self, module, result):
        self.modules.exit(module, result)
        if self.module_calls:
            # The call's frame goes as it returns (a finished Module.__call__ frame holds the
            # module, its arguments and its result). frames: this method, the core's
            # _returned (not when the call raised), Module.__call__
            f = callsite.frame_running(self._call_code, 2)
            if f is not None:
                self.module_calls.pop(id(f), None)

    def hooked(self, node, nr, hook):
        self._hook_changes.append((node if self.keep_history else weakref.ref(node), nr, hook))

    def leaf(self, tensor):
        self._leaves.append(weakref.ref(tensor))

    def refused(self, tensor, message):
        self.refusals.append((tensor, message, user_site(3)))

    def _settle_history(self):
        """Once per backward: drop the events of dead nodes whenever the lists doubled
        (amortized constant time per event). The lists are pruned in place, up to their
        length when the pruning began: another thread's events appended meanwhile stay."""
        with self._lock:
            events, log = self._events, self._event_log
            if len(events) + len(log) // 2 <= 2 * self._pruned_at + 64:
                return
            n = len(events)
            events[:n] = [e for e in events[:n] if e[0]() is not None]
            n = len(log)
            pairs = iter(log[:n])
            log[:n] = [x for ref, grads in zip(pairs, pairs) if ref() is not None
                       for x in (ref, grads)]
            self._pruned_at = len(events) + len(log) // 2

    def _forget(self, ref):
        k = self._made_ids.pop(ref, None)
        if k is not None:
            self.made_by.pop(k, None)
            self.module_output.pop(k, None)

    # ----- the user's frames (for names like main.x) ---------------------------------------

    def _saw_frame(self, f):
        """Keep the user's frame that is making a tensor, and the user's frames around it.

        A function's frame, kept alive, still holds its locals after it returned: at the end
        of the run they name the tensors it made (`main.x`, `step[3].out`). Called by created()
        when the frame making a tensor is not the one that made the last. Only the last few
        calls of each function are kept, so a loop does not keep every step's graph alive.
        """
        self._last_frame = f
        kept = self._frames
        # the user's function frames running now, innermost first (one walk for both uses)
        chain = callsite.user_functions(f)
        if self._open:
            self._let_go(chain)
        new = []
        for f in chain:
            if id(f) in kept:
                break       # kept already, and so are the frames around it
            new.append(f)
        for f in reversed(new):
            code = f.f_code
            number = self.function_calls[code] = self.function_calls.get(code, 0) + 1
            self._frame_seq += 1
            kept[id(f)] = (self._frame_seq, f, number)
            recent = self._frames_of.get(code)
            if recent is None:
                recent = self._frames_of[code] = collections.deque()
            recent.append(f)
            if not code.co_flags & _SUSPENDS:
                me = threading.current_thread()
                opened = self._open.get(me)
                if opened is None:
                    opened = self._open[me] = []
                opened.append(f)
            if len(recent) > _FRAMES_PER_FUNCTION:
                kept.pop(id(recent.popleft()), None)

    def _let_go(self, chain):
        """Replace the kept frames that have returned by what the report reads of them.

        A returned frame still holds all its locals; under plain Python they would go now. The
        report reads a frame's tensors, modules and containers (named_tensors); the rest of its
        locals, and `self` (a method's module: its `__del__` runs when the file drops it), are
        let go. Called when a frame makes a tensor, with the user's function frames running
        around it (`chain`, up to the host's frame: only those are ever kept): every kept
        frame not on a running stack returned. (A generator's frame is kept whole: it is
        suspended, not returned.)"""
        running = {id(g) for g in chain}
        me = threading.current_thread()
        looked = [me] if me in self._open else []
        if len(self._open) > len(looked):
            # Another thread's frames are that thread's to look at: walking a running
            # thread's stack from here races with its returns (CPython's frame objects of
            # another thread's stack are not safe to follow while it runs), and
            # sys._current_frames() can deadlock with a thread that is ending (CPython
            # 3.11). A thread that ended runs none of its frames.
            looked += [t for t in self._open if t is not me and not t.is_alive()]
        for thread in looked:
            still = []
            for frame in self._open[thread]:
                if thread is me and id(frame) in running:
                    still.append(frame)
                    continue
                entry = self._frames.pop(id(frame), None)
                if entry is None:
                    continue    # let go already (its function's older calls are not kept)
                done = _Returned(frame, self._tensor_type)
                self._frames[id(done)] = (entry[0], done, entry[2])
                recent = self._frames_of[frame.f_code]
                recent[recent.index(frame)] = done
            if still:
                self._open[thread] = still
            else:
                del self._open[thread]

    @property
    def frames(self):
        """[(frame, call number, calls of its function)]: the kept frames, outer first."""
        calls = self.function_calls
        return [(f, n, calls[f.f_code]) for _, f, n in sorted(self._frames.values(),
                                                                key=lambda e: e[0])]

    def _module_call(self, call, k, tensor=None):
        """Note that the tensor with id k was made inside a module call the user wrote
        (`self.fc1(x)`): the last tensor a call made is its output. Given the tensor, its
        entry goes when it does (otherwise the caller forgets it)."""
        if tensor is not None:
            self._made_ids[weakref.ref(tensor, self._forget)] = k
        calls = self.module_calls
        entry = calls.get(id(call))
        if entry is None:
            if calls:
                # (another thread's calls are running too when one of its frames was kept)
                _drop_finished(calls, call)
            # The module and its first argument, read once per call (a call's frame never
            # rebinds `self` or `args`; its f_locals builds a dict each time it is read) and
            # shared by the tensors the call makes
            loc = call.f_locals
            args = loc.get("args") or ()
            first = args[0] if args and isinstance(args[0], self._tensor_type) else None
            module = loc.get("self")
            entry = calls[id(call)] = [call, None, (
                _none if module is None else weakref.ref(module),
                None if first is None else weakref.ref(first)), threading.current_thread()]
        if entry[1] is not None:
            self.module_output.pop(entry[1], None)
        entry[1] = k
        self.module_output[k] = entry[2]

    # ----- queries --------------------------------------------------------------------------

    def _entry(self, node, create=False):
        entry = self._nodes.get(id(node))
        if entry is None or entry[_REF]() is not node:
            if not create:
                return None
            self.node(node)
            entry = self._nodes[id(node)]
        return entry

    @property
    def nodes(self):
        """The nodes still alive, in creation order."""
        live = []
        for entry in list(self._nodes.values()):
            node = entry[1]()
            if node is not None:
                live.append((entry[0], node))
        live.sort(key=lambda pair: pair[0])
        return [node for _, node in live]

    def site_of(self, node):
        """(file, line) of the user's code that made node, or None (what torch_tracer's
        site_of answers on the torch backend)."""
        return getattr(node, "_where", None)

    def made_of(self, tensor):
        """(function, (file, line) or None, grad enabled) of what made tensor, or None."""
        made = getattr(tensor, "_gv_made", None)
        if made is None:
            return self.made_by.get(id(tensor))
        if len(made) == 4:      # (function, code, instruction offset, grad enabled)
            return made[0], site_at(made[1], made[2]), made[3]
        return made

    def order(self, node):
        """The node's creation number (compare with InplaceEvent.seq), or None."""
        entry = self._entry(node)
        return None if entry is None else entry[0]

    def output_of(self, node, nr=0):
        entry = self._entry(node)
        outs = None if entry is None else entry[_OUTS]
        if outs is None:
            return None
        if type(outs) is not list:      # output 0's weak reference (see made)
            return outs() if nr == 0 else None
        if nr >= len(outs) or outs[nr] is None:
            return None
        return outs[nr]()

    @property
    def events(self):
        """(node, grads) for every gradient a live node received, in firing order."""
        if self.keep_history:
            return self._events
        out = []
        for ref, snap in self._events:
            node = ref()
            if node is not None:
                out.append((node, snap))
        pairs = iter(list(self._event_log))
        for ref, snap in zip(pairs, pairs):
            node = ref()
            if node is not None:
                out.append((node, _grad_list(snap)))
        return out

    @property
    def backward_calls(self):
        """(root nodes still alive, site, capture) for each backward / grad call."""
        if self.keep_history:
            return self._calls
        out = []
        for (site, capture), refs in zip(self._calls, self._call_roots):
            refs = refs if type(refs) is tuple else (refs,)
            out.append(([n for n in (r() for r in refs) if n is not None], site, capture))
        return out

    @property
    def hook_changes(self):
        if self.keep_history:
            return self._hook_changes
        return [(n, nr, hook) for n, nr, hook in ((r(), nr, h) for r, nr, h in self._hook_changes)
                if n is not None]

    @property
    def leaves(self):
        """Tensors made to require grad, in order (None where one no longer exists)."""
        return [r() for r in self._leaves]


# a generator's, coroutine's or async generator's frame: suspended, not returned, between calls
_SUSPENDS = 0x20 | 0x80 | 0x200


class _Returned:
    """What the report reads of a function's frame that returned (see Tracer._let_go): its
    code and the locals named_tensors looks at (tensors of the backend's tensor_type, modules,
    containers), a method's `self` held weakly."""

    __slots__ = ("f_code", "_locals")

    def __init__(self, frame, tensor_type):
        self.f_code = frame.f_code
        kept = {}
        for name, value in frame.f_locals.items():
            if name == "self":
                try:
                    kept[name] = _Weak(value)
                except TypeError:
                    pass        # an object that takes no weak reference: not a module
            elif issubclass(type(value), (tensor_type, list, tuple, dict)) or \
                    _is_module(value):
                # (by its real type: a user's object may fake or break __class__)
                kept[name] = value
        self._locals = kept

    @property
    def f_locals(self):
        out = {}
        for name, value in self._locals.items():
            if type(value) is _Weak:
                value = value()
                if value is None:
                    continue
            out[name] = value
        return out


class _Weak(weakref.ref):
    """A weak reference to a frame's `self` (told apart from the frame's other values)."""

    __slots__ = ()


class _NodeRef(weakref.ref):
    """A weak reference that knows its key in the table holding it (a node's in
    Tracer._nodes, a retaining tensor's in TorchTracer._retaining)."""

    __slots__ = ("key",)


# slots of a node's entry
_REF, _OUTS, _LAST_GRAD, _SNAPSHOT, _LAST_EVENT, _CALL = 1, 2, 3, 4, 5, 6
_NOTHING_SAVED = object()       # a snapshot was taken, and the node held nothing
_new_tuple = tuple.__new__      # makes a NamedTuple without the Python call of its __new__


class _ModuleCalls(ModuleCalls):
    """The core's recorder: the module call that made a node is kept in the tracer's entry for
    the node (Tracer.node), which goes when the node does, rather than behind one more weak
    reference per node."""

    def __init__(self, nodes):
        super().__init__()
        self._nodes = nodes

    def attribute(self, node, call):
        if self.torch:
            return super().attribute(node, call)
        call.nodes += 1
        self._nodes[id(node)][_CALL] = call

    def call_of(self, node):
        if self.torch:
            return super().call_of(node)
        entry = self._nodes.get(id(node))
        if entry is None or entry[_REF]() is not node:
            return None
        return entry[_CALL]


class _NodeSlot:
    """A read-only view of one slot of the tracer's node entries, as a mapping node -> value
    (`tracer.last_grad.get(node)`)."""

    def __init__(self, tracer, slot):
        self._tracer = tracer
        self._slot = slot

    def get(self, node, default=None):
        entry = self._tracer._entry(node)
        value = None if entry is None else entry[self._slot]
        return default if value is None or value is _NOTHING_SAVED else self._value(node, value)

    @staticmethod
    def _value(node, value):
        return value

    def __contains__(self, node):
        return self.get(node) is not None

    def __getitem__(self, node):
        value = self.get(node)
        if value is None:
            raise KeyError(node)
        return value


# A long-lived node's earlier gradients are kept whole up to this size, as a summary beyond it
# (what `to_json_value` would print for a big array), so a long training loop does not keep a
# copy of every parameter's gradient of every step.
_KEPT_ELEMENTS = 64


class _GradSlot(_NodeSlot):
    """The grads each node last received: a one-output node's gradient is kept alone."""

    @staticmethod
    def _value(node, value):
        return _grad_list(value)


def _grad_list(value):
    """A node's gradients as a list: a one-output node's gradient is kept alone, a 0-d one in
    the history as its NumPy scalar (Tracer.grad)."""
    if type(value) is list:
        return value
    return [_np_array(value) if isinstance(value, _generic) else value]


class _SavedSlot(_NodeSlot):
    """The saved values of each node: a Held is listed when asked (a node that held nothing
    has none, as one whose snapshot was empty)."""

    def get(self, node, default=None):
        return super().get(node) or default

    @staticmethod
    def _value(node, value):
        return value.values(node) if type(value) is Held else value


def _summary(g):
    if isinstance(g, np.ndarray):
        if g.size <= _KEPT_ELEMENTS:
            return g
        g = GradSummary(g)
    return g.text("; earlier backward call") if isinstance(g, GradSummary) else g


def _drop_finished(calls, call):
    """A module call begins: drop the calls that are not running around it (they finished).

    Their frames are not kept: a finished Module.__call__ frame still holds the call's
    arguments, its result and (torch's `_call_impl`) the closures of its hooks, and with them
    the step's whole graph; a training loop would keep 64 steps' graphs alive. A running
    frame is held (its id, the key, cannot be reused while it runs). Another thread's calls
    are left to that thread's next call (its stack is not walked from here: see
    Tracer._let_go), or dropped once that thread has ended."""
    me = threading.current_thread()
    running = callsite.running_around(call)
    # (list() in one call: another thread's module call may add or drop an entry meanwhile)
    for key, entry in list(calls.items()):
        thread = entry[3]
        if key in running if thread is me else thread.is_alive():
            continue
        calls.pop(key, None)


def _large(grads):
    """Whether a gradient in grads (arrays or None) is too large to keep whole."""
    for g in grads:
        if g is not None and g.size > _KEPT_ELEMENTS:
            return True
    return False


def _all_finite(a, quick=False):
    """Whether every value of a is finite. quick: look at a sum of squares first (call it only
    where overflow warnings are off)."""
    if type(a) is not _ndarray:
        if isinstance(a, float):
            return math.isfinite(a)
        if isinstance(a, GradSummary):
            return a.finite
        a = np.asarray(a)
    if a.dtype.kind not in "fc":
        return True
    if a.size == 1 and a.dtype.char in "efd":   # a Python float holds the value exactly
        return math.isfinite(a.item())
    if quick and a.dtype.char in "fd":
        # A finite sum of squares means every value is finite (a nan or an inf makes it nan or
        # inf); one BLAS dot takes half the time of isfinite and a count. Only when it is not
        # finite (an overflow of large finite values, too) is each value looked at.
        r = a.ravel()
        if math.isfinite(r.dot(r)):
            return True
    # (count_nonzero: ndarray.all() goes through a Python function of NumPy's)
    return bool(_count_nonzero(_isfinite(a)) == a.size)


_ndarray = np.ndarray
_bisect_left = bisect.bisect_left
_step_call = operator.itemgetter(0)   # a Step's call
_weakref = weakref.ref
_get_ident = threading.get_ident
_DEAD_REF = weakref.ref(type("_Gone", (), {})())     # a reference whose object is gone
_generic = np.generic
_np_array = np.array
_called_within = callsite.called_within
# What runs between an AccumulateGrad's `accumulate` and the pass's _run: AccumulateGrad._apply,
# [_execute], _loop, _pass (Tracer._pass_mark)
_ACCUMULATE_CODE = _graph.accumulate.__code__
# (by id: hashing a code object hashes its constants; these live as long as their modules)
_ENGINE_CODES = frozenset(id(f.__code__) for f in (AccumulateGrad._apply, _engine._loop,
                                                   _engine._execute, _engine._pass))
_RUN_CODE = _engine._run.__code__


def _none():
    return None

_isfinite = np.isfinite
_isfinite_number = math.isfinite
_count_nonzero = np.count_nonzero


def _values(v):
    """What a hook got or returned as arrays, not copied: an array, a list of them, or None."""
    if isinstance(v, (list, tuple)):
        return [g._data if isinstance(g, Tensor) else g for g in v]
    return v._data if isinstance(v, Tensor) else v


def _copy(v, limit=None):
    """A snapshot of what a hook got or returned (an array, a list of them, or None): an
    array of more than limit elements is kept as its GradSummary."""
    if v is None:
        return None
    if isinstance(v, list):
        return [None if g is None else _kept_value(g, limit) for g in v]
    return _kept_value(v, limit)


def _kept_value(a, limit):
    if limit is not None and isinstance(a, np.ndarray) and a.size > limit:
        return GradSummary(a)
    return _snapshot(a)


def _tensors(v):
    """A module hook's args or output as _copy takes them: tensors kept, anything else None."""
    if isinstance(v, (list, tuple)):
        return [x if isinstance(x, Tensor) else None for x in v]
    return v if isinstance(v, Tensor) else None


def _same(a, b):
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(_same(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _snapshot(g):
    if isinstance(g, GradSummary):
        return g        # a backend's tracer kept a summary (TorchTracer)
    return np.array(g._data if isinstance(g, Tensor) else g, copy=True)


# The name the inspector's modules install a tracer with.
tracing = _tracing.installed
