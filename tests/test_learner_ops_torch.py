"""type_as, nansum/nanmean, split_with_sizes, hsplit/vsplit/dsplit, kthvalue, cummax/cummin,
bincount, unique_consecutive and bitwise ops with a NumPy integer first, against torch 2.13:
values, dtypes, shapes, grad_fn names, gradients and the first sentence of each error."""

import numpy as np
import pytest

import gradviz
from test_learner_counting_torch import _obs
from test_learner_surface import _same as same_on_both


def _same(snippet):
    return same_on_both(snippet, _obs)


def _m(t):
    return t.arange(12.0).reshape(3, 4).requires_grad_()


def _x(t):
    return t.arange(24.0).reshape(2, 3, 4)


def _nan(t):
    return t.tensor([[1.0, float("nan"), 3.0], [float("nan")] * 3], requires_grad=True)


def _grad(t, fn, make=_m):
    x = make(t)
    out = fn(x)
    (out if not isinstance(out, tuple) else out[0]).sum().backward()
    return x.grad


def _ties(t):
    return t.tensor([[1.0, 3.0, 3.0, float("nan"), 2.0, 5.0, float("nan")],
                     [2.0, 2.0, 1.0, 1.0, 0.0, 0.0, 7.0]], requires_grad=True)


SPLITS = {
    "hsplit_0d": lambda t: t.hsplit(t.tensor(1.0), 2),
    "hsplit_not_dividing": lambda t: t.hsplit(_m(t), 3),
    "hsplit": lambda t: t.hsplit(_m(t), 2),
    "hsplit_1d_indices": lambda t: t.hsplit(t.arange(6.0), [1, 3]),
    "hsplit_zero": lambda t: t.hsplit(t.arange(6.0), 0),
    "hsplit_method_indices": lambda t: _m(t).hsplit([1, 3]),
    "vsplit_1d": lambda t: t.vsplit(t.arange(3.0), 3),
    "vsplit": lambda t: t.vsplit(_m(t), 3),
    "vsplit_not_dividing": lambda t: t.vsplit(_m(t), 2),
    "dsplit_2d": lambda t: t.dsplit(_m(t), 3),
    "dsplit": lambda t: t.dsplit(_x(t), 2),
    "dsplit_indices": lambda t: _x(t).dsplit([1, 3]),
    "dsplit_grad": lambda t: _grad(t, lambda x: x.reshape(3, 2, 2).dsplit(2)[1]),
    "split_with_sizes": lambda t: t.split_with_sizes(_m(t), [1, 3], 1),
    "split_with_sizes_method": lambda t: _m(t).split_with_sizes([2, 1]),
    "split_with_sizes_sum": lambda t: _m(t).split_with_sizes([1, 2], 1),
    "split_with_sizes_grad": lambda t: _grad(t, lambda x: x.split_with_sizes([1, 3], 1)[1]),
}

TYPE_AS = {
    "not_tensor": lambda t: _m(t).type_as(3),
    "to_long": lambda t: _m(t).type_as(t.tensor([1])),
    "same": lambda t: _m(t).type_as(_m(t)),
    "same_is_self": lambda t: (lambda x: x.type_as(x) is x)(_m(t)),
    "to_float": lambda t: t.tensor([1, 2]).type_as(_m(t)),
    "to_double": lambda t: _m(t).type_as(t.zeros(1, dtype=t.float64)),
    "grad": lambda t: _grad(t, lambda x: x.type_as(t.zeros(1, dtype=t.float64)) * 2),
}

NANS = {
    "nansum": lambda t: _nan(t).nansum(),
    "nansum_dim": lambda t: t.nansum(_nan(t), 1),
    "nansum_dims_keepdim": lambda t: _nan(t).nansum((0, 1), keepdim=True),
    "nansum_dtype": lambda t: _nan(t).nansum(dtype=t.float64),
    "nansum_int": lambda t: t.tensor([1, 2], dtype=t.int32).nansum(),
    "nansum_bool": lambda t: t.tensor([True, True]).nansum(),
    "nansum_0d": lambda t: t.tensor(float("nan")).nansum(0),
    "nansum_grad": lambda t: _grad(t, lambda x: x.nansum(0), _nan),
    "nanmean": lambda t: _nan(t).nanmean(),
    "nanmean_dim": lambda t: t.nanmean(_nan(t), 1),
    "nanmean_keepdim_dtype": lambda t: _nan(t).nanmean(0, keepdim=True, dtype=t.float64),
    "nanmean_int": lambda t: t.tensor([1, 2]).nanmean(),
    "nanmean_grad": lambda t: _grad(t, lambda x: x.nanmean(), _nan),
    "nanmean_nodes": lambda t: [n.name() if n else None
                                for n, _ in _nan(t).nanmean().grad_fn.next_functions],
}

