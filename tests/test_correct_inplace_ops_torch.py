"""fill_diagonal_, masked_scatter(_) and index_copy(_) against torch 2.13: each case runs on both
and gives the same values, dtype, `_version`, grad_fn name, next_functions and saved names, or
the same error type and first line; their gradients pass first and second order finite
differences in float64 (index_copy's row is also in tests/rows_reduce.py)."""

import warnings

import numpy as np
import pytest

import gradviz

torch = pytest.importorskip("torch")

_F64 = "float64"


def _saved(module, fn):
    # gradviz's saved values are properties of the node's class (its other `_saved_`
    # attributes are its own bookkeeping)
    return sorted(a for a in dir(fn) if a.startswith("_saved_") and (
        module is torch or isinstance(getattr(type(fn), a, None), property)))


def _plain(module, r):
    if isinstance(r, (tuple, list)):
        return [_plain(module, x) for x in r]
    if not isinstance(r, module.Tensor):
        return r
    fn = r.grad_fn
    nexts = [] if fn is None else [(None if n is None else n.name(), k)
                                   for n, k in fn.next_functions]
    return (r.tolist(), str(r.dtype), r._version, r.stride(), fn and fn.name(), nexts,
            fn and _saved(module, fn))


def _outcome(module, case):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # torch's deprecation of uint8 masks
            return _plain(module, case(module))
    except Exception as exc:  # noqa: BLE001 - the error is the observable
        # (gradviz's AttributeError may add close names: "Did you mean: ...")
        return type(exc).__name__, str(exc).split("\n")[0].split(". Did you mean")[0]


def _grad_x(m):
    return m.arange(12, dtype=m.float64).reshape(4, 3).requires_grad_()


def _base_after(edit):
    """The base tensor after `edit` changed a view of it."""
    def run(m):
        b = m.zeros(4, 3)
        edit(m, b)
        return b
    return run


FILL_DIAGONAL = {
    "basic": lambda m: (_grad_x(m) * 1).fill_diagonal_(-1.0),
    "wrap_tall": lambda m: (m.arange(21.).reshape(7, 3).requires_grad_() * 1).fill_diagonal_(
        -1.0, wrap=True),
    "wrap_4x3": lambda m: m.zeros(4, 3).fill_diagonal_(1, wrap=True),
    "wrap_5x3": lambda m: m.zeros(5, 3).fill_diagonal_(1, wrap=True),
    "wrap_wide": lambda m: m.zeros(3, 7).fill_diagonal_(1, wrap=True),
    "no_wrap": lambda m: m.zeros(7, 3).fill_diagonal_(1, False),
    "cube": lambda m: m.zeros(3, 3, 3).fill_diagonal_(2),
    "unequal_cube": lambda m: m.zeros(3, 4, 4).fill_diagonal_(1),
    "one_dim": lambda m: m.zeros(3).fill_diagonal_(1),
    "zero_dim": lambda m: m.tensor(3.).fill_diagonal_(1),
    "int_from_float": lambda m: m.zeros(3, 3, dtype=m.int64).fill_diagonal_(1.5),
    "int8_overflow": lambda m: m.zeros(3, 3, dtype=m.int8).fill_diagonal_(300),
    "nan_into_int": lambda m: m.zeros(3, 3, dtype=m.int64).fill_diagonal_(float("nan")),
    "half_overflow": lambda m: m.zeros(3, 3, dtype=m.float16).fill_diagonal_(1e6),
    "bool": lambda m: m.zeros(3, 3, dtype=m.bool).fill_diagonal_(2),
    "bool_value": lambda m: m.zeros(3, 3).fill_diagonal_(True),
    "zero_dim_tensor_value": lambda m: m.zeros(3, 3, dtype=m.int64).fill_diagonal_(
        m.tensor(1.5, dtype=m.float64)),
    "tensor_value": lambda m: m.zeros(3, 3).fill_diagonal_(m.tensor([1.0])),
    "grad_tensor_value": lambda m: m.zeros(3, 3).fill_diagonal_(
        m.tensor(1.0, requires_grad=True)),
    "str_value": lambda m: m.zeros(3, 3).fill_diagonal_("a"),
    "array_value": lambda m: m.zeros(3, 3).fill_diagonal_(np.array(2.5)),
    "transposed": lambda m: m.arange(9.).reshape(3, 3).t().fill_diagonal_(-2),
    "transposed_wrap": lambda m: m.zeros(3, 7).t().fill_diagonal_(2, wrap=True),
    "strided": lambda m: m.zeros(3, 6)[:, ::2].fill_diagonal_(2),
    "rows_view_base": _base_after(lambda m, b: b[1:].fill_diagonal_(2)),
    "rows_view_wrap_base": lambda m: _base_after(
        lambda m, b: b.view(6, 2)[1:].fill_diagonal_(2, wrap=True))(m),
    "empty": lambda m: m.zeros(0, 3).fill_diagonal_(2),
    "empty_wrap": lambda m: m.zeros(5, 0).fill_diagonal_(2, wrap=True),
    "leaf": lambda m: m.zeros(3, 3).requires_grad_().fill_diagonal_(2),
    "view_of_a_result": lambda m: (lambda y: [y[1:].fill_diagonal_(2), y])(_grad_x(m) * 1),
    "expanded": lambda m: m.zeros(1, 3).expand(3, 3).fill_diagonal_(2),
    "keywords": lambda m: m.zeros(3, 2).fill_diagonal_(fill_value=2, wrap=True),
    "top_level": lambda m: m.fill_diagonal_,
}

