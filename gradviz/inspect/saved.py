"""What a node saved for backward, read the same way by the report, check-inplace and the
tracer (which snapshots it before backward frees it)."""

from .._tensor import Tensor
from ..autograd.function import BackwardCFunction
from ..autograd.formula import FormulaNode
from ..autograd.graph import CopySlices

__all__ = ["Saved", "saved_entries"]


class Saved:
    """One saved value: `_saved_self`, `_saved_result`, `saved_tensors[0]`, ...

    `tensor` is the saved Tensor (for `_saved_result`, the node's output if the tracer saw it,
    else None), `data` its values, `vc` its version counter, `saved_version` the version it was
    saved at; non-tensor values (scalars, dims, sizes) have `value` instead.
    """

    __slots__ = ("label", "tensor", "data", "vc", "saved_version", "value", "is_tensor")

    def __init__(self, label, tensor=None, data=None, vc=None, saved_version=None, value=None,
                 is_tensor=True):
        self.label = label
        self.tensor = tensor
        self.data = data
        self.vc = vc
        self.saved_version = saved_version
        self.value = value
        self.is_tensor = is_tensor

    @property
    def version(self):
        return 0 if self.vc is None else self.vc.v


def saved_entries(node, output=None):
    """The values `node` still holds for backward ([] once freed, None for foreign nodes).

    output: the node's output tensor, when known (names `_saved_result`).
    """
    if isinstance(node, CopySlices):
        node = node._fn
    if isinstance(node, BackwardCFunction):
        if node._freed:
            return []
        return [Saved(f"saved_tensors[{i}]", t, t._data, t._vc, v)
                for i, (t, v) in enumerate(zip(node._saved, node._saved_vers)) if t is not None]
    if not isinstance(node, FormulaNode):
        return None
    if node._released:
        return []
    out = []
    internal = node._entry.internal
    for name, v, want in node._saved_items():
        if name in internal:
            continue        # gradviz's own bookkeeping: torch's node has no such attribute
        if name == "result":
            out.append(Saved("_saved_" + node._entry.result_name, output, node._res,
                             node._resvc, want))
        elif isinstance(v, Tensor):
            out.append(Saved("_saved_" + name, v, v._data, v._vc, want))
        else:
            out.append(Saved("_saved_" + name, value=v, is_tensor=False))
    return out