SELECTION = {
    "kthvalue": lambda t: tuple(_m(t).kthvalue(2)),
    "kthvalue_keepdim": lambda t: tuple(t.kthvalue(_m(t), 1, 0, True)),
    "kthvalue_ties_nan": lambda t: [tuple(_ties(t).kthvalue(k, 1)) for k in (1, 2, 3, 6, 7)],
    "kthvalue_out_of_range": lambda t: _m(t).kthvalue(5, 1),
    "kthvalue_zero": lambda t: _m(t).kthvalue(0),
    "kthvalue_0d": lambda t: tuple(t.tensor(2.0).kthvalue(1)),
    "kthvalue_0d_k2": lambda t: t.tensor(2.0).kthvalue(2),
    "kthvalue_empty": lambda t: t.zeros(2, 0).kthvalue(1),
    "kthvalue_grad": lambda t: _grad(t, lambda x: x.kthvalue(3, 1, keepdim=True), _ties),
    "kthvalue_names": lambda t: type(_m(t).kthvalue(1)).__name__,
    "cummax": lambda t: tuple(_ties(t).cummax(1)),
    "cummin": lambda t: tuple(t.cummin(_ties(t), 1)),
    "cummax_dim0": lambda t: tuple(_m(t).cummax(0)),
    "cummin_int": lambda t: tuple(t.tensor([3, 1, 1, 2]).cummin(0)),
    "cummax_bool": lambda t: tuple(t.tensor([True, False]).cummax(0)),
    "cummax_0d": lambda t: tuple(t.tensor(2.0).cummax(0)),
    "cummax_empty": lambda t: tuple(t.zeros(0).cummax(0)),
    "cummax_grad": lambda t: _grad(t, lambda x: x.cummax(1), _ties),
    "cummin_grad": lambda t: _grad(t, lambda x: x.cummin(0)),
    "cummax_repr": lambda t: repr(t.tensor([1.0, 3.0, 2.0]).cummax(0)),
}


def _backward(y):
    y.sum().backward()


def _w(t):
    return t.tensor([0.5, 1.0], requires_grad=True)


def _runs(t):
    return t.tensor([1.0, 1, 2, 2, 3, 1, 1, 2], requires_grad=True)


def _grid(t):
    return t.tensor([[1, 1], [1, 1], [2, 3]])


