"""Backward graph nodes: grad_fn objects, AccumulateGrad, saved tensors, hooks.

A node's edges (`next_functions`) are kept flat for speed: `_next` is a tuple of nodes (None
for an input that does not require grad), or for a node of one or two inputs the first input's
node itself, with the second's in `_next1` (`_NO_EDGE` for a node of one input). Most ops have
one or two inputs, and a tuple per node was one more object per op for the cyclic garbage
collector to track and walk over on every pass; `edges` gives the tuple. `_nrs` holds the
matching input numbers (None when all are 0). A node records the user's code object and the
offset of the instruction that made it (`_code`, `_lasti`; `_where` gives them as (file,
line)) when anyone may read them: a tracer is installed, or a run keeps sites
(callsite.keeping_sites; else None and 0). In anomaly mode it keeps the whole forward stack
(`_stack`).

Memory and speed: a node sets only its hot fields; what few nodes have (hooks, retained
grads, the inspector's inputs, anomaly stacks, metadata) are class-level None defaults that a
node overrides in its own __dict__ when it needs them.
"""

import itertools
import re
import sys
import weakref

import numpy as np

from .. import _tensor  # imported before gradviz.autograd (gradviz._tensor imports it)
from . import callsite as _callsite
from . import tracing as _tracing
from .callsite import site_at, user_frame, user_stack
from .grad_mode import _Setting, _state
from .._missing import module_getattr as _module_getattr

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "register_multi_grad_hook",
           "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

_seq = itertools.count()
# torch gives AccumulateGrad the highest priority in the ready queue, so do we (each its own,
# so that the queue never has to compare two nodes).
_ACCUMULATE_SEQ = sys.maxsize // 2
# Node.__dir__: the private names torch's dir(node) has that gradviz's nodes have too, and the
# `_saved_`-prefixed methods of gradviz's own (not saved values)
_DIR_PRIVATE = frozenset({"_sequence_nr"})
_NODE_HELPERS = frozenset({"_saved_items", "_saved_lookup"})


def _user_node(node):
    """A custom Function's node (gradviz.autograd.function.BackwardCFunction)."""
    return hasattr(type(node), "_fn_cls")


class _NoEdge:
    """The `_next1` of a node without a second edge in `_next1` (None is an edge: an input
    that does not require grad)."""

    __slots__ = ()

    def __repr__(self):
        return "_NO_EDGE"


_NO_EDGE = _NoEdge()


class RemovableHandle:
    """Returned by register_hook; remove() unregisters the hook."""

    __slots__ = ("_hooks", "id")
    _ids = itertools.count()

    def __init__(self, hooks_dict, hook):
        self._hooks = hooks_dict
        self.id = next(RemovableHandle._ids)
        hooks_dict[self.id] = hook

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _MultiHandle(RemovableHandle):
    """The handle of register_multi_grad_hook: remove() removes every tensor hook."""

    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call fn once per backward pass for a group of tensors.

    mode="all": after the gradients of every tensor of the group that this pass will reach,
    with the tuple of them (None for the others); mode="any": with the first of them.

    >>> import gradviz as torch
    >>> a = torch.ones(2, requires_grad=True)
    >>> b = torch.ones(2, requires_grad=True)
    >>> h = torch.autograd.graph.register_multi_grad_hook(
    ...     (a, b), lambda gs: print([g is not None for g in gs]))
    >>> (a * 2).sum().backward()
    [True, False]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    from .engine import current_task
    tensors = tuple(tensors)
    if mode == "all":
        count, buffer = {}, {}

        def inner(idx):
            def hook(grad):
                tid, will_execute = current_task()
                if tid not in count:
                    count[tid] = sum(bool(will_execute(edge_of(t)[0])) for t in tensors)
                    buffer[tid] = [None] * len(tensors)
                buffer[tid][idx] = grad
                count[tid] -= 1
                if count[tid] == 0:
                    del count[tid]
                    fn(buffer.pop(tid))
            hook._gradviz_for = fn      # the inspector lists it as fn
            return hook

        handles = tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors))
    else:
        ran = set()

        def hook(grad):
            tid, _ = current_task()
            if tid not in ran:
                ran.add(tid)
                fn(grad)

        hook._gradviz_for = fn
        handles = tuple(t.register_hook(hook) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)


