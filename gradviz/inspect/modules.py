"""Which nn.Module call made each autograd node: the recorder behind graphs by module.

The core's `nn.Module.__call__` tells the tracer when a call begins and ends (`module_call` /
`module_return`); on torch, `install_torch_hooks` feeds the same recorder from torch's global
module forward hooks. A call's qualified name comes from its root module's `named_modules`
(the outermost module called, named ""): `encoder.layers.3.self_attn`. A node belongs to the
innermost call open when it was made (core), or that the walk from the call's outputs back to
its inputs meets first (torch, where nodes are not seen as they are made).

Memory stays bounded in a long training loop: only the last calls are listed (as the tracer
keeps only the last frames of a function), and a node's call goes with the node.

>>> import gradviz as torch
>>> from gradviz.inspect.modules import ModuleCalls
>>> calls = ModuleCalls()
>>> net = torch.nn.Sequential(torch.nn.Linear(2, 2))
>>> outer = calls.enter(net, (torch.ones(1, 2),)); inner = calls.enter(net[0], (torch.ones(1, 2),))
>>> inner is calls.exit(net[0], torch.ones(1, 2)), outer is calls.exit(net, torch.ones(1, 2))
(True, True)
>>> [(c.name, c.cls, c.parameters) for c in calls.recent]
[('', 'Sequential', 6), ('0', 'Linear', 6)]
"""

import collections
import threading
import weakref

from .._tensor import Tensor

__all__ = ["ModuleCall", "ModuleCalls", "add_modules", "install_torch_hooks"]

_CALLS_KEPT = 512       # the last calls listed in the report (a training loop makes thousands)


class ModuleCall:
    """One call of a module: its qualified name, class, the shapes it got and returned, its
    parameter count (its own and its children's), its call number and the call it ran in."""

    __slots__ = ("index", "name", "cls", "number", "parent", "root", "_inputs", "_outputs",
                 "parameters", "nodes", "boundary", "module_id", "__weakref__")

    def __init__(self, index, name, cls, number, parent, root, inputs, parameters):
        self.index = index          # order of the call among all module calls of the run
        self.name = name
        self.cls = cls
        self.number = number        # 1 for the module's first call, 2 for its second...
        self.parent = parent        # the ModuleCall this one ran inside, or None (a root)
        self.root = root            # index of its root module (ModuleCalls.roots)
        # Shapes, kept as tuples (a training loop's calls are listed for 512 calls: tuples of
        # numbers are objects the cyclic collector stops tracking) and read as lists.
        self._inputs = inputs       # shapes of its tensor arguments (() when none)
        self._outputs = None        # shapes of the tensors it returned (None until it returns)
        self.parameters = parameters
        self.nodes = 0              # nodes attributed to it
        self.boundary = ()          # torch: the grad_fn nodes of its inputs (where walks stop)
        self.module_id = None       # id() of the module while the call is open

    @property
    def inputs(self):
        """[shape, ...] of its tensor arguments, each shape a list ([] when none)."""
        return _listed(self._inputs)

    @property
    def outputs(self):
        """[shape, ...] of the tensors it returned (None until it returns or when it raised)."""
        return _listed(self._outputs)

    def chain(self):
        """This call and the calls it ran inside, outermost first."""
        out, call = [], self
        while call is not None:
            out.append(call)
            call = call.parent
        out.reverse()
        return out


