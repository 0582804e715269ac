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


NO_SIZE = [("view", lambda m, x: x.view()), ("reshape", lambda m, x: x.reshape()),
           ("torch.reshape", lambda m, x: m.reshape(x)), ("expand", lambda m, x: x.expand()),
           ("permute", lambda m, x: x.permute()), ("torch.permute", lambda m, x: m.permute(x)),
           ("repeat", lambda m, x: x.repeat()), ("tile", lambda m, x: x.tile()),
           ("torch.tile", lambda m, x: m.tile(x)), ("flip", lambda m, x: x.flip()),
           ("torch.flip", lambda m, x: m.flip(x))]


def _called(mod, call, shape):
    x = mod.zeros(shape)
    try:
        return "ok", tuple(call(mod, x).shape)
    except (TypeError, RuntimeError, IndexError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("shape", [(), (1,), (2, 3), (0,), (1, 1)], ids=repr)
@pytest.mark.parametrize("name, call", NO_SIZE, ids=[n for n, _ in NO_SIZE])
def test_no_size_at_all_as_torch(name, call, shape):
    """x.view() is torch's TypeError (never the empty size), whatever x's shape."""
    torch = pytest.importorskip("torch")
    assert _called(gradviz, call, shape) == _called(torch, call, shape)


# gradviz's own code passes 0-dim shapes packed: these internal paths meet an empty size.
ZERO_DIM_PATHS = [
    ("view_as", lambda m, x: x.view_as(m.tensor(1.0))),
    ("reshape_as", lambda m, x: x.reshape_as(m.tensor(1.0))),
    ("expand_as", lambda m, x: x.expand_as(m.tensor(1.0))),
    ("T", lambda m, x: x.T),
    ("movedim", lambda m, x: m.movedim(x, [], [])),
    ("broadcast_to", lambda m, x: x.broadcast_to(())),
    ("broadcast_tensors", lambda m, x: m.broadcast_tensors(x, m.tensor(2.0))[1]),
    ("tile_packed", lambda m, x: x.tile(())),
    ("repeat_packed", lambda m, x: x.repeat(())),
    ("flip_packed", lambda m, x: x.flip(())),
    ("view_packed", lambda m, x: x.view(())),
    ("reshape_list", lambda m, x: x.reshape([])),
    ("permute_packed", lambda m, x: x.permute(())),
    ("expand_packed", lambda m, x: x.expand(())),
    ("einsum", lambda m, x: m.einsum(",->", x, x)),
    ("tensordot", lambda m, x: m.tensordot(x, x, dims=0)),
    ("flatten_unflatten", lambda m, x: x.flatten().unflatten(0, (1,)).squeeze()),
    ("take_along_dim", lambda m, x: m.take_along_dim(x, m.tensor(0), 0)),
    ("take_along_dim_last", lambda m, x: m.take_along_dim(x, m.tensor(0), -1)),
    ("take_along_dim_none", lambda m, x: m.take_along_dim(x, m.tensor(0))),
    ("masked_scatter", lambda m, x: x.masked_scatter(m.tensor(True), m.ones(1))),
    ("setitem", lambda m, x: _setitem(x, m.ones(1, 1))),
    ("cdist", lambda m, x: m.cdist(m.ones(1, 1, 2), m.zeros(1, 1, 2)).sum()),
]


def _setitem(x, v):
    x = x.clone()
    x[...] = v
    return x


@pytest.mark.parametrize("name, call", ZERO_DIM_PATHS, ids=[n for n, _ in ZERO_DIM_PATHS])
def test_internal_paths_through_an_empty_size_as_torch(name, call):
    torch = pytest.importorskip("torch")
    assert _called(gradviz, call, ()) == _called(torch, call, ())


def test_a_later_bool_counts_as_one():
    assert tuple(gradviz.zeros(6).view(6, True).shape) == (6, 1)
