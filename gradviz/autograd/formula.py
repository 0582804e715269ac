"""The derivative-table machinery: rows, their plans, and the nodes made from them.

gradviz._derivatives holds the rows (one per differentiable op, like torch's
derivatives.yaml); this module turns each into a Node subclass named after torch's grad_fn
and records nodes from the ops' forwards. A row is declared with the op's signature,
`"mul(Tensor self, Tensor other)"`, and one formula per Tensor parameter, keyed by the
parameter's name. Checks that make a broken row an import error, never a None gradient:

- every Tensor parameter of the signature has a formula or is listed as not differentiable,
  and no formula names a parameter the signature lacks (`defderiv`);
- a formula only uses names in scope: the row's saved values and `result` (`Derivative`);
- every row is bound to at least one forward (`gradviz._registry.records`), and each forward
  has the row's differentiable parameters by name, in the signature's order
  (`check_bindings`);
- a node is recorded with exactly one input per differentiable parameter (`record`), and the
  plan built for an input mask covers only those inputs (`Plan`).
"""

import inspect
import operator
import re

import numpy as np

from .._dmath import fit_to
from .._dtype import Size
from .._tensor import Tensor, _make
from . import callsite as _callsite
from . import tracing as _tracing
from .callsite import user_frame, user_stack
from .grad_mode import _outside, _state
from .graph import (_FREED, _NO_EDGE, Node, _raw_saved_property, _seq, accumulator, edges,
                    modified_error, refresh)

__all__ = ["DERIVATIVES", "Derivative", "FormulaNode", "defderiv", "derive", "entry",
           "keep_raw", "keep_raw_of", "negative", "record",
           "record_outputs", "check_bindings"]

_SIGNATURE = re.compile(r"(\w+)\((.*)\)")


class RowError(TypeError):
    """A derivative row that does not match its op's signature (raised at import)."""


def parse_signature(signature):
    """(op name, [(type, name), ...]) of `"op(Type name, Type name=default, *, ...)"`."""
    m = _SIGNATURE.fullmatch(signature.strip())
    if m is None:
        raise RowError(f"malformed op signature {signature!r}")
    params = []
    for p in m.group(2).split(","):
        p = p.split("=")[0].strip()
        if not p or p == "*":
            continue
        typ, _, name = p.rpartition(" ")
        if not typ:
            raise RowError(f"{m.group(1)}: parameter {p!r} has no type")
        params.append((typ.strip(), name))
    return m.group(1), params