COUNTING = {
    "bincount": lambda t: t.bincount(t.tensor([0, 1, 1, 3])),
    "bincount_minlength": lambda t: t.bincount(t.tensor([0, 1, 1, 3]), minlength=6),
    "bincount_weights": lambda t: t.bincount(t.tensor([0, 1, 1, 3]), t.tensor([0.5, 1, 1, 2])),
    "bincount_double": lambda t: t.tensor([0, 3]).bincount(t.tensor([0.5, 2],
                                                                       dtype=t.float64)),
    "bincount_int_weights": lambda t: t.bincount(t.tensor([1, 2]), weights=t.tensor([1, 2])),
    "bincount_bool_weights": lambda t: t.bincount(t.tensor([1, 2]), t.tensor([True, False])),
    "bincount_negative": lambda t: t.bincount(t.tensor([0, -1])),
    "bincount_2d": lambda t: t.bincount(t.tensor([[0, 1]])),
    "bincount_float": lambda t: t.bincount(t.tensor([0.0, 1.0])),
    "bincount_empty": lambda t: t.bincount(t.tensor([], dtype=t.long)),
    "bincount_bad_minlength": lambda t: t.bincount(t.tensor([1, 2]), minlength=-1),
    "bincount_bad_weights": lambda t: t.bincount(t.tensor([1, 2]), weights=t.tensor([1.0])),
    "bincount_grad_node": lambda t: t.bincount(t.tensor([0, 2]), _w(t)),
    "bincount_backward": lambda t: _backward(t.bincount(t.tensor([0, 2]), _w(t))),
    "unique_consecutive": lambda t: t.unique_consecutive(_runs(t)),
    "unique_consecutive_all": lambda t: t.unique_consecutive(_runs(t), return_inverse=True,
                                                             return_counts=True),
    "unique_consecutive_counts": lambda t: _runs(t).unique_consecutive(return_counts=True),
    "unique_consecutive_dim0": lambda t: t.unique_consecutive(_grid(t), dim=0,
                                                              return_counts=True),
    "unique_consecutive_dim1": lambda t: t.unique_consecutive(_grid(t), dim=1,
                                                              return_inverse=True),
    "unique_consecutive_2d_inverse": lambda t: t.unique_consecutive(_grid(t),
                                                                    return_inverse=True),
    "unique_consecutive_0d": lambda t: t.unique_consecutive(t.tensor(3.0), return_inverse=True,
                                                            return_counts=True),
    "unique_consecutive_0d_dim": lambda t: t.unique_consecutive(t.tensor(3.0), dim=0),
    "unique_consecutive_nan": lambda t: t.unique_consecutive(t.tensor([float("nan")] * 2)),
    "unique_consecutive_empty": lambda t: t.unique_consecutive(t.tensor([]), return_inverse=True,
                                                               return_counts=True),
    "unique_consecutive_backward": lambda t: _backward(t.unique_consecutive(_runs(t) * 2)),
    "unique_consecutive_backward_dim": lambda t: _backward(
        t.unique_consecutive(_runs(t) * 2, dim=0)),
}

BITWISE_NUMPY_FIRST = {
    "left_shift_int64": lambda t: t.bitwise_left_shift(np.int64(3), t.tensor([1, 2])),
    "right_shift_int32": lambda t: t.bitwise_right_shift(np.int32(16),
                                                         t.tensor([1, 2], dtype=t.int32)),
    "and_int16": lambda t: t.bitwise_and(np.int16(7), t.tensor([1, 2], dtype=t.int32)),
    "left_shift_uint8_int8": lambda t: t.bitwise_left_shift(np.uint8(3),
                                                            t.tensor([1, 2], dtype=t.int8)),
    "xor_int8_uint8": lambda t: t.bitwise_xor(np.int8(3), t.tensor([1, 2], dtype=t.uint8)),
}


@pytest.mark.parametrize("case", sorted(SPLITS))
def test_splits(case):
    _same(SPLITS[case])


@pytest.mark.parametrize("case", sorted(TYPE_AS))
def test_type_as(case):
    _same(TYPE_AS[case])


@pytest.mark.parametrize("case", sorted(NANS))
def test_nansum_nanmean(case):
    _same(NANS[case])


@pytest.mark.parametrize("case", sorted(SELECTION))
def test_kthvalue_cummax_cummin(case):
    _same(SELECTION[case])


@pytest.mark.parametrize("case", sorted(COUNTING))
def test_bincount_unique_consecutive(case):
    _same(COUNTING[case])


@pytest.mark.parametrize("case", sorted(BITWISE_NUMPY_FIRST))
def test_bitwise_with_numpy_integer_first(case):
    _same(BITWISE_NUMPY_FIRST[case])


def _saved(t, fn):
    y = fn(t)
    return sorted(n for n in dir(y.grad_fn)
                  if n.startswith("_saved_") and n not in ("_saved_items", "_saved_lookup"))


@pytest.mark.parametrize("fn", [lambda t: _m(t).kthvalue(2, 1).values,
                                lambda t: _m(t).cummax(1).values,
                                lambda t: _m(t).cummin(0).values,
                                lambda t: _m(t).nansum(1)])
def test_saved_names(fn):
    real = pytest.importorskip("torch")
    assert _saved(gradviz, fn) == _saved(real, fn)


# ----- Tensor.unfold ---------------------------------------------------------------------------

