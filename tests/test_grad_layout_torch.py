"""A leaf's .grad is laid out as torch 2.13's AccumulateGrad lays it out (its "gradient layout
contract"): the first .grad has the leaf's strides when the leaf is dense and non-overlapping
(a transposed or permuted leaf gets a transposed or permuted .grad), else it is C-ordered;
under create_graph the first .grad is a copy (CopyBackwards, or CloneBackward0 for a leaf that
is not dense), a later one `old + new` (AddBackward0); adding into an expanded .grad is
refused as torch's in-place overlap check refuses it."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

LEAVES = {
    "contiguous": "t.zeros(2, 3)",
    "transposed": "t.zeros(2, 3).t()",
    "permuted": "t.zeros(2, 3, 4).permute(2, 0, 1)",
    "column_t": "t.zeros(3, 1).t()",
    "every_other_column": "t.zeros(4, 3)[:, ::2]",
    "expanded": "t.zeros(1, 3).expand(2, 3)",
    "scalar": "t.tensor(1.0)",
    "row": "t.zeros(1, 3)",
    "unsqueezed": "t.zeros(3).unsqueeze(0)",
    "empty": "t.zeros(0, 3)",
    "empty_t": "t.zeros(0, 3).t()",
}
LOSSES = ["a.sum()", "(a * 2).sum()", "a.exp().sum()", "a.contiguous().sum()",
          "a.reshape(-1).sum()"]


def _grad_layout(t, leaf, loss, mode):
    a = eval(LEAVES[leaf], {"t": t}).detach().requires_grad_()

    def run(**kw):
        eval(loss, {"a": a}).backward(**kw)
    if mode == "plain":
        run()
    elif mode == "twice":
        run()
        run()
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # torch: create_graph makes a reference cycle
            run(create_graph=True)
            if mode == "create_graph_twice":
                run(create_graph=True)
    g = a.grad
    fn = None if g.grad_fn is None else type(g.grad_fn).__name__
    # (values to 5 digits: float32 exp(1) is one ulp off torch's, not what this file tests)
    return tuple(g.stride()), g.is_contiguous(), fn, np.round(g.tolist(), 5).tolist()


@pytest.mark.parametrize("mode", ["plain", "twice", "create_graph", "create_graph_twice"])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("leaf", list(LEAVES))
def test_grad_is_laid_out_as_torchs(leaf, loss, mode):
    assert _grad_layout(gradviz, leaf, loss, mode) == _grad_layout(torch, leaf, loss, mode)


@pytest.mark.parametrize("leaf", ["transposed", "expanded", "contiguous"])
def test_first_grad_under_create_graph_is_a_copy_as_torchs(leaf):
    # a gradient with a graph: torch copies it into the .grad (CopyBackwards; CloneBackward0
    # for a leaf that is not dense), and the next one is added (AddBackward0)
    def names(t):
        a = eval(LEAVES[leaf], {"t": t}).detach().requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (a * a).sum().backward(create_graph=True)
            first = a.grad
            (a * a).sum().backward(create_graph=True)
        return type(first.grad_fn).__name__, type(a.grad.grad_fn).__name__, a.grad.stride()
    assert names(gradviz) == names(torch)


def test_adding_into_an_expanded_grad_is_refused_as_torch():
    def run(t):
        a = t.tensor([1.0, 2.0], requires_grad=True)
        a.grad = t.zeros(1).expand(2)
        with pytest.raises(RuntimeError) as info:
            (a * 2).sum().backward()
        return str(info.value).split(".")[0]
    assert run(gradviz) == run(torch)


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(2, 4), min_size=1, max_size=4), data=st.data())
def test_a_permuted_leafs_grad_has_its_strides(shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    loss = data.draw(st.sampled_from(LOSSES))

    def run(t):
        a = t.zeros(*shape).permute(*perm).detach().requires_grad_()
        eval(loss, {"a": a}).backward()
        return tuple(a.grad.stride()), tuple(a.stride())
    found = run(gradviz)
    assert found == run(torch)
    assert found[0] == found[1]