class saved_tensors_hooks(_Setting):
    """Inside, every tensor a node saves for backward goes through pack(tensor), and backward
    (or reading `_saved_<name>`) gets it back through unpack(packed), as in torch: inputs in
    the order of their saved names, then the result; the innermost hooks win.

    >>> import gradviz as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: print("pack") or t,
    ...                                               lambda p: print("unpack") or p):
    ...     y = x.exp()
    pack
    >>> y.sum().backward()
    unpack
    """

    _field = "saved_hooks"

    def __init__(self, pack_hook, unpack_hook):
        super().__init__((pack_hook, unpack_hook))
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _state.saved_hooks_disabled is not None:
            raise RuntimeError(_state.saved_hooks_disabled)
        super().__enter__()
        return self


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU: for gradviz, where every tensor is, they are kept
    as they are."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        if pin_memory:
            raise NotImplementedError("gradviz: torch.autograd.graph.save_on_cpu(pin_memory=True) "
                                      "is not implemented by gradviz's core; run with --backend "
                                      "torch to use PyTorch")
        super().__init__(lambda t: t, lambda t: t)


class disable_saved_tensors_hooks(_Setting):
    """Inside, entering saved_tensors_hooks raises RuntimeError(error_message)."""

    _field = "saved_hooks_disabled"

    def __init__(self, error_message):
        super().__init__(error_message)
        self.error_message = error_message


def _torch_only(name):
    """A property that refuses `name`, a node attribute of torch's that gradviz has no object
    for, by name. A property, not Node.__getattr__: a class with __getattr__ loses CPython's
    specialised attribute loads for every attribute of every node."""
    def refuse(node):
        raise AttributeError(f"gradviz's core does not implement {type(node).__name__}.{name} "
                             "(PyTorch has it); run with --backend torch to run this file on "
                             "PyTorch")
    return property(refuse)


def _raw_saved_property(name):
    """torch's `_raw_saved_<name>` of a node saving `<name>` (the SavedVariable of a saved
    tensor: unpack(), register_hooks(), data): refused by name when the node saved a tensor (or
    a list of them) there; when it saved an int or a size, torch has no such attribute, and
    neither has gradviz (Python's own error). One property per name, shared by the classes."""
    prop = _RAW_SAVED.get(name)
    if prop is None:
        prop = _RAW_SAVED[name] = _make_raw_saved(name)
    return prop


_RAW_SAVED = {}


def _make_raw_saved(name):
    attr = "_raw_saved_" + name

    def read(node):
        if _saves_tensor(node, name):
            _torch_only(attr).fget(node)
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
    return property(read)


def _saves_tensor(node, name):
    """Whether node's `_saved_<name>` is a tensor or a list of them (torch's SavedVariable)."""
    try:
        value = getattr(node, "_saved_" + name)
    except RuntimeError:
        return True         # freed by backward: only tensors are
    from .._tensor import Tensor
    if isinstance(value, (tuple, list)):
        return any(isinstance(v, Tensor) for v in value)
    if value is None:       # an optional tensor not given: torch's SavedVariable is still there
        entry = getattr(type(node), "_entry", None)
        return entry is not None and name in entry.tensor_params
    return isinstance(value, Tensor)


