"""The tracer on the torch backend: what a file does on the real PyTorch, recorded as the core's
tracer records it, so that the same report builder makes the same document.

Three of torch's own extension points feed it, installed only while the file (or --backward)
runs:

- a `torch.overrides.TorchFunctionMode` sees every torch function and Tensor method the file
  calls: new nodes get the file and line that made them, the call's tensor arguments (for
  names like `mul(w, x)`), their outputs; tensors that start requiring grad are leaves; a call
  that bumped its first argument's `_version` is an in-place edit;
- `torch.autograd.graph.saved_tensors_hooks` packs every tensor a node saves with its
  `_version` at that moment (what check-inplace compares), and does torch's own version check
  when backward unpacks it (torch skips that check for hooked tensors);
- a pre-hook and a post-hook on every node, registered as the node appears, record the
  gradient that reached it and what it sent along each edge, in the engine's order, for the
  file's own backward() calls as for --backward;
- the hooks the file registers (tensor hooks, post-accumulate-grad hooks, node hooks, module
  hooks) are wrapped as they are registered, so that each firing is recorded (what the hook
  got and returned, at which node) as the core's engine reports it; torch's own hooks and the
  tracer's are left as they are.

torch's nodes cannot be weakly referenced, and holding one holds its graph. So the tracer
holds the nodes made since the last backward call began and those that call runs, and lets
the others go at each backward call; a node's entry goes when torch frees the node (its hooks
go with it). A training loop's earlier steps are freed as under `python file.py`.

>>> from gradviz.inspect import run_file
>>> run = run_file("examples/mul_chain_backward.py", backend="torch")   # doctest: +SKIP
>>> run.report()["nodes"][0]["line"]                                      # doctest: +SKIP
7
"""

import contextlib
import copy
import functools
import operator
import os
import re
import traceback
import types
import weakref

import numpy as np

from .. import _derivatives  # noqa: F401 - fills the derivative table _row_order reads
from ..autograd import callsite
from ..autograd.graph import short_name, shorten
from ..autograd.saved import Saved
from .report import STEP_LIMIT, VALUE_LIMIT, GradSummary
from .tracer import InplaceEvent, Tracer, _NodeRef

__all__ = ["TorchTracer", "torch_tracing"]


# Extra slots of a node's entry (after the core tracer's six): where the call that made it was,
# the call's tensor arguments (weak references, for the outermost node of a call only), the
# output numbers whose tensor the file called retain_grad() on.
_SITE, _INPUTS, _RETAINED = 6, 7, 8

_BACKWARD_NAMES = ("backward", "grad")


class _Packed:
    """A saved tensor as the pack hook keeps it: the tensor, its version then, and the tensor
    of the file's it aliases (a weak reference; torch packs a detached alias of inputs)."""

    __slots__ = ("tensor", "version", "original", "grad_fn", "output_nr", "view",
                 "__weakref__")

    def __init__(self, tensor, version, original, grad_fn, output_nr, view=None):
        self.tensor = tensor
        self.version = version
        self.original = original
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        # for an in-place edit of a view: the name of the node that saved it (grad_fn is the
        # view's node until torch lets that go: see _view_node_gone)
        self.view = view


