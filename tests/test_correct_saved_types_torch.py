"""The Python type of every `_saved_*` value over the derivative table's examples, against
torch 2.13: a saved SymInt[] (`_saved_self_sym_sizes`, ...) is a plain tuple, not a torch.Size;
a tensor argument saved as its array (where's condition, index's indices) reads back as a
Tensor. Values gradviz does not keep (no formula of the node reads them: None here, a value
in torch) and the numbers torch's own backward formulas compute as doubles inside a double
backward are listed apart."""

import pytest

import gradviz
from test_core_table import EXAMPLES, _on, example_dtype

torch = pytest.importorskip("torch")

# (grad_fn, saved name): inner nodes of a double backward, where torch's Scalar arithmetic
# (exponent - 1) saves a float and gradviz the Python int it was given
_SCALAR_ARITHMETIC = {("PowBackward0", "_saved_exponent"), ("MulBackward1", "_saved_other")}


def _type_name(v):
    if isinstance(v, (tuple, list)):
        return f"{type(v).__name__}[{','.join(sorted({_type_name(x) for x in v}))}]"
    return type(v).__name__


def _saved_types(module, op):
    fn, data, _ = EXAMPLES[op]
    xs = [module.tensor(d, dtype=example_dtype(module, op), requires_grad=True)
          for d in data]
    out = _on(module, fn)(*xs)
    nodes, seen, queue = [], set(), [out.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names = [a for a in dir(node) if a.startswith("_saved_") and (
            module is torch or isinstance(getattr(type(node), a, None), property))]
        nodes.append((node.name(), {a: _type_name(getattr(node, a)) for a in names}))
        queue.extend(n for n, _ in node.next_functions)
    return nodes


@pytest.mark.parametrize("op", sorted(EXAMPLES))
def test_saved_values_have_torchs_python_types(op):
    ours, theirs = _saved_types(gradviz, op), _saved_types(torch, op)
    diffs = []
    for (name, saved), (t_name, t_saved) in zip(ours, theirs):
        if name != t_name:
            continue        # (the graphs' names are compared by tests/test_core_table.py)
        for attr, kind in saved.items():
            if attr in t_saved and kind != t_saved[attr] and kind != "NoneType" and \
                    (name, attr) not in _SCALAR_ARITHMETIC:
                diffs.append((name, attr, kind, t_saved[attr]))
    assert diffs == []


def test_a_saved_size_is_a_tuple():
    for m in (gradviz, torch):
        fn = m.ones(2, 3, requires_grad=True).sum().grad_fn
        assert type(fn._saved_self_sym_sizes) is tuple and fn._saved_self_sym_sizes == (2, 3)
