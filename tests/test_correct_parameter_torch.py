"""nn.Parameter(t) on gradviz and on torch 2.13: torch's _make_subclass(cls, t.detach())
shares t's storage and version counter (an edit of t under no_grad changes the parameter,
p.data_ptr() == t.data_ptr(), p._version follows t's), whether t is a plain tensor, a leaf
that requires grad, a non-leaf, a view, an integer tensor or a Parameter; the parameter is a
new leaf without t's grad."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _plain(t):
    return t.ones(3)


def _leaf(t):
    return t.ones(3, requires_grad=True)


def _nonleaf(t):
    return t.ones(3, requires_grad=True) * 2


def _view(t):
    return t.ones(5)[1:4]


def _edited(t):
    return t.ones(3).add_(1)


def _param(t):
    return t.nn.Parameter(t.ones(3))


def _with_grad(t):
    a = t.ones(3, requires_grad=True)
    (a * 2).sum().backward()
    return a


SOURCES = {"plain": _plain, "leaf": _leaf, "nonleaf": _nonleaf, "view": _view,
           "edited": _edited, "parameter": _param, "with_grad": _with_grad}


def _edit_source(t, src, p):
    with t.no_grad():
        src.mul_(3)


def _edit_param(t, src, p):
    with t.no_grad():
        p.add_(1)


def _edit_base(t, src, p):
    if src._base is not None:
        with t.no_grad():
            src._base.add_(1)


EDITS = {"source": _edit_source, "parameter": _edit_param, "base": _edit_base}


def _outcome(t, source, edit, requires_grad):
    src = SOURCES[source](t)
    p = t.nn.Parameter(src, requires_grad=requires_grad)
    before = (p._version, p.is_leaf, p.grad_fn, p.grad, p.requires_grad, type(p).__name__,
              p._base is None)
    EDITS[edit](t, src, p)
    return (before, p.tolist(), src.tolist(), p.data_ptr() == src.data_ptr(), p._version,
            src._version)


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("edit", list(EDITS))
@pytest.mark.parametrize("source", list(SOURCES))
def test_a_parameter_shares_its_tensors_storage_and_version_as_torch(source, edit,
                                                                    requires_grad):
    assert (_outcome(gradviz, source, edit, requires_grad)
            == _outcome(torch, source, edit, requires_grad))


def _saved_then_edited(t):
    """The parameter saved for backward, its source edited: torch sees the edit."""
    src = t.ones(3)
    p = t.nn.Parameter(src)
    y = (p * p).sum()
    with t.no_grad():
        src.add_(1)
    try:
        y.backward()
    except RuntimeError as exc:
        return str(exc)
    return p.grad.tolist()


def test_editing_the_source_of_a_saved_parameter_is_caught_as_in_torch():
    assert _saved_then_edited(gradviz) == _saved_then_edited(torch)


def _integer(t, requires_grad):
    src = t.ones(3, dtype=t.long)
    try:
        p = t.nn.Parameter(src, requires_grad=requires_grad)
    except RuntimeError as exc:
        return str(exc)
    src.add_(1)
    return p.tolist(), str(p.dtype)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_an_integer_parameter_as_torch(requires_grad):
    assert _integer(gradviz, requires_grad) == _integer(torch, requires_grad)