class Derivative:
    """One row of the table; `cls` is the generated Node subclass named `node`.

    `params` are the signature's parameter names, `inputs` its differentiable Tensor
    parameters (one formula each, in signature order: the node's next_functions order), `args`
    the values the forward passes in for saving (exposed as `_saved_<name>`).
    """

    def __init__(self, signature, node, args, formulas, nondiff=(), n_out=1, variadic=False,
                 name=None, wrapped=(), internal=(), result_name="result"):
        op, params = parse_signature(signature)
        self.op = op
        self.signature = signature
        self.node = node
        self.display = name or node     # what node.name() says, when torch's differs
        self.params = tuple(p for _, p in params)
        tensors = [(t, p) for t, p in params if t.startswith("Tensor")]
        self.tensor_params = tuple(p for _, p in tensors)
        for key in formulas:
            if key not in self.tensor_params:
                raise RowError(f"{op} ({node}): formula for {key!r}, which is not a Tensor "
                               f"parameter of {signature}")
        for key in nondiff:
            if key not in self.tensor_params or key in formulas:
                raise RowError(f"{op} ({node}): {key!r} listed as not differentiable but it is "
                               f"not a Tensor parameter without a formula")
        for p in self.tensor_params:
            if p not in formulas and p not in nondiff:
                raise RowError(f"{op} ({node}): Tensor parameter {p!r} has no formula and is "
                               f"not listed as not differentiable")
        self.inputs = tuple(p for p in self.tensor_params if p in formulas)
        self.variadic = variadic or any(t.startswith("Tensor[]") for t, _ in tensors)
        self.wrapped = frozenset(wrapped)
        self.args = tuple(args)
        for key in internal:
            if key not in self.args:
                raise RowError(f"{op} ({node}): internal value {key!r} is not a saved name")
        self.internal = frozenset(internal)
        self.result_name = result_name      # torch's name for the saved output
        self.n_out = n_out
        # Variadic rows (cat, stack) take any number of inputs through one formula.
        self.n_inputs = None if self.variadic and n_out == 1 else len(self.inputs)
        self.result_index = len(self.args)
        scope = self.args + ("result",)
        self.formulas = []
        for key in self.inputs:
            f = formulas[key]
            code = f.__code__
            fparams = code.co_varnames[:code.co_argcount]
            skip = 2 if self.variadic else 1            # grad (and mask for variadic formulas)
            for p in fparams[skip:]:
                if p not in scope:
                    raise RowError(f"{node}: formula for {key!r} uses unknown name {p!r}")
            self.formulas.append((f, tuple(scope.index(p) for p in fparams[skip:])))
        self._needed = {}
        self._plans = {}
        # what `_saved_<name>` reads when the node did not keep it (None unless set: torch
        # gives mm's unsaved `_saved_mat2_sym_strides` as ())
        self.unsaved = {}
        # how `_saved_<name>` turns a saved value into torch's when read (never when recorded):
        # name -> function(node, name, value)
        self.readers = {}
        # the saved names torch keeps as a Scalar: a negative one reads back as itself, where
        # a negative int64_t or int[] (a dim, ignore_index, a pad) reads back as 2**64 + value
        self.scalars = frozenset(p for t, p in params if t.startswith("Scalar"))
        # the saved names that are int lists (`int[1]? dim`): a single int given for one is
        # saved as a one-item tuple
        self.int_lists = frozenset(p for t, p in params if t.startswith(("int[", "SymInt[")))
        self.saves_tensors = False
        self.exact = False
        self.cls = make_node_class(self)

    def plan(self, mask):
        """The Plan for the inputs in `mask` (cached): what to keep and how to call formulas."""
        p = self._plans.get(mask)
        if p is None:
            p = self._plans[mask] = Plan(self, mask)
        return p

    def recorded(self, key):
        """The plan of a node recorded with n inputs, those in `mask` needing a gradient, for
        key = mask | 1 << n: an input count other than the row's fails here, the first time a
        key is seen. Cached in `_plans` under ~key (negative: never a mask)."""
        n = key.bit_length() - 1
        if self.n_inputs is not None and n != self.n_inputs:
            raise RowError(f"{self.op} ({self.node}) recorded with {n} inputs; its row has "
                           f"{self.n_inputs} differentiable parameters {self.inputs}")
        p = self._plans[~key] = self.plan(key ^ 1 << n)
        return p

    def needed(self, mask):
        """Indices of args (and result) used by the formulas of inputs in `mask`."""
        r = self._needed.get(mask)
        if r is None:
            used = set()
            if not mask:
                # no input has an edge (each requires grad only through its base): torch still
                # saves the values that are not tensors (SliceBackward0's dim, start, ...)
                used = {j for j, name in enumerate(self.args) if name not in self.tensor_params}
            # torch's codegen guards no saved value of a backward op (`"backward" in
            # info.name`: TanhBackwardBackward0 keeps grad_output and output whichever input
            # needs a gradient), so neither do we
            every = self.variadic or "backward" in self.op
            for i, (_, idx) in enumerate(self.formulas):
                if every or mask >> i & 1:
                    used.update(idx)
            r = self._needed[mask] = tuple(sorted(used))
        return r

    def saved_names(self, mask):
        scope = self.args + ("result",)
        return tuple(scope[j] for j in self.needed(mask))

    def __repr__(self):
        return f"<Derivative {self.signature} -> {self.node}>"