def _unfold_obs(x):
    """A result as plain data, with the strides and contiguity of tensors (unfold is a view)."""
    if hasattr(x, "stride"):
        return _obs(x), x.stride(), x.is_contiguous()
    if isinstance(x, (tuple, list)):
        return [_unfold_obs(v) for v in x]
    return x


def _unfold_in_place(t):
    b = t.arange(6.0).clone()
    v = b.unfold(0, 2, 2)
    v.mul_(2)
    return b, v


def _unfold_in_place_grad(t):
    x = _m(t)
    b = x * 1
    v = b.unfold(1, 2, 2)
    v.mul_(3)
    b.sum().backward()
    return x.grad, v.grad_fn.name()


def _unfold_double_backward(t):
    x = t.arange(5.0, dtype=t.float64).requires_grad_()
    g = t.arange(8.0, dtype=t.float64).reshape(4, 2).requires_grad_()
    (gx,) = t.autograd.grad(x.unfold(0, 2, 1), x, g, create_graph=True)
    (gg,) = t.autograd.grad((gx * gx).sum(), g)
    return gx, gg


UNFOLD = {
    "windows": lambda t: _m(t).unfold(1, 3, 2),
    "dim0": lambda t: _m(t).unfold(0, 2, 1),
    "negative_dim": lambda t: _m(t).unfold(-1, 4, 4),
    "keywords": lambda t: _m(t).unfold(dimension=1, size=2, step=1),
    "transposed": lambda t: _m(t).t().unfold(1, 2, 1),
    "empty_windows": lambda t: _m(t).unfold(1, 0, 1),
    "too_big": lambda t: _m(t).unfold(1, 5, 2),
    "zero_step": lambda t: _m(t).unfold(1, 2, 0),
    "negative_size": lambda t: _m(t).unfold(1, -1, 1),
    "dim_out_of_range": lambda t: _m(t).unfold(2, 2, 1),
    "zero_dim": lambda t: t.tensor(3.0).unfold(0, 1, 1),
    "zero_dim_too_big": lambda t: t.tensor(3.0).unfold(0, 2, 1),
    "grad_overlapping": lambda t: _grad(t, lambda x: x.unfold(1, 2, 1).pow(2)),
    "grad_twice": lambda t: _grad(t, lambda x: x.unfold(0, 2, 1).unfold(1, 3, 1).pow(2)),
    "grad_transposed": lambda t: _grad(t, lambda x: x.t().unfold(0, 3, 2).pow(2)),
    "reshape_copies": lambda t: _m(t).unfold(1, 2, 1).reshape(-1),
    "reshape_views": lambda t: _m(t).unfold(1, 2, 2).reshape(-1),
    "in_place": _unfold_in_place,
    "in_place_grad": _unfold_in_place_grad,
    "double_backward": _unfold_double_backward,
    "no_torch_function": lambda t: hasattr(t, "unfold"),
}


@pytest.mark.parametrize("case", sorted(UNFOLD))
def test_unfold(case):
    same_on_both(UNFOLD[case], _unfold_obs)


def test_unfold_saved_names():
    real = pytest.importorskip("torch")

    def saved(t):
        y = _m(t).unfold(1, 2, 1)
        return sorted(n for n in dir(y.grad_fn)
                      if n.startswith("_saved_") and n not in ("_saved_items", "_saved_lookup")), \
            y.grad_fn._saved_dimension, tuple(y.grad_fn._saved_self_sym_sizes)
    assert saved(gradviz) == saved(real)


# ----- index_put_ / index_put ----------------------------------------------------------------

def _z(t):
    return t.zeros(3, 4)


def _i(t):
    return t.tensor([0, 0, 2])


def _index_put_grads(t, accumulate, in_place):
    w = t.ones(3, 4, requires_grad=True)
    v = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    key = (_i(t), t.tensor([1, 1, 3]))
    b = w * 2
    y = (b.index_put_(key, v, accumulate=accumulate) if in_place
         else t.index_put(b, key, v, accumulate=accumulate))
    y.pow(2).sum().backward()
    return (w.grad, v.grad, [n.name() if n else None for n, _ in y.grad_fn.next_functions],
            y.grad_fn._saved_accumulate)