class TorchTracer(Tracer):
    """The core's Tracer, fed by torch's extension points instead of by the core."""

    def __init__(self, retain_grad=False, keep_grads=True, keep_history=False, whole_grads=False):
        super().__init__(retain_grad=retain_grad, keep_grads=keep_grads,
                         keep_history=keep_history, whole_grads=whole_grads)
        # A gradient is kept as a copy up to the size the report prints whole (VALUE_LIMIT
        # elements; STEP_LIMIT for what a node sent, in a backward step), as a GradSummary
        # beyond: a transformer's backward call sends ~1 GB of gradients, and the last two
        # calls' are kept. whole_grads (run --full) and keep_history (explain) keep copies.
        whole = whole_grads or keep_history
        self._grad_limit = None if whole else VALUE_LIMIT
        self._sent_limit = None if whole else STEP_LIMIT
        # id(gradient) -> (weak reference, _version, summary), for one backward call: what a
        # node sent is, most often, the very tensor the next node receives
        self._summaries = {}
        import torch
        self.torch = torch
        # torch's frames are passed over as gradviz's are, when finding the user's line
        self._torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
        callsite.register_library(self._torch_dir)
        self._tensor_type = torch.Tensor
        self._args = ()             # the tensor arguments of the call running now
        # (the tensor the call running now may edit in place, its version before, the call)
        self._first = None
        # id -> weak reference of each _Packed of a view edited in place (_view_node_gone): a
        # dict, whose truth the mode tests on every call at C speed
        self._edited_views = {}
        self._outputs = ()
        self._unpacked = None       # the last _Packed read back (see saved_of)
        self._peeking = False
        self.mode = None            # the TorchFunctionMode feeding call() (torch_tracing)
        self._backward_funcs = self._find_backward_funcs(torch)
        self._made_now = []         # holders of the nodes made since the last backward call
        self._made_refs = {}        # id(weak reference to a tensor) -> (it, id(tensor))
        # torch's frames between a Tensor method the file called and the mode
        self._dispatch = {torch.overrides.__file__, torch._tensor.__file__}
        self._hook_funcs = {torch.Tensor.register_hook: "tensor",
                            torch.Tensor.register_post_accumulate_grad_hook: "post_accumulate"}
        self.reporting = False      # the file's wrapped hooks report (while the file runs)
        # autograd.grad(is_grads_batched=True) runs backward under vmap: its gradients are
        # batched tensors, which cannot be read as arrays; that call's nodes and hooks are
        # not recorded (the call itself is)
        self._batched = False
        self._unfinished = None     # [node, what it sent]: a step waiting for its post-hooks
        self._running = None        # the holder of the node a backward call began last
        self._reached = None        # (key, grads) of the autograd.grad input recorded last
        # the file's function given to register_multi_grad_hook while it registers its
        # tensor hooks (each listed as the file's function, as on the core)
        self.group_hook = None
        self._retain_later = {}     # key of a node not numbered yet -> outputs retaining grad
        self._retain_key = None     # the node whose retain_grad firings were reported last
        # id(tensor that retains grad) -> (weak reference to it, key of its node, output nr)
        self._retaining = {}
        # a held node's hooks hold its holder: the tracer gone, its nodes go with their graph
        weakref.finalize(self, _let_go, self._nodes)

    @staticmethod
    def _module_call_code():
        import torch
        return torch.nn.Module._call_impl.__code__

    @staticmethod
    def _find_backward_funcs(torch):
        return {torch.Tensor.backward: "backward", torch.autograd.backward: "backward",
                torch.autograd.grad: "grad"}

    # ----- where a call comes from ---------------------------------------------------------

    def _user(self, depth):
        """(site, user frame, the Module call frame the user called or None), starting `depth`
        frames up (1: the caller of _user)."""
        _, site, frame, call = callsite.maker(depth + 1, self._call_code)
        return site, frame, call

    def traced(self):
        """A context in which the mode sees the torch calls made: the mode again where torch
        turned it off (a hook or a custom Function's backward, run by backward(): torch takes
        a mode off its stack while the mode's __torch_function__ runs, and backward() runs
        inside it), nothing where the mode is on."""
        torch = self.torch
        mode = self.mode
        if mode is None or not self.reporting or \
                mode in torch.overrides._get_current_function_mode_stack():
            return contextlib.nullcontext()
        return mode

    # ----- what the mode calls ---------------------------------------------------------------

    def call(self, func, types, args, kwargs):
        """Run one torch call for the mode, recording what it made."""
        torch = self.torch
        # the tensor an in-place call edits: its first argument (nn.init passes it by name),
        # or the one an out= call writes into (an in-place edit named "out", as on the core)
        written = kwargs.get("out") if kwargs else None
        if isinstance(written, torch.Tensor):
            first = written
        else:
            first = args[0] if args else next(iter(kwargs.values()), None) if kwargs else None
        version = first._version if isinstance(first, torch.Tensor) else None
        kind = self._backward_funcs.get(func)
        captures = ()
        if kind is not None:
            self._begin_backward(kind, args, kwargs)
            ran = len(self.steps)
            was = self._batched, self.reporting
            if kind == "grad" and _grads_batched(args, kwargs):
                self._batched, self.reporting = True, False
            elif kind == "grad":
                captures = self._capture_inputs(args, kwargs)
        hooked = self._hook_funcs.get(func)
        if hooked is not None and (self.group_hook is not None or
                                   callsite.called_by_user(1, self._dispatch, True)):
            args, kwargs = _with_hook(self, hooked, args, kwargs)
        self._args = args
        self._first = (first, version, func) if version is not None else None
        try:
            out = func(*args, **(kwargs or {}))
        except BaseException as exc:
            if kind is not None:
                self._flush_step()
                self._blame(exc)
                if len(self.steps) == ran:
                    self._no_backward()     # it raised before running anything, as on the core
            if version is not None and "leaf Variable that requires grad" in str(exc):
                # autograd refused an in-place edit of a leaf (check-inplace reports it)
                self.refusals.append((first, str(exc), self._user(3)[0]))
            raise
        finally:
            self._args = ()
            self._first = None
            if kind is not None:
                self._batched, self.reporting = was
            for t, handle, had_hooks in captures:
                handle.remove()
                if not had_hooks:
                    t._backward_hooks = None        # as it was (register_hook made a dict)
        if self._edited_views:
            self._view_node_gone(args)
        if kind is not None:
            self._flush_step()
            # the nodes a create_graph call made are made inside it: their inputs are where
            # their edges lead, not the call's arguments
            args = None
        elif func is torch.Tensor.retain_grad and first.grad_fn is not None:
            self._retained(first)
        if version is not None and first._version != version and \
                getattr(func, "__name__", "") != "requires_grad_":
            self._inplace(first, "out" if first is written else func)
        # x[i] = v returns nothing: the node it made (CopySlices) is x's
        self._outputs_made(func, args, first if out is None and version is not None and
                           first._version != version else out)
        if self._retaining and version is not None and first._version != version:
            self._retain_moved(first)
        return out

    def _inplace(self, tensor, func):
        site, _, _ = self._user(4)
        name = func if isinstance(func, str) else getattr(func, "__name__", str(func))
        op = "setitem" if name == "__setitem__" else name
        # a leaf that requires grad is edited only under no_grad (autograd refuses otherwise):
        # nn.init's functions turn grad off inside, where the mode does not see
        grad_enabled = self.torch.is_grad_enabled() and not (tensor.requires_grad and
                                                             tensor.grad_fn is None)
        self._young.append(InplaceEvent(tensor, op, site, tensor._version, grad_enabled,
                                        self._count))
        self._edits_all = None

    # In-place edits made since the previous backward call began hold their tensor, as the
    # core's do; older ones hold it weakly and go with it (an intermediate edited in place,
    # h.relu_(), would otherwise keep every step's graph alive).

    @property
    def inplace_events(self):
        """InplaceEvent per in-place edit, oldest first (those of tensors that are gone
        left out)."""
        edits = self._edits_all
        if edits is None:
            if self._edit_died:
                self._old = [e for e in self._old if e.tensor is not None]
                self._edit_died = False
            edits = self._edits_all = self._old + self._middle + self._young
        return edits

    @inplace_events.setter
    def inplace_events(self, events):
        self._old, self._middle, self._young = [], [], list(events)
        self._edits_all = None
        self._edit_died = False

    def _age_edits(self):
        """A backward call began: the edits made before the previous one began let go."""
        self._old += [_OldEdit(e, self._edit_gone) for e in self._middle]
        self._middle, self._young = self._young, []
        self._edits_all = None

    def _edit_gone(self, ref):
        self._edit_died = True
        self._edits_all = None

    def _outputs_made(self, func, args, out, depth=4):
        torch = self.torch
        if isinstance(out, torch.Tensor):
            outs = (out,)
        elif isinstance(out, (tuple, list)):
            outs = [o for o in out if isinstance(o, torch.Tensor)]
            if not outs:
                return
        else:
            return
        site = frame = call = None
        looked = False
        for t in outs:
            fn = t.grad_fn
            given = args is not None and any(t is a for a in args)
            if fn is None:
                if given and getattr(func, "__name__", "") != "requires_grad_":
                    continue
                if not looked:
                    site, frame, call = self._user(depth)
                    looked = True
                self._created(t, func, site, frame, call)
                if t.requires_grad:
                    self.leaf(t)
                continue
            entry = self._entry(fn)
            if entry is not None and entry[_SITE] is not None:
                continue        # a tensor made before (x.grad_fn known: returned as it was)
            if not looked:
                site, frame, call = self._user(depth)
                looked = True
            self._new_nodes(fn, site, args)
            self.made(t, fn)
            if not given:
                self._created(t, func, site, frame, call)

    def _created(self, t, func, site, frame, call):
        k = id(t)
        if k in self.made_by:
            return      # an existing tensor handed out again (x.grad)
        name = func if isinstance(func, str) else getattr(func, "__name__", None)
        owner = getattr(func, "__self__", None)
        if name == "__get__" and hasattr(owner, "__name__"):
            # a property (x.data, x.T) reaches the mode as its getter: named by its attribute,
            # as the core names what made the tensor
            name = owner.__name__
        elif name is not None and name.startswith("__") and name.endswith("__"):
            name = name[2:-2]       # an operator (x[0], 1 - x): getitem, rsub, as on the core
        self.made_by[k] = (name, site, self.torch.is_grad_enabled())
        # keyed by the reference's id: a torch tensor's == is elementwise, so a weak
        # reference to one cannot be a dict key
        ref = weakref.ref(t, self._forget_ref)
        self._made_refs[id(ref)] = (ref, k)
        if call is not None:
            self._module_call(call, k)
        if frame is not self._last_frame and frame is not None:
            self._saw_frame(frame)

    def _forget_ref(self, ref):
        entry = self._made_refs.pop(id(ref), None)
        if entry is not None:
            self.made_by.pop(entry[1], None)
            self.module_output.pop(entry[1], None)

    def _new_nodes(self, fn, site, args):
        """Number and hook the nodes made by one call: fn and those above it not seen yet."""
        torch = self.torch
        inputs = None if args is None else []
        for a in args or ():
            if isinstance(a, torch.Tensor):
                if a.is_floating_point() or a.is_complex():
                    inputs.append(weakref.ref(a))
            elif isinstance(a, (int, float)) and not isinstance(a, bool):
                inputs.append(None)     # a number, as the core lists it
        stack = [fn]
        new = {}
        while stack:
            node = stack.pop()
            key = _key(node)
            if key in new:
                continue
            entry = self._nodes.get(key)
            if entry is not None and entry[_SITE] is not None:
                continue
            new[key] = node
            stack.extend(n for n, _ in node.next_functions if n is not None)
        # numbered in the order torch made them (a leaf's AccumulateGrad first), so that
        # inputs come before the outputs made from them, as on the core
        for node in sorted(new.values(), key=_made_order):
            entry = self._entry(node, create=True)
            entry[_SITE] = False if site is None else site
            if node is fn and inputs is not None:
                entry[_INPUTS] = _row_inputs(node, inputs)
            self._hook(node)

    def node(self, node):
        key = _key(node)
        holder = _Holder(node)
        self._nodes[key] = [self._count, holder, None, None, None, None, None, None, None]
        self._made_now.append(holder)
        self._count += 1

    def _entry(self, node, create=False):
        entry = self._nodes.get(_key(node))
        if entry is None and create:
            self.node(node)
            entry = self._nodes[_key(node)]
        return entry

    @property
    def nodes(self):
        """The nodes the tracer holds, in creation order."""
        live = [(e[0], e[1]()) for e in list(self._nodes.values())]
        return [n for _, n in sorted((p for p in live if p[1] is not None),
                                     key=lambda p: p[0])]

    def made(self, out, node):
        entry = self._entry(node, create=True)
        outs = entry[2]
        if outs is None:
            outs = entry[2] = []
        nr = out.output_nr
        while len(outs) <= nr:
            outs.append(None)
        outs[nr] = weakref.ref(out)
        self._recent.append(out)

    def _hook(self, node):
        """A pre-hook (the gradient that reached node) and a post-hook (what it sent).

        The hooks hold the tracer weakly: torch's nodes are not collected in a cycle, and a
        node kept by the file (its last loss) would otherwise keep the tracer, and all it
        recorded, alive after the run."""
        key = _key(node)
        entry = self._nodes[key]
        entry[_RETAINED] = self._retain_later.pop(key, None)
        holder = entry[1]
        gone = _Gone(self._nodes, key, entry)
        tracer = weakref.ref(self)

        def pre(grad_outputs, gone=gone):
            n, me = holder(), tracer()
            if n is not None and me is not None and not me._batched:
                me._flush_step()
                me._running = holder
                me._snapshot_saved(n)
                me._retain_fired(n, grad_outputs)
                if me._reached is not None and me._reached[0] == key:
                    # _input_reached recorded part of what reached it: all of it, once
                    me._reached = None
                    me._drop_last_grad(n)
                me.grad(n, grad_outputs)

        def post(grad_inputs, grad_outputs):
            n, me = holder(), tracer()
            if n is not None and me is not None and not me._batched:
                # the file's post-hooks run after this one: the step is recorded once they did
                me._flush_step()
                me._unfinished = [n, grad_inputs]

        node.register_prehook(pre)
        node.register_hook(post)

    # ----- backward calls ----------------------------------------------------------------

    def _begin_backward(self, kind, args, kwargs):
        torch = self.torch
        roots = args[0] if args else (kwargs or {}).get("tensors", (kwargs or {}).get("outputs"))
        if isinstance(roots, torch.Tensor):
            roots = (roots,)
        nodes = []
        for t in roots or ():
            if not isinstance(t, torch.Tensor) or not t.requires_grad:
                continue
            if t.grad_fn is not None:
                nodes.append((t.grad_fn, 0))
            elif kind == "backward":
                # backward from a leaf runs its AccumulateGrad alone, as on the core
                nodes.append((self._accumulator(t), 0))
        self.begin_at(nodes, kind == "grad", self._user(4)[0])

    def _capture_inputs(self, args, kwargs):
        """autograd.grad reads an input's gradient where the input's node would run, and runs
        that node only when something beyond it is needed (never a leaf's AccumulateGrad):
        then no node hook fires there, only the input's tensor hooks. A tensor hook of the
        tracer's records what reached the input, as the core records it; [(input, handle,
        whether it had hooks)] to take it off after the call."""
        torch = self.torch
        inputs = args[1] if len(args) > 1 else (kwargs or {}).get("inputs")
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        out = []
        for t in inputs or ():
            if isinstance(t, torch.Tensor) and t.requires_grad:
                had_hooks = t._backward_hooks is not None
                fn = t.grad_fn
                node, nr = (self._accumulator(t), None) if fn is None else (fn, t.output_nr)
                hook = functools.partial(self._input_reached, node, nr)
                out.append((t, t.register_hook(hook), had_hooks))
        return out

    def _input_reached(self, node, nr, grad):
        """What reached an input of autograd.grad (nr None: a leaf, whose AccumulateGrad
        never runs there). The inputs that are outputs of one node are recorded as one
        gradient (as the core's engine hands the node all of them); a node that runs calls
        its tensor hooks just before its pre-hooks: the tracer's pre-hook then records what
        reached it in place of this (_reached)."""
        self._flush_step()
        key, i = _key(node), nr or 0
        grads = []
        if self._reached is not None and self._reached[0] == key:
            # another output of the same node (grad(out, (a, b)) for a, b = y.unbind()): one
            # record with every output that reached it
            grads = list(self._reached[1])
            self._drop_last_grad(node)
        grads += [None] * (i + 1 - len(grads))
        grads[i] = grad
        self.grad(node, grads)
        self._reached = (key, grads)

    def _drop_last_grad(self, node):
        """Take back the gradient grad() recorded last, node's (to record it again,
        completed)."""
        entry = self._entry(node)
        if self.keep_grads and self._events and self._events[-1][1] is entry[3]:
            self._events.pop()

    def _accumulator(self, leaf):
        """The leaf's AccumulateGrad, hooked like every node the tracer holds."""
        node = self.torch.autograd.graph.get_gradient_edge(leaf).node
        if self._entry(node) is None:
            self._entry(node, create=True)
            self._hook(node)
        return node

    def begin_at(self, roots, capture, site):
        """A backward / grad call from roots [(node, nr)] begins at site."""
        roots = [n for n, _ in roots]
        self._retain_key = None
        self._running = None        # the holder of the node that began last
        self._reached = None        # (key, grads) of the input just recorded
        self._hold(roots)
        # as the core's Tracer.begin, holding the roots through their holders
        self._taint = {}
        self.call_marks.append(self._count)
        holders = [self._entry(n, create=True)[1] for n in roots]
        self._calls.append((holders, site, capture))
        if self.keep_history:
            return
        self._previous, self._recent = self._recent, []
        self._summaries = {}
        self._age_edits()
        self._settle_history()
        keep_from = len(self._calls) - 2
        if keep_from > self.steps_from_call:
            self.steps = [st for st in self.steps if st.call >= keep_from]
            self.steps_from_call = keep_from

    def _hold(self, roots):
        """Hold the nodes this backward call reaches and those made since the last call;
        let the others go (unless keep_history)."""
        held = []
        seen = set()
        stack = [n for n in roots if n is not None]
        if self._calls and not self.keep_history:
            # the steps of the last two calls are kept, and the core's steps keep their nodes
            # alive: the previous call's graph stays held too
            stack += [n for n in (h() for h in self._calls[-1][0]) if n is not None]
        while stack:
            node = stack.pop()
            key = _key(node)
            if key in seen:
                continue
            seen.add(key)
            entry = self._nodes.get(key)
            if entry is not None:
                entry[1].node = node
                held.append(entry[1])
            stack.extend(n for n, _ in _edges(node) if n is not None)
        if not self.keep_history:
            keep = {id(h) for h in held} | {id(h) for h in self._made_now}
            for entry in list(self._nodes.values()):
                if id(entry[1]) not in keep:
                    entry[1].node = None
        self._made_now = []

    def _blame(self, exc):
        """backward raised: the node that ran last is the one that failed (in its formula, in
        unpacking what it saved, in anomaly mode's nan check after its post-hooks, or in a
        hook of the file's: see _hook_firing), named on the exception as the core's engine
        names it."""
        node = None if self._running is None else self._running()
        if node is not None and getattr(exc, "_gradviz_node", None) is None:
            try:
                exc._gradviz_node = node
            except AttributeError:
                pass

    def _hook_firing(self):
        """A hook of the file's fires in backward: the node the engine runs is the one whose
        hooks these are, and the one torch's anomaly mode names if the hook raises or torch
        refuses what it returned. A tensor hook fires before its node's pre-hook, so
        _running would still be the node before (unknown to the tracer: none is named)."""
        node = self.torch._C._current_autograd_node()
        entry = None if node is None else self._entry(node)
        self._running = None if entry is None else entry[1]

    def forward_stack(self, node):
        """The forward stack torch's anomaly mode kept for node (made under detect_anomaly:
        its metadata's traceback_), as the core's node._stack: FrameSummary list, outer first,
        of the file's frames, past the runner's and without gradviz's and torch's."""
        kept = node.metadata.get("traceback_") if hasattr(node, "metadata") else None
        frames = [traceback.FrameSummary(m[1], int(m[2]), m[3], line=m[4] or None,
                                         lookup_line=False)
                  for m in (_TRACE_FRAME.match(s) for s in kept or ()) if m is not None]
        inside = [callsite.is_gradviz_file(f.filename) for f in frames]
        mine = [not g and not f.filename.startswith(self._torch_dir)
                for f, g in zip(frames, inside)]
        while mine and not mine[-1]:        # the tracer's and torch's frames making the node
            frames.pop(), inside.pop(), mine.pop()
        start = max((i + 1 for i, g in enumerate(inside) if g), default=0)
        return [f for f, m in zip(frames[start:], mine[start:]) if m]

    def _no_backward(self):
        self._calls.pop()
        self.call_marks.pop()

    def begin(self, roots, inputs, capture):
        self.begin_at(roots, capture, None)

    @property
    def backward_calls(self):
        """(root nodes still held, site, capture) for each backward / grad call."""
        return [([n for n in (h() for h in holders) if n is not None], site, capture)
                for holders, site, capture in self._calls]

    def grad(self, node, grads):
        entry = self._entry(node, create=True)
        if self.keep_grads:
            limit = self._grad_limit
            snap = [None if g is None else self._kept(g, limit) for g in grads]
            last = entry[5]
            if last is not None and not self.keep_history:
                from .tracer import _summary
                if any(isinstance(g, (np.ndarray, GradSummary)) and g.size > 64
                       for g in last[1]):
                    last[1] = [_summary(g) for g in last[1]]
            event = [entry[1], snap] if not self.keep_history else (node, snap)
            if not self.keep_history:
                entry[5] = event
            self._events.append(event)
            entry[3] = snap

    def ran(self, node, outs):
        if self.keep_grads:
            limit = self._sent_limit
            outs = [None if g is None else self._kept(g, limit) for g in outs]
            self.produced(node, outs)
            super().ran(node, outs)

    def _flush_step(self):
        """Record the step waiting for its post-hooks (the next node began, or the call
        ended)."""
        pending, self._unfinished = self._unfinished, None
        if pending is not None:
            self.ran(*pending)

    # ----- the file's own hooks ------------------------------------------------------------

    def _retained(self, t):
        """The file called t.retain_grad(): its node reports the gradient t retains. A node
        made inside a module call (BackwardHookFunctionBackward) is numbered when an op uses
        its output: until then, the output number waits in _retain_later."""
        key = _key(t.grad_fn)
        entry = self._nodes.get(key)
        if entry is None:
            self._retain_later[key] = self._retain_later.get(key, frozenset()) | {t.output_nr}
        else:
            entry[_RETAINED] = (entry[_RETAINED] or frozenset()) | {t.output_nr}
        ref = _NodeRef(t, self._forget_retain)
        ref.key = id(t)
        self._retaining[id(t)] = (ref, key, t.output_nr)

    def _forget_retain(self, ref):
        kept = self._retaining.get(ref.key)
        if kept is not None and kept[0] is ref:
            del self._retaining[ref.key]

    def _retain_moved(self, t):
        """t was edited in place: as torch does, the retain_grad of t, or of the base t views,
        moves to the node the edit made (CopySlices for the base), so that it reports the
        gradient of the tensor as edited (what .grad gets), as on the core."""
        for u in (t, t._base):
            kept = None if u is None else self._retaining.get(id(u))
            if kept is None or kept[0]() is not u:
                continue
            _, key, nr = kept
            fn = u.grad_fn
            if fn is None or _key(fn) == key:
                continue
            entry = self._nodes.get(key)
            if entry is None:
                left = self._retain_later.pop(key, frozenset()) - {nr}
                if left:
                    self._retain_later[key] = left
            else:
                entry[_RETAINED] = (entry[_RETAINED] or frozenset()) - {nr} or None
            self._retained(u)

    def _retain_fired(self, node, grads):
        """retain_grad's firings at node, once per node run: torch runs them after the
        tensor hooks, before the first pre-hook (the tracer's, or one the file registered
        before the tracer saw the node)."""
        key = _key(node)
        if self._retain_key == key:
            return
        self._retain_key = key
        entry = self._entry(node)
        for nr in (entry[_RETAINED] if entry is not None else None) or ():
            if nr < len(grads) and grads[nr] is not None:
                self.fired(node, "retain_grad", nr, None, _numpy(grads[nr]), None)

    def hooked(self, node, nr, hook):
        """A tensor hook of the file's replaced the gradient at node (see Tracer.hooked): held
        through the node's holder, as the tracer holds nodes."""
        entry = self._entry(node)
        held = node if self.keep_history or entry is None else entry[1]
        self._hook_changes.append((held, nr, hook))

    def _firing_node(self):
        """The node the engine runs now, as the tracer holds it."""
        node = self.torch._C._current_autograd_node()
        entry = None if node is None else self._entry(node)
        held = None if entry is None else entry[1]()
        return node if held is None else held

    def _hook_tensors(self, v):
        """Gradients as fired() takes them: an array, or a list of arrays and Nones (not
        copied: fired() keeps a copy, or a summary of a large one)."""
        tensor = self._tensor_type
        if isinstance(v, (list, tuple)):
            return [_numpy(g) if isinstance(g, tensor) else None for g in v]
        return _numpy(v) if isinstance(v, tensor) else None

    def given_by_backward(self, args):
        """The gradients backward hands a hook of the file's or a custom Function's backward
        are made by the backward call, at its line, as the core's engine makes them."""
        if not self._calls:
            return
        _, site, capture = self._calls[-1]
        name = "grad" if capture else "backward"
        tensor = self._tensor_type
        for a in args:
            for t in a if isinstance(a, (tuple, list)) else (a,):
                if isinstance(t, tensor) and id(t) not in self.made_by:
                    self._created(t, name, site, None, None)

    def hook_ran(self, reported, args, before, returned):
        """A hook of the file's ran (a _Reported): record it as the core's engine does."""
        if not self.reporting:
            return
        kind, hook = reported.kind, reported.hook
        if kind in ("forward_pre", "forward"):
            given = args[1] if kind == "forward_pre" else args[-1]
            if reported.with_kwargs and kind == "forward_pre" and \
                    isinstance(returned, tuple) and len(returned) == 2:
                returned = returned[0]      # (new args, new kwargs), as the core reports it
            self.module_hook(kind, args[0], hook, given, returned, None)
            return
        node = self._firing_node()
        if self._unfinished is not None and self._unfinished[0] is not node:
            self._flush_step()
        if kind in ("backward_pre", "backward"):
            self.module_hook(kind, args[0], hook, args[1], returned, node)
        elif kind == "node":
            # a node hook: (grad_inputs, grad_outputs) for a post-hook, (grad_outputs,) for a
            # pre-hook
            kind = "post" if len(args) == 2 else "pre"
            if kind == "pre":
                self._retain_fired(node, args[0])
            self.fired(node, kind, None, hook, self._hook_tensors(args[0]),
                       self._hook_tensors(returned))
            if kind == "post" and returned is not None and self._unfinished is not None:
                self._unfinished[1] = returned
        elif kind == "tensor":
            nr = reported.nr
            self.fired(node, kind, nr, hook, self._hook_tensors(args[0]),
                       self._hook_tensors(returned))
            if returned is not None:
                self.hooked(node, nr, hook)
        else:
            self.fired(node, kind, 0, hook, before, self._hook_tensors(args[0].grad))

    def _kept(self, g, limit):
        """A copy of gradient g, or a GradSummary when it has more than limit elements (None:
        always a copy): read where torch keeps it (summary_stats, 2**18 elements at a time),
        never copied, and once per backward call."""
        a = _numpy(g)
        if limit is None or a.size <= limit or a.dtype.kind != "f":
            return a.copy()
        known = self._summaries.get(id(g))
        if known is not None and known[0]() is g and known[1] == g._version:
            return known[2]
        summary = GradSummary(a)
        self._summaries[id(g)] = (weakref.ref(g), g._version, summary)
        return summary

    # ----- saved tensors -----------------------------------------------------------------

    def pack(self, t):
        torch = self.torch
        first = self._first
        if first is not None and first[0]._version != first[1] and _same_view(first[0], t):
            # the output of an in-place call (exp_ saves its result): named in a version
            # error as an output (see _version_message), not as the argument it also is
            return self._packed_output(t, first[2] if t._is_view() else None)
        for a in self._args:
            if isinstance(a, torch.Tensor) and _same_view(a, t):
                return _Packed(t, t._version, weakref.ref(a), None, t.output_nr)
        return self._packed_output(t, None)

    def _packed_output(self, t, edit):
        """An output the node saves: torch names it in a version error by the node (its
        grad_fn now). `edit`, an in-place call that edited the view t, gives it a new grad_fn
        (AsStrided): torch names that while it lives, else the node that saved the tensor,
        which torch hides inside CopySlices: named by the core's row for the call."""
        fn = t.grad_fn
        grad_fn = None if fn is None else short_name(fn)
        if fn is None or edit is None:
            return _Packed(t, t._version, None, grad_fn, t.output_nr)
        packed = _Packed(t, t._version, None, grad_fn, t.output_nr,
                         _inplace_node(getattr(edit, "__name__", "")))
        self._edited_views[id(packed)] = weakref.ref(packed)
        return packed

    def _view_node_gone(self, args):
        """A call was given a view edited in place whose version has moved since (edited
        again, or through its base): torch made the view a new grad_fn to read it, and let
        the one the edit made go (no other node holds it: the edit's own node is kept inside
        CopySlices). A version error then names the saving node."""
        torch = self.torch
        given = [a for a in args or () if isinstance(a, torch.Tensor)]
        for key, ref in list(self._edited_views.items()):
            packed = ref()
            if packed is None:
                del self._edited_views[key]     # its node was freed
            elif packed.tensor._version != packed.version and \
                    any(_same_view(a, packed.tensor) for a in given):
                packed.grad_fn = packed.view
                del self._edited_views[key]

    def unpack(self, packed):
        self._unpacked = packed
        t = packed.tensor
        if not self._peeking and t._version != packed.version:
            raise RuntimeError(_version_message(t, packed, self.torch))
        return t

    @staticmethod
    def saved_names(node):
        """The `_saved_*` names of node, in saved_of's order (autograd.saved.saved_names for
        a torch node); they stay after backward freed the values."""
        return _saved_names(node)

    def saved_of(self, node):
        """[Saved] for what node still holds (None once backward freed it)."""
        names = _saved_names(node)
        out = []
        self._peeking = True
        try:
            for attr in names:
                self._unpacked = None
                try:
                    v = self._read_saved(node, attr)
                except RuntimeError:
                    return None
                packed, self._unpacked = self._unpacked, None
                if v is _UNREADABLE:
                    continue
                if v is None:
                    continue        # declared by the node, not saved for these inputs
                if isinstance(v, self.torch.Tensor):
                    original = None if packed is None or packed.original is None \
                        else packed.original()
                    if attr == "_saved_result" and original is None:
                        original = self.output_of(node, 0)
                    # no tensor is kept: a snapshot must not keep what backward freed
                    vc = _Version(original) if original is not None else _Fixed(v._version)
                    # a Python number torch wrapped into a 0-d tensor (x * 2's _saved_other):
                    # not one of the call's tensors, made by no node; its number is shown
                    number = (v.item() if original is None
                              and v.grad_fn is None and v.dim() == 0
                              and attr in _wrapped_names().get(type(node).__name__, ())
                              else None)
                    out.append(Saved(attr, original, _meta(v), vc,
                                     packed.version if packed is not None else v._version,
                                     value=number))
                else:
                    out.append(Saved(attr, value=v, is_tensor=False))
        finally:
            self._peeking = False
        return out

    def _read_saved(self, node, attr):
        """node's saved value under attr, never through the file's own saved_tensors_hooks:
        torch calls their unpack hook on every read (the file would count more unpack calls
        than under python), so such a value is read as the file's pack hook returned it when
        that is a tensor (a hook that only looks returns its argument), else _UNREADABLE."""
        raw = getattr(node, "_raw" + attr, None)
        if isinstance(raw, (list, tuple)):
            if any(getattr(r, "unpack_hook", None) not in (None, self.unpack) for r in raw):
                return _UNREADABLE
        elif getattr(raw, "unpack_hook", None) not in (None, self.unpack):
            return raw.data if isinstance(raw.data, self.torch.Tensor) else _UNREADABLE
        return getattr(node, attr)

    def _snapshot_saved(self, node):
        entry = self._entry(node)
        if entry is not None and entry[4] is None:
            from .tracer import _NOTHING_SAVED
            # The node's own output is not kept: holding it would keep the node alive (the
            # report finds it through output_of), as autograd.saved.snapshot does for the core.
            # Nor is any tensor made at or after the node (an input edited in place since, as
            # by relu_): it may hold the node, and torch's nodes are not collected in a cycle
            # (the entry would hold its node, and a training loop every step's graph).
            made = _made_order(node)
            entries = []
            for e in self.saved_of(node) or ():
                if e.label == "_saved_result":
                    e = e._replace(tensor=None)
                elif e.tensor is not None and e.tensor.grad_fn is not None and \
                        _made_order(e.tensor.grad_fn) >= made:
                    e = _WeakSaved(*e._replace(tensor=weakref.ref(e.tensor)))
                entries.append(e)
            entry[4] = entries if entries else _NOTHING_SAVED

    # ----- what the report reads -----------------------------------------------------------

    def site_of(self, node):
        entry = self._entry(node)
        return entry[_SITE] or None if entry is not None else None

    def inputs_of(self, node):
        """The tensors the call that made node was given; for a node made inside one call
        (F.linear's TBackward0), the tensors its edges lead to, where known."""
        entry = self._entry(node)
        if entry is None:
            return None
        refs = entry[_INPUTS]
        if refs is not None:
            return [None if r is None else r() for r in refs]
        if type(node).__name__ == "AccumulateGrad":
            return None
        inputs = []
        for fn, nr in _edges(node):
            if fn is None:
                inputs.append(None)
            elif type(fn).__name__ == "AccumulateGrad":
                inputs.append(fn.variable)
            else:
                # (node, nr) for an output with no Python object (made inside one call, or by
                # a create_graph backward): the report names it by its node
                t = self.output_of(fn, nr)
                inputs.append((fn, nr) if t is None else t)
        return inputs