class Node:
    """A function of the backward graph (a tensor's grad_fn).

    >>> import gradviz as torch
    >>> w = torch.ones(1, requires_grad=True)
    >>> y = w * torch.ones(1)
    >>> y.grad_fn.name(), y.grad_fn.next_functions[1]
    ('MulBackward0', (None, 0))
    """

    __slots__ = ("_next", "_next1", "_seq", "_code", "_lasti", "__dict__", "__weakref__")

    _n_out = 1          # number of forward outputs (gradients this node receives)
    # Rarely set; a node that needs one stores it in its own __dict__. `_nrs` is None when
    # every edge is to output 0; `_plain` turns False once a hook or retain_grad is added, so
    # the engine can take its short path after reading one attribute.
    _nrs = _hooks = _prehooks = _tpre = _retain = _inputs = _metadata = _stack = None
    _plain = True
    # False: when every gradient it gets is None, the engine gives None to each edge without
    # calling _apply (torch's any_grad_defined); True: _apply runs anyway.
    _apply_none = False
    # A node that can add its gradient into its next node's input buffer in place (the
    # engine's plain path): a function (node, grad, buffers) -> True when it did. It may lay
    # that gradient out in memory as torch would not, so the engine lets it only where no
    # user code sees a gradient (_layout_private).
    _into = None
    # True for built-in nodes whose backward is gradviz's own code (no user code runs in it).
    _builtin = False

    def _init_node(self, nexts, nrs):
        self._next = nexts
        self._next1 = _NO_EDGE
        if nrs is not None:
            self._nrs = nrs
        self._seq = next(_seq)
        if _tracing.active is not None or _callsite.keep_sites:     # (as formula.record)
            self._code, self._lasti = user_frame(2)
        else:
            self._code = None
            self._lasti = 0
        if _state.anomaly:
            self._stack = user_stack()
        trace = _tracing.active
        if trace is not None:
            trace.node(self)

    @property
    def _where(self):
        """(filename, line) of the user's code that made this node, or None (none found, or
        none kept: made with no tracer installed outside callsite.keeping_sites)."""
        code = self._code
        return None if code is None else site_at(code, self._lasti)

    # ----- torch's public Node API ---------------------------------------------------------

    def name(self):
        return type(self).__name__

    @property
    def next_functions(self):
        nrs = self._nrs
        if nrs is None:
            return tuple((fn, 0) for fn in edges(self))
        return tuple(zip(edges(self), nrs))

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def requires_grad(self):
        return True

    def _sequence_nr(self):
        return self._seq

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after this node ran; may return new grad_inputs."""
        self._plain = False
        if self._hooks is None:
            self._hooks = {}
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) before this node runs; may return new grad_outputs."""
        self._plain = False
        if self._prehooks is None:
            self._prehooks = {}
        return RemovableHandle(self._prehooks, fn)

    def __call__(self, *grads):
        from .._tensor import Tensor
        create = _state.enabled and any(isinstance(g, Tensor) and g._rg for g in grads)
        raw = [g if create or not isinstance(g, Tensor) else g._data for g in grads]
        outs = self._apply(raw, create)
        res = tuple(None if g is None else _as_tensor(g) for g in outs)
        return res[0] if len(res) == 1 else res

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __dir__(self):
        # torch's dir(node) lists its public API, `_saved_*` and `_sequence_nr`: gradviz's
        # own bookkeeping (`_next`, `_plan`, `_saved_lookup`, ...) stays out of it, so code
        # listing `_saved_*` by dir() finds torch's names only. A custom Function's node
        # keeps Python's dir (its ctx holds whatever the user's forward set).
        names = object.__dir__(self)
        if _user_node(self):
            return names
        return [n for n in names if n[0] != "_" or n in _DIR_PRIVATE or (
            n.startswith("_saved_") and n not in _NODE_HELPERS)]

    # torch's `_input_metadata` (the shape, dtype and device of each input's gradient) and two
    # methods of its C++ nodes: gradviz has no such objects, and says so by name
    _input_metadata = _torch_only("_input_metadata")
    _register_hook_dict = _torch_only("_register_hook_dict")
    _set_sequence_nr = _torch_only("_set_sequence_nr")

    # ----- hooks used by tensors and the engine --------------------------------------------

    def _add_tensor_prehook(self, nr, hook):
        self._plain = False
        if self._tpre is None:
            self._tpre = {}
        return RemovableHandle(self._tpre.setdefault(nr, {}), hook)

    def _add_retain(self, nr, tensor_ref):
        self._plain = False
        if self._retain is None:
            self._retain = {}
        self._retain[nr] = tensor_ref

    def _move_retain(self, nr, tensor, node, new_nr):
        """An in-place op gave tensor (output nr of this node) a new grad_fn: its retain_grad
        goes with it, as torch moves it; this node no longer writes tensor.grad (else
        y.retain_grad(); y.mul_(3) would get the gradient from before the edit)."""
        if self._retain is not None and nr in self._retain:
            ref = self._retain.pop(nr)
            node._add_retain(new_nr, ref)

    def _tensor_hooks(self, nr):
        tpre = self._tpre
        return None if tpre is None else tpre.get(nr)

    def _adopt_counter(self, vc):
        """Output 0 of this node got its version counter `vc` (see FormulaNode)."""

    def _release(self):
        """Free saved values after a backward without retain_graph."""

    def _unpack(self, grads, create_graph):
        """Check the saved values as apply would, for a backward where no gradient reaches
        this node (see FormulaNode); CopySlices returns before looking at its op's, as torch's
        does."""

    def _apply(self, grads, create_graph, need=None, release=False):
        """The gradients for the next functions; `need` (a bit per edge, None for all) says
        which edges lead to a node this backward runs: the others may get None. `release`:
        _release once they are computed (a backward that does not retain the graph)."""
        raise NotImplementedError(f"{self.name()} has no backward")



