"""Custom autograd functions: subclass Function with static forward(ctx, ...) and
backward(ctx, ...); `apply` runs forward without recording and adds one node named
`<ClassName>Backward`."""

import numpy as np

from .._dtype import from_numpy_dtype
from . import tracing as _tracing
from .grad_mode import _GradMode, _state, no_grad
from .graph import Node, _torch_only, edge_of, modified_error

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The `ctx` given to forward and backward: save_for_backward, needs_input_grad, ..."""

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    @property
    def saved_tensors(self):
        node = self._node
        if node is None or node._freed:
            from .graph import _FREED
            raise RuntimeError(_FREED)
        packed = node.__dict__.get("_packed")
        if packed is not None:
            # saved_tensors_hooks were active at save time: read each back through unpack,
            # without a version check (torch can't track versions through the hooks).
            return tuple(None if p is None else p.get() for p in packed)
        node._check_saved()
        return tuple(node._saved)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors

    def set_materialize_grads(self, value):
        self._materialize = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node of a custom Function; it is also the function's ctx, as in torch.

    Each Function subclass gets its own subclass of this, named `<ClassName>Backward` (torch's
    FunctionMeta does the same), so type(y.grad_fn).__name__ and y.grad_fn.name() agree.
    """

    __slots__ = ("_fn_cls", "_saved", "_saved_vers", "_saved_nrs", "_freed", "_to_save", "_dirty",
                 "_non_diff", "_materialize", "needs_input_grad", "_node", "_n_out",
                 "_input_meta", "_arg_pos", "_n_args", "_edge_meta")
    _apply_none = True      # torch calls backward on zeros (or None) when no gradient came
    # torch's SavedVariables of save_for_backward's tensors: gradviz keeps the tensors themselves
    _raw_saved_tensors = _torch_only("_raw_saved_tensors")

    def name(self):
        return type(self).__name__

    def __repr__(self):
        # torch's node class is made in torch/autograd/function.py, so Python's default repr
        # names that module: <torch.autograd.function.MyFnBackward object at 0x...>
        return f"<{type(self)._torch_path} object at {hex(id(self))}>"

    def _check_saved(self):
        for t, v, nr in zip(self._saved, self._saved_vers, self._saved_nrs):
            if t is not None and t._version != v:
                # torch names a saved output's node, whatever edited it since
                who = (t._fn, t._nr) if nr is None else (self, nr)
                raise modified_error(t._data, who, t._version, v)

    def _apply(self, grads, create_graph, need=None, release=False):
        # `need` is not used: torch hands on every gradient a custom backward returns (its
        # post-hooks see them all), whichever next functions run.
        from .._tensor import Tensor
        from .engine import _to_tensor
        if self._freed:
            from .graph import _FREED
            raise RuntimeError(_FREED)
        gs = []
        for g, meta in zip(grads, self._input_meta):
            if g is None and self._materialize:
                g = np.zeros(meta[0], dtype=meta[1])
            gs.append(None if g is None else _to_tensor(g))
        with _GradMode(create_graph):
            res = self._fn_cls.backward(self, *gs)
        if not isinstance(res, tuple):
            res = (res,)
        # torch: one gradient per forward argument (extra ones must be None), None for every
        # argument that was not a tensor, and each tensor's gradient fitted to its shape.
        n = self._n_args
        if len(res) < n or any(g is not None for g in res[n:]):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(res)})")
        for i, g in enumerate(res[:n]):
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"expected Variable or None (got {type(g).__name__})")
            if g is not None and i not in self._arg_pos:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   "input was not a Variable")
        out = []
        for k, i in enumerate(self._arg_pos):
            g = res[i]
            if g is not None:
                g = _fit(self, k, g)
                if not create_graph:
                    g = g._data
            out.append(g)
        if release:
            self._release()
        return out

    def _release(self):
        self._freed = True
        self._saved = ()
        self.__dict__.pop("_packed", None)


def _fit(node, k, g):
    """A custom backward's gradient for tensor input k, summed and cast as torch's engine
    does (validate_outputs), or torch's error when its shape cannot be expanded."""
    shape, dtype = node._edge_meta[k]
    gs = g._data.shape
    if gs != shape:
        try:
            ok = np.broadcast_shapes(shape, gs) == gs
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index "
                               f"{k} - got [{', '.join(map(str, gs))}] but expected shape "
                               f"compatible with [{', '.join(map(str, shape))}]")
        from .._dmath import sum_to
        g = sum_to(g, shape)
    if g._data.dtype != dtype:
        g = g.to(from_numpy_dtype(dtype))
    return g