class _OldEdit(InplaceEvent):
    """An InplaceEvent that holds its tensor weakly: the tensor when read, or once it is gone
    its base, or None once that is gone too.

    An edit through a temporary view (`x[i][0][j] = 1`) records the view, which is freed at
    once: the edit lives as long as the tensor it wrote into, as on the core."""

    __slots__ = ("_ref", "_base")

    def __init__(self, event, gone):
        base = event.tensor
        while base._base is not None:
            base = base._base
        self._base = weakref.ref(base, gone)
        self._ref = self._base if base is event.tensor else weakref.ref(event.tensor)
        self.op, self.site, self.version = event.op, event.site, event.version
        self.grad_enabled, self.seq = event.grad_enabled, event.seq

    @property
    def tensor(self):
        t = self._ref()
        return self._base() if t is None else t


class _Holder:
    """A node, held while the tracer needs it (None once let go)."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __call__(self):
        return self.node


def _let_go(nodes):
    """The tracer is gone: the nodes it held are let go (see TorchTracer._hook)."""
    for entry in list(nodes.values()):
        entry[1].node = None


class _Gone:
    """Kept by a node's hooks: when torch frees the node, its entry goes."""

    __slots__ = ("nodes", "key", "entry")

    def __init__(self, nodes, key, entry):
        self.nodes, self.key, self.entry = nodes, key, entry

    def __del__(self):
        if self.nodes.get(self.key) is self.entry:
            del self.nodes[self.key]