class AccumulateGrad(Node):
    """Adds the incoming gradient into a leaf tensor's .grad (`.variable` is the leaf)."""

    __slots__ = ("variable",)
    _plain = False          # the engine always runs AccumulateGrad on its full path (leaf hooks)
    _apply_none = True      # torch calls the post-accumulate hooks without a gradient too

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def __init__(self, variable):
        self._init_node((), None)
        self._seq = _ACCUMULATE_SEQ - self._seq     # among accumulators, the older first
        self.variable = variable

    def _tensor_hooks(self, nr):
        return self.variable._hooks

    def _apply(self, grads, create_graph, need=None, release=False):     # (saves nothing)
        from .._tensor import Tensor, _make
        g = grads[0]
        var = self.variable
        if g is None:
            pass
        elif create_graph:
            old = var._grad
            if old is not None:
                var._grad = _sum_laid_out(old, g)
            elif isinstance(g, Tensor):
                var._grad = _recorded_copy(g, var._data)
            else:
                var._grad = _make(_laid_out_as(g, var._data))
        else:
            accumulate(var, g)
        if var._post_hooks:
            for hook in list(var._post_hooks.values()):
                trace = _tracing.active
                # what .grad held before the hook, which may change it in place
                before = None if trace is None or var._grad is None else var._grad._data.copy()
                returned = hook(var)
                if trace is not None:
                    trace.fired(self, "post_accumulate", 0, hook, before, var._grad)
                if returned is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        return ()


def accumulate(var, g, steal=False):
    """Add the array g into leaf var's .grad without a graph: a first gradient is copied into
    a new C-ordered .grad of the leaf's dtype, a later one is added in place when it can be.
    With `steal` (the engine saw that no one else holds g) a first gradient that already is
    such an array becomes the .grad without a copy, as torch's AccumulateGrad steals it.
    (A custom Function's backward may hand over a Tensor: its data is used.)"""
    if type(g) is not np.ndarray and isinstance(g, _tensor.Tensor):
        g, steal = g._data, False     # the tensor's data may be someone else's (detach())
    old = var._grad
    if old is None:
        data = var._data
        # (g's flags read once: each `.flags` makes a new object; two C-contiguous arrays of
        # one shape, the common case, are tested here before _obeys_layout's general rule)
        f = None
        if not (steal and type(g) is np.ndarray and g.dtype == data.dtype
                and (f := g.flags).owndata and f.writeable and (
                    f.c_contiguous and g.shape == data.shape and g.size
                    and data.flags.c_contiguous or _obeys_layout(g, data))):
            g = _laid_out_as(g, data)
            f = None
        t = var._grad = _tensor._make(g)
        # A stolen C-contiguous gradient (never empty here) without a size of 1 is marked as
        # the binary ops' plain operand (gradviz._ops._iterator._binary_out), as they would
        # mark it: an update `p -= lr * p.grad` then skips their layout check.
        if f is not None and f.c_contiguous and 1 not in g.shape:
            t._iter_plain = g
        return
    od = old._data
    if type(od) is np.ndarray and not od.flags.writeable and overlaps(od.shape, od.strides):
        # torch adds in place into an expanded .grad: its in-place overlap check refuses
        raise RuntimeError(WRITE_OVERLAP)
    if type(od) is np.ndarray and od.flags.writeable and od.shape == np.shape(g):
        np.add(od, g, out=od, casting="unsafe")
    else:
        old._data = np.asarray(od + g, dtype=var._data.dtype)
    # torch's AccumulateGrad adds in place (`variable_grad += new_grad`) when grad mode is off
    # for it, as here: the same .grad tensor, one version later
    old._version_counter().v += 1


# ----- torch's gradient layout contract (autograd/utils/grad_layout_contract.h) -----------
# A leaf's first .grad has the leaf's strides when the leaf is dense and non-overlapping (a
# transposed leaf gets a transposed .grad), else it is C-ordered.

