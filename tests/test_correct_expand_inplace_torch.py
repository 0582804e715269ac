"""In-place edits of expanded tensors, on gradviz and on torch 2.13. torch refuses a write
only where the written tensor has internal overlap (at::has_internal_overlap: a stride 0
over a size above 1); x.expand(x.shape), an expand that only adds or keeps dims of size 1, an
empty expand, and a view of an expanded tensor that drops its zero strides
(x.expand(2, 3)[0]) are written like any view. Compared: values, strides, the base's
gradient and version, or the error's first sentence."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

SOURCES = {"3x4": (3, 4), "1x4": (1, 4), "3x1": (3, 1), "4": (4,), "1": (1,), "0x4": (0, 4),
           "1x1": (1, 1)}


def _grow(x):
    return [3 if s == 1 else s for s in x.shape]


EXPANDS = {
    "same": lambda x: x.expand(*x.shape),
    "minus1": lambda x: x.expand(*([-1] * x.dim())),
    "lead1": lambda x: x.expand(1, *x.shape),
    "lead2": lambda x: x.expand(2, *x.shape),
    "grow": lambda x: x.expand(*_grow(x)),
    "expand_as": lambda x: x.expand_as(x),
    "broadcast_to": lambda x: x.broadcast_to(x.shape),
    "lead2_select": lambda x: x.expand(2, *x.shape)[0],
    "same_transposed": lambda x: x.expand(*x.shape).unsqueeze(0).transpose(0, -1),
    "grow_select": lambda x: x.expand(*_grow(x))[0] if x.dim() == 2 else x.expand(3)[0:1],
    "lead2_narrow": lambda x: x.expand(2, *x.shape).narrow(0, 1, 1),
}


def _mul(t, v):
    v.mul_(2)


def _copy(t, v):
    v.copy_(t.ones(v.shape))


EDITS = {
    "mul_": _mul,
    "zero_": lambda t, v: v.zero_(),
    "copy_": _copy,
    "setitem": lambda t, v: v.__setitem__(Ellipsis, 5.0),
}


def _outcome(t, shape, expand, edit):
    n = 1
    for s in shape:
        n *= s
    leaf = t.arange(float(n)).reshape(shape).requires_grad_()
    # (clone: the strides torch gives a pointwise result of an empty tensor depend on the op
    # (torch.empty(0, 1) * 1 is (1, 0), + itself (1, 1)); gradviz gives the contiguous ones)
    x = leaf.clone()
    try:
        v = expand(x)
        edit(t, v)
        x.sum().backward()
    except (RuntimeError, IndexError) as exc:
        return type(exc).__name__, str(exc).split(".")[0]
    # (strides only when there are elements: torch's for an empty tensor follow other rules)
    return x.tolist(), v.stride() if v.numel() else (), leaf.grad.tolist(), x._version


@pytest.mark.parametrize("edit", list(EDITS))
@pytest.mark.parametrize("expand", list(EXPANDS))
@pytest.mark.parametrize("source", list(SOURCES))
def test_an_expanded_tensor_is_written_where_torch_writes_it(source, expand, edit):
    shape, f, g = SOURCES[source], EXPANDS[expand], EDITS[edit]
    assert _outcome(gradviz, shape, f, g) == _outcome(torch, shape, f, g)


@st.composite
def _expansions(draw):
    """A shape with some dims of size 1, and an expand of it: each size-1 dim kept or grown,
    a few leading dims of size 1 or more."""
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=3)))
    sizes = [draw(st.sampled_from([1, 2])) if s == 1 else s for s in shape]
    lead = draw(st.lists(st.integers(1, 2), max_size=2))
    return shape, tuple(lead + sizes), draw(st.sampled_from(list(EDITS)))


@settings(max_examples=60, deadline=None)
@given(_expansions())
def test_expands_of_any_shape_are_written_as_torch_writes_them(case):
    shape, sizes, edit = case

    def expand(x):
        return x.expand(sizes)
    assert (_outcome(gradviz, shape, expand, EDITS[edit])
            == _outcome(torch, shape, expand, EDITS[edit]))