def _key(node):
    """A node's key while it lives: its sequence number, or its leaf for AccumulateGrad
    (whose number is the same for all)."""
    if type(node).__name__ == "AccumulateGrad":
        return ("leaf", id(node.variable))
    return node._sequence_nr()


def _made_order(node):
    return -1 if type(node).__name__ == "AccumulateGrad" else node._sequence_nr()


def _edges(node):
    try:
        return node.next_functions
    except RuntimeError:
        return ()


class _WeakSaved(Saved):
    """A Saved whose tensor is held weakly (a weak reference in the tuple, the tensor or None
    when read)."""

    __slots__ = ()

    @property
    def tensor(self):
        ref = tuple.__getitem__(self, 1)
        return None if ref is None else ref()


class _Version:
    """The version counter of a saved torch tensor, read as the core's `vc.v`: held weakly
    (a node's snapshot must not keep its own output, and with it the node, alive); once the
    tensor is gone, the version it last had."""

    __slots__ = ("ref", "last")

    def __init__(self, t):
        self.ref = weakref.ref(t)
        self.last = t._version

    @property
    def v(self):
        t = self.ref()
        if t is not None:
            self.last = t._version
        return self.last


class _Fixed:
    """The version of a saved tensor the file has no name for, as it was when read."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v


_NUMPY_DTYPES = {}


def _meta(t):
    """An array of t's shape and dtype that takes no memory (what the report reads of it)."""
    dtype = _NUMPY_DTYPES.get(t.dtype)
    if dtype is None:
        import torch
        try:
            dtype = torch.empty(0, dtype=t.dtype).numpy().dtype
        except (TypeError, RuntimeError):
            dtype = np.dtype(np.float32)
        _NUMPY_DTYPES[t.dtype] = dtype
    return np.broadcast_to(np.zeros((), dtype=dtype), tuple(t.shape))