class _NodeClass(type):
    """The type of a custom Function's node class: prints torch's class path, as
    gradviz._tensor._TorchClass does for Tensor (which cannot be imported here: _tensor imports
    this module)."""

    def __repr__(cls):
        return f"<class '{cls._torch_path}'>"


class FunctionMeta(type):
    """Gives each Function subclass its node class, `<ClassName>Backward`, as torch does."""

    def __init__(cls, name, bases, attrs):
        # torch makes the node class in torch/autograd/function.py, so type(grad_fn) prints
        # <class 'torch.autograd.function.NameBackward'> (only the repr: __module__ is ours)
        cls._backward_cls = _NodeClass(
            name + "Backward", (BackwardCFunction,),
            {"__slots__": (), "_forward_cls": cls,
             "_torch_path": f"torch.autograd.function.{name}Backward"})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class for custom differentiable operations.

    >>> import gradviz as torch
    >>> class Square(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * grad
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> y = Square.apply(x); y.backward(); (y.grad_fn.name(), x.grad)
    ('SquareBackward', tensor(6.))
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        from .._ops.inplace import bump_version
        from .._tensor import Tensor
        arg_pos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        tensors = [args[i] for i in arg_pos]
        needs = _state.enabled and any(t._rg for t in tensors)
        ctx = object.__new__(cls._backward_cls)
        ctx._fn_cls = cls
        ctx._to_save = ()
        ctx._dirty = ()
        ctx._non_diff = ()
        ctx._materialize = True
        ctx._freed = False
        ctx._node = None
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        with no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        for t in ctx._dirty:
            # torch counts mark_dirty as one more in-place edit, grad mode or not.
            bump_version(t, "mark_dirty")
        if not needs:
            return out
        for t in ctx._dirty:
            if t._rg and t._fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
        outs = list(out) if isinstance(out, tuple) else [out]
        edges = [edge_of(t) for t in tensors]
        nrs = tuple(e[1] for e in edges)
        ctx._init_node(tuple(e[0] for e in edges), nrs if any(nrs) else None)
        ctx._node = ctx
        ctx._arg_pos = arg_pos
        ctx._n_args = len(args)
        ctx._edge_meta = tuple((t._data.shape, t._data.dtype) for t in tensors)
        ctx._saved = tuple(ctx._to_save)
        ctx._saved_vers = tuple(t._version if t is not None else 0 for t in ctx._saved)
        hooks = _state.saved_hooks
        if hooks is not None:
            from .formula import _Packed
            ctx._packed = tuple(None if t is None else _Packed(hooks[0](t), hooks[1])
                                for t in ctx._saved)
        ctx._n_out = len(outs)
        ctx._input_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor)
                                else ((), np.float32) for o in outs)
        trace = _tracing.active
        if trace is not None:
            ctx._inputs = tuple(tensors)
        dirty = {id(t) for t in ctx._dirty}
        non_diff = {id(t) for t in ctx._non_diff}
        for k, o in enumerate(outs):
            if not isinstance(o, Tensor) or id(o) in non_diff or not o.is_floating_point():
                continue
            if id(o) not in dirty and any(o is t for t in tensors):
                # Returning an input unchanged: torch returns a view of it with this node.
                o = outs[k] = o.view_as(o)
            o._rg, o._fn, o._nr = True, ctx, k
            if trace is not None:
                trace.made(o, ctx)
            if (id(o) in dirty and o._base_ is not None and k == 0 and tensors
                    and tensors[0] is o):
                _rebase_view(o, ctx)
        # torch saves a tensor that is now an output of this node as an output (its number)
        ctx._saved_nrs = tuple(t._nr if t is not None and t._fn is ctx else None
                               for t in ctx._saved)
        return tuple(outs) if isinstance(out, tuple) else outs[0]


def _rebase_view(view, ctx):
    """A view edited in place by a custom Function: as after any in-place op on a view, its
    base's history becomes CopySlices over the Function's node and the view reads its
    gradient back from the base (AsStridedBackward0), as torch's rebase_history does. Only
    the layout CopySlices supports (the view is input 0 and output 0) takes this path."""
    from .._ops.inplace import reread_from_base
    from .graph import CopySlices
    base = view._base_
    cs = CopySlices(edge_of(base), view._view_fn, ctx)
    base._rg, base._fn, base._nr = True, cs, 0
    reread_from_base(base, view)


def once_differentiable(fn):
    return fn
