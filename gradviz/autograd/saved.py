"""What a node saved for backward, listed under torch's names.

torch exposes a node's saved values as attributes, `_saved_self`, `_saved_other`,
`_saved_result`, ... (and a custom Function's as `saved_tensors`); reading one after backward
freed it raises. This module lists them without raising, for whoever shows them (the
inspector's report, check-inplace, a tracer taking a snapshot before backward frees them):

    >>> import gradviz as torch
    >>> from gradviz.autograd.saved import saved_names, saved_values, was_freed
    >>> a = torch.ones(2, requires_grad=True)
    >>> y = a * a.exp()
    >>> saved_names(y.grad_fn)
    ('_saved_self', '_saved_other')
    >>> [(v.label, v.saved_version) for v in saved_values(y.grad_fn)]
    [('_saved_self', 0), ('_saved_other', 0)]
    >>> y.sum().backward(); was_freed(y.grad_fn), saved_values(y.grad_fn)
    (True, [])
"""

from typing import NamedTuple

import numpy as np

from .._tensor import Tensor
from .function import BackwardCFunction
from .formula import FormulaNode

from .graph import CopySlices

__all__ = ["Saved", "saved_values", "saved_names", "was_freed", "snapshot", "hold",
           "Held"]


class Saved(NamedTuple):
    """One saved value: `_saved_self`, `_saved_result`, `saved_tensors[0]`, ...

    `tensor` is the saved Tensor (for `_saved_result`, the node's output when known, else
    None), `data` its values, `vc` its version counter, `saved_version` the version it was
    saved at; non-tensor values (scalars, dims, sizes) have `value` instead.
    """

    label: str
    tensor: object = None
    data: object = None
    vc: object = None
    saved_version: object = None
    value: object = None
    is_tensor: bool = True

    @property
    def version(self):
        """The version the saved tensor has now (0 without a version counter)."""
        return 0 if self.vc is None else self.vc.v

    def __repr__(self):
        return f"<Saved {self.label} v{self.saved_version}->v{self.version}>"


def _owner(node):
    """The node that holds the saved values: a CopySlices keeps its in-place op's node."""
    return node._fn if isinstance(node, CopySlices) else node


def saved_values(node, output=None):
    """[Saved] for each value `node` still holds for backward, in the order its row names them
    ([] once backward freed them; None for a node that saves nothing by design, such as
    AccumulateGrad, or that is not gradviz's).

    output: the node's output tensor, when known (the `_saved_result` Saved's tensor).
    """
    node = _owner(node)
    if isinstance(node, BackwardCFunction):
        if node._freed:
            return []
        return [Saved(f"saved_tensors[{i}]", t, t._data, t._vc, v)
                for i, (t, v) in enumerate(zip(node._saved, node._saved_vers)) if t is not None]
    if not isinstance(node, FormulaNode):
        return None
    if node._released:
        return []
    return _formula_values(node, node._saved, *_result_parts(node), output)


def _result_parts(node):
    """(_res, _resvc) of a FormulaNode that saves its result, else (None, None)."""
    return (node._res, node._resvc) if node._plan.saves_result else (None, None)


def _formula_values(node, saved, res, resvc, output):
    """saved_values of a FormulaNode from what it holds, or held, in `_saved`, `_res` and
    `_resvc`."""
    out = []
    entry = node._entry
    for name, v, want in node._saved_items(saved):
        if name in entry.internal:
            continue        # gradviz's own bookkeeping: torch's node has no such attribute
        if name == "result":
            out.append(Saved("_saved_" + entry.result_name, output, res, resvc, want))
        elif isinstance(v, Tensor):
            out.append(Saved("_saved_" + name, v, v._data, v._vc, want))
        elif name in entry.wrapped and isinstance(v, (bool, int, float)):
            # a Python number torch saves as a 0-d tensor (x * 2's _saved_other: tensor(2)):
            # a tensor of torch's dtype for it, with the number
            data = np.array(v, dtype=np.bool_ if isinstance(v, bool) else
                            np.int64 if isinstance(v, int) else np.float64)
            out.append(Saved("_saved_" + name, None, data, None, want, value=v))
        else:
            out.append(Saved("_saved_" + name, value=v, is_tensor=False))
    return out


def saved_names(node):
    """The `_saved_*` attribute names torch's node has for what it saves, in the order
    saved_values lists them; they stay the same after backward freed the values. () for a
    node without any (AccumulateGrad, a custom Function's node: it has saved_tensors)."""
    node = _owner(node)
    if not isinstance(node, FormulaNode):
        return ()
    entry = node._entry
    names = []
    for n in entry.saved_names(node._mask):
        if n in entry.internal:
            continue
        names.append("_saved_" + (entry.result_name if n == "result" else n))
    return tuple(names)


def was_freed(node):
    """True once a backward without retain_graph freed what node saved."""
    node = _owner(node)
    if isinstance(node, BackwardCFunction):
        return bool(node._freed)
    return isinstance(node, FormulaNode) and node._released


class Held:
    """What a FormulaNode held for backward, taken before backward freed it (see hold). It
    does not hold the node: whoever keeps it for a node must not keep the node alive."""

    __slots__ = ("saved", "res", "resvc")

    def __init__(self, saved, res, resvc):
        self.saved, self.res, self.resvc = saved, res, resvc

    def values(self, node):
        """snapshot(node) as it was when held; the arrays are read now (a saved tensor's
        `.data` set since shows its new shape, as torch's saved variable would)."""
        return _formula_values(_owner(node), self.saved, self.res, self.resvc, None)


def hold(node):
    """What snapshot(node) lists, kept in constant time: a Held for a node of the derivative
    table (whose `.values()` lists it later; backward frees a node's values by replacing
    `_saved` and `_res`, never by changing them), else snapshot(node) itself.

    >>> import gradviz as torch
    >>> a = torch.ones(2, requires_grad=True)
    >>> y = a * a.exp()
    >>> held = hold(y.grad_fn)
    >>> y.sum().backward(); [(v.label, v.saved_version) for v in held.values(y.grad_fn)]
    [('_saved_self', 0), ('_saved_other', 0)]
    """
    owner = _owner(node)
    if not isinstance(owner, FormulaNode) or owner._released:
        return snapshot(node)       # a custom Function's node, AccumulateGrad; freed already
    return Held(owner._saved, *_result_parts(owner))


def snapshot(node):
    """saved_values(node) to keep after backward frees them: the `_saved_result` value holds
    no tensor, since the node's own output would keep the node alive (whoever keeps the
    snapshot finds the output its own way). None when node saves nothing by design."""
    return saved_values(node, None)