class ModuleCalls:
    """The recorder: module calls as they begin and end, and the call each node belongs to."""

    def __init__(self, kept=_CALLS_KEPT):
        # thread ident -> the calls open now in that thread, innermost last: threads call
        # modules at once (one model per thread), and a call runs inside its own thread's
        self._stacks = {}
        # held while a call is numbered and listed (the numbers are counts, a root's index is
        # its position in roots: another thread's call must not come in between)
        self._lock = threading.Lock()
        self.recent = collections.deque(maxlen=kept)
        self.roots = []             # weakrefs to the root modules, in order first called
        self._names = {}            # id(root) -> {id(module): (qualified name, ref to it)}
        self._params = {}           # id(module) -> (parameter count, weakref to module)
        self._numbers = {}          # (root index, name) -> calls so far
        self._last = {}             # (root index, name) -> its last call
        self._of = {}               # id(node) -> (weakref to node, ModuleCall)
        self._count = 0
        self.torch = False          # fed by torch's hooks (install_torch_hooks)
        self._key = f"gradviz.module_call.{id(self)}"

    # ----- what the core (or torch's hooks) report ------------------------------------------

    @property
    def stack(self):
        """The calls open now in the running thread, innermost last."""
        stack = self._stacks.get(_get_ident())
        if stack is None:
            stack = self._stacks[_get_ident()] = []
        return stack

    def enter(self, module, args):
        stack = self.stack
        parent = stack[-1] if stack else None
        inputs, parameters = _shapes(args), self._parameter_count(module)
        with self._lock:
            if parent is None:
                root = self._root_index(module)
                name = ""
            else:
                root = parent.root
                name = self._name(module, parent)
            key = (root, name)
            number = self._numbers[key] = self._numbers.get(key, 0) + 1
            call = ModuleCall(self._count, name, type(module).__name__, number, parent, root,
                              inputs, parameters)
            self._last[key] = call
            self._count += 1
            self.recent.append(call)
        call.module_id = id(module)
        stack.append(call)
        return call

    def exit(self, module, result):
        """The open call of module returned result (raised: result None). Calls opened after
        it and left open (torch calls no forward hook when forward raises) are closed too."""
        stack = self.stack
        key = id(module)
        if not stack or stack[-1].module_id != key and all(c.module_id != key for c in stack):
            return None
        while True:
            call = stack.pop()
            if call.module_id == key:
                call._outputs = None if result is None else _shapes(result)
                if call.cls != type(module).__name__:
                    # a lazy module (LazyConv2d) became its class, its parameters set, in its
                    # first forward: torch's global pre-hook saw it before
                    call.cls = type(module).__name__
                    self._params.pop(key, None)
                    call.parameters = self._parameter_count(module)
                call.module_id = None
                return call
            call.module_id = None

    def node(self, node):
        """A node made now belongs to the innermost open call. A parameter's AccumulateGrad
        (made at its first use, kept from step to step) belongs to the module owning the
        parameter instead (add_modules), as on torch, where the walk skips it."""
        stack = self.stack
        if stack and type(node).__name__ != "AccumulateGrad":
            self.attribute(node, stack[-1])

    def attribute(self, node, call):
        call.nodes += 1
        if self.torch:
            # torch's nodes take no weak reference; their metadata dict lives as they do.
            node.metadata[self._key] = call
            return
        k = id(node)
        of = self._of
        ref = weakref.ref(node, lambda _, k=k, of=of: of.pop(k, None))
        of[k] = (ref, call)

    # ----- queries --------------------------------------------------------------------------

    def call_of(self, node):
        """The ModuleCall that made node, or None."""
        if self.torch:
            return node.metadata.get(self._key)
        entry = self._of.get(id(node))
        if entry is None or entry[0]() is not node:
            return None
        return entry[1]

    def root_modules(self):
        """The root modules still alive, with their index in `roots`."""
        return [(i, m) for i, m in ((i, r()) for i, r in enumerate(self.roots)) if m is not None]

    def names(self, root_index):
        """{id(module): qualified name} of a root module still alive ({} otherwise)."""
        ref = self.roots[root_index]
        root = ref()
        names = {} if root is None else self._names.get(id(root), {})
        return {k: name for k, (name, ref) in names.items() if ref() is not None}

    # ----- helpers --------------------------------------------------------------------------

    def _root_index(self, module):
        for i, ref in enumerate(self.roots):
            if ref() is module:
                return i
        self.roots.append(weakref.ref(module))
        self._names[id(module)] = _qualified_names(module)
        return len(self.roots) - 1

    def _name(self, module, parent):
        root = self.roots[parent.root]()
        names = self._names.get(id(root)) if root is not None else None
        if names is not None and _named(names, module) is None:
            # A child added since the root's names were read (or one that took the id of a
            # child the file dropped, which then had that child's name): read them again.
            names = self._names[id(root)] = _qualified_names(root)
        name = None if names is None else _named(names, module)
        if name is None:
            # Called without being one of the root's modules (kept in a plain list, say):
            # named under the call it ran in, by its class.
            cls = type(module).__name__
            return f"{parent.name}.{cls}" if parent.name else cls
        return name

    def _parameter_count(self, module):
        # (the count is kept with a weak reference to its module: a module the file dropped
        # leaves its id to the next object, and a Linear(20, 256) was given another one's count)
        kept = self._params.get(id(module))
        if kept is not None and kept[1]() is module:
            return kept[0]
        try:
            n = sum(int(p.numel()) for p in module.parameters())
        except Exception:  # noqa: BLE001 - a user's module may raise anything
            n = 0
        try:
            self._params[id(module)] = (n, weakref.ref(module))
        except TypeError:
            self._params.pop(id(module), None)     # no weak reference: counted each time
        return n