def _array(g):
    return _numpy(g).copy()


def _numpy(g):
    """g's values as an array (not copied): force=True also gives a ZeroTensor's (what a
    double backward returns for a gradient known to be zero, abs's) as zeros of its shape and
    dtype, which .numpy() refuses."""
    return g.numpy(force=True)


def _same_view(a, b):
    try:
        return (a.data_ptr() == b.data_ptr() and a.shape == b.shape
                and a.stride() == b.stride() and a.dtype == b.dtype)
    except RuntimeError:
        return False


_UNREADABLE = object()  # a saved value only the file's own unpack hook can read
_SAVED_NAMES = {}       # node type -> its `_saved_*` attribute names, sorted


def _saved_names(node):
    """The node's `_saved_*` attributes, in the order the core lists them for the same node
    (its derivative row's arguments, then the result); unknown ones after, sorted."""
    cls = type(node)
    names = _SAVED_NAMES.get(cls)
    if names is None:
        order = _row_order().get(cls.__name__, ())
        found = [a for a in sorted(dir(node)) if a.startswith("_saved_")]
        rank = {name: i for i, name in enumerate(order)}
        names = _SAVED_NAMES[cls] = sorted(found, key=lambda a: rank.get(a, len(rank)))
    return names


_ROW_ORDER = {}
_ROW_INPUTS = {}


