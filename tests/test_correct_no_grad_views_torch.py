"""A view made in no_grad or inference mode of a tensor that requires grad, and a view's
grad_fn read after its base was edited, on gradviz and on torch 2.13.

torch's view requires grad through its base (requires_grad, repr, numpy's refusal) yet is a
leaf with no grad_fn and no AccumulateGrad of its own: a view of it made in grad mode gets a
node whose edge to it is (None, 0), backward drops the gradient that reaches it, and only
requires_grad_(True) gives it an AccumulateGrad. Before, gradviz's view did not require grad.
A view's grad_fn getter (and is_leaf, repr, which read it) regenerates the grad_fn of a view
whose base was edited since, as torch's, where gradviz did it only when an op used the view.
"""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _name(fn):
    return None if fn is None else fn.name()


def _nexts(fn):
    return [(_name(n), nr) for n, nr in fn.next_functions]


def _view(t, mode="no_grad", leaf=True):
    x = t.arange(6.0).requires_grad_()
    base = x if leaf else x * 1
    with getattr(t, mode)():
        v = base[0:4]
    return x, v


def _flags(t, mode, leaf):
    _, v = _view(t, mode, leaf)
    return v.requires_grad, _name(v.grad_fn), v.is_leaf, v._version, repr(v)


def _view_of_view(t, mode, leaf):
    _, v = _view(t, mode, leaf)
    w = v[1:3]
    return w.requires_grad, _name(w.grad_fn), _nexts(w.grad_fn), _nexts((w * v[:2]).grad_fn)


def _backward_through_view(t, mode, leaf):
    x, v = _view(t, mode, leaf)
    y = t.ones(4, requires_grad=True)
    (v[0:2] * 2).sum().backward(retain_graph=True)
    (v * y).sum().backward()
    return x.grad, v.grad, y.grad.tolist()


def _grad_wrt(t, mode, leaf):
    x, v = _view(t, mode, leaf)
    out = (v[0:2] * 2).sum()
    return (t.autograd.grad(out, v, allow_unused=True, retain_graph=True),
            t.autograd.grad(out, x, allow_unused=True))


def _own_flag(t, mode, leaf):
    x, v = _view(t, mode, leaf)
    v.requires_grad_(False)
    off = v.requires_grad, _nexts((v * 2).grad_fn)
    v.requires_grad = True
    (v[0:2] * 2).sum().backward()
    return off, v.requires_grad, v.grad.tolist(), _nexts((v * 2).grad_fn)


SNIPPETS = {
    "flags": _flags,
    "view_of_view": _view_of_view,
    "backward": _backward_through_view,
    "grad_wrt": _grad_wrt,
    "own_flag": _own_flag,
}


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("snippet", SNIPPETS)
def test_a_view_made_without_grad_mode_requires_grad_through_its_base(snippet, mode, leaf):
    got = SNIPPETS[snippet](gradviz, mode, leaf)
    assert got == SNIPPETS[snippet](torch, mode, leaf)


def _error(f):
    try:
        f()
    except RuntimeError as exc:
        return str(exc).split(". ")[0]
    return None


def test_refusals_of_such_a_view_are_torchs():
    def refusals(t):
        _, v = _view(t)
        return (_error(lambda: v.backward(t.ones(4))), _error(v.numpy),
                _error(lambda: t.autograd.grad((v * 2).sum(), v)))
    assert refusals(gradviz) == refusals(torch)


def test_backward_names_the_element_that_does_not_require_grad():
    def error(t):
        a = t.ones(1, requires_grad=True) * 2
        return _error(lambda: t.autograd.backward([a.sum(), t.ones(1).sum()]))
    assert error(gradviz) == error(torch) == (
        "element 1 of tensors does not require grad and does not have a grad_fn")


def _read_after_edit(t, view, edit, read):
    x = t.arange(6.0).requires_grad_() * 1
    if view == "plain":
        v = x[0:4]
    else:
        with getattr(t, view)():
            v = x[0:4]
    if edit == "grad":
        x.mul_(2)
    else:
        with t.no_grad():
            x.mul_(2)
    try:
        if read == "grad_fn":
            fn = v.grad_fn
            return _name(fn), _nexts(fn), fn._saved_size, fn._saved_storage_offset
        if read == "grad_fn_in_no_grad":
            with t.no_grad():
                return _name(v.grad_fn)
        if read == "is_leaf":
            return v.is_leaf
        return repr(v)
    except RuntimeError as exc:
        return str(exc).split(". ")[0]


@pytest.mark.parametrize("read", ["grad_fn", "grad_fn_in_no_grad", "is_leaf", "repr"])
@pytest.mark.parametrize("edit", ["grad", "no_grad"])
@pytest.mark.parametrize("view", ["plain", "no_grad", "inference_mode"])
def test_reading_a_stale_views_grad_fn_regenerates_or_refuses_it_as_torch(view, edit, read):
    assert _read_after_edit(gradviz, view, edit, read) == _read_after_edit(torch, view, edit, read)


def test_a_view_made_before_its_base_required_grad_gets_torchs_grad_fn():
    def late(t):
        x = t.arange(4.0)
        v, w = x[0:2], x[1:3]
        before = _name(v.grad_fn)
        x.mul_(t.ones(4, requires_grad=True))
        fn = w.grad_fn
        return before, _name(fn), _nexts(fn), fn._saved_storage_offset
    assert late(gradviz) == late(torch)


def test_a_node_with_no_edge_keeps_the_values_torch_saves():
    # torch saves a node's values that are not tensors whatever its edges: SliceBackward0 of
    # a view that requires grad only through its base keeps dim, start, end and step
    def saved(t):
        _, v = _view(t)
        fn = v[1:3].grad_fn
        return (fn._saved_dim, fn._saved_start, fn._saved_end, fn._saved_step,
                tuple(fn._saved_self_sym_sizes), (v * 3).grad_fn._saved_other)
    assert saved(gradviz) == saved(torch)
