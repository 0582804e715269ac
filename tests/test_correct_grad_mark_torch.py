"""A leaf's .grad made by backward, and the result of a unary op of a marked tensor, are
marked where they can be as the binary ops' plain operand (Tensor._iter_plain: an array NumPy
lays out as torch's TensorIterator does, so that `p -= lr * p.grad` and `tanh(h) * c` skip the
layout rules). The mark must never be wrong: for each layout and way of reaching it, the
tensor and the results of binary ops on it have torch's strides, and a marked tensor is
C-contiguous with no size of 0 or 1."""

import warnings

import pytest

import gradviz

torch = pytest.importorskip("torch")

LEAVES = {
    "contiguous": "t.zeros(2, 3)",
    "contiguous_3d": "t.zeros(2, 3, 4)",
    "vector": "t.zeros(3)",
    "transposed": "t.zeros(2, 3).t()",
    "permuted": "t.zeros(2, 3, 4).permute(2, 0, 1)",
    "row": "t.zeros(1, 3)",
    "column": "t.zeros(3, 1)",
    "column_t": "t.zeros(3, 1).t()",
    "every_other_column": "t.zeros(4, 3)[:, ::2]",
    "expanded": "t.zeros(1, 3).expand(2, 3)",
    "empty": "t.zeros(0, 3)",
}
# how the gradient reaches the leaf: a fresh C-ordered array (stolen), a view of one, an array
# of another layout (copied), one broadcast back, and two passes (the second adds in place)
LOSSES = ["(a * 2).sum()", "a.t().exp().sum()", "(a * b).sum()", "(a + a[:1]).sum()",
          "a.sum()", "twice"]


def _update(t, leaf, loss):
    a = eval(LEAVES[leaf], {"t": t}).detach().requires_grad_()
    b = eval(LEAVES[leaf], {"t": t}) + 0.5
    if a.dim() >= 2:
        b = b.transpose(0, 1).contiguous().transpose(0, 1)     # other's layout, same shape
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch: sum of an expanded leaf's gradient, etc.
        for _ in range(2 if loss == "twice" else 1):
            eval("(a * 2).sum()" if loss == "twice" else loss, {"a": a, "b": b}).backward()
    g = a.grad
    seen = [g]
    with t.no_grad():
        seen += [0.1 * g, g * 0.1, g - b, b + g, g / (b + 1), g + g]
        if not a.is_contiguous() or a.stride() != g.stride():
            return g, [(tuple(x.shape), x.stride()) for x in seen]
        p = a.detach().clone()
        p -= 0.1 * g
        seen.append(p)
    return g, [(tuple(x.shape), x.stride()) for x in seen]


# a leaf with a size-1 dim whose .grad torch's AccumulateGrad steals keeps the stride torch's
# backward gave that dim (the transposed view exp's gradient reaches it through, the layout
# TensorIterator gives grad * b); gradviz's backward computes the gradient with NumPy, whose
# stride for the size-1 dim differs: a (1, 3) .grad's strides are (3, 1) where torch's are
# (1, 1) (a (3, 1) one's (1, 1) where torch's are (1, 3)). Only size-1 dims' strides differ.
SIZE1_STRIDE = {("row", "a.t().exp().sum()"), ("column", "a.t().exp().sum()"),
               ("column_t", "(a * b).sum()")}


@pytest.mark.parametrize("leaf,loss", [
    pytest.param(leaf, loss, marks=pytest.mark.xfail(strict=True, reason="a size-1 dim's stride"))
    if (leaf, loss) in SIZE1_STRIDE else (leaf, loss) for leaf in LEAVES for loss in LOSSES])
def test_a_marked_grad_and_the_update_have_torchs_strides(leaf, loss):
    try:
        _, want = _update(torch, leaf, loss)
    except RuntimeError as exc:
        with pytest.raises(RuntimeError) as got:
            _update(gradviz, leaf, loss)
        assert str(got.value).split(".")[0] == str(exc).split(".")[0]
        return
    g, got = _update(gradviz, leaf, loss)
    assert got == want
    d = g._data
    if g._iter_plain is not None:
        assert g._iter_plain is d
        assert d.flags.c_contiguous and 0 not in d.shape and 1 not in d.shape


def test_a_stolen_contiguous_grad_is_marked():
    # the case the mark is for (makemore's update): the first .grad of a contiguous leaf
    a = gradviz.zeros(2, 3, requires_grad=True)
    (a * 2).sum().backward()
    assert a.grad._iter_plain is a.grad._data
    a.grad = None
    b = gradviz.zeros(1, 3, requires_grad=True)     # a size of 1: NumPy's stride is free
    (b * 2).sum().backward()
    assert b.grad._iter_plain is None


# The unary ops of gradviz/_ops/pointwise.py mark the result of a marked operand as plain too.
UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs"]
LAYOUTS = {
    "c": "(t.arange(12.) + 1).reshape(3, 4)",
    "c3": "(t.arange(24.) + 1).reshape(2, 3, 4)",
    "t": "(t.arange(12.) + 1).reshape(4, 3).t()",
    "row": "(t.arange(4.) + 1).reshape(1, 4)",
    "col_t": "(t.arange(3.) + 1).reshape(1, 3).t()",
    "sliced": "(t.arange(24.) + 1).reshape(3, 8)[:, ::2]",
    "empty": "t.zeros(0, 4)",
}


def _unary_then_binary(t, op, layout):
    x = eval(LAYOUTS[layout], {"t": t})
    x * 1       # (gradviz marks a plain operand of a binary op)
    u = getattr(x, op)()
    v = getattr(u, op)()
    others = [2, u, u.transpose(0, -1).contiguous().transpose(0, -1), x]
    return [(tuple(r.shape), r.stride()) for r in [u, v] + [u * o for o in others] +
            [o * v for o in others[1:]] + [v - u]]


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("op", UNARY)
def test_a_unary_result_of_a_marked_tensor_has_torchs_strides_in_binary_ops(op, layout):
    assert _unary_then_binary(gradviz, op, layout) == _unary_then_binary(torch, op, layout)
    x = eval(LAYOUTS[layout], {"t": gradviz})
    x * 1
    u = getattr(x, op)()
    if u._iter_plain is not None:
        d = u._data
        assert u._iter_plain is d and d.flags.c_contiguous and 0 not in d.shape
        assert 1 not in d.shape
    assert (u._iter_plain is not None) == (layout in ("c", "c3"))