_get_ident = threading.get_ident


def _qualified_names(root):
    """{id(module): (qualified name, reference to it)} of root's modules: the reference tells
    a module still there from a new one that took the id of one the file dropped."""
    try:
        return {id(m): (name, _ref(m)) for name, m in root.named_modules()}
    except Exception:  # noqa: BLE001 - a user's module may raise anything when walked
        return {}


def _ref(module):
    try:
        return weakref.ref(module)
    except TypeError:
        return lambda: module     # no weak reference: held (a module is small)


def _named(names, module):
    """module's qualified name in names, or None (also for another module under its id)."""
    entry = names.get(id(module))
    return entry[0] if entry is not None and entry[1]() is module else None


def _shapes(value):
    """(shape, ...) of the tensors in a module's arguments or result (tuples, lists, dicts one
    level down), each shape a tuple; a lone tensor gives one shape."""
    shape = _shape(value)
    if shape is not None:
        return (shape,)
    out = []
    items = value.values() if isinstance(value, dict) else \
        value if isinstance(value, (tuple, list)) else ()
    for v in items:
        shape = _shape(v)
        if shape is not None:
            out.append(shape)
    return tuple(out)


def _shape(value):
    """A tensor's shape as a tuple of ints (None for anything else). The core's tensors are
    told apart first: a training loop calls its modules at every step."""
    if isinstance(value, Tensor):
        return value._data.shape
    if hasattr(value, "shape") and hasattr(value, "grad_fn"):
        return tuple(value.shape)
    return None


def _listed(shapes):
    """Shapes as the report lists them: a list of lists (None stays None)."""
    return None if shapes is None else [list(s) for s in shapes]


# ----- the report's "module", "modules" and "module_calls" ----------------------------------

def add_modules(report, calls, nodes):
    """Add "modules" and "module_calls" to the report, "module" to its tensors and nodes and
    "module_call" to its nodes (see docs/report-schema.md). `nodes` are the node objects of
    report["nodes"], in the same order; calls is a ModuleCalls, or None (nothing recorded).

    A parameter's AccumulateGrad belongs to the module that owns the parameter (it lives on
    from call to call); every other node to the call that made it.
    """
    entries = report.get("nodes") or []
    # without a module call nothing belongs to one: a 100,000-node chain asks no node
    called = calls is not None and calls._count > 0
    owners = _parameter_owners(calls) if called else {}
    listed = {}
    if not called:
        for entry in entries:
            entry["module"] = entry["module_call"] = None
    for node, entry in zip(nodes, entries) if called else ():
        call = calls.call_of(node)
        owner = owners.get(id(getattr(node, "variable", None))) \
            if type(node).__name__ == "AccumulateGrad" else None
        if owner is not None:
            entry["module"], entry["module_call"] = owner, None
        elif call is not None:
            entry["module"], entry["module_call"] = call.name, call.index
            for c in call.chain():
                listed.setdefault(c.index, (c, []))
            listed[call.index][1].append(entry["id"])
        else:
            entry["module"], entry["module_call"] = None, None
    by_id = {e["id"]: e for e in entries} if called else {}
    for t in report.get("tensors") or []:
        node = by_id.get(t.get("node")) or by_id.get(t.get("accumulator")) or {}
        t["module"] = node.get("module")
    if calls is not None:
        for c in calls.recent:
            listed.setdefault(c.index, (c, []))
    report["module_calls"] = [_call_entry(c, ids) for _, (c, ids) in sorted(listed.items())]
    report["modules"] = [] if calls is None else _module_trees(calls)
    return report