def _dense(data):
    """torch's is_non_overlapping_and_dense for an array (true of any contiguous one, an
    empty one included)."""
    from .._creation import _dense
    return data.size == 0 or data.flags.c_contiguous or _dense(
        data.shape, tuple(s // data.itemsize for s in data.strides))


def _obeys_layout(g, data):
    """torch's obeys_layout_contract: may g (an array of data's dtype that owns its memory)
    become data's .grad as it is?"""
    if g.shape != data.shape or g.size == 0:      # (an empty one is laid out anew, free)
        return False
    if g.flags.c_contiguous and data.flags.c_contiguous:
        return True
    if not _dense(data):
        return g.flags.c_contiguous
    # only the strides of dims longer than 1 count; a 0 stride (a view) never does
    return all(gs == ds if n != 1 else gs != 0
               for n, gs, ds in zip(data.shape, g.strides, data.strides))


def _laid_out_as(g, data):
    """torch's clone_obey_contract: a copy of g (of data's dtype) with data's strides when
    data is dense and non-overlapping, else C-ordered."""
    if type(data) is np.ndarray and data.size == 0:
        data = _tensor._empty_strided(data)     # torch's strides for an empty leaf
    elif type(data) is not np.ndarray or (data.flags.c_contiguous and 1 not in data.shape) \
            or not _dense(data):
        return np.array(g, dtype=data.dtype, order="C")
    return _strided_copy(g, data.dtype, data.shape, data.strides)


def _strided_copy(g, dtype, shape, steps):
    """A copy of g in new memory with the given strides (in bytes)."""
    out = np.lib.stride_tricks.as_strided(np.empty(int(np.prod(shape)), dtype=dtype), shape,
                                          steps)
    np.copyto(out, g, casting="unsafe")
    return out


def _preserved_copy(d):
    """A copy of array d laid out as torch's clone (preserve_format) lays it out: with d's
    strides when d is dense and non-overlapping, else dense in the order of d's strides (an
    expanded tensor's clone is contiguous). NumPy's own copy differs in the strides of dims
    of size 1 and in the order it gives broadcast (0-stride) dims."""
    out = np.array(d, copy=True)
    if type(d) is not np.ndarray or out.strides == d.strides:
        return out      # (a copy is dense: d was too, and torch keeps its strides)
    from .._creation import _dense_strides
    strides = tuple(s // d.itemsize for s in d.strides)
    if not _dense(d):
        strides = _dense_strides(d.shape, strides)
    steps = tuple(s * d.itemsize for s in strides)
    return out if steps == out.strides else _strided_copy(d, d.dtype, d.shape, steps)


def _sum_laid_out(old, g):
    """old + g for a later .grad under create_graph (AddBackward0), laid out as torch's
    TensorIterator lays it out: C-ordered when both are contiguous, else in the order of the
    first operand's strides (the old .grad's) when that one is dense."""
    from .._creation import _dense_strides
    new = old + g
    od, gd = old._data, g._data if isinstance(g, _tensor.Tensor) else g
    if type(od) is np.ndarray and type(new._data) is np.ndarray and not (
            od.flags.c_contiguous and np.asarray(gd).flags.c_contiguous) and _dense(od):
        size = new._data.itemsize
        steps = tuple(s * size for s in _dense_strides(od.shape, old.stride()))
        if steps != new._data.strides:
            new._data = _strided_copy(new._data, new._data.dtype, od.shape, steps)
    return new


def _recorded_copy(g, data):
    """The first .grad under create_graph as torch records it: g copied into a tensor laid
    out as the leaf (CopyBackwards), or for a leaf that is not dense and non-overlapping
    cloned C-ordered (CloneBackward0)."""
    from .._registry import ops
    if type(data) is np.ndarray and not _dense(data):
        out = ops.clone(g)
        if not out._data.flags.c_contiguous:
            out._data = np.ascontiguousarray(out._data)
        return out
    out = _tensor._make(_laid_out_as(np.empty(g._data.shape, dtype=data.dtype), data))
    ops.copy_(out, g)
    return out


def edges(node):
    """The nodes a node's edges lead to, as a tuple (see `_next`)."""
    nexts = node._next
    if type(nexts) is tuple:
        return nexts
    second = node._next1
    return (nexts,) if second is _NO_EDGE else (nexts, second)


def is_stale(t):
    """t is a view whose base, or another view of it, was edited in place since t's grad_fn
    was set (`_fn_ver`: the shared version then): torch regenerates its grad_fn on use."""
    vc = t._vc
    return vc is not None and t._base_ is not None and vc.v != t._fn_ver


def refresh(t):
    """Regenerate a stale view's grad_fn (gradviz._ops.inplace.refresh_view)."""
    from .._ops.inplace import refresh_view
    refresh_view(t)


def _through_base():
    """The `_acc` of a leaf view that requires grad only through its base (one made in no_grad
    or inference mode of a tensor that requires grad): like torch's grad_accumulator, which
    reads the view's own flag, it has no AccumulateGrad, so gradient reaching it is dropped."""
    return None


def accumulator(t):
    """The leaf's AccumulateGrad, shared while it is alive (torch keeps a weak reference);
    None for a view that requires grad only through its base (see _through_base)."""
    ref = t._acc
    acc = None if ref is None else ref()
    if acc is None:
        if ref is _through_base:
            return None
        acc = AccumulateGrad(t)
        t._acc = weakref.ref(acc)
    return acc


def edge_of(t):
    """(node, input_nr) through which gradient reaches tensor t, or (None, 0)."""
    if not t._rg:
        return None, 0
    if is_stale(t):
        refresh(t)
    fn = t._fn
    if fn is None:
        return accumulator(t), 0
    return fn, t._nr


def _as_tensor(g):
    from .._tensor import Tensor, _make
    return g if isinstance(g, Tensor) else _make(np.asarray(g) if np.ndim(g) else g)


_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
          "to backward through the graph a second time or if you need to access saved tensors "
          "after calling backward.")


def modified_error(data, who, now, want):
    """torch's error for a saved tensor edited in place; who = (its grad_fn, output_nr)."""
    from .._tensor import type_name
    # torch 2.13 names the saved tensor's current grad_fn (the saving node for a saved
    # output) without its "Backward0" suffix: "output 0 of Add".
    what = ""
    if who[0] is not None:
        what = f", which is output {who[1]} of {short_name(who[0])},"
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{type_name(np.asarray(data))}]{what} is at version {now}; "
        f"expected version {want} instead. Hint: enable anomaly detection to find the "
        "operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")


