"""Tensor.unsqueeze_, squeeze_, t_ and transpose_ against torch 2.13: self takes the new shape
and strides, _version counts the edit, the node is torch's in-place one (UnsqueezeBackward1,
SqueezeBackward3/4/5, TBackward1, TransposeBackward1) with its saved names, gradients flow
back, views of self and of its base stay consistent, and torch's errors."""

import functools

import pytest

from test_learner_surface import _same


def _edit(m, args, shape, t):
    x = t.arange(float(t.Size(shape).numel())).reshape(shape).requires_grad_()
    y = x * 1
    r = getattr(y, m)(*args)
    (y * t.arange(float(y.numel())).reshape(y.shape)).sum().backward()
    saved = sorted(n for n in dir(y.grad_fn)
                   if n.startswith("_saved_") and n not in ("_saved_items", "_saved_lookup"))
    return (r is y, tuple(y.shape), y.stride(), y.is_contiguous(), y._version,
            y.grad_fn.name(), saved, x.grad.tolist())


EDITS = {
    "unsqueeze_0": ("unsqueeze_", (0,), (2, 1)),
    "unsqueeze_last": ("unsqueeze_", (-1,), (2, 3)),
    "squeeze_all": ("squeeze_", (), (2, 1, 1)),
    "squeeze_dim": ("squeeze_", (1,), (2, 1)),
    "squeeze_dims": ("squeeze_", ((1, 2),), (2, 1, 1)),
    "squeeze_dim_not_1": ("squeeze_", (0,), (2, 1)),
    "t_2d": ("t_", (), (2, 3)),
    "t_1d": ("t_", (), (3,)),
    "transpose_": ("transpose_", (0, 2), (2, 3, 4)),
    "transpose_negative": ("transpose_", (1, -1), (2, 3, 4)),
}


@pytest.mark.parametrize("case", sorted(EDITS))
def test_edit_matches_torch(case):
    _same(functools.partial(_edit, *EDITS[case]))


def _view_of_edited(t):
    b = t.ones(3, 4)
    v = b[0]
    b.t_()
    return tuple(b.shape), tuple(v.shape), b._version, v._version, b.stride()


def _edited_view_writes_base(t):
    b = t.ones(3, 4)
    v = b.view(4, 3)
    v.t_()
    v.mul_(2)
    return tuple(v.shape), b.tolist()


def _edited_view_of_non_leaf(t):
    x = t.ones(3, 4, requires_grad=True)
    b = x * 1
    v = b[0]
    v.unsqueeze_(0)
    (v * 3).sum().backward()
    return v.grad_fn.name(), b.grad_fn.name(), x.grad.tolist()


def _inplace_after_edit(t):
    x = t.ones(3, 4, requires_grad=True)
    b = x * 1
    v = b[0]
    v.unsqueeze_(0)
    v.mul_(2)
    b.sum().backward()
    return v.grad_fn.name(), b.grad_fn.name(), x.grad.tolist()


def _leaf_under_no_grad(t):
    with t.no_grad():
        x = t.ones(2, 1, requires_grad=True)
        x.unsqueeze_(0)
    return tuple(x.shape), x.requires_grad, x.is_leaf, x._version


CASES = {
    "view_of_edited": _view_of_edited,
    "edited_view_writes_base": _edited_view_writes_base,
    "edited_view_of_non_leaf": _edited_view_of_non_leaf,
    "inplace_after_edit": _inplace_after_edit,
    "leaf_under_no_grad": _leaf_under_no_grad,
    "leaf_refused": lambda t: t.ones(2, 1, requires_grad=True).unsqueeze_(0),
    "view_of_leaf_refused": lambda t: t.ones(2, 1, requires_grad=True)[0].squeeze_(),
    "t_3d": lambda t: t.ones(2, 1, 3).t_(),
    "transpose_dim": lambda t: t.ones(2).transpose_(0, 3),
    "unsqueeze_dim": lambda t: t.ones(2, 1).unsqueeze_(5),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_views_and_errors_match_torch(case):
    _same(CASES[case])


@pytest.mark.parametrize("edit", ["unsqueeze_(0)", "t_()", "transpose_(0, 1)", "squeeze_()"])
@pytest.mark.parametrize("use", ["(v * 2).sum().backward()", "v.mul_(2)"])
def test_a_view_of_a_root_that_took_a_new_shape_is_refused(edit, use):
    # The view's steps start from the root's data: on the root's new shape they would read the
    # wrong elements (torch keeps each view's geometry), so replaying them is refused clearly.
    import gradviz
    x = gradviz.arange(6.0).reshape(2, 3).requires_grad_()
    b = x * 1
    v = b[0]
    exec(f"b.{edit}", {"b": b})
    with pytest.raises(NotImplementedError, match=r"^gradviz's core does not implement an "
                                                  r"in-place edit or a gradient through a view"):
        exec(use, {"b": b, "v": v})