B = "bool"


def _mask(m, rows, cols, dtype=B):
    return m.ones(rows, cols, dtype=getattr(m, dtype))


MASKED_SCATTER = {
    "in_place": lambda m: (_grad_x(m) * 1).masked_scatter_(
        m.arange(12).reshape(4, 3) > 3, m.arange(12., dtype=m.float64).requires_grad_() * -1),
    "out_of_place": lambda m: _grad_x(m).masked_scatter(
        m.arange(12).reshape(4, 3) % 2 == 0, m.arange(9., dtype=m.float64).requires_grad_()),
    "top_level": lambda m: m.masked_scatter(m.zeros(2, 3), _mask(m, 2, 3), m.arange(6.)),
    "top_level_keywords": lambda m: m.masked_scatter(m.zeros(2, 3), mask=_mask(m, 2, 3),
                                                    source=m.ones(6)),
    "keywords": lambda m: m.zeros(2, 3).masked_scatter(mask=_mask(m, 2, 3), source=m.ones(6)),
    "uint8_mask": lambda m: m.zeros(2, 3).masked_scatter(_mask(m, 2, 3, "uint8"), m.ones(6)),
    "float_mask": lambda m: m.zeros(2, 3).masked_scatter(_mask(m, 2, 3, "float32"), m.ones(6)),
    "float_mask_in_place": lambda m: m.zeros(2, 3).masked_scatter_(_mask(m, 2, 3, "float32"),
                                                                   m.ones(6)),
    "source_dtype": lambda m: m.zeros(2, 3).masked_scatter(_mask(m, 2, 3), m.ones(6).double()),
    "source_dtype_before_shape": lambda m: m.zeros(2, 3).masked_scatter_(
        _mask(m, 2, 2), m.ones(6).double()),
    "shape_before_mask_dtype": lambda m: m.zeros(2, 3).masked_scatter_(
        _mask(m, 2, 2, "float32"), m.ones(6)),
    "broadcast_before_source_dtype": lambda m: m.zeros(3, 3).masked_scatter(
        _mask(m, 2, 3, "float32"), m.ones(6).double()),
    "source_too_small": lambda m: m.zeros(2, 3).masked_scatter(_mask(m, 2, 3), m.ones(5)),
    "source_too_small_in_place": lambda m: m.zeros(2, 3).masked_scatter_(_mask(m, 2, 3),
                                                                         m.ones(5)),
    "source_larger": lambda m: m.zeros(2, 3).masked_scatter(
        _mask(m, 2, 3), m.arange(8.).reshape(2, 4)),
    "broadcast_mask": lambda m: m.zeros(2, 3).masked_scatter(m.tensor([True, False, True]),
                                                             m.arange(8.)),
    "broadcast_self": lambda m: m.zeros(3).masked_scatter(_mask(m, 2, 3), m.arange(8.)),
    "broadcast_self_in_place": lambda m: m.zeros(3).masked_scatter_(_mask(m, 2, 3),
                                                                    m.arange(8.)),
    "no_broadcast": lambda m: m.zeros(2, 3).masked_scatter(_mask(m, 2, 2), m.arange(8.)),
    "no_broadcast_in_place": lambda m: m.zeros(2, 3).masked_scatter_(_mask(m, 2, 2),
                                                                     m.arange(8.)),
    "source_number": lambda m: m.zeros(2, 3).masked_scatter(_mask(m, 2, 3), 1.0),
    "mask_list": lambda m: m.zeros(2, 3).masked_scatter([True] * 3, m.ones(6)),
    "int": lambda m: m.zeros(3, dtype=m.int64).masked_scatter(m.tensor([True, False, True]),
                                                              m.tensor([5, 6])),
    "bool": lambda m: m.zeros(3, dtype=m.bool).masked_scatter(m.tensor([True, False, True]),
                                                              m.tensor([True, True])),
    "zero_dim": lambda m: m.tensor(1.).masked_scatter(m.tensor(True), m.tensor([5., 6.])),
    "zero_dim_source": lambda m: m.zeros(2).masked_scatter(m.tensor([True, False]),
                                                           m.tensor(5.)),
    "empty": lambda m: m.zeros(0, 3).masked_scatter(_mask(m, 0, 3), m.ones(0)),
    "transposed_source": lambda m: m.zeros(2, 3).masked_scatter(
        _mask(m, 2, 3), m.arange(6.).reshape(2, 3).t()),
    "transposed_self_gives_contiguous": lambda m: m.zeros(3, 2).t().masked_scatter(
        _mask(m, 2, 3), m.arange(8.)),
    "leaf": lambda m: m.zeros(3, requires_grad=True).masked_scatter_(
        m.tensor([True, False, True]), m.ones(3)),
    "overlapping": lambda m: m.zeros(3).expand(2, 3).masked_scatter_(_mask(m, 2, 3),
                                                                     m.arange(8.)),
    "nothing_masked_bumps_version": lambda m: m.zeros(2, 3).masked_scatter_(
        m.zeros(2, 3, dtype=m.bool), m.arange(8.)),
    "out": lambda m: m.masked_scatter(m.zeros(2), _mask(m, 1, 2), m.ones(2), out=m.zeros(2)),
    "through_a_view": lambda m: (lambda y: [y[1:].masked_scatter_(
        m.tensor([True, False, True]), m.ones(6, requires_grad=True)), y])(_grad_x(m) * 1),
    "top_level_in_place": lambda m: m.masked_scatter_,
}