def _index_put_through_view(t):
    w = t.ones(3, 4, requires_grad=True)
    b = w * 2
    v = b[1:]
    v.index_put_((t.tensor([0, 0]),), t.tensor(1.0), accumulate=True)
    b.sum().backward()
    return b, w.grad, b.grad_fn.name(), v.grad_fn.name()


def _index_put_double_backward(t):
    w = t.tensor([1.0, 2.0, 3.0], dtype=t.float64, requires_grad=True)
    v = t.tensor([0.5, 0.25], dtype=t.float64, requires_grad=True)
    y = t.index_put(w * w, (t.tensor([0, 0]),), v * v, accumulate=True)
    g = t.autograd.grad((y * y).sum(), (w, v), create_graph=True)
    return t.autograd.grad(g[0].sum() + g[1].sum(), (w, v))


INDEX_PUT = {
    "accumulate_0d": lambda t: _z(t).index_put_((_i(t),), t.tensor(1.0), accumulate=True),
    "accumulate_rows": lambda t: _z(t).index_put_((_i(t),), t.ones(3, 4), True),
    "accumulate_pairs": lambda t: t.index_put(_z(t), (_i(t), t.tensor([1, 1, 3])),
                                              t.tensor([1.0, 2, 3]), accumulate=True),
    "write": lambda t: _z(t).index_put((_i(t),), t.tensor(1.0)),
    "list_of_indices": lambda t: _z(t).index_put([_i(t)], t.tensor(1.0)),
    "int32_indices": lambda t: _z(t).index_put((t.tensor([0, 1], dtype=t.int32),),
                                               t.tensor(7.0)),
    "mask": lambda t: _z(t).index_put((_z(t) > 5,), t.tensor(5.0)),
    "row_mask_accumulate": lambda t: _z(t).index_put((t.tensor([True, False, True]),),
                                                     t.tensor(5.0), accumulate=True),
    "returns_self": lambda t: (lambda y: y.index_put_((_i(t),), t.tensor(1.0)) is y)(_z(t)),
    "long_accumulate": lambda t: t.zeros(5, dtype=t.long).index_put_(
        (t.tensor([1, 1, 4]),), t.tensor([1, 2, 3]), accumulate=True),
    "leaf_in_place": lambda t: t.ones(2, requires_grad=True).index_put_((t.tensor([0]),),
                                                                        t.tensor(1.0)),
    "not_a_tuple": lambda t: _z(t).index_put(_i(t), t.tensor(1.0)),
    "values_not_tensor": lambda t: _z(t).index_put((_i(t),), 1.0),
    "dtype_mismatch": lambda t: _z(t).index_put((_i(t),), t.tensor(1.0, dtype=t.float64)),
    "none_index": lambda t: _z(t).index_put((None, t.tensor([1, 3])), t.tensor(5.0)),
    "float_index": lambda t: _z(t).index_put((t.tensor([0.0]),), t.tensor(5.0)),
    "out_of_bounds": lambda t: _z(t).index_put((t.tensor([5]),), t.tensor(5.0)),
    "out_of_bounds_accumulate": lambda t: _z(t).index_put((t.tensor([5]),), t.tensor(5.0),
                                                          accumulate=True),
    "shape_mismatch": lambda t: _z(t).index_put((_i(t),), t.ones(2, 4)),
    "too_many_indices": lambda t: _z(t).index_put((_i(t),) * 3, t.ones(3)),
    "grads_accumulate": lambda t: _index_put_grads(t, True, False),
    "grads_write": lambda t: _index_put_grads(t, False, False),
    "grads_accumulate_in_place": lambda t: _index_put_grads(t, True, True),
    "grads_write_in_place": lambda t: _index_put_grads(t, False, True),
    "through_view": _index_put_through_view,
    "double_backward": _index_put_double_backward,
}


@pytest.mark.parametrize("case", sorted(INDEX_PUT))
def test_index_put(case):
    _same(INDEX_PUT[case])


# ----- torch.as_strided --------------------------------------------------------------------

def _strided_grad(t, fn):
    x = _m(t)
    y = fn(x)
    (y * t.arange(float(y.numel())).reshape(y.shape)).sum().backward()
    return x.grad


