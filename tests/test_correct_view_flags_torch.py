"""A view made in no_grad mode of a tensor that requires grad requires grad through its base:
torch reads the base's flag each time, so the view follows a later `base.requires_grad_(False)`,
`base.requires_grad = False` or `base.detach_()` (and `requires_grad_(True)` again). Each case
runs on torch 2.13 and gradviz and reads the same flags, grad_fn, is_leaf and the result of
an op on the view."""

import pytest

import gradviz

torch = pytest.importorskip("torch")


def _probe(m, v):
    out = {}
    for attr in ("requires_grad", "is_leaf", "grad_fn"):
        try:
            r = getattr(v, attr)
            out[attr] = r.name() if attr == "grad_fn" and r is not None else r
        except RuntimeError as exc:
            out[attr] = str(exc).split(".")[0]
    y = v * 2
    out["op"] = (y.requires_grad, None if y.grad_fn is None else y.grad_fn.name())
    return out


def _leaf(m):
    return m.ones(3, requires_grad=True)


def _nonleaf(m):
    return m.ones(3, requires_grad=True) * 1


def _view_of(m, base, make=lambda b: b[:2]):
    with m.no_grad():
        return make(base)


def _case_requires_grad_false(m):
    x = _leaf(m)
    v = _view_of(m, x)
    x.requires_grad_(False)
    return v


def _case_setter_false(m):
    x = _leaf(m)
    v = _view_of(m, x, lambda b: b.view(3))
    x.requires_grad = False
    return v


def _case_false_then_true(m):
    x = _leaf(m)
    v = _view_of(m, x, lambda b: b[1:])
    x.requires_grad_(False)
    x.requires_grad_(True)
    return v


def _case_detach_(m):
    y = _nonleaf(m)
    v = _view_of(m, y)
    y.detach_()
    return v


def _case_view_of_the_view(m):
    x = _leaf(m)
    v = _view_of(m, x)
    w = _view_of(m, v, lambda b: b[1:])
    x.requires_grad_(False)
    return w


def _case_own_flag(m):
    x = _leaf(m)
    v = _view_of(m, x)
    x.requires_grad_(False)
    v.requires_grad_(True)
    x.requires_grad_(True)
    return v


def _case_detached_base_set_again(m):
    y = _nonleaf(m)
    v = _view_of(m, y)
    y.detach_()
    y.requires_grad_(True)
    return v


def _case_untouched(m):
    return _view_of(m, _leaf(m))


CASES = {name[len("_case_"):]: fn for name, fn in globals().items() if name.startswith("_case_")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_no_grad_view_follows_its_bases_flag(name):
    assert _probe(gradviz, CASES[name](gradviz)) == _probe(torch, CASES[name](torch))


def test_many_no_grad_views_keep_a_bounded_list():
    """The views a base remembers are let go when they die."""
    x = gradviz.ones(3, requires_grad=True)
    for _ in range(1000):
        _view_of(gradviz, x)
    assert len(x._flag_followers) <= 128
