"""Views whose in-place edits torch refuses, on gradviz and on torch 2.13.

A view made in no_grad mode or in inference mode of a tensor that requires grad (or edited
with an operand that does), and one of several views returned together (unbind, split,
chunk), get torch's CreationMeta errors: edited in place in grad mode ("A view was created in
no_grad mode and is being modified inplace with grad mode enabled. ..."), or used after its
base or another view of it was edited ("... its base or another view of its base has been
modified inplace ..."). Before, gradviz edited the no_grad and inference-mode views silently.
Any other view used after its base was edited gets torch's regenerated grad_fn:
AsStridedBackward0 over the base's history, saving the view's size, stride and
storage_offset as torch's does (before, it saved none of them)."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _nograd_view(t, a):
    with t.no_grad():
        return a[0]


def _inference_view(t, a):
    with t.inference_mode():
        return a[0]


def _nograd_view_of_view(t, a):
    with t.no_grad():
        v = a[0]
    return v[1:]


def _view_of_inference_view(t, a):
    with t.inference_mode():
        v = a[0]
    return v.view(2, 2)


def _nograd_unbind(t, a):
    with t.no_grad():
        return a.unbind(0)[1]


def _view_of_unbind(t, a):
    return a.unbind(0)[1].view(2, 2)


VIEWS = {
    "no_grad": _nograd_view,
    "inference": _inference_view,
    "no_grad_then_slice": _nograd_view_of_view,
    "inference_then_view": _view_of_inference_view,
    "no_grad_unbind": _nograd_unbind,
    "unbind": lambda t, a: a.unbind(0)[1],
    "split": lambda t, a: a.split(2)[1],
    "chunk": lambda t, a: a.chunk(3)[0],
    "unbind_then_view": _view_of_unbind,
    "plain": lambda t, a: a[0],
}


def _edit_no_grad(t, v):
    with t.no_grad():
        v.mul_(2)


def _edit_inference(t, v):
    with t.inference_mode():
        v.mul_(2)


EDITS = {
    "mul_": lambda t, v: v.mul_(2),
    "mul_requires_grad_other": lambda t, v: v.mul_(t.ones(v.shape, requires_grad=True)),
    "copy_": lambda t, v: v.copy_(t.zeros(v.shape, requires_grad=True)),
    "setitem": lambda t, v: v.__setitem__(0, 5.0),
    "no_grad_mul_": _edit_no_grad,
    "inference_mul_": _edit_inference,
}


def _first_sentence(exc):
    return type(exc).__name__, str(exc).split(". ")[0]


def _base(t, kind):
    a = t.arange(12.0).reshape(3, 4).clone()
    if kind == "no_grad":
        return a
    return a.requires_grad_() if kind == "leaf" else a.requires_grad_() * 1


def _edit_view(t, view, edit, base):
    a = _base(t, base)
    v = VIEWS[view](t, a)
    try:
        EDITS[edit](t, v)
    except RuntimeError as exc:
        return _first_sentence(exc)
    return v._version, v.tolist()


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("edit", EDITS)
@pytest.mark.parametrize("base", ["leaf", "non_leaf", "no_grad"])
def test_editing_a_view_in_place_is_refused_or_allowed_as_torch(view, edit, base):
    assert _edit_view(gradviz, view, edit, base) == _edit_view(torch, view, edit, base)


def _edit_base(t, view, edit):
    a = _base(t, "non_leaf")
    v = VIEWS[view](t, a)
    EDITS[edit](t, a)
    try:
        fn = (v * 1).grad_fn.next_functions[0][0]      # used by an op
    except RuntimeError as exc:
        return _first_sentence(exc)
    if fn is None:
        return None
    saved = {k: getattr(fn, k) for k in ("_saved_size", "_saved_stride", "_saved_storage_offset")
             if fn.name() == "AsStridedBackward0"}
    return fn.name(), [n[0].name() for n in fn.next_functions], saved


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("edit", ["mul_", "no_grad_mul_", "inference_mul_", "setitem"])
def test_reading_a_views_grad_fn_after_its_base_was_edited_is_torchs(view, edit):
    assert _edit_base(gradviz, view, edit) == _edit_base(torch, view, edit)


GEOMETRY = {
    "row": lambda a: a[1],
    "block": lambda a: a[1:, 1:],
    "column": lambda a: a[:, 2],
    "t": lambda a: a.t(),
    "view_of_view": lambda a: a[1:][:, ::2],
    "expand": lambda a: a[0:1].expand(2, 4),
}


def _regenerated(t, view, through_other_view):
    a = t.arange(12.0).reshape(3, 4).requires_grad_()
    x = a * 1
    v = GEOMETRY[view](x)
    if through_other_view:
        x[2].mul_(3)
    else:
        x.mul_(3)
    y = v * t.arange(1.0, v.numel() + 1).reshape(v.shape)
    fn = y.grad_fn.next_functions[0][0]
    y.sum().backward()
    return (fn.name(), fn.next_functions[0][0].name(), fn._saved_size, fn._saved_stride,
            fn._saved_storage_offset, a.grad.tolist())


@pytest.mark.parametrize("through_other_view", [False, True])
@pytest.mark.parametrize("view", list(GEOMETRY))
def test_a_regenerated_grad_fn_saves_torchs_geometry_and_differentiates(view,
                                                                         through_other_view):
    assert (_regenerated(gradviz, view, through_other_view)
            == _regenerated(torch, view, through_other_view))