def _idx(m, *i):
    return m.tensor(list(i))


INDEX_COPY = {
    "in_place": lambda m: (_grad_x(m) * 1).index_copy_(
        0, _idx(m, 2, 0), m.ones(2, 3, dtype=m.float64, requires_grad=True) * 2),
    "out_of_place": lambda m: _grad_x(m).index_copy(
        1, _idx(m, 2, 0), m.ones(4, 2, dtype=m.float64, requires_grad=True)),
    "top_level": lambda m: m.index_copy(m.zeros(3, 3), 0, _idx(m, 2, 0), m.ones(2, 3)),
    "top_level_out": lambda m: (lambda o: [m.index_copy(m.zeros(3, 3), 0, _idx(m, 1),
                                                        m.ones(1, 3), out=o), o])(m.zeros(3, 3)),
    "keywords": lambda m: m.zeros(3, 3).index_copy(dim=0, index=_idx(m, 1), source=m.ones(1, 3)),
    "int32_index": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, 2, 0).int(), m.ones(2, 3)),
    "float_index": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, 2, 0).float(), m.ones(2, 3)),
    "source_dtype": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, 2, 0), m.ones(2, 3).double()),
    "count": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, 0), m.ones(2, 3)),
    "out_of_bounds": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, 5, 0), m.ones(2, 3)),
    "negative_index": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, -1, 0), m.ones(2, 3)),
    "matrix_index": lambda m: m.zeros(3, 3).index_copy(0, m.tensor([[2, 0]]), m.ones(2, 3)),
    "dim_out_of_range": lambda m: m.zeros(3, 3).index_copy(2, _idx(m, 2, 0), m.ones(2, 3)),
    "negative_dim": lambda m: m.zeros(3, 3).index_copy(-1, _idx(m, 2, 0), m.ones(3, 2)),
    "slice_shapes": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, 2, 0), m.ones(2, 4)),
    "slice_shapes_3d": lambda m: m.zeros(3, 3, 3).index_copy(1, _idx(m, 0, 1),
                                                             m.ones(2, 3, 4)),
    "broadcast_refused": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, 2, 0), m.ones(2, 1)),
    "source_dims": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, 2, 0), m.ones(2, 3, 1)),
    "flat_source": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, 2, 0), m.ones(6)),
    "scalar_source": lambda m: m.zeros(3).index_copy(0, _idx(m, 1), m.tensor(5.)),
    "scalar_source_two_indices": lambda m: m.zeros(3).index_copy(0, _idx(m, 0, 1),
                                                                 m.tensor(1.)),
    "scalar_self": lambda m: m.tensor(1.).index_copy(0, _idx(m, 0), m.tensor(5.)),
    "scalar_self_out_of_bounds": lambda m: m.tensor(1.).index_copy(0, _idx(m, 1), m.ones(1)),
    "scalar_index": lambda m: m.zeros(3).index_copy(0, m.tensor(1), m.tensor(5.)),
    "repeated_index": lambda m: m.zeros(3).index_copy(0, _idx(m, 1, 1), m.tensor([5., 6.])),
    "empty_index": lambda m: m.zeros(3, 2).index_copy(0, m.tensor([], dtype=m.int64),
                                                      m.ones(0, 2)),
    "int": lambda m: m.zeros(3, dtype=m.int64).index_copy(0, _idx(m, 1), m.tensor([5])),
    "index_list": lambda m: m.zeros(3, 3).index_copy(0, [2, 0], m.ones(2, 3)),
    "source_number": lambda m: m.zeros(3, 3).index_copy(0, _idx(m, 2, 0), 1.0),
    "leaf": lambda m: m.zeros(3, requires_grad=True).index_copy_(0, _idx(m, 1), m.ones(1)),
    "returns_self": lambda m: (lambda y: [y.index_copy_(0, _idx(m, 1), m.ones(1)) is y, y])(
        m.zeros(3)),
    "through_a_view": lambda m: (lambda y: [y[1:].index_copy_(
        0, _idx(m, 1), m.ones(1, 3, dtype=m.float64)), y])(_grad_x(m) * 1),
    "top_level_in_place": lambda m: m.index_copy_,
}