class Plan:
    """How a node of one row saves and calls, for one set of inputs needing a gradient.

    `keep` lists the args kept alive (only those the needed formulas use, as torch saves
    only what it will need); the node stores them in that order, followed by the result at
    backward time. `calls` are (input index, formula, positions into that list, the one
    position or None). The row's `n_out`, `variadic` and `saves_tensors` are copied here, where
    a node reads them faster than through its class.
    """

    __slots__ = ("mask", "keep", "all_args", "pick", "saves_result", "calls", "position",
                 "n_inputs", "n_out", "variadic", "saves_tensors")

    def __init__(self, entry, mask):
        self.mask = mask
        self.n_out = entry.n_out
        self.variadic = entry.variadic
        self.saves_tensors = entry.saves_tensors
        if entry.n_inputs is not None and mask >> entry.n_inputs:
            raise RowError(f"{entry.op} ({entry.node}): recorded with an input beyond its "
                           f"{entry.n_inputs} differentiable parameters {entry.inputs}")
        needed = entry.needed(mask)
        self.keep = tuple(j for j in needed if j != entry.result_index)
        # the number of args when the node keeps them all (record then keeps the tuple it
        # was given), else -1
        self.all_args = len(entry.args) if self.keep == tuple(range(len(entry.args))) else -1
        # the kept args as a tuple, when they are some of several: an itemgetter (a C call,
        # where a comprehension is a Python frame); None for one or none
        self.pick = operator.itemgetter(*self.keep) if len(self.keep) > 1 else None
        self.saves_result = entry.result_index in needed
        self.position = {j: k for k, j in enumerate(self.keep)}
        self.position[entry.result_index] = len(self.keep)
        self.n_inputs = len(entry.formulas)
        # torch's generated backward computes the inputs' gradients in the alphabetical order
        # of their names (MulBackward0: `other` before `self`), which orders the nodes a
        # create_graph=True backward makes, hence the order the engine adds gradients in.
        # Each call also has the position of the one saved value of a formula that uses one
        # (the common case: called without a list to unpack), else None; and an itemgetter of
        # the positions of a formula that uses several (a C call, where a list comprehension
        # is a Python frame), else None.
        calls = []
        for i, (f, idx) in sorted(enumerate(entry.formulas), key=lambda c: entry.inputs[c[0]]):
            if entry.variadic or mask >> i & 1:
                pos = tuple(self.position[j] for j in idx)
                many = operator.itemgetter(*pos) if len(pos) > 1 else None
                calls.append((i, f, pos, pos[0] if len(pos) == 1 else None, many))
        self.calls = tuple(calls)


DERIVATIVES = {}


def defderiv(signature, node, args=(), n_out=1, variadic=False, saves_tensors=True, name=None,
             wrapped=(), nondiff=(), internal=(), result_name="result", exact=False,
             **formulas):
    """Add a row for the op `signature` ("op(Tensor self, Scalar other)"); `formulas` maps
    each differentiable Tensor parameter to its formula, `nondiff` lists the others.

    n_out is the number of outputs whose gradients the node receives (None: as many as the op
    returns, and the formula then gets the list `grads`); variadic formulas take one list of
    tensors (cat, stack) and return one gradient per tensor; `name` is node.name() when torch's
    differs from the class name; `wrapped` names the args that torch declares as Tensors, so a
    Python number saved there reads back as a 0-d tensor (torch's wrapped number); `internal`
    names saved values torch does not have (gradviz's own bookkeeping): they get no
    `_saved_<name>` attribute; `result_name` is torch's name for the saved output when it is
    not `result` (LinalgInvExBackward0's `_saved_inverse`). `exact`: every formula gives its
    input's gradient in that input's own shape and dtype (mm's, embedding's), so a node keeps
    no shapes and dtypes to fit the gradients to (record skips comparing them).
    """
    d = Derivative(signature, node, args, formulas, nondiff, n_out, variadic, name, wrapped,
                   internal, result_name)
    if d.op in DERIVATIVES:
        raise RowError(f"duplicate derivative for {d.op}")
    DERIVATIVES[d.op] = d
    d.saves_tensors = saves_tensors
    d.exact = exact
    return d


def entry(op):
    """The row of op; a missing row fails loudly and names the op."""
    try:
        return DERIVATIVES[op]
    except KeyError:
        raise NotImplementedError(f"gradviz has no derivative for '{op}'") from None