def _strided_in_place(t):
    b = t.arange(6.0).clone()
    v = b.as_strided((2,), (3,))
    v.add_(10)
    return b, v


def _strided_in_place_grad(t):
    x = _m(t)
    b = x * 1
    v = b.as_strided((2, 2), (4, 1), 1)
    v.mul_(3)
    (b * b).sum().backward()
    return x.grad, v.grad_fn.name(), b.grad_fn.name()


def _strided_double_backward(t):
    x = t.arange(6.0, dtype=t.float64).requires_grad_()
    (g,) = t.autograd.grad((x.as_strided((3, 2), (1, 1)) ** 3).sum(), x, create_graph=True)
    (gg,) = t.autograd.grad(g.sum(), x)
    return g.detach(), gg


def _strided_saved(t):
    fn = _m(t).as_strided((2, 2), (1, 2), 1).grad_fn
    return (tuple(fn._saved_size), tuple(fn._saved_stride), fn._saved_storage_offset,
            _m(t).as_strided((2, 2), (1, 2)).grad_fn._saved_storage_offset)


AS_STRIDED = {
    "transposed_read": lambda t: _m(t).as_strided((2, 2), (1, 2)),
    "offset": lambda t: t.as_strided(_m(t), (2, 2), (4, 1), 5),
    "keywords": lambda t: _m(t).as_strided(size=[2, 2], stride=[1, 2], storage_offset=3),
    "of_a_view": lambda t: _m(t)[1:].as_strided((2, 2), (1, 2)),
    "of_a_transpose": lambda t: _m(t).t().as_strided((2, 2), (1, 2)),
    "zero_stride": lambda t: _m(t).as_strided((3,), (0,)),
    "empty": lambda t: _m(t).as_strided((0, 3), (1, 1), 12),
    "zero_dim": lambda t: t.tensor(5.0).as_strided((), ()),
    "zero_dim_expanded": lambda t: t.tensor(5.0).as_strided((2,), (0,)),
    "out_of_bounds": lambda t: _m(t).as_strided((4, 4), (4, 1)),
    "length_mismatch": lambda t: _m(t).as_strided((2, 2), (1,)),
    "negative_stride": lambda t: _m(t).as_strided((2, 2), (-1, 1)),
    "negative_size": lambda t: _m(t).as_strided((2, -1), (1, 1)),
    "negative_offset": lambda t: _m(t).as_strided((2, 2), (1, 2), -1),
    "grad": lambda t: _strided_grad(t, lambda x: x.as_strided((2, 2), (1, 2))),
    "grad_overlapping_of_view": lambda t: _strided_grad(
        t, lambda x: x[1:].as_strided((3, 3), (1, 1))),
    "grad_zero_stride": lambda t: _strided_grad(t, lambda x: x.as_strided((3,), (0,), 2)),
    "grad_outside_the_view": lambda t: _strided_grad(
        t, lambda x: x[1:, 1:].as_strided((2, 2), (4, 1))),
    "grad_of_transpose": lambda t: _strided_grad(
        t, lambda x: x.t().as_strided((2, 2), (1, 2), 7)),
    "in_place": _strided_in_place,
    "in_place_grad": _strided_in_place_grad,
    "double_backward": _strided_double_backward,
    "saved": _strided_saved,
}


@pytest.mark.parametrize("case", sorted(AS_STRIDED))
def test_as_strided(case):
    same_on_both(AS_STRIDED[case], _unfold_obs)


# ----- logical ops, isin, dtype shorthands, storage_offset -----------------------------------

def _ints(t):
    return t.tensor([0, 1, 2])


def _floats(t):
    return t.tensor([1.0, 0.0, 3.0])