def _same(case):
    assert _outcome(gradviz, case) == _outcome(torch, case)


@pytest.mark.parametrize("name", sorted(FILL_DIAGONAL))
def test_fill_diagonal_(name):
    _same(FILL_DIAGONAL[name])


@pytest.mark.parametrize("name", sorted(MASKED_SCATTER))
def test_masked_scatter(name):
    _same(MASKED_SCATTER[name])


@pytest.mark.parametrize("name", sorted(INDEX_COPY))
def test_index_copy(name):
    _same(INDEX_COPY[name])


# ----- gradients: against torch's, and against finite differences in float64 ----------------

def _mask23(m):
    return m.tensor([[True, False, True], [False, True, True]])


GRADIENTS = {
    "fill_diagonal_": (lambda m, x: (x * 1).fill_diagonal_(2.0), ([[0.3, -1.2], [1.1, 0.4],
                                                                   [2.0, -0.5]],)),
    "fill_diagonal_wrap": (lambda m, x: (x * 1).fill_diagonal_(2.0, wrap=True),
                           (np.linspace(-1, 1, 10).reshape(5, 2).tolist(),)),
    "fill_diagonal_view": (lambda m, x: (lambda y: [y[1:].fill_diagonal_(-1.0), y][1])(x * 2),
                           (np.linspace(-1, 1, 9).reshape(3, 3).tolist(),)),
    "masked_scatter": (lambda m, x, s: x.masked_scatter(_mask23(m), s),
                       ([[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]], [0.5, -0.7, 0.9, 1.3, 2.2])),
    "masked_scatter_broadcast": (lambda m, x, s: x.masked_scatter(_mask23(m), s),
                                 ([0.3, -1.2, 2.1], [[0.5, -0.7], [0.9, 1.3]])),
    "masked_scatter_": (lambda m, x, s: (x * 1).masked_scatter_(_mask23(m), s * s),
                        ([[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]], [0.5, -0.7, 0.9, 1.3])),
    "index_copy": (lambda m, x, s: x.index_copy(0, m.tensor([2, 0]), s),
                   ([[0.3, -1.2], [1.1, 0.4], [2.0, -0.5]], [[0.5, -0.7], [0.9, 1.3]])),
    "index_copy_scalar_source": (lambda m, x, s: x.index_copy(0, m.tensor([1]), s),
                                 ([0.3, -1.2, 2.1], 0.7)),
    "index_copy_": (lambda m, x, s: (x * 1).index_copy_(1, m.tensor([0]), s.exp()),
                    ([[0.3, -1.2], [1.1, 0.4]], [[0.5], [-0.7]])),
}


def _grads(m, name):
    """The output as plain data, and the inputs' gradients' values (a gradient's own
    `_version` is how the engine built it, not part of the comparison)."""
    fn, data = GRADIENTS[name]
    xs = [m.tensor(d, dtype=m.float64, requires_grad=True) for d in data]
    out = fn(m, *xs)
    weight = m.arange(1, out.numel() + 1, dtype=m.float64).reshape(out.shape)
    grads = m.autograd.grad((out * weight).sum(), xs)
    return [_plain(m, out)] + [(g.tolist(), str(g.dtype)) for g in grads]


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_are_torchs(name):
    assert _grads(gradviz, name) == _grads(torch, name)


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_finite_differences(name):
    fn, data = GRADIENTS[name]
    xs = tuple(gradviz.tensor(d, dtype=gradviz.float64, requires_grad=True) for d in data)
    f = lambda *inputs: fn(gradviz, *inputs)      # noqa: E731
    assert gradviz.autograd.gradcheck(f, xs)
    assert gradviz.autograd.gradgradcheck(f, xs)