def short_name(node):
    """A node's name as torch's saved-variable errors print it: "Add" for AddBackward0,
    "MaskedFill1" for MaskedFillBackward1."""
    return shorten(node.name())


def shorten(name):
    """short_name of a node named `name`."""
    m = _BACKWARD_SUFFIX.search(name)
    if not m:
        return name
    return name[:m.start()] + ("" if m.group(1) in ("", "0") else m.group(1))


_BACKWARD_SUFFIX = re.compile(r"Backward(\d*)$")


# ----- In-place on views -------------------------------------------------------------------

def apply_view(arr, steps):
    """Re-create a view of `arr` from the steps that made it (see gradviz._ops._make_view)."""
    root = arr
    for f, args in steps:
        arr = f(arr, *args)
    return arr if arr.flags.writeable else writable_view(arr, root)


def overlaps(shape, strides):
    """torch's at::has_internal_overlap: a stride 0 over a size above 1 (so that a write
    would reach one element twice); an empty tensor never overlaps."""
    return 0 not in shape and any(s == 0 and n > 1 for n, s in zip(shape, strides))


WRITE_OVERLAP = ("unsupported operation: more than one element of the written-to tensor "
                 "refers to a single memory location. Please clone() the tensor before "
                 "performing the operation.")


def _overlapping_region(region, result):
    """CopySlices' region of a view that overlaps itself (only fill_ and zero_ write one): torch
    copies the op's gradient into it, which its overlap check refuses for a zero stride and
    does element by element otherwise (the same zeros everywhere, so order does not matter)."""
    if overlaps(region.shape, region.strides):
        raise RuntimeError(WRITE_OVERLAP)
    return writable_view(region, result, overlapping=True)