LOGICAL = {
    "and": lambda t: t.logical_and(_ints(t), _floats(t)),
    "or_method": lambda t: _ints(t).logical_or(_floats(t)),
    "xor_broadcast": lambda t: t.logical_xor(_ints(t), t.tensor([[1], [0]])),
    "and_number": lambda t: t.logical_and(_ints(t), 1),
    "and_shapes": lambda t: t.logical_and(_ints(t), t.ones(2)),
    "and_requires_grad": lambda t: t.logical_and(t.tensor([1.0], requires_grad=True),
                                                 _floats(t)),
    "or_bool_0d": lambda t: t.logical_or(t.tensor([True, False]), t.tensor(0.5)),
    "masks": lambda t: (_ints(t) > 0).logical_and(_floats(t) < 2),
    "isin": lambda t: t.isin(_ints(t), t.tensor([1, 2])),
    "isin_number_test": lambda t: t.isin(_ints(t), 2),
    "isin_number_elements": lambda t: t.isin(2, _ints(t)),
    "isin_invert": lambda t: t.isin(_ints(t), t.tensor([1, 2]), invert=True),
    "isin_mixed_dtypes": lambda t: t.isin(_floats(t), _ints(t)),
    "isin_nan": lambda t: t.isin(t.tensor([float("nan")]), t.tensor([float("nan")])),
    "isin_2d": lambda t: t.isin(t.zeros(2, 2), t.tensor([0.0])),
    "byte": lambda t: _floats(t).byte(),
    "char": lambda t: _floats(t).char(),
    "short": lambda t: t.tensor([300.0, -1.5]).short(),
    "short_grad_fn": lambda t: t.tensor([1.5], requires_grad=True).short(),
    "storage_offset": lambda t: (_floats(t)[1:].storage_offset(), _floats(t).storage_offset(),
                                 t.arange(12.0).reshape(3, 4)[1:, 2:].storage_offset(),
                                 t.arange(6.0).reshape(2, 3).t()[1].storage_offset()),
}


@pytest.mark.parametrize("case", sorted(LOGICAL))
def test_logical_isin_shorthands(case):
    _same(LOGICAL[case])


# ----- F.unfold / F.fold, nn.Unfold / nn.Fold ------------------------------------------------

def _img(t, *shape):
    return t.arange(float(np.prod(shape))).reshape(*shape).requires_grad_()


def _weighted_grad(t, fn, x):
    y = fn(x)
    (y * t.arange(float(y.numel())).reshape(y.shape)).sum().backward()
    return x.grad


def _blocks_double_backward(t, fn, x):
    x = x.double().detach().requires_grad_()
    y = fn(t, x)
    g = t.arange(float(y.numel()), dtype=t.float64).reshape(y.shape).requires_grad_()
    (gx,) = t.autograd.grad(y, x, g, create_graph=True)
    (gg,) = t.autograd.grad((gx * gx).sum(), g)
    return gx.grad_fn.name(), gg


def _blocks_saved(y):
    fn = y.grad_fn
    return sorted((n, getattr(fn, n)) for n in dir(fn) if n.startswith("_saved_")
                  and n not in ("_saved_items", "_saved_lookup"))


def _unfold_f(t, x):
    return t.nn.functional.unfold(x, 2, padding=1)


def _fold_f(t, x):
    return t.nn.functional.fold(x, (3, 3), 2)


def _f(t):
    return t.nn.functional


