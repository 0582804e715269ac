"""Custom autograd functions: subclass Function with static forward(ctx, ...) and
backward(ctx, ...); `apply` runs forward without recording and adds one node named
`<ClassName>Backward`."""

import numpy as np

from .grad_mode import _state, no_grad
from .graph import Node, edge_of

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
        node._check_saved()
        return tuple(node._saved)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors

    def set_materialize_grads(self, value):
        self._materialize = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node of a custom Function; it is also the function's ctx, as in torch."""

    __slots__ = ("_fn_cls", "_saved", "_saved_vers", "_freed", "_to_save", "_dirty",
                 "_non_diff", "_materialize", "needs_input_grad", "_node", "_n_out",
                 "_input_meta")

    def name(self):
        return self._fn_cls.__name__ + "Backward"

    def _check_saved(self):
        from .._tensor import type_name
        for t, v in zip(self._saved, self._saved_vers):
            if t is not None and t._version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{type_name(np.asarray(t._data))}] is at version "
                    f"{t._version}; expected version {v} instead. Hint: enable anomaly "
                    "detection to find the operation that failed to compute its gradient, with "
                    "torch.autograd.set_detect_anomaly(True).")

    def _apply(self, grads, create_graph):
        from .._tensor import Tensor, _make
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
        n = len(self._next)
        if len(res) < n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(res)})")
        out = []
        for g in res[:n]:
            if g is None or isinstance(g, (int, float)) and not isinstance(g, bool):
                out.append(None if g is None else np.asarray(g))
            elif isinstance(g, Tensor):
                out.append(g if create_graph else g._data)
            else:
                out.append(g)
        return out

    def _release(self):
        self._freed = True
        self._saved = ()


class _GradMode:
    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = self.mode

    def __exit__(self, *exc):
        _state.enabled = self.prev


class FunctionMeta(type):
    pass


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
        from .._tensor import Tensor
        tensors = [a if isinstance(a, Tensor) else None for a in args]
        needs = _state.enabled and any(t is not None and t._rg for t in tensors)
        ctx = object.__new__(BackwardCFunction)
        ctx._fn_cls = cls
        ctx._to_save = ()
        ctx._dirty = ()
        ctx._non_diff = ()
        ctx._materialize = True
        ctx._freed = False
        ctx._node = None
        ctx.needs_input_grad = tuple(bool(t is not None and t._rg) for t in tensors)
        with no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        if not needs:
            return out
        outs = list(out) if isinstance(out, tuple) else [out]
        edges = [edge_of(t) if t is not None else (None, 0) for t in tensors]
        nrs = tuple(e[1] for e in edges)
        ctx._init_node(tuple(e[0] for e in edges), nrs if any(nrs) else None)
        ctx._node = ctx
        ctx._saved = tuple(ctx._to_save)
        ctx._saved_vers = tuple(t._version if t is not None else 0 for t in ctx._saved)
        ctx._n_out = len(outs)
        ctx._input_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor)
                                else ((), np.float32) for o in outs)
        if _state.trace is not None:
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
        return tuple(outs) if isinstance(out, tuple) else outs[0]


def once_differentiable(fn):
    return fn