def _row_inputs(node, inputs):
    """The call's arguments as the core lists a node's inputs: as many as the core's row for
    the same node has differentiable inputs (mul(x, 2): x and the number; pow(x, 2): x)."""
    if not _ROW_INPUTS:
        from ..autograd.formula import DERIVATIVES
        for d in DERIVATIVES.values():
            _ROW_INPUTS.setdefault(d.node, d.n_inputs)
    n = _ROW_INPUTS.get(type(node).__name__)
    return inputs if n is None else inputs[:n]


_WRAPPED = {}       # grad_fn name -> the `_saved_*` names where torch wraps a Python number


def _wrapped_names():
    """grad_fn name -> the `_saved_*` names the core's rows declare `wrapped` (a Python
    number passed there is saved as a 0-d tensor: MulBackward0's _saved_other)."""
    if not _WRAPPED:
        from ..autograd.formula import DERIVATIVES
        for d in DERIVATIVES.values():
            _WRAPPED.setdefault(d.node, set()).update("_saved_" + a for a in d.wrapped)
    return _WRAPPED


def _row_order():
    """grad_fn name -> its `_saved_*` names in the core's derivative table's order."""
    if not _ROW_ORDER:
        from ..autograd.formula import DERIVATIVES
        for d in DERIVATIVES.values():
            _ROW_ORDER.setdefault(d.node, tuple("_saved_" + a for a in d.args)
                                  + ("_saved_" + d.result_name,))
    return _ROW_ORDER