BLOCKS = {
    "unfold": lambda t: _f(t).unfold(_img(t, 2, 3, 5, 6), (2, 3), padding=1, stride=(2, 1)),
    "unfold_3d": lambda t: _f(t).unfold(_img(t, 3, 5, 6), 2),
    "unfold_dilation": lambda t: _f(t).unfold(_img(t, 1, 2, 4, 4), 2, dilation=2),
    "unfold_mixed": lambda t: _f(t).unfold(_img(t, 1, 1, 4, 5), (3, 2), stride=2,
                                           padding=(1, 0)),
    "unfold_transposed": lambda t: _f(t).unfold(_img(t, 1, 1, 3, 3).transpose(2, 3), 2),
    "unfold_2d": lambda t: _f(t).unfold(_img(t, 5, 6), 2),
    "unfold_5d": lambda t: _f(t).unfold(_img(t, 2, 3, 4, 5, 6), 2),
    "unfold_too_big": lambda t: _f(t).unfold(_img(t, 2, 3, 5, 6), 7),
    "unfold_zero_stride": lambda t: _f(t).unfold(_img(t, 1, 1, 4, 4), 2, stride=0),
    "unfold_zero_dilation": lambda t: _f(t).unfold(_img(t, 1, 1, 4, 4), 2, dilation=0),
    "unfold_negative_padding": lambda t: _f(t).unfold(_img(t, 1, 1, 4, 4), 2, padding=-1),
    "unfold_zero_kernel": lambda t: _f(t).unfold(_img(t, 1, 1, 4, 4), 0),
    "fold": lambda t: _f(t).fold(_img(t, 2, 12, 20), (5, 6), 2),
    "fold_2d": lambda t: _f(t).fold(_img(t, 12, 20), (5, 6), 2),
    "fold_overlap_counts": lambda t: _f(t).fold(t.ones(1, 4, 4), (3, 3), 2),
    "fold_padding_stride": lambda t: _f(t).fold(_img(t, 2, 18, 18), (5, 6), (2, 3), padding=1,
                                                stride=(2, 1)),
    "fold_not_divisible": lambda t: _f(t).fold(_img(t, 2, 13, 20), (5, 6), 2),
    "fold_4d": lambda t: _f(t).fold(_img(t, 2, 3, 4, 20), (5, 6), 2),
    "fold_block_count": lambda t: _f(t).fold(_img(t, 2, 12, 7), (3, 4), 2),
    "unfold_grad": lambda t: _weighted_grad(
        t, lambda x: _f(t).unfold(x, (2, 3), padding=1, stride=(2, 1)), _img(t, 2, 3, 5, 6)),
    "fold_grad": lambda t: _weighted_grad(
        t, lambda x: _f(t).fold(x, (5, 6), (2, 3), padding=1, stride=(2, 1)),
        _img(t, 2, 18, 18)),
    "unfold_double_backward": lambda t: _blocks_double_backward(t, _unfold_f,
                                                                _img(t, 1, 2, 3, 3)),
    "fold_double_backward": lambda t: _blocks_double_backward(t, _fold_f, _img(t, 1, 8, 4)),
    "unfold_saved": lambda t: _blocks_saved(_f(t).unfold(_img(t, 2, 3, 5, 6), (2, 3), padding=1,
                                                         stride=(2, 1))),
    "fold_saved": lambda t: _blocks_saved(_f(t).fold(_img(t, 2, 18, 18), (5, 6), (2, 3),
                                                     padding=1, stride=(2, 1))),
    "module_reprs": lambda t: (repr(t.nn.Unfold(2)), repr(t.nn.Fold((5, 6), 2, padding=1))),
    "modules_round_trip": lambda t: t.nn.Fold((3, 3), 2)(t.nn.Unfold(2)(_img(t, 1, 1, 3, 3))),
}


@pytest.mark.parametrize("case", sorted(BLOCKS))
def test_unfold_fold_functional(case):
    _same(BLOCKS[case])


# ----- tril_indices / triu_indices ---------------------------------------------------------

TRIANGLES = {
    "tril": lambda t: t.tril_indices(3, 3),
    "triu_offset": lambda t: t.triu_indices(3, 4, 1),
    "tril_below": lambda t: t.tril_indices(4, 3, -1),
    "triu_everything": lambda t: t.triu_indices(3, 3, -5),
    "tril_everything": lambda t: t.tril_indices(3, 3, 10),
    "keywords": lambda t: t.tril_indices(row=2, col=5, offset=2),
    "empty": lambda t: t.tril_indices(0, 3),
    "int32": lambda t: t.tril_indices(3, 3, dtype=t.int32),
    "float": lambda t: t.tril_indices(3, 3, dtype=t.float32),
    "cpu": lambda t: t.triu_indices(3, 3, device="cpu"),
    "negative_row": lambda t: t.tril_indices(-1, 3),
    "negative_col": lambda t: t.tril_indices(3, -2),
    "float_row": lambda t: t.triu_indices(3.0, 3),
    "pairs": lambda t: (lambda m, i: m[i[0], i[1]])(t.arange(16.0).reshape(4, 4),
                                                    t.triu_indices(4, 4, 1)),
}


@pytest.mark.parametrize("case", sorted(TRIANGLES))
def test_triangle_indices(case):
    _same(TRIANGLES[case])