def internal_overlap(shape, strides, itemsize):
    """Whether two elements of a view with these sizes and strides (in bytes) share memory,
    exactly: windows of unfold(0, 3, 1) overlap without a zero stride. Strides that nest (each
    at least the extent of the smaller ones) cannot overlap; a stride that is a multiple of a
    smaller one within its span does; others are settled by listing every element's offset."""
    dims = sorted((abs(s), n) for n, s in zip(shape, strides) if n > 1)
    if 0 in shape or not dims:
        return False
    extent = itemsize
    for s, n in dims:
        if s < extent:
            break
        extent += s * (n - 1)
    else:
        return False
    if dims[0][0] == 0:
        return True
    for i, (small, n) in enumerate(dims):
        # a larger stride that a whole number of small steps reaches (unfold's windows):
        # element k along this dim is element 1 along that one
        if any(big < small * n and big % small == 0 for big, _ in dims[i + 1:]):
            return True
    starts = np.zeros(1, dtype=np.int64)      # the byte offset of every element
    for s, n in dims:
        starts = (starts[:, None] + s * np.arange(n, dtype=np.int64)).reshape(-1)
    return np.unique(starts).size < starts.size


def writable_view(data, root, overlapping=False):
    """`data`, a read-only NumPy view of `root`'s memory, rebuilt writable when it does not
    overlap itself (or `overlapping` allows it) and root is writable: a view of an expanded
    array that dropped its zero strides (x.expand(2, 3)[0]) may be written, as torch allows;
    else data as it is."""
    if (type(data) is not np.ndarray
            or (not overlapping and internal_overlap(data.shape, data.strides, data.itemsize))
            or not root.flags.writeable
            or not (root.flags.c_contiguous or root.flags.f_contiguous)):
        return data
    flat = root.reshape(-1, order="C" if root.flags.c_contiguous else "F")
    start, rest = divmod(data.ctypes.data - root.ctypes.data, root.itemsize)
    if rest or not 0 <= start <= flat.size:
        return data
    return np.lib.stride_tricks.as_strided(flat[start:], data.shape, data.strides)


class CopySlices(Node):
    """The base's grad_fn after an in-place op on one of its views (torch's CopySlices).

    Its first edge is the base's previous history; the others are the in-place op's. The
    gradient for the view's region goes through the op's backward; the rest passes unchanged.
    """

    __slots__ = ("_fn", "_steps")

    def __init__(self, base_edge, steps, fn):
        nexts = (base_edge[0],) + edges(fn)[1:]
        nrs = None
        if base_edge[1] or fn._nrs is not None:
            nrs = (base_edge[1],) + ((0,) * (len(nexts) - 1) if fn._nrs is None
                                     else fn._nrs[1:])
        self._init_node(nexts, nrs)
        self._fn = fn
        self._steps = steps

    def name(self):
        return "torch::autograd::CopySlices"

    def _apply(self, grads, create_graph, need=None, release=False):
        g = grads[0]
        # the op's backward always gives its edge 0 (the view's region)
        fn_need = None if need is None else need | 1
        if create_graph and g.requires_grad:
            outs = self._apply_recorded(g, fn_need)
        else:
            if create_graph:
                g = g._data
            result = np.array(g, copy=True)
            region = apply_view(result, self._steps)
            res = self._fn._apply([np.array(region)], False, fn_need)
            if not region.flags.writeable:
                region = _overlapping_region(region, result)
            region[...] = 0 if res[0] is None else res[0]
            outs = [result] + list(res[1:])
            if create_graph:
                outs = [None if o is None else _as_tensor(o) for o in outs]
        if need is not None and not need & 1:
            outs[0] = None      # torch: no gradient for the base's history when it does not run
        if release:
            self._release()
        return outs

    def _apply_recorded(self, g, need):
        """_apply under create_graph=True for a gradient with a graph, recorded as torch's
        CopySlices::apply_with_saved records it: the gradient copied into a new tensor
        (CopyBackwards), the view's region read as a view of it (AsStridedBackward0), cloned
        into the op's backward (CloneBackward0), and the op's gradient copied back into the
        region (CopySlices); so second derivatives flow through the in-place edit with torch's
        graph."""
        from .._registry import ops
        result = _tensor._make(np.empty_like(g._data))
        ops.copy_(result, g)
        region = _tensor._make(apply_view(result._array(), self._steps))
        region._base_, region._view_fn = result, self._steps
        region._vc = result._version_counter()
        ops.reread_from_base(result, region)
        res = self._fn._apply([ops.clone(region)], True, need)
        if res[0] is None:
            ops.zero_(region)
        else:
            ops.copy_(region, res[0])
        return [result] + list(res[1:])

    def _release(self):
        self._fn._release()


# A name PyTorch has and gradviz lacks says so, with the --backend torch hint, instead of
# Python's bare "has no attribute".
__getattr__ = _module_getattr("autograd.graph", __name__, globals())
