"""Sizes given to view, reshape, expand and permute are parsed as torch's argument parser
parses them: the first element decides whether the call is a size at all (a bool, a float or
nothing there is torch's TypeError, never a size of 1), a later bool counts as an int, a later
float is refused. Errors are compared whole with torch 2.13."""

import numpy as np
import pytest

import gradviz

CASES = [(True, 6), ((True, 6),), ([True, 6],), ((2.0, 3),), (6.5,), (2.0, 3), (None,),
         ("a",), ((2, 3.0),), ((2, True),), ([2, 3.0],), (2, 3.0), (2, True), ((),), ([],),
         (None, 6), ((6,), 1), (2, 3), ((2, 3),), (np.int64(2), 3), (-1,), (3, -1)]
OPS = [("view", (2, 3)), ("reshape", (2, 3)), ("expand", (1, 3)), ("permute", (2, 3))]


def _outcome(mod, op, shape, args):
    x = mod.zeros(*shape)
    try:
        return "ok", tuple(getattr(x, op)(*args).shape)
    except (TypeError, RuntimeError, IndexError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("op, shape", OPS)
@pytest.mark.parametrize("args", CASES, ids=repr)
def test_size_arguments_as_torch(op, shape, args):
    torch = pytest.importorskip("torch")
    assert _outcome(gradviz, op, shape, args) == _outcome(torch, op, shape, args)


@pytest.mark.parametrize("op", ["view", "reshape"])
@pytest.mark.parametrize("args", [(True, 6), ((True, 6),), ((2.0, 3),), (2, 3.0)], ids=repr)
def test_a_bool_first_or_no_size_is_refused(op, args):
    with pytest.raises(TypeError):
        getattr(gradviz.zeros(2, 3), op)(*args)


@pytest.mark.xfail(strict=True, reason="x.view() with no size is torch's TypeError; gradviz "
                   "reads it as the empty size, which its own code passes as view(x, *())")
@pytest.mark.parametrize("op", ["view", "reshape"])
def test_no_size_at_all_as_torch(op):
    torch = pytest.importorskip("torch")
    assert _outcome(gradviz, op, (1,), ()) == _outcome(torch, op, (1,), ())


def test_a_later_bool_counts_as_one():
    assert tuple(gradviz.zeros(6).view(6, True).shape) == (6, 1)