def _call_entry(call, node_ids):
    return {"index": call.index, "module": call.name, "class": call.cls, "call": call.number,
            "parent": None if call.parent is None else call.parent.index, "root": call.root,
            "inputs": call.inputs, "outputs": call.outputs, "parameters": call.parameters,
            "nodes": node_ids}


def _parameter_owners(calls):
    """{id(parameter): qualified name of the module that owns it} over the root modules."""
    owners = {}
    for _, root in calls.root_modules():
        try:
            for name, m in root.named_modules():
                for p in m._parameters.values():
                    if p is not None:
                        owners.setdefault(id(p), name)
        except Exception:  # noqa: BLE001 - a user's module may raise anything when walked
            continue
    return owners


def _module_trees(calls):
    """One tree per root module still alive: name, class, parameters, the shapes its last call
    got and returned, how many calls, children (in registration order)."""
    trees = []
    for i, root in calls.root_modules():
        by_name = {}
        try:
            named = list(root.named_modules())
        except Exception:  # noqa: BLE001 - a user's module may raise anything when walked
            continue
        for name, m in named:
            last = calls._last.get((i, name))
            entry = by_name[name] = {
                "name": name, "class": type(m).__name__,
                "parameters": calls._parameter_count(m),
                "inputs": None if last is None else last.inputs,
                "outputs": None if last is None else last.outputs,
                "calls": calls._numbers.get((i, name), 0), "children": []}
            if name:
                parent = by_name.get(name.rsplit(".", 1)[0] if "." in name else "")
                if parent is not None:
                    parent["children"].append(entry)
        trees.append(by_name[""])
    return trees


# ----- torch --------------------------------------------------------------------------------

def _grad_fns(value):
    if hasattr(value, "grad_fn"):
        return [value.grad_fn] if value.grad_fn is not None else []
    items = value.values() if isinstance(value, dict) else \
        value if isinstance(value, (tuple, list)) else ()
    return [v.grad_fn for v in items if getattr(v, "grad_fn", None) is not None]


def _attribute_torch(calls, call, result):
    """Torch makes nodes unseen: walk back from the call's outputs to its inputs and give the
    nodes no call has yet to this one (inner calls returned first, so the innermost wins).
    An inner call's nodes are skipped over, from its outputs to its inputs."""
    stop = set(map(id, call.boundary))
    seen = set()
    stack = _grad_fns(result)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or id(node) in stop:
            continue
        seen.add(id(node))
        if type(node).__name__ == "AccumulateGrad":
            continue
        owner = calls.call_of(node)
        if owner is None:
            calls.attribute(node, call)
        elif owner is not call and call in owner.chain():
            stack.extend(owner.boundary)     # an inner call's interior: jump to its inputs
            continue
        elif owner is not call:
            continue                         # made before this call
        stack.extend(fn for fn, _ in node.next_functions)


def install_torch_hooks(calls=None):
    """Feed a ModuleCalls from torch's global module forward hooks; returns a handle whose
    remove() takes them away again (its `calls` is the recorder).

    >>> import torch                                            # doctest: +SKIP
    >>> handle = install_torch_hooks()                          # doctest: +SKIP
    >>> torch.nn.Linear(2, 3)(torch.ones(1, 2, requires_grad=True)).sum()  # doctest: +SKIP
    >>> handle.calls.recent[0].name, handle.remove()            # doctest: +SKIP
    ('', None)
    """
    from torch.nn.modules import module as torch_module
    calls = ModuleCalls() if calls is None else calls
    calls.torch = True

    walked = []     # the calls of the outermost call running now, whose boundaries it needs

    def pre(module, args):
        call = calls.enter(module, args)
        call.boundary = tuple(_grad_fns(args))
        walked.append(call)

    def post(module, args, result):
        call = calls.exit(module, result)
        if call is not None:
            _attribute_torch(calls, call, result)
        if not calls.stack:
            # The outermost call returned: no walk needs its calls' boundaries any more, and
            # a boundary holds its nodes, with the step's graph above them (the last 512
            # calls are listed: a training loop would keep its last steps' graphs alive).
            for c in walked:
                c.boundary = ()
            walked.clear()

    return _TorchHooks(calls, [torch_module.register_module_forward_pre_hook(pre),
                               torch_module.register_module_forward_hook(post)])


class _TorchHooks:
    def __init__(self, calls, handles):
        self.calls = calls
        self._handles = handles

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False