# one frame of traceback.format_stack(): '  File "x.py", line 3, in f\n    code\n'
_TRACE_FRAME = re.compile(r'  File "(.*)", line (\d+), in (.*)\n(?:    (.*)\n)?')


def _grads_batched(args, kwargs):
    """autograd.grad's is_grads_batched (its 8th argument)."""
    return bool(kwargs.get("is_grads_batched") if kwargs and "is_grads_batched" in kwargs
                else len(args) > 7 and args[7])


def _inplace_node(name):
    """The short name of the node an in-place call makes (exp_: Exp), from the core's
    derivative table (leaky_relu_ has its own row, exp_ is exp's), or None."""
    from ..autograd.formula import DERIVATIVES
    d = DERIVATIVES.get(name) or DERIVATIVES.get(name.rstrip("_"))
    return None if d is None else shorten(d.node)


def _version_message(t, packed, torch):
    """torch's own message for a saved tensor modified in place (SavedVariable::unpack)."""
    sizes = "[" + ", ".join(str(s) for s in t.shape) + "]"
    msg = ("one of the variables needed for gradient computation has been modified by an "
           f"inplace operation: [{t.type()} {sizes}]")
    # torch names a saved input's grad_fn as it is now (CopySlices after b[0] = v), a saved
    # output's saving node, both without "Backward0" (graph.short_name)
    original = None if packed.original is None else packed.original()
    if original is not None:
        if original.grad_fn is not None:
            msg += f", which is output {original.output_nr} of {short_name(original.grad_fn)},"
    elif packed.grad_fn is not None:
        msg += f", which is output {packed.output_nr} of {packed.grad_fn},"
    msg += f" is at version {t._version}; expected version {packed.version} instead."
    if torch.is_anomaly_enabled():
        msg += (" Hint: the backtrace further above shows the operation that failed to "
                "compute its gradient. The variable in question was changed in there or "
                "anywhere later. Good luck!")
    else:
        msg += (" Hint: enable anomaly detection to find the operation that failed to "
                "compute its gradient, with torch.autograd.set_detect_anomaly(True, "
                "check_nan=False).")
    return msg


class torch_tracing:
    """Context manager: the TorchTracer's mode and saved-tensor hooks installed."""

    def __init__(self, tracer):
        self.tracer = tracer

    def __enter__(self):
        import torch
        from torch.overrides import TorchFunctionMode
        tracer = self.tracer

        class _Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return tracer.call(func, types, args, kwargs)

        from .modules import install_torch_hooks
        self.mode = tracer.mode = _Mode()
        self.hooks = torch.autograd.graph.saved_tensors_hooks(tracer.pack, tracer.unpack)
        self.hooks.__enter__()
        # which module call made each node, from torch's global module hooks
        self.module_hooks = install_torch_hooks(tracer.modules)
        self.patched = _patch_registrations(tracer, torch)
        tracer.reporting = True
        self.mode.__enter__()
        return tracer

    def __exit__(self, *exc):
        self.mode.__exit__(*exc)
        self.tracer._flush_step()
        self.tracer.reporting = False
        for owner, attr, old in self.patched:
            setattr(owner, attr, old)
        self.module_hooks.remove()
        self.hooks.__exit__(*exc)
        return False


# The registrations of hooks that torch's function modes do not see, wrapped while the file
# runs: (owner, attribute, kind of hook).
def _registrations(torch):
    from torch.autograd.function import _HookMixin
    module = torch.nn.Module
    # every module's hooks (torch.nn.modules.module.register_module_forward_hook, ...): the
    # file imports the wrapped function, as it runs after the wrapping
    every = torch.nn.modules.module
    # a C++ node's register_hook and register_prehook both store the hook through
    # _HookMixin._register_hook; the deprecated register_backward_hook's hook gets
    # (module, grad_input, grad_output), as a full one's
    return [(_HookMixin, "_register_hook", "node"),
            (module, "register_forward_pre_hook", "forward_pre"),
            (module, "register_forward_hook", "forward"),
            (module, "register_full_backward_pre_hook", "backward_pre"),
            (module, "register_full_backward_hook", "backward"),
            (module, "register_backward_hook", "backward"),
            (every, "register_module_forward_pre_hook", "forward_pre"),
            (every, "register_module_forward_hook", "forward"),
            (every, "register_module_full_backward_pre_hook", "backward_pre"),
            (every, "register_module_full_backward_hook", "backward"),
            (every, "register_module_backward_hook", "backward")]


