"""view and reshape's fast path for plain int sizes (gradviz._ops.views._plain_size) gives what
the general parse gives: the same shape, or it declines and the parse raises torch's error."""

import numpy as np
import pytest

import gradviz
from gradviz._ops import views
from gradviz._ops.views import _infer_shape, _plain_size, _shape_args

SIZES = [
    (6,), (-1,), (2, 3), (3, -1), (-1, 3), (1, -1, 1), ((2, 3),), ((-1,),), ((),), (),
    ([2, 3],), (-1, -1), (-2, -3), (-2, 3), (4, -1), (0, -1), (-1, 0), (2, 3, 0), (0,), (1,),
    (True, 6), (np.int64(2), 3), (2.0, 3), (gradviz.Size([2, 3]),), (6, 1, 1), (7,),
]


def _general(shape, numel):
    try:
        return _infer_shape(_shape_args(shape), numel)
    except (TypeError, RuntimeError) as exc:
        return type(exc)


@pytest.mark.parametrize("numel", [0, 1, 6])
@pytest.mark.parametrize("shape", SIZES, ids=repr)
def test_plain_size_agrees_with_the_general_parse_or_declines(shape, numel):
    fast = _plain_size(shape, numel)
    if fast is not None:
        assert fast == _general(shape, numel) and type(fast) is tuple
        assert all(type(s) is int for s in fast)


def test_plain_size_declines_what_it_does_not_parse():
    assert _plain_size((True, 6), 6) is None          # a bool is the parse's to judge
    assert _plain_size((np.int64(2), 3), 6) is None
    assert _plain_size((-2, -3), 6) is None           # negative sizes whose product fits
    assert _plain_size((-1, -1), 6) is None
    assert _plain_size((4, -1), 6) is None            # not divisible: the parse's error
    assert _plain_size((3, -1), 6) == (3, 2)


def _outcome(lib, numel, op, shape):
    x = lib.arange(float(numel)).requires_grad_()
    y = x * 1
    try:
        out = getattr(y, op)(*shape)
    except (TypeError, RuntimeError) as exc:
        return type(exc).__name__, str(exc).split("\n")[0]
    return tuple(out.shape), type(out.grad_fn).__name__


@pytest.mark.parametrize("op", ["view", "reshape"])
@pytest.mark.parametrize("numel", [0, 1, 6])
@pytest.mark.parametrize("shape", SIZES, ids=repr)
def test_view_and_reshape_give_what_the_general_parse_gives(op, numel, shape, monkeypatch):
    fast = _outcome(gradviz, numel, op, shape)
    monkeypatch.setattr(views, "_plain_size", lambda shape, numel: None)
    assert fast == _outcome(gradviz, numel, op, shape)


# the sizes the fast path takes, and the errors of those it declines that torch also gives
TORCH_SIZES = [(6,), (-1,), (2, 3), (3, -1), (-1, 3), (1, -1, 1), ((2, 3),), ((-1,),),
               ((),), ([2, 3],), (-1, -1), (-2, -3), (-2, 3), (-1, -1, -2), (-1, -2), (4, -1), (2, 3, 0), (0,), (1,), (np.int64(2), 3),
               (gradviz.Size([2, 3]),), (6, 1, 1), (7,)]


@pytest.mark.parametrize("op", ["view", "reshape"])
@pytest.mark.parametrize("numel", [0, 6])
@pytest.mark.parametrize("shape", TORCH_SIZES, ids=repr)
def test_view_and_reshape_match_torch(op, numel, shape):
    torch = pytest.importorskip("torch")
    shape_t = tuple(torch.Size(s) if isinstance(s, gradviz.Size) else s for s in shape)
    assert _outcome(gradviz, numel, op, shape) == _outcome(torch, numel, op, shape_t)