def _parameter_names(fn):
    """A function's parameter names, in order, from its code object (inspect.signature costs
    about 50 us a call, which import would pay for every binding)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return list(inspect.signature(fn).parameters)
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return list(code.co_varnames[:n])


def check_bindings(bindings):
    """Every row is recorded by at least one forward, and every forward bound to a row has
    the row's differentiable Tensor parameters by name, in the signature's order (import-time
    check)."""
    bound = {}
    for row, fn in bindings:
        e = entry(row)
        bound.setdefault(row, []).append(fn)
        names = _parameter_names(fn)
        missing = [p for p in e.inputs if p not in names]
        if missing:
            raise RowError(f"{row} ({e.node}): forward {fn.__module__}.{fn.__qualname__}"
                           f"{inspect.signature(fn)} has no parameter {missing[0]!r} of "
                           f"{e.signature}")
        order = [names.index(p) for p in e.inputs]
        if order != sorted(order):
            raise RowError(f"{row} ({e.node}): forward {fn.__qualname__} takes the Tensor "
                           f"parameters in another order than {e.signature}")
    unbound = sorted(set(DERIVATIVES) - set(bound))
    if unbound:
        raise RowError(f"derivative rows without a forward: {', '.join(unbound)}")
    return bound


class FormulaNode(Node):
    """A node whose backward is one row of gradviz._derivatives (class attribute `_entry`).

    `_saved` holds the op's saveable arguments in the entry's `args` order, `_vers` the versions
    of the saved tensors at save time (None: all were 0), `_mask` which inputs need a gradient,
    `_meta` the (shape, dtype) of each input when broadcasting or promotion changed them, and
    `_res` / `_resvc` the output's data and version counter when a formula uses `result`.
    """

    __slots__ = ("_saved", "_plan", "_res", "_resvc")
    _builtin = True
    # Set in the node's own __dict__ only when not None: input shapes or dtypes that differ
    # from the output's (broadcasting, promotion), and saved versions other than 0.
    _meta = _vers = None
    # saved_tensors_hooks were active: `_packs` maps a position in `_saved` (len(_saved) for
    # the result) to what pack returned; backward reads those back through unpack. The
    # originals stay in `_saved` / `_res` for the inspector. (Both set in __dict__.)
    _packed = False
    # {saved name: value as the user gave it}, set in __dict__ only when that differs from
    # the value the formulas use: a negative dim (x.sum(-1) saves 1 for its formula; torch's
    # `_saved_dim` reads the -1 it was given, as 2**64 - 1). See keep_raw.
    _raw = None
    _packs = None
    # The result's history when the op edited a view in place: the view's grad_fn after the
    # edit (over the base's CopySlices), which torch's SavedVariable keeps for an output of an
    # in-place op on a view (set in __dict__ by gradviz._ops.inplace).
    _res_edge = None

    @property
    def _mask(self):
        """Which inputs need a gradient (bit i: input i), as the plan was built for."""
        return self._plan.mask

    @property
    def _released(self):
        """Backward freed the saved values. (`_res` and `_resvc` are set only on nodes whose
        formulas use the result.)"""
        return type(self._saved) is _Freed

    def name(self):
        # Usually the class name; copy_'s is "torch::autograd::CopyBackwards" in torch.
        return self._entry.display

    def _apply(self, grads, create_graph, need=None, release=False):
        saved = self._saved
        if type(saved) is _Freed:               # self._released, without the property call
            raise RuntimeError(_FREED)
        plan = self._plan
        # `release`: free the saved values once the formulas ran (a backward that does not
        # retain the graph), from what this pass over them found: _release without its own
        # pass. `kept` is what stays readable then: the numbers, _GONE for each array.
        kept = None
        if self._packed:
            vals = self._unpack_hooked(plan, create_graph)
            if release:
                kept = _keep_numbers(saved)
        else:
            # The saved values for the formulas (arrays for a plain backward, Tensors with
            # create_graph), after checking that no saved tensor was modified in place. (Here
            # rather than in a method of its own: one call fewer per node.) `vals` starts as
            # a copy of `saved` (one C call), each Tensor then replaced by its array.
            vers = self._vers
            vals = list(saved)
            k = 0
            for v in saved:         # (v is saved[k])
                if isinstance(v, _Tensor):
                    vc = v._vc
                    if vc is not None and vc.v != (0 if vers is None else vers[k]):
                        raise self._modified(k, v, 0 if vers is None else vers[k])
                    if not create_graph:
                        vals[k] = v._data
                elif release:
                    if kept is None:
                        kept = [_GONE] * len(saved)
                    if not isinstance(v, _ndarray):
                        kept[k] = v
                k += 1
            if plan.saves_result:
                vc = self._resvc        # None: the output never had an edit nor a view
                want = 0 if vers is None else vers[-1]
                if vc is not None and vc.v != want:
                    raise modified_error(self._res, (self, 0), vc.v, want)
                vals.append(self._result_tensor(self._res) if create_graph else self._res)
        # One gradient for a single-output op (cat and stack included), the list for unbind.
        grad = grads[0] if plan.n_out == 1 else grads
        calls = plan.calls
        if plan.variadic:
            _, f, pos, one, many = calls[0]
            mask = plan.mask if need is None else plan.mask & need
            if not mask:        # no edge wants a gradient (_unpack): no formula runs
                out = [None] * len(edges(self))
            elif many is not None:
                out = list(f(grad, mask, *many(vals)))
            else:
                out = list(f(grad, mask, *[vals[p] for p in pos]))
            if need is not None:
                out = [g if need >> i & 1 else None for i, g in enumerate(out)]
        else:
            if need is not None:
                # torch's task_should_compute_output: no formula for an edge this backward
                # does not run
                calls = [c for c in calls if need >> c[0] & 1]
            out = [None] * plan.n_inputs
            for i, f, _, one, many in calls:
                if one is not None:
                    out[i] = f(grad, vals[one])
                elif many is not None:
                    out[i] = f(grad, *many(vals))
                else:
                    out[i] = f(grad)
        meta = self._meta
        if meta is not None:
            for i, m in enumerate(meta):
                if m is None:
                    continue
                g = out[i]
                # Most formulas already give the input's shape and dtype (mm's, say, whose
                # inputs never share the output's shape): only the others go through fit_to.
                if g is not None and not (type(g) is _ndarray and g.shape == m[0]
                                          and g.dtype == m[1]):
                    out[i] = fit_to(g, m[0], m[1])
        if release and plan.saves_tensors:      # _free, without the call
            self._saved = _ALL_FREED if kept is None else _Freed(kept)
            if plan.saves_result:
                self._res = None
            if self._packed:
                self._packs = None
        return out

    def _modified(self, k, v, want):
        """torch's error for the saved tensor v (at position k of `_saved`) found at another
        version than `want`. It names v's grad_fn now, except for an output of this node
        saved as an argument (std_mean's result0): torch's saved output names the node that
        saved it, whatever edited it since."""
        name = self._entry.args[self._plan.keep[k]]
        who = (self, int(name[6:])) if _OUTPUT_ARG.fullmatch(name) else (v._fn, v._nr)
        return modified_error(v._data, who, v._vc.v, want)

    def _unpack(self, grads, create_graph):
        """What torch's generated apply does when no gradient is defined: it unpacks the saved
        values all the same (a freed or modified one raises, saved_tensors_hooks' unpack runs)
        and computes no formula."""
        self._apply(grads, create_graph, 0)

    def _result_tensor(self, data):
        """The saved result under create_graph: a tensor whose grad_fn is this node (or, for
        an in-place edit of a view, the view's grad_fn after the edit), as torch's unpacked
        `result` is (so a formula using it differentiates through it)."""
        t = _pointing_at(self, data)
        if self._res_edge is not None:
            # through the view's history: this node is reached only through the CopySlices
            # owning it, which frees its saved values (reaching it directly after that failed
            # with "backward through the graph a second time")
            t._fn, t._nr = self._res_edge
        return t

    def _unpack_hooked(self, plan, create_graph):
        """The saved values of a node whose saved tensors were packed by saved_tensors_hooks:
        each is unpacked (in torch's order: by saved name, the result last). torch checks no
        version then ("if user provides hooks, we can't track versions through the hooks")."""
        vals = list(self._saved)
        n = len(vals)
        for name, k in _pack_order(self._entry, plan, vals):
            t = self._packs[k].get()
            if k == n:
                vals.append(self._result_tensor(t._data) if create_graph else t._data)
            else:
                vals[k] = t if create_graph else t._data
        return vals

    def _saved_items(self, saved=None):
        """(name, value, saved_version) for each saved value; the result's value is None.
        saved: what `_saved` held before backward freed it (gradviz.autograd.saved.hold)."""
        e = self._entry
        plan = self._plan
        vers = self._vers
        saved = self._saved if saved is None else saved
        out = []
        for k, j in enumerate(plan.keep):
            out.append((e.args[j], saved[k], 0 if vers is None else vers[k]))
        if plan.saves_result:
            out.append(("result", None, 0 if vers is None else vers[-1]))
        return out

    def _adopt_counter(self, vc):
        """The output got its first version counter after this node saved it (`record`
        leaves `_resvc` None then): backward checks the result's version against it."""
        if self._plan.saves_result and self._resvc is None:
            self._resvc = vc

    def _release(self):
        if self._plan.saves_tensors:
            saved = self._saved
            for v in saved:
                if not isinstance(v, _Tensor):
                    self._free(_keep_numbers(saved))
                    break
            else:
                self._free(None)         # the common case: only tensors were saved

    def _free(self, kept):
        """Free the saved tensors and the result; `kept`: the saved values that stay readable
        (the numbers, None for each array), None when there are none."""
        plan = self._plan
        if plan.saves_tensors:
            self._saved = _ALL_FREED if kept is None else _Freed(kept)
            if plan.saves_result:
                self._res = None
            if self._packed:
                self._packs = None

    def _saved_lookup(self, name):
        """A saved value as torch exposes it as `_saved_<name>` (None when not saved). After
        backward, saved tensors are freed but numbers stay readable, as in torch."""
        e = self._entry
        released = self._released
        j = e.result_index if name == "result" else e.args.index(name)
        k = self._plan.position.get(j)
        if k is None and j != e.result_index:
            # never saved (an input needing no gradient): torch reads None, before backward
            # and after it alike (a default-constructed SavedVariable is never freed)
            return e.unsaved.get(name)
        if released and (k is None or j == e.result_index or k >= len(self._saved) or
                         self._saved[k] is _GONE or name in e.wrapped):
            raise RuntimeError(_FREED)
        if k is None or (j == e.result_index and not self._plan.saves_result):
            return None
        if self._packed:
            v = self._packs.get(len(self._saved) if j == e.result_index else k)
            if v is not None:
                if j != e.result_index:
                    return v.get()
                # torch: the unpacked output gets its history back (this node).
                return _pointing_at(self, v.get()._data)
        if j == e.result_index:
            return _pointing_at(self, self._res)
        return self._wrapped(name, self._saved[k])

    def _wrapped(self, name, v):
        raw = self._raw
        if raw is not None and name in raw:
            v = raw[name]
        reader = self._entry.readers.get(name)
        if reader is not None:
            return reader(self, name, v)
        tv = type(v)
        if tv is int and name not in self._entry.wrapped:
            # torch's getter for an int64_t is PyLong_FromUnsignedLong: x.sum(-1)'s dim reads
            # 2**64 - 1 there (a Scalar is read as a signed number)
            return v + _TWO_64 if v < 0 and name not in self._entry.scalars else v
        if tv is Size or tv is tuple and any(type(x) is int and x < 0 for x in v):
            # a saved SymInt[] or int[] as a plain tuple, each negative item read unsigned
            return tuple(x + _TWO_64 if type(x) is int and x < 0 else x for x in v)
        if tv is np.ndarray:
            return _make(v)         # a tensor argument saved as its array (where's condition)
        if tv is tuple and any(type(x) is np.ndarray for x in v):
            return tuple(_make(x) if type(x) is np.ndarray else x for x in v)   # index's
        if name in self._entry.wrapped and isinstance(v, (bool, int, float)):
            # torch wraps a Python number passed as a Tensor argument into a 0-d tensor
            # (bool, int64 or float64); the formulas keep using the plain number.
            return _make(np.array(v, dtype=np.bool_ if isinstance(v, bool) else
                                  np.int64 if isinstance(v, int) else np.float64))
        return v


_TWO_64 = 1 << 64


def _pointing_at(node, data):
    """A tensor over data whose grad_fn is node, output 0, without being node's output (a
    saved result read back): it gets its own version counter before it points at node, so
    that node never takes that counter for its output's (Tensor._version_counter)."""
    t = _make_tensor(data)
    t._version_counter()
    t._rg, t._fn = True, node
    return t


# The saved arguments that are outputs of the op (result0, result1, ...)
_OUTPUT_ARG = re.compile(r"result\d+")


class _Packed:
    """A saved tensor as saved_tensors_hooks' pack returned it, with the unpack hook to call."""

    __slots__ = ("packed", "unpack")

    def __init__(self, packed, unpack):
        self.packed, self.unpack = packed, unpack

    def get(self):
        t = self.unpack(self.packed)
        if not isinstance(t, _Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        return t


def _pack_order(entry, plan, saved):
    """(name, position) of the saved tensors in torch's pack and unpack order: by saved
    name, then the result (position len(saved))."""
    order = sorted((entry.args[j], k) for k, j in enumerate(plan.keep)
                   if isinstance(saved[k], _Tensor))
    if plan.saves_result:
        order.append(("result", len(saved)))
    return order


def _pack_node(node, out, hooks):
    """Run saved_tensors_hooks' pack on each tensor the node saves (the result included)."""
    pack, unpack = hooks
    saved = node._saved
    n = len(saved)
    packs = {}
    for _, k in _pack_order(node._entry, node._plan, saved):
        if k == n:
            t = _make_tensor(out._data)
            t._rg, t._fn, t._nr, t._vc = True, node, 0, out._version_counter()
        else:
            t = saved[k]
        packs[k] = _Packed(pack(t), unpack)
    node._packs = packs
    node._packed = True


class _Freed(tuple):
    """A node's saved values after backward: _GONE for each freed tensor (or array), the
    numbers kept, and None for an optional tensor that was None (empty when there were only
    tensors)."""

    __slots__ = ()


_ALL_FREED = _Freed()
# A freed tensor in a _Freed: an optional tensor saved as None (nll_loss's weight) still reads
# None after backward, as torch's undefined SavedVariable does
_GONE = object()


def _keep_numbers(saved):
    return [_GONE if isinstance(v, (_Tensor, np.ndarray)) else v for v in saved]


def make_node_class(entry):
    """A Node subclass named after torch's grad_fn (e.g. MulBackward0) for one row, with a
    `_saved_<name>` attribute for each value torch saves (`_saved_result` when a formula uses
    the result)."""
    ns = {"__slots__": (), "_entry": entry}
    names = [a for a in entry.args if a not in entry.internal]
    if any(entry.result_index in idx for _, idx in entry.formulas):
        names.append("result")
    for name in names:
        if hasattr(FormulaNode, "_saved_" + name):
            raise RowError(f"{entry.node}: saved name {name!r} clashes with FormulaNode."
                           f"_saved_{name}")
        ns["_saved_" + name] = property(lambda self, _n=name: self._saved_lookup(_n))
        ns["_raw_saved_" + name] = _raw_saved_property(name)
    if entry.result_name != "result" and "result" in names:
        ns["_saved_" + entry.result_name] = ns.pop("_saved_result")
        del ns["_raw_saved_result"]
        ns["_raw_saved_" + entry.result_name] = _raw_saved_property(entry.result_name)
    return type(entry.node, (FormulaNode,), ns)


def keep_raw(node, name, value):
    """Make node's `_saved_<name>` read `value`, the argument as the user gave it (a negative
    dim), where the node saved the normalised one its formula uses. Called by a forward only
    when the two differ, so that the common case costs a comparison."""
    if node._raw is None:
        node._raw = {}
    if isinstance(value, list):
        value = tuple(value)
    elif isinstance(value, int) and name in node._entry.int_lists:
        value = (value,)
    node._raw[name] = value


def keep_raw_of(out, entry, **values):
    """keep_raw on the `entry` node recorded for `out` (a view op's output, whose forward gets
    the output back; or a tensor an in-place op edited, whose node a CopySlices of its base
    holds when it is a view), if one was recorded; returns out."""
    fn = out._fn
    if fn is not None and type(fn) is not entry.cls and out._base_ is not None:
        fn = getattr(out._base_._fn, "_fn", None)
    if fn is not None and type(fn) is entry.cls:
        for name, value in values.items():
            keep_raw(fn, name, value)
    return out


def negative(dim):
    """Whether a dim argument (an int, a sequence of them, or None) has a negative dim."""
    if dim is None:
        return False
    if isinstance(dim, int):
        return dim < 0
    return any(d < 0 for d in dim)


def derive(entry, name, source, fn):
    """Give entry's node `_saved_<name>`, a value torch saves that gradviz computes from the
    saved `source` when read (fn(tensor) -> array), never when recorded: LogSigmoidBackward0's
    `_saved_buffer` from `_saved_self`. Read after backward freed it, it raises as torch's
    does; after `source` was edited in place, gradviz cannot know torch's value and refuses."""
    def read(node):
        v = node._saved_lookup(source)
        if v is None:
            return None
        k = node._plan.position.get(entry.args.index(source))
        want = 0 if node._vers is None or k is None else node._vers[k]
        if v._version != want:
            raise NotImplementedError(
                f"gradviz: {entry.node}._saved_{name} after `{source}` was modified in place "
                "is not implemented by gradviz's core; run with --backend torch to use PyTorch")
        return _make(fn(v))
    setattr(entry.cls, "_saved_" + name, property(read))
    setattr(entry.cls, "_raw_saved_" + name, _raw_saved_property(name))


def record(entry, out, inputs, args=()):
    """Make `out` the result of a new `entry` node over `inputs` (Tensors or None) and return it.

    Only inputs that require grad get an edge (the others get (None, 0), as in torch), and only
    the values that the needed formulas use are kept alive and version-checked later.
    """
    # Every op of a user's program passes here: written for speed, one pass over the inputs.
    nexts = []
    nrs = meta = None
    mask = 0
    bit = 1
    od = out._data
    tod = type(od)
    # Whether the inputs' shapes and dtypes are compared with the output's: 1 for an array
    # output; 2 for a NumPy scalar, compared only with an input of another type (two NumPy
    # scalars of one type have one dtype and shape (), and reading a scalar's .dtype and .shape
    # costs more than the rest of this loop); 0 for a row whose formulas give each input its
    # own shape and dtype.
    fits = 0 if entry.exact else 1 if tod is _ndarray else 2
    shape = dt = None
    for t in inputs:
        if t is None or not t._rg:
            nexts.append(None)
            bit <<= 1
            continue
        mask |= bit
        bit <<= 1
        vc = t._vc
        if vc is not None and t._base_ is not None and vc.v != t._fn_ver:
            refresh(t)      # a view whose base was edited since (graph.is_stale)
        fn = t._fn
        if fn is None:
            ref = t._acc
            fn = None if ref is None else ref()
            if fn is None:
                fn = accumulator(t)
                if fn is None:      # requires grad only through its base: no edge, as torch
                    mask ^= bit >> 1
                    nexts.append(None)
                    continue
        elif t._nr:
            if nrs is None:
                nrs = [0] * len(inputs)
            nrs[len(nexts)] = t._nr
        d = t._data
        if fits and d is not od and (fits == 1 or type(d) is not tod):
            if shape is None:
                shape, dt = od.shape, od.dtype
            if d.dtype is not dt and d.dtype != dt or d.shape != shape:
                if meta is None:
                    meta = [None] * len(inputs)
                meta[len(nexts)] = (d.shape, d.dtype)
        nexts.append(fn)
    # (bit is now 1 << len(inputs): the plan's key says how many inputs there were, and a
    # count other than the row's fails when the plan is first made)
    plan = entry._plans.get(~(mask | bit)) or entry.recorded(mask | bit)
    node = _new(entry.cls)
    if len(nexts) == 2:
        node._next, node._next1 = nexts     # no tuple per node (see gradviz.autograd.graph)
    else:
        node._next = nexts[0] if len(nexts) == 1 else tuple(nexts)
        node._next1 = _NO_EDGE
    if nrs is not None:
        node._nrs = tuple(nrs)
    node._seq = next(_seq)
    # The user's code and instruction that made it, when anyone may read it (a tracer, or a
    # run keeping sites: callsite.keep_sites). Frame 2 is our caller, always gradviz's own op:
    # the walk starts past it.
    if _tracing.active is not None or _callsite.keep_sites:
        node._code, node._lasti = user_frame(3)
    else:
        node._code = None
        node._lasti = 0
    node._plan = plan
    if meta is not None:
        node._meta = tuple(meta)
    if len(args) == plan.all_args:
        saved = args
    elif plan.pick is not None:
        saved = plan.pick(args)
    else:
        saved = tuple([args[j] for j in plan.keep])
    node._saved = saved
    vers = None
    for v in saved:
        if isinstance(v, _Tensor):
            vc = v._vc
            if vc is not None and vc.v:
                # (the rest of the walk here: a parameter that an optimizer edited is saved
                # at a version other than 0 at every step after the first)
                vers = [0] * (len(saved) + 1)
                for k, v in enumerate(saved):
                    if isinstance(v, _Tensor) and v._vc is not None:
                        vers[k] = v._vc.v
                break
    if plan.saves_result:
        node._res = od
        # The output's version counter, when it has one (an in-place op's output, a view):
        # else the output makes one only when something edits it or views it, and hands it
        # to this node then (Tensor._version_counter; one object fewer per op to collect).
        vc = node._resvc = out._vc
        if vc is not None and vc.v:
            if vers is None:
                vers = [0] * (len(saved) + 1)
            vers[-1] = vc.v
    if vers is not None:
        node._vers = tuple(vers)
    if out._retains and out._fn is not None:    # an in-place op: retain_grad moves along
        out._fn._move_retain(out._nr, out, node, 0)
    out._rg = True
    out._fn = node
    out._nr = 0
    if out._base_ is not None:
        out._fn_ver = out._vc.v     # the version its grad_fn is for (graph.is_stale)
    if _outside.saved_hooks and _state.saved_hooks is not None:
        _pack_node(node, out, _state.saved_hooks)
    if _state.anomaly:
        node._stack = user_stack()
    trace = _tracing.active
    if trace is not None:
        node._inputs = tuple(inputs)
        trace.recorded(node, out)      # (node, then made: one call)
    return node


def record_outputs(entry, outs, inputs, args=()):
    """record() for an op with several differentiable outputs (output k gets output_nr k)."""
    node = record(entry, outs[0], inputs, args)
    node._n_out = len(outs)      # stored in the node's __dict__, over the class default
    for k, t in enumerate(outs):
        t._rg, t._fn, t._nr = True, node, k
        if t._base_ is not None:
            t._fn_ver = t._vc.v
        if k and _tracing.active is not None:
            _tracing.active.made(t, node)
    return node


_new = object.__new__
_ndarray = np.ndarray
_Tensor = Tensor
_make_tensor = _make
