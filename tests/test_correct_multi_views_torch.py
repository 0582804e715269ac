"""Views edited or used after an in-place edit, on gradviz and on torch 2.13.

- One of several views returned together (unbind, split, chunk, tensor_split), or a view of
  one (select, view: torch's CreationMeta::MULTI_OUTPUT_NODE is inherited), edited in place
  in grad mode: torch's "Output 0 of Split is a view and is being modified inplace. This view
  is the output of a function that returns multiple views..." naming the edited tensor's own
  grad_fn; used after it, its base or another view was edited (under no_grad, through
  detach(), through the base): "... its base or another view of its base has been modified
  inplace ...".
- Any other view used after its base or another view of it was edited in place gets its
  grad_fn regenerated (AsStridedBackward0 over the base's history), so its gradient goes
  through the edit; before, it kept its old grad_fn and its gradient silently skipped the
  edit. (Reading `view.grad_fn` itself does not regenerate it in gradviz: an inspector reads
  it; torch's shows AsStridedBackward0 there.)"""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

SPLITS = {
    "unbind": lambda t, x: x.unbind(0),
    "torch.unbind_1": lambda t, x: t.unbind(x, 1),
    "split": lambda t, x: x.split(2),
    "split_sizes": lambda t, x: x.split([1, 3]),
    "torch.split_1": lambda t, x: t.split(x, 2, 1),
    "split_whole": lambda t, x: x.split(4),
    "chunk": lambda t, x: x.chunk(2),
    "chunk_3_1": lambda t, x: x.chunk(3, 1),
    "chunk_1": lambda t, x: x.chunk(1),
    "tensor_split": lambda t, x: x.tensor_split(2),
    "tensor_split_indices": lambda t, x: t.tensor_split(x, [1, 3]),
}


def _no_grad_add(t, v):
    with t.no_grad():
        v.add_(1)


EDITS = {
    "mul_": lambda t, v: v.mul_(2),
    "setitem": lambda t, v: v.__setitem__(0, 1.0),
    "view_then_add_": lambda t, v: v.view(-1).add_(1),
    "no_grad": _no_grad_add,
    "detach": lambda t, v: v.detach().add_(1),
}


def _first_sentence_or_grad(t, split, edit, requires_grad, through_base):
    a = t.arange(16.0).reshape(4, 4).requires_grad_(requires_grad)
    x = a * 1
    outs = SPLITS[split](t, x)
    try:
        if through_base:
            x.add_(1)
            y = outs[0] * 2
        else:
            EDITS[edit](t, outs[-1])
            y = sum(o.sum() for o in outs)
        if requires_grad:
            y.sum().backward()
            return a.grad.tolist()
        return y.tolist()
    except RuntimeError as exc:
        return str(exc)


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("edit", list(EDITS))
@pytest.mark.parametrize("split", list(SPLITS))
def test_editing_one_of_several_views_is_refused_as_in_torch(split, edit, requires_grad):
    args = (split, edit, requires_grad, False)
    assert _first_sentence_or_grad(gradviz, *args) == _first_sentence_or_grad(torch, *args)


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("split", list(SPLITS))
def test_using_one_of_several_views_after_its_base_changed_is_refused_as_in_torch(
        split, requires_grad):
    args = (split, "mul_", requires_grad, True)
    assert _first_sentence_or_grad(gradviz, *args) == _first_sentence_or_grad(torch, *args)


# ----- Views used after an edit elsewhere in their base --------------------------------------

VIEWS = {
    "select": lambda x: x[0],
    "slice": lambda x: x[1:3],
    "column": lambda x: x[:, 1],
    "transpose": lambda x: x.t(),
    "view": lambda x: x.view(16),
    "diagonal": lambda x: x.diagonal(),
    "view_of_view": lambda x: x[1:].view(-1)[2:6],
}


def _edit_base_mul(t, x, v, w):
    x.mul_(2)


def _edit_base_no_grad(t, x, v, w):
    with t.no_grad():
        x.mul_(2)


def _edit_base_detach(t, x, v, w):
    x.detach().mul_(2)


def _edit_other_view(t, x, v, w):
    w.mul_(3)


def _edit_self(t, x, v, w):
    v.mul_(3)


def _edit_twice(t, x, v, w):
    x.mul_(2)
    w.add_(1)


def _edit_base_by_tensor(t, x, v, w):
    x.mul_(t.arange(16.0).reshape(4, 4))


STALE_EDITS = {"base_mul_": _edit_base_mul, "base_no_grad": _edit_base_no_grad,
               "base_detach": _edit_base_detach, "other_view": _edit_other_view,
               "self": _edit_self, "twice": _edit_twice, "base_by_tensor": _edit_base_by_tensor}


def _stale_view_grad(t, view, edit):
    a = t.arange(16.0).reshape(4, 4).requires_grad_()
    x = a * 1
    v = VIEWS[view](x)
    w = x[:, 2]
    STALE_EDITS[edit](t, x, v, w)
    y = v * t.arange(float(v.numel())).reshape(v.shape)
    y.sum().backward()
    return a.grad.tolist(), y.grad_fn.next_functions[0][0].name(), v._version, v.tolist()


@pytest.mark.parametrize("edit", list(STALE_EDITS))
@pytest.mark.parametrize("view", list(VIEWS))
def test_a_view_used_after_an_edit_of_its_base_differentiates_through_it(view, edit):
    assert _stale_view_grad(gradviz, view, edit) == _stale_view_grad(torch, view, edit)


def _stale_then_grad_fn_chain(t):
    """The regenerated grad_fn, as torch's: AsStridedBackward0 over the base's CopySlices."""
    a = t.arange(6.0).reshape(2, 3).requires_grad_()
    x = a * 1
    v = x[0]
    x[1].mul_(2)
    fn = (v * 1).grad_fn.next_functions[0][0]
    return fn.name(), fn.next_functions[0][0].name()


def test_a_stale_views_grad_fn_is_torchs():
    assert _stale_then_grad_fn_chain(gradviz) == _stale_then_grad_fn_chain(torch)


def _expanded_after_edit(t, order):
    x = t.ones(3, requires_grad=True)
    b = x * 1
    e = b.expand(2, 3)
    b.mul_(2)
    if order == 1:
        (e * t.arange(6.0).reshape(2, 3)).sum().backward()
        return x.grad.tolist()
    (g,) = t.autograd.grad((e * e).sum(), x, create_graph=True)
    (g * t.arange(3.0)).sum().backward()
    return g.tolist(), x.grad.tolist()


@pytest.mark.parametrize("order", [1, 2])
def test_an_expanded_view_used_after_its_base_was_edited_sums_its_gradient(order):
    # the view overlaps itself: each element of the base gets the sum over the places that
    # read it (a read-only NumPy view crashed the first order; the second lost all but one)
    assert _expanded_after_edit(gradviz, order) == _expanded_after_edit(torch, order)