def _patch_registrations(tracer, torch):
    """Wrap the hooks the file registers (see _Reported); [(owner, attribute, original)]."""
    patched = []
    for owner, attr, kind in _registrations(torch):
        old = owner.__dict__[attr]
        # a method's hook follows the module, a function's comes first
        at = 0 if isinstance(owner, types.ModuleType) else 1
        setattr(owner, attr, _reporting(tracer, old, kind, at))
        patched.append((owner, attr, old))
    # A module with backward hooks returns its output through BackwardHookFunctionBackward
    # nodes torch makes inside Module.__call__, unseen by the mode: recorded as it returns,
    # at the file's line that called the module (as the core records them)
    hook_class = torch.utils.hooks.BackwardHook
    setup = hook_class.__dict__["setup_output_hook"]

    @functools.wraps(setup)
    def setup_output_hook(self, args):
        result = setup(self, args)
        tracer._outputs_made(None, args if isinstance(args, tuple) else (args,), result)
        return result
    hook_class.setup_output_hook = setup_output_hook
    patched.append((hook_class, "setup_output_hook", setup))
    return patched + _patch_functions(tracer, torch)


def _patch_functions(tracer, torch):
    """What the mode does not see: a custom autograd Function's apply records its outputs
    and their node at the line that called it; its backward (run by the engine, where torch
    turned the mode off) runs with the mode on, its gradients made by the backward call, as
    on the core; an nn.Parameter is made where it is made. [(owner, attribute, original)]"""
    function = torch.autograd.Function
    apply = function.__dict__["apply"]

    @functools.wraps(apply.__func__)
    def applied(cls, *args, **kwargs):
        out = apply.__func__(cls, *args, **kwargs)
        tracer._outputs_made(cls.__name__ + ".apply", args, out, depth=2)
        return out
    function.apply = classmethod(applied)
    node_class = torch.autograd.function.BackwardCFunction
    backward = node_class.__dict__["apply"]

    @functools.wraps(backward)
    def backward_applied(self, *args):
        tracer.given_by_backward(args)
        with tracer.traced():
            return backward(self, *args)
    node_class.apply = backward_applied
    # nn.Parameter(data) is made by Tensor._make_subclass, which the mode does not see: made
    # at the line that called it (Module.__init__'s user line), as on the core
    parameter = torch.nn.Parameter
    new = parameter.__dict__["__new__"]

    @functools.wraps(new.__func__)
    def made(cls, *args, **kwargs):
        t = new.__func__(cls, *args, **kwargs)
        tracer._outputs_made("Parameter", (), t, depth=2)
        return t
    parameter.__new__ = staticmethod(made)
    # torch.from_numpy and torch.frombuffer take no tensor: the mode does not see them
    creations = [(torch, name, getattr(torch, name)) for name in ("from_numpy", "frombuffer")]
    for owner, name, create in creations:
        setattr(owner, name, _recorded(tracer, create, name))
    # register_multi_grad_hook registers a tensor hook of torch's per tensor, each reported
    # as the file's function
    graph = torch.autograd.graph
    multi = graph.__dict__["register_multi_grad_hook"]

    @functools.wraps(multi)
    def multi_grad(tensors, fn, *args, **kwargs):
        if not callsite.called_by_user(2):
            return multi(tensors, fn, *args, **kwargs)
        tracer.group_hook = fn
        try:
            return multi(tensors, fn, *args, **kwargs)
        finally:
            tracer.group_hook = None
    graph.register_multi_grad_hook = multi_grad
    return [(function, "apply", apply), (node_class, "apply", backward),
            (parameter, "__new__", new), (graph, "register_multi_grad_hook", multi)] + creations


def _recorded(tracer, create, name):
    """create, its tensor recorded as made by `name` at the line that called it."""
    @functools.wraps(create)
    def created(*args, **kwargs):
        t = create(*args, **kwargs)
        tracer._outputs_made(name, (), t, depth=2)
        return t
    return created


def _reporting(tracer, register, kind, at=1):
    """register, wrapping the hook it is given when the file itself calls it."""
    if isinstance(register, staticmethod):
        store = register.__func__

        @functools.wraps(store)
        def stored(hooks, hook):
            if callsite.called_by_user(2):
                hook = _Reported(tracer, hook, kind)
            return store(hooks, hook)
        return staticmethod(stored)

    @functools.wraps(register)
    def registered(*args, **kwargs):
        if len(args) > at and callsite.called_by_user(2):
            hook = _Reported(tracer, args[at], kind, kwargs.get("with_kwargs", False))
            args = args[:at] + (hook,) + args[at + 1:]
        return register(*args, **kwargs)
    return registered


class _Reported:
    """A hook of the file's, wrapped: it runs as it was, and the tracer records each firing
    (TorchTracer.hook_ran). For a tensor hook, nr is the output of the tensor's node it is
    on. The tracer is held weakly: the hook may be on a torch node, which is not collected in
    a cycle; once the tracer is gone the hook just runs."""

    __slots__ = ("_tracer", "hook", "kind", "with_kwargs", "nr")

    def __init__(self, tracer, hook, kind, with_kwargs=False, nr=None):
        self._tracer = tracer if isinstance(tracer, weakref.ref) else weakref.ref(tracer)
        self.hook, self.kind = hook, kind
        self.with_kwargs, self.nr = with_kwargs, nr

    # torch names a hook by its __name__ in its errors ("hook 'scale' has changed the size of
    # value"): the file's hook's, or none (an AttributeError, as the hook's own)
    @property
    def __name__(self):
        return self.hook.__name__

    def __deepcopy__(self, memo):
        # a copy of a module with hooks (copy.deepcopy) reports its hooks too; the hook is
        # copied as Python copies it (a bound method of the module is bound to the copy), the
        # tracer is not part of the file's objects and is not copied
        return _Reported(self._tracer, copy.deepcopy(self.hook, memo), self.kind,
                         self.with_kwargs, self.nr)

    def __reduce__(self):
        # pickled (torch.save of a module with hooks) as the file's own hook, through the
        # standard library only: the checkpoint loads without gradviz
        return operator.getitem, ([self.hook], 0)

    def __call__(self, *args):
        before = None
        if self.kind == "post_accumulate" and args[0].grad is not None:
            before = _array(args[0].grad)     # the hook may change .grad in place
        tracer = self._tracer()
        if tracer is None:
            return self.hook(*args)
        if self.kind not in ("forward_pre", "forward"):
            tracer._hook_firing()
            tracer.given_by_backward(args)
        with tracer.traced():
            returned = self.hook(*args)
        tracer.hook_ran(self, args, before, returned)
        return returned


def _with_hook(tracer, kind, args, kwargs):
    """A Tensor hook method's (args, kwargs) with its hook wrapped (a _Reported)."""
    t = args[0]
    nr = t.output_nr if t.grad_fn is not None else 0
    if tracer.group_hook is not None:
        hook = args[1] if len(args) > 1 else kwargs["hook"]
        hook._gradviz_for = tracer.group_hook       # the report names the file's function
    if len(args) > 1:
        return (t, _Reported(tracer, args[1], kind, nr=nr)) + tuple(args[2:]), kwargs
    kwargs = dict(kwargs, hook=_Reported(tracer, kwargs["hook"], kind, nr=nr))
    return args, kwargs

