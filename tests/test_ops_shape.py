"""Differential checks of the shape and linear-algebra ops against torch 2.13, for what the row
examples (tests/rows_shape.py) cannot show: ops torch composes from others (their graphs),
views and copies (`_base`, `_version` shared through in-place edits), keyword and method
forms, edge shapes (0-d, empty, negative dims), dtypes, and the first sentence of each error.

Each case is a function of the backend module, run on both.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

try:
    from . import diffcases as D
    from .test_torch_diff import compare
except ImportError:
    import diffcases as D
    from test_torch_diff import compare

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def observe(t):
    """The autograd-visible state of a tensor, or of each item of a list/tuple."""
    if isinstance(t, (list, tuple)):
        return [observe(x) for x in t]
    if not hasattr(t, "grad_fn"):
        return t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = t.grad
    return {"value": D.val(t), "requires_grad": t.requires_grad, "is_leaf": t.is_leaf,
            "graph": D.graph(t.grad_fn), "version": t._version, "is_view": t._base is not None,
            "grad": D.gval(g)}


def run(fn, backend):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return observe(fn(backend))
    except Exception as exc:  # noqa: BLE001 - the error is the observable
        return D.Err(exc)


def check(fn):
    problems = compare(run(fn, torch), run(fn, gradviz))
    assert not problems, "\n".join(problems)


def leaf(t, *shape, dtype=None):
    n = int(np.prod(shape)) if shape else 1
    x = (t.arange(n, dtype=dtype or t.float64) * 0.37 - 1.1).reshape(shape)
    return x.detach().requires_grad_()


def backprop(t, out, *inputs):
    """out's values and graph, then the gradients of a weighted sum of out."""
    outs = out if isinstance(out, (list, tuple)) else [out]
    total = 0
    for o in outs:
        if o.requires_grad:
            w = (t.arange(o.numel(), dtype=o.dtype) * 0.5 + 1).reshape(o.shape)
            total = total + (o * w).sum()
    if not isinstance(total, int):
        total.backward()
    return [*outs, *inputs]


# ----- Forms and graphs of every op --------------------------------------------------------

OPS = {
    # triangles, diagonals, trace
    "tril_method": lambda t: (lambda x: backprop(t, x.tril(), x))(leaf(t, 3, 4)),
    "tril_batch": lambda t: (lambda x: backprop(t, t.tril(x, diagonal=-1), x))(leaf(t, 2, 3, 3)),
    "triu_wide": lambda t: (lambda x: backprop(t, t.triu(x, 2), x))(leaf(t, 3, 5)),
    "tril_int": lambda t: t.tril(t.arange(9).reshape(3, 3)),
    "diagonal_kw": lambda t: (lambda x: backprop(t, t.diagonal(x, offset=-1, dim1=1, dim2=0),
                                                 x))(leaf(t, 3, 4)),
    "diagonal_batch": lambda t: (lambda x: backprop(t, x.diagonal(0, -2, -1), x))(
        leaf(t, 2, 3, 3)),
    "diagonal_3d_middle": lambda t: (lambda x: backprop(t, x.diagonal(1, 0, 2), x))(
        leaf(t, 3, 2, 4)),
    "diagonal_offset_too_big": lambda t: (lambda x: backprop(t, x.diagonal(7), x))(
        leaf(t, 3, 4)),
    "diag_vector_neg": lambda t: (lambda x: backprop(t, t.diag(x, -2), x))(leaf(t, 3)),
    "diag_matrix": lambda t: (lambda x: backprop(t, x.diag(), x))(leaf(t, 3, 4)),
    "trace_int": lambda t: t.arange(9, dtype=t.int32).reshape(3, 3).trace(),
    "trace_wide": lambda t: (lambda x: backprop(t, t.trace(x), x))(leaf(t, 2, 4)),
    # flips and rolls
    "flip_list": lambda t: (lambda x: backprop(t, t.flip(x, [0, -1]), x))(leaf(t, 2, 3)),
    "flip_kw": lambda t: (lambda x: backprop(t, t.flip(x, dims=(1,)), x))(leaf(t, 2, 3)),
    "flip_0d": lambda t: (lambda x: backprop(t, x.flip(0), x))(leaf(t)),
    "fliplr": lambda t: (lambda x: backprop(t, x.fliplr(), x))(leaf(t, 2, 3)),
    "flipud": lambda t: (lambda x: backprop(t, t.flipud(x), x))(leaf(t, 2, 3)),
    "roll_flat": lambda t: (lambda x: backprop(t, x.roll(4), x))(leaf(t, 2, 3)),
    "roll_dim_kw": lambda t: (lambda x: backprop(t, t.roll(x, shifts=-1, dims=1), x))(
        leaf(t, 2, 3)),
    "roll_big_shift": lambda t: (lambda x: backprop(t, x.roll(7, 0), x))(leaf(t, 3, 2)),
    # repeats
    "repeat_tuple": lambda t: (lambda x: backprop(t, x.repeat((2, 3)), x))(leaf(t, 3)),
    "repeat_0d": lambda t: (lambda x: backprop(t, x.repeat(2, 2), x))(leaf(t)),
    "repeat_zero": lambda t: (lambda x: backprop(t, x.repeat(0, 2), x))(leaf(t, 2)),
    # the gradient's own graph (create_graph, grad_outputs that require grad): torch's
    # repeat_backward sums new leading dims one by one; a repeat of 0 gives plain zeros
    "repeat_grad_graph": lambda t: (lambda x: t.autograd.grad(
        x.repeat(3, 1, 2), x, leaf(t, 3, 2, 6), create_graph=True))(leaf(t, 2, 3)),
    "repeat_zero_grad_graph": lambda t: (lambda x: t.autograd.grad(
        x.repeat(2, 0), x, leaf(t, 2, 0), create_graph=True))(leaf(t, 2)),
    "tile_short": lambda t: (lambda x: backprop(t, t.tile(x, (2,)), x))(leaf(t, 2, 3)),
    "tile_long": lambda t: (lambda x: backprop(t, x.tile(2, 1, 1), x))(leaf(t, 2, 3)),
    "repeat_interleave_dim": lambda t: (lambda x: backprop(
        t, x.repeat_interleave(2, dim=1), x))(leaf(t, 2, 3)),
    "repeat_interleave_flat": lambda t: (lambda x: backprop(
        t, t.repeat_interleave(x, 3), x))(leaf(t, 2, 2)),
    # splits: views of the input, one node for every piece
    "split_int": lambda t: (lambda x: backprop(t, x.split(2), x))(leaf(t, 5, 2)),
    "split_list_dim": lambda t: (lambda x: backprop(t, t.split(x, [1, 0, 2], dim=-1), x))(
        leaf(t, 2, 3)),
    "split_one_piece_used": lambda t: (lambda x: backprop(t, [x.split(2)[1]], x))(leaf(t, 5)),
    "chunk": lambda t: (lambda x: backprop(t, x.chunk(3, 1), x))(leaf(t, 2, 5)),
    "chunk_more_than_size": lambda t: (lambda x: backprop(t, t.chunk(x, 5), x))(leaf(t, 3)),
    "tensor_split_sections": lambda t: (lambda x: backprop(t, x.tensor_split(3), x))(
        leaf(t, 7)),
    "tensor_split_indices": lambda t: (lambda x: backprop(
        t, t.tensor_split(x, [1, 4], dim=1), x))(leaf(t, 2, 5)),
    # moved dims, unflatten, broadcasting
    "movedim_tuple": lambda t: (lambda x: backprop(t, x.movedim((0, 1), (2, 0)), x))(
        leaf(t, 2, 3, 4)),
    "moveaxis": lambda t: (lambda x: backprop(t, t.moveaxis(x, -1, 0), x))(leaf(t, 2, 3, 4)),
    "swapaxes": lambda t: (lambda x: backprop(t, x.swapaxes(0, 2), x))(leaf(t, 2, 3, 4)),
    "swapdims": lambda t: (lambda x: backprop(t, t.swapdims(x, -1, 0), x))(leaf(t, 2, 3)),
    "adjoint": lambda t: (lambda x: backprop(t, x.adjoint(), x))(leaf(t, 2, 3)),
    "unflatten": lambda t: (lambda x: backprop(t, x.unflatten(1, (2, -1)), x))(leaf(t, 3, 4)),
    "unflatten_torch": lambda t: (lambda x: backprop(t, t.unflatten(x, -1, (2, 2)), x))(
        leaf(t, 4)),
    "broadcast_to": lambda t: (lambda x: backprop(t, x.broadcast_to((2, 3)), x))(leaf(t, 3)),
    "broadcast_tensors": lambda t: (lambda x, y: backprop(t, t.broadcast_tensors(x, y), x, y))(
        leaf(t, 3), leaf(t, 2, 1)),
    "broadcast_tensors_same": lambda t: (lambda x, y: backprop(
        t, list(t.broadcast_tensors(x, y)), x, y))(leaf(t, 2, 3), leaf(t, 3)),
    "broadcast_shapes": lambda t: list(t.broadcast_shapes((3,), (2, 1), 1)),
    "meshgrid_ij": lambda t: (lambda x, y: backprop(t, t.meshgrid(x, y, indexing="ij"), x, y))(
        leaf(t, 2), leaf(t, 3)),
    "meshgrid_xy_list": lambda t: (lambda x, y, z: backprop(
        t, t.meshgrid([x, y, z], indexing="xy"), x, y, z))(leaf(t, 2), leaf(t, 3), leaf(t, 4)),
    "meshgrid_default": lambda t: (lambda x, y: backprop(t, t.meshgrid(x, y), x, y))(
        leaf(t, 2), leaf(t, 3)),
    # stacks
    "hstack_1d": lambda t: (lambda x, y: backprop(t, t.hstack([x, y]), x, y))(leaf(t, 2),
                                                                              leaf(t, 3)),
    "hstack_2d": lambda t: (lambda x, y: backprop(t, t.hstack((x, y)), x, y))(leaf(t, 2, 1),
                                                                              leaf(t, 2, 3)),
    "hstack_0d": lambda t: (lambda x, y: backprop(t, t.hstack([x, y]), x, y))(leaf(t),
                                                                              leaf(t, 3)),
    "vstack": lambda t: (lambda x, y: backprop(t, t.vstack([x, y]), x, y))(leaf(t, 3),
                                                                           leaf(t, 2, 3)),
    "row_stack": lambda t: (lambda x, y: backprop(t, t.row_stack([x, y]), x, y))(leaf(t, 3),
                                                                                 leaf(t, 3)),
    "dstack": lambda t: (lambda x, y: backprop(t, t.dstack([x, y]), x, y))(leaf(t, 2, 3),
                                                                           leaf(t, 3)),
    "column_stack": lambda t: (lambda x, y, z: backprop(t, t.column_stack([x, y, z]), x, y, z))(
        leaf(t, 3), leaf(t, 3, 2), leaf(t)),
    "atleast": lambda t: [t.atleast_1d(t.tensor(1.0)), t.atleast_2d(t.ones(3)),
                          t.atleast_3d(t.ones(2, 3))],
    # differences
    "diff": lambda t: (lambda x: backprop(t, x.diff(), x))(leaf(t, 2, 4)),
    "diff_n_dim": lambda t: (lambda x: backprop(t, t.diff(x, n=2, dim=0), x))(leaf(t, 4, 2)),
    "diff_prepend_append": lambda t: (lambda x, p: backprop(
        t, x.diff(prepend=p, append=t.zeros(2, 1, dtype=t.float64)), x, p))(
        leaf(t, 2, 3), leaf(t, 2, 2)),
    "diff_n_too_big": lambda t: (lambda x: backprop(t, x.diff(n=5), x))(leaf(t, 3)),
    "diff_bool": lambda t: t.diff(t.tensor([True, False, False, True])),
    "diff_int": lambda t: t.tensor([1, 4, 9, 16]).diff(),
    # linear algebra composed from other ops
    "kron": lambda t: (lambda x, y: backprop(t, t.kron(x, y), x, y))(leaf(t, 2, 3),
                                                                     leaf(t, 2, 2)),
    "kron_ranks": lambda t: (lambda x, y: backprop(t, x.kron(y), x, y))(leaf(t, 3),
                                                                        leaf(t, 2, 2)),
    "outer_ger": lambda t: (lambda x, y: backprop(t, [t.ger(x, y), x.outer(y)], x, y))(
        leaf(t, 3), leaf(t, 2)),
    "tensordot_int": lambda t: (lambda x, y: backprop(t, t.tensordot(x, y, dims=1), x, y))(
        leaf(t, 2, 3), leaf(t, 3, 4)),
    "tensordot_lists": lambda t: (lambda x, y: backprop(
        t, t.tensordot(x, y, dims=([1, 0], [0, 2])), x, y))(leaf(t, 3, 2, 4), leaf(t, 2, 5, 3)),
    "tensordot_zero": lambda t: (lambda x, y: backprop(t, t.tensordot(x, y, 0), x, y))(
        leaf(t, 2), leaf(t, 3)),
    "tensordot_full": lambda t: (lambda x, y: backprop(t, t.tensordot(x, y), x, y))(
        leaf(t, 2, 3), leaf(t, 2, 3)),
    "tensordot_full_transposed": lambda t: (lambda x, y: backprop(
        t, t.tensordot(x, y, dims=([0, 1], [1, 0])), x, y))(leaf(t, 3, 3), leaf(t, 3, 3)),
    "tensordot_vectors": lambda t: (lambda x, y: backprop(t, t.tensordot(x, y, 1), x, y))(
        leaf(t, 3), leaf(t, 3)),
    # linear algebra with its own nodes: keyword, method and broadcast forms
    "baddbmm_method_broadcast": lambda t: (lambda b, x, y: backprop(
        t, b.baddbmm(x, y), b, x, y))(leaf(t, 1, 4), leaf(t, 2, 3, 2), leaf(t, 2, 2, 4)),
    "baddbmm_beta_zero_ignores_nan": lambda t: (lambda x, y: backprop(
        t, t.baddbmm(t.full((2, 3, 4), float("nan"), dtype=t.float64), x, y, beta=0), x, y))(
        leaf(t, 2, 3, 2), leaf(t, 2, 2, 4)),
    "addbmm_method": lambda t: (lambda b, x, y: backprop(t, b.addbmm(x, y, beta=2), b, x, y))(
        leaf(t, 3, 4), leaf(t, 2, 3, 2), leaf(t, 2, 2, 4)),
    "addmv_method": lambda t: (lambda b, m, v: backprop(t, b.addmv(m, v, alpha=3), b, m, v))(
        leaf(t, 1), leaf(t, 2, 3), leaf(t, 3)),
    "cross_dim": lambda t: (lambda x, y: backprop(t, t.cross(x, y, dim=0), x, y))(
        leaf(t, 3, 2), leaf(t, 3, 2)),
    "cross_default_dim": lambda t: (lambda x, y: backprop(t, x.cross(y), x, y))(
        leaf(t, 2, 3), leaf(t, 2, 3)),
    "cdist_p1": lambda t: (lambda x, y: backprop(t, t.cdist(x, y, p=1), x, y))(
        leaf(t, 3, 2), leaf(t, 2, 2)),
    "cdist_p3_batch": lambda t: (lambda x, y: backprop(t, t.cdist(x, y, p=3), x, y))(
        leaf(t, 2, 3, 2), leaf(t, 2, 4, 2)),
    "cdist_p0": lambda t: (lambda x, y: backprop(t, t.cdist(x, y, p=0), x, y))(
        leaf(t, 3, 2), leaf(t, 2, 2)),
    "cdist_p_half": lambda t: (lambda x, y: backprop(t, t.cdist(x, y, p=0.5), x, y))(
        leaf(t, 3, 2), leaf(t, 2, 2) + 0.1),
    "cdist_inf": lambda t: (lambda x, y: backprop(t, t.cdist(x, y, p=float("inf")), x, y))(
        leaf(t, 3, 2), leaf(t, 2, 2)),
    "cdist_many_rows": lambda t: (lambda x, y: backprop(t, t.cdist(x, y), x, y))(
        leaf(t, 30, 3), leaf(t, 4, 3)),
    # float32 over many rows: torch's matrix-product formula; the gradient of a plain sum
    # (weighted sums cancel enough for BLAS summation order to show in float32).
    "cdist_many_rows_float32": lambda t: (lambda x, y: (lambda d: [d, d.sum().backward(), x, y])(
        t.cdist(x, y)))(leaf(t, 27, 3, dtype=t.float32), leaf(t, 26, 3, dtype=t.float32)),
    "cdist_batch_broadcast": lambda t: (lambda x, y: backprop(t, t.cdist(x, y), x, y))(
        leaf(t, 2, 3, 2), leaf(t, 4, 2)),
    "cdist_no_mm": lambda t: (lambda x, y: backprop(
        t, t.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist"), x, y))(
        leaf(t, 30, 3), leaf(t, 4, 3)),
    "cdist_same_point": lambda t: (lambda x: backprop(t, t.cdist(x, x), x))(leaf(t, 3, 2)),
    "inverse_method_batch": lambda t: (lambda a: backprop(t, (a + 3 * t.eye(3, dtype=t.float64))
                                                          .inverse(), a))(leaf(t, 2, 3, 3)),
    "det_method_batch": lambda t: (lambda a: backprop(t, (a + t.eye(3, dtype=t.float64)).det(),
                                                      a))(leaf(t, 2, 3, 3)),
    "keyword_forms": lambda t: (lambda x: backprop(
        t, [*x.split(split_size=2), *t.split(x, split_size_or_sections=[1, 3]),
            x.swapdims(dim0=0, dim1=1), t.swapaxes(x, axis0=1, axis1=0),
            x.movedim(source=0, destination=1), x.tile(dims=(2,)), x.repeat(repeats=(2, 1)),
            x.roll(shifts=1, dims=0)], x))(leaf(t, 4, 3)),
    "cdist_bad_mode": lambda t: t.cdist(t.ones(2, 2), t.ones(2, 2), compute_mode="foo"),
    "tril_inplace": lambda t: (lambda x: backprop(t, (x * 1).tril_(1), x))(leaf(t, 3, 4)),
    "triu_inplace_view": lambda t: (lambda x: (lambda y: [y[1:].triu_(), *backprop(t, y, x)])(
        x * 1))(leaf(t, 3, 4)),
    "rot90": lambda t: (lambda x: backprop(t, [t.rot90(x, k, [0, 2]) for k in (0, 1, 2, 3, 5)],
                                           x))(leaf(t, 2, 3, 4)),
    "rot90_method": lambda t: (lambda x: backprop(t, x.rot90(), x))(leaf(t, 2, 3)),
    "diag_embed": lambda t: (lambda x: backprop(t, t.diag_embed(x, 1, 0, 2), x))(leaf(t, 2, 3)),
    "diag_embed_default": lambda t: (lambda x: backprop(t, x.diag_embed(-1), x))(leaf(t, 2, 3)),
    "roll_0d": lambda t: (lambda x: backprop(t, x.roll(1), x))(leaf(t)),
    "chunk_empty": lambda t: (lambda x: backprop(t, x.chunk(2), x))(leaf(t, 0, 3)),
    "split_empty": lambda t: (lambda x: backprop(t, x.split(2), x))(leaf(t, 0, 3)),
    "flip_empty": lambda t: (lambda x: backprop(t, x.flip(0), x))(leaf(t, 0, 3)),
    "H_mH": lambda t: (lambda x: backprop(t, [x.H, x.mH, x.mT], x))(leaf(t, 2, 3)),
    "broadcast_shapes_ranks": lambda t: list(t.broadcast_shapes((2, 1), (4, 1, 3), ())),
    "kron_int_float": lambda t: t.kron(t.tensor([1, 2]), t.tensor([0.5, 1.5])),
    "cross_broadcast_batch": lambda t: (lambda x, y: backprop(t, t.linalg.cross(x, y), x, y))(
        leaf(t, 2, 1, 3), leaf(t, 1, 4, 3)),
    "addmv_0d_input": lambda t: (lambda b, m, v: backprop(t, t.addmv(b, m, v), b, m, v))(
        leaf(t), leaf(t, 2, 3), leaf(t, 3)),
    "einsum_spaces": lambda t: (lambda x, y: backprop(
        t, t.einsum(" i j , j k -> i k ", x, y), x, y))(leaf(t, 2, 2), leaf(t, 2, 2)),
    "inv_det_empty": lambda t: [t.linalg.inv(t.ones(0, 0)), t.linalg.det(t.ones(0, 0))],
    "det_exactly_singular": lambda t: (lambda a: backprop(t, t.det(a), a))(
        t.tensor([[[1.0, 2, 3], [2, 4, 6], [0, 1, 1]], [[2.0, 0, 0], [0, 3, 0], [0, 0, 0]],
                  [[2.0, 1, 0], [0, 3, 0], [1, 0, 1]]], dtype=t.float64, requires_grad=True)),
    "saved_inverse": lambda t: (lambda a: [t.linalg.inv(a).grad_fn._saved_inverse])(
        leaf(t, 2, 2) + 3 * t.eye(2, dtype=t.float64)),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_matches_torch(name):
    check(OPS[name])


# ----- einsum: the learner's equations, graph for graph --------------------------------------

EINSUM = {
    "ij,jk->ik": [(2, 3), (3, 4)], "bij,bjk->bik": [(2, 3, 4), (2, 4, 5)], "i,i->": [(3,), (3,)],
    "ij->ji": [(2, 3)], "bhqd,bhkd->bhqk": [(2, 2, 3, 4), (2, 2, 5, 4)], "ij->": [(2, 3)],
    "ii->i": [(3, 3)], "ii": [(3, 3)], "i,j->ij": [(3,), (4,)], "ij,j->i": [(2, 3), (3,)],
    "bi,bi->b": [(2, 3), (2, 3)], "...ij,...jk": [(2, 2, 3), (3, 4)],
    "ij,jk,kl->il": [(2, 3), (3, 4), (4, 5)], "ij,ij->ij": [(2, 3), (2, 3)],
    "b i d, b j d -> b i j": [(2, 3, 4), (2, 5, 4)], "ik,jk": [(2, 3), (4, 3)],
    "bn,anm,bm->ba": [(2, 3), (4, 3, 5), (2, 5)], "iij->j": [(2, 2, 3)],
}


@pytest.mark.parametrize("equation", sorted(EINSUM))
def test_einsum_matches_torch(equation):
    def case(t):
        xs = [leaf(t, *s) for s in EINSUM[equation]]
        return backprop(t, t.einsum(equation, *xs), *xs)
    check(case)


def test_einsum_list_operands():
    check(lambda t: (lambda x, y: backprop(t, t.einsum("ij,jk", [x, y]), x, y))(
        leaf(t, 2, 3), leaf(t, 3, 2)))


# ----- Views share storage and the version counter; copies do not ---------------------------

VIEWS = {
    "diagonal": lambda t, x: x.diagonal(),
    "movedim": lambda t, x: x.movedim(0, 1),
    "swapaxes": lambda t, x: x.swapaxes(0, 1),
    "unflatten": lambda t, x: x.unflatten(1, (2, 2)),
    "split": lambda t, x: x.split(1)[1],
    "chunk": lambda t, x: x.chunk(2, 1)[0],
    "tensor_split": lambda t, x: x.tensor_split(2)[0],
    "broadcast_to": lambda t, x: x[0].broadcast_to((2, 4)),
    "meshgrid": lambda t, x: t.meshgrid(x[0], x[1, :2], indexing="ij")[0],
    "flip": lambda t, x: x.flip(0),
    "roll": lambda t, x: x.roll(1),
    "tril": lambda t, x: x.tril(),
    "repeat": lambda t, x: x.repeat(1, 1),
    "diag": lambda t, x: t.diag(x),
    "hstack": lambda t, x: t.hstack([x]),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_and_copies(name):
    def case(t):
        x = t.arange(12, dtype=t.float32).reshape(3, 4)
        y = VIEWS[name](t, x)
        x.add_(1)       # a view sees it, and shares the version counter
        return [y, x._version, y._version, (y._base is x) if y._base is not None else None]
    check(case)


@pytest.mark.parametrize("edit", [lambda t, x: x.split(2)[1].mul_(2),
                                  lambda t, x: x.split([1, 3])[0].add_(1),
                                  lambda t, x: x.chunk(2)[0].zero_(),
                                  lambda t, x: x.tensor_split(2)[0].add_(1)])
def test_inplace_on_split_pieces(edit):
    def case(t):
        a = leaf(t, 4, 3)
        x = a * 1
        edit(t, x)
        return backprop(t, x, a)
    check(case)


@pytest.mark.parametrize("view", [lambda t, y: y.diagonal(1), lambda t, y: y.movedim(0, 1),
                                  lambda t, y: y.swapaxes(0, 1),
                                  lambda t, y: y.unflatten(1, (2, 2)),
                                  lambda t, y: y.diagonal().unsqueeze(0),
                                  lambda t, y: y.t().diagonal(-1)])
def test_inplace_through_views_rewrites_the_base(view):
    def case(t):
        a = leaf(t, 3, 4)
        y = a * 1
        v = view(t, y)
        try:
            v.mul_(2)
        except RuntimeError as exc:
            return D.Err(exc)
        return [v._version, *backprop(t, y, a)]
    check(case)


def test_inplace_through_a_diagonal_view_flows_back():
    def case(t):
        a = leaf(t, 3, 3)
        b = a * 1
        b.diagonal().mul_(2)
        b.backward(t.ones(3, 3, dtype=t.float64))
        return [b, a, b._version]
    check(case)


def test_saved_values_readable_after_backward():
    def case(t):
        x = leaf(t, 3, 4)
        y = x.roll(1, 0).flip(1).tril(1).repeat(2, 1)
        y.sum().backward()
        fns = [y.grad_fn, y.grad_fn.next_functions[0][0],
               y.grad_fn.next_functions[0][0].next_functions[0][0]]
        return [list(fns[0]._saved_repeats), fns[1]._saved_diagonal]
    check(case)


def test_saved_numbers_readable_after_backward_beside_freed_tensors():
    def case(t):
        b, x, y = leaf(t, 2, 3, 4), leaf(t, 2, 3, 2), leaf(t, 2, 2, 4)
        out = t.baddbmm(b, x, y, beta=0.5, alpha=2) + t.cdist(x, x, p=3).sum()
        out.sum().backward()
        node = out.grad_fn.next_functions[0][0]
        cdist = out.grad_fn.next_functions[1][0].next_functions[0][0]
        try:
            node._saved_batch1
            freed = None
        except RuntimeError as exc:
            freed = D.Err(exc)
        return [node._saved_alpha, node._saved_beta, cdist._saved_p, freed]
    check(case)


# ----- Errors: torch's first sentence, word for word ----------------------------------------

ERRORS = {
    "tril_1d": lambda t: t.ones(3).tril(),
    "triu_0d": lambda t: t.triu(t.tensor(1.0)),
    "diagonal_same_dims": lambda t: t.ones(2, 2).diagonal(0, 1, 1),
    "diagonal_1d": lambda t: t.ones(3).diagonal(),
    "diag_3d": lambda t: t.diag(t.ones(2, 2, 2)),
    "trace_3d": lambda t: t.ones(2, 2, 2).trace(),
    "flip_repeated_dim": lambda t: t.ones(2, 3).flip(0, -2),
    "flip_dim_out_of_range": lambda t: t.ones(2, 3).flip(2),
    "fliplr_1d": lambda t: t.ones(3).fliplr(),
    "flipud_0d": lambda t: t.tensor(1.0).flipud(),
    "roll_misaligned": lambda t: t.ones(2, 3).roll((1, 2), 0),
    "roll_flat_many": lambda t: t.ones(2, 3).roll((1, 2)),
    "repeat_too_few": lambda t: t.ones(2, 3).repeat(2),
    "split_sizes_sum": lambda t: t.ones(3, 2).split([1, 1]),
    "chunk_zero": lambda t: t.ones(3).chunk(0),
    "movedim_repeated": lambda t: t.ones(2, 3).movedim((0, 0), (0, 1)),
    "movedim_lengths": lambda t: t.ones(2, 3).movedim((0, 1), (0,)),
    "unflatten_sizes": lambda t: t.ones(3, 4).unflatten(1, (3, 2)),
    "broadcast_to_bad": lambda t: t.ones(4).broadcast_to((3, 5)),
    "broadcast_tensors_bad": lambda t: t.broadcast_tensors(t.ones(3, 4), t.ones(3)),
    "meshgrid_bad_indexing": lambda t: t.meshgrid(t.ones(2), indexing="yx"),
    "diff_0d": lambda t: t.tensor(1.0).diff(),
    "diff_negative_n": lambda t: t.ones(3).diff(n=-1),
    "repeat_interleave_negative": lambda t: t.ones(3).repeat_interleave(-1),
    "tensordot_mismatch": lambda t: t.tensordot(t.ones(3, 4), t.ones(3, 4), dims=([0], [1])),
    "tensordot_too_many_dims": lambda t: t.tensordot(t.ones(3, 4), t.ones(4), dims=2),
    "tensordot_negative_dims": lambda t: t.tensordot(t.ones(3, 4), t.ones(4), dims=-1),
    "tensordot_list_lengths": lambda t: t.tensordot(t.ones(3, 4), t.ones(3, 4),
                                                    dims=([0], [0, 1])),
    "baddbmm_batch2": lambda t: t.baddbmm(t.ones(2, 3, 3), t.ones(2, 3, 4), t.ones(2, 5, 3)),
    "baddbmm_2d": lambda t: t.baddbmm(t.ones(3, 3), t.ones(3, 4), t.ones(4, 3)),
    "addmv_size": lambda t: t.addmv(t.ones(3), t.ones(3, 4), t.ones(5)),
    "cross_length": lambda t: t.linalg.cross(t.ones(3, 2), t.ones(3, 2)),
    "cross_ndim": lambda t: t.linalg.cross(t.ones(3, 3), t.ones(3)),
    "cdist_columns": lambda t: t.cdist(t.ones(3, 2), t.ones(3, 3)),
    "cdist_1d": lambda t: t.cdist(t.ones(3), t.ones(3)),
    "cdist_negative_p": lambda t: t.cdist(t.ones(3, 2), t.ones(3, 2), p=-1),
    "inv_singular": lambda t: t.linalg.inv(t.tensor([[1.0, 2.0], [2.0, 4.0]])),
    "inv_singular_3": lambda t: t.inverse(t.tensor([[1.0, 2, 3], [2, 4, 6], [0, 1, 1]])),
    "inv_batch_singular": lambda t: t.linalg.inv(t.stack([t.eye(2), t.zeros(2, 2)])),
    "inv_not_square": lambda t: t.linalg.inv(t.ones(2, 3)),
    "inv_int": lambda t: t.linalg.inv(t.ones(2, 2, dtype=t.int64)),
    "inv_1d": lambda t: t.inverse(t.ones(3)),
    "det_not_square": lambda t: t.det(t.ones(2, 3)),
    "det_int": lambda t: t.linalg.det(t.ones(2, 2, dtype=t.int64)),
    "einsum_few_operands": lambda t: t.einsum("ij,jk->ik", t.ones(2, 3)),
    "einsum_many_operands": lambda t: t.einsum("ij->ij", t.ones(2, 3), t.ones(2, 3)),
    "einsum_ndim": lambda t: t.einsum("ij,jk->ik", t.ones(2, 3), t.ones(3)),
    "einsum_sizes": lambda t: t.einsum("ij,ik->ik", t.ones(2, 3), t.ones(4, 3)),
    "einsum_bad_output": lambda t: t.einsum("ij->k", t.ones(2, 3)),
    "einsum_twice_in_output": lambda t: t.einsum("ij->ii", t.ones(2, 3)),
    "einsum_bad_subscript": lambda t: t.einsum("i1->i", t.ones(2, 3)),
    "einsum_repeated_sizes": lambda t: t.einsum("ii->i", t.ones(2, 3)),
    # Each '.' error on both sides, and which of two errors in one equation comes first.
    "einsum_two_ellipses": lambda t: t.einsum("......->", t.ones(2, 3)),
    "einsum_stray_dot": lambda t: t.einsum("i.j,k", t.ones(2, 3)),
    "einsum_out_two_ellipses": lambda t: t.einsum("i...->......", t.ones(2, 3)),
    "einsum_out_stray_dot": lambda t: t.einsum("i...->.i", t.ones(2, 3)),
    "einsum_out_twice_then_bad": lambda t: t.einsum("ij->ii!", t.ones(2, 3)),
    "einsum_out_bad_index": lambda t: t.einsum("ij ->i,j", t.ones(2, 3)),
    "einsum_ellipsis_sizes": lambda t: t.einsum("...i,...i->...", t.ones(2, 3), t.ones(4, 3)),
    "cross_dtypes": lambda t: t.linalg.cross(t.tensor([1, 0, 0]), t.tensor([0.0, 1.0, 0.0])),
    "baddbmm_dtypes": lambda t: t.baddbmm(t.ones(2, 2, 2), t.ones(2, 2, 2, dtype=t.float64),
                                          t.ones(2, 2, 2)),
    "addmv_dtypes": lambda t: t.addmv(t.ones(2), t.ones(2, 2, dtype=t.float64), t.ones(2)),
    "addbmm_batch_dtypes": lambda t: t.addbmm(t.ones(2, 2), t.ones(2, 2, 2, dtype=t.float64),
                                              t.ones(2, 2, 2)),
    "addbmm_input_dtype": lambda t: t.addbmm(t.ones(2, 2, dtype=t.float64), t.ones(2, 2, 2),
                                             t.ones(2, 2, 2)),
    "tensordot_dtypes": lambda t: t.tensordot(t.ones(2, 2, dtype=t.float64), t.ones(2, 2)),
    "einsum_dtypes": lambda t: t.einsum("ij,jk->ik", t.ones(2, 2, dtype=t.float64),
                                        t.ones(2, 2)),
    "cdist_dtypes": lambda t: t.cdist(t.ones(2, 2, dtype=t.float64), t.ones(2, 2)),
    "cdist_int": lambda t: t.cdist(t.ones(2, 2, dtype=t.int64), t.ones(2, 2, dtype=t.int64)),
    "trace_bool": lambda t: t.trace(t.eye(2, dtype=t.bool)),
    "roll_0d_dim": lambda t: t.tensor(3.0).roll(1, 0),
    "repeat_negative": lambda t: t.ones(2).repeat(-1),
    "H_3d": lambda t: t.ones(2, 2, 2).H,
    "mH_1d": lambda t: t.ones(3).mH,
    "diff_prepend_rank": lambda t: t.ones(2, 3).diff(prepend=t.ones(3)),
    "hstack_of_a_tensor": lambda t: t.hstack(t.ones(2, 2)),
    "vstack_empty": lambda t: t.vstack([]),
    "broadcast_shapes_bad": lambda t: t.broadcast_shapes((2, 3), (4, 1, 2)),
    "swapaxes_1d": lambda t: t.ones(2).swapaxes(0, 1),
    "rot90_one_dim": lambda t: t.rot90(t.ones(2, 2), 1, [0]),
    "rot90_same_dims": lambda t: t.rot90(t.ones(2, 2), 1, [0, 0]),
    "rot90_1d": lambda t: t.rot90(t.ones(3), 1),
    "rot90_dim_range": lambda t: t.rot90(t.ones(2, 2), 1, [0, 2]),
    "tril_inplace_leaf": lambda t: leaf(t, 2, 2).tril_(),
    "diag_embed_same_dims": lambda t: t.diag_embed(t.ones(2), 0, 0, 0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_matches_torch(name):
    check(ERRORS[name])


REPEATS = {
    "counts": lambda t, x: x.repeat_interleave(t.tensor([1, 2, 0, 1])),
    "one_count": lambda t, x: x.repeat_interleave(t.tensor(2)),
    "one_count_dim": lambda t, x: x.repeat_interleave(t.tensor([2]), dim=1),
    "counts_dim": lambda t, x: t.repeat_interleave(x, t.tensor([1, 3]), dim=0),
    "indices": lambda t, x: t.repeat_interleave(t.tensor([1, 2, 0])),
    "wrong_length": lambda t, x: x.repeat_interleave(t.tensor([1, 2, 3])),
    "2d_counts": lambda t, x: x.repeat_interleave(t.tensor([[1]])),
    "float_counts": lambda t, x: x.repeat_interleave(t.tensor([1.0, 2.0]), dim=0),
    "negative_counts": lambda t, x: x.repeat_interleave(t.tensor([-1, 2]), dim=0),
}


@pytest.mark.parametrize("name", sorted(REPEATS))
def test_repeat_interleave_tensor_counts(name):
    if not hasattr(gradviz, "index_select"):
        pytest.skip("index_select is not in the core yet")
    check(lambda t: (lambda x: backprop(t, REPEATS[name](t, x), x))(leaf(t, 2, 2)))


def test_unimplemented_arguments_raise():
    if not hasattr(gradviz, "index_select"):
        with pytest.raises(NotImplementedError, match=r"repeat_interleave\(repeats=\.\.\.\)"):
            gradviz.ones(3).repeat_interleave(gradviz.tensor([1, 2, 0]))
    with pytest.raises(NotImplementedError, match=r"--backend torch"):
        gradviz.tensordot(gradviz.ones(2), gradviz.ones(2), 1, out=gradviz.ones(()))
    with pytest.raises(NotImplementedError, match=r"einsum\(operand, sublist"):
        gradviz.einsum(gradviz.ones(2), [0])


def test_meshgrid_warns_once_without_indexing_as_torch_does(monkeypatch):
    from gradviz._ops import shape
    monkeypatch.setattr(shape, "_MESHGRID_WARNED", [])
    with pytest.warns(UserWarning) as caught:
        gradviz.meshgrid(gradviz.ones(2), gradviz.ones(3))
    assert [str(w.message) for w in caught] == [
        "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
        "argument."]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradviz.meshgrid(gradviz.ones(2), gradviz.ones(3))


# ----- Shapes from hypothesis ----------------------------------------------------------------

shapes = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)


@settings(max_examples=25, deadline=None)
@given(shape=shapes, data=st.data())
def test_flip_roll_repeat_split_any_shape(shape, data):
    n = len(shape)
    dims = data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=n, unique_by=lambda
                              d: d % n))
    shifts = data.draw(st.lists(st.integers(-4, 4), min_size=len(dims), max_size=len(dims)))
    reps = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n + 1))
    dim = data.draw(st.integers(-n, n - 1))
    size = data.draw(st.integers(1, 3))

    def case(t):
        x = leaf(t, *shape)
        outs = [x.flip(dims), x.roll(shifts, dims), x.repeat(*reps), *x.split(size, dim)]
        return backprop(t, outs, x)
    check(case)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=2, max_size=4).map(tuple), data=st.data())
def test_diagonal_and_triangles_any_shape(shape, data):
    n = len(shape)
    d1 = data.draw(st.integers(0, n - 1))
    d2 = data.draw(st.integers(0, n - 1).filter(lambda d: d != d1))
    offset = data.draw(st.integers(-3, 3))

    def case(t):
        x = leaf(t, *shape)
        return backprop(t, [x.diagonal(offset, d1, d2), x.tril(offset), x.triu(offset)], x)
    check(case)


@settings(max_examples=25, deadline=None)
@given(a=shapes, b=shapes)
def test_broadcast_tensors_and_kron_any_shape(a, b):
    def case(t):
        x, y = leaf(t, *a), leaf(t, *b)
        try:
            outs = list(t.broadcast_tensors(x, y))
        except RuntimeError as exc:
            outs = [D.Err(exc)]
        return backprop(t, [o for o in outs if not isinstance(o, D.Err)] + [t.kron(x, y)], x, y)
    check(case)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data())
def test_einsum_any_two_operand_equation(data):
    """Random two-operand equations over labels a-d (sizes 1-3, so broadcast dims of size 1
    occur), any output order: torch's composition, values and gradients. Derandomized: some
    equations where a size-1 label sits in both operands are composed by torch 2.13 with the
    bmm operands in the other order (test_einsum_operand_order_known_difference), and a CI run
    must not depend on whether hypothesis draws one."""
    sizes = {c: data.draw(st.integers(1, 3)) for c in "abcd"}
    left = data.draw(st.lists(st.sampled_from("abcd"), min_size=1, max_size=3, unique=True))
    right = data.draw(st.lists(st.sampled_from("abcd"), min_size=1, max_size=3, unique=True))
    used = sorted(set(left) | set(right))
    out = data.draw(st.permutations(used).flatmap(
        lambda p: st.integers(0, len(p)).map(lambda n: p[:n])))
    equation = f"{''.join(left)},{''.join(right)}->{''.join(out)}"

    def case(t):
        x = leaf(t, *[sizes[c] for c in left])
        y = leaf(t, *[sizes[c] for c in right])
        return backprop(t, t.einsum(equation, x, y), x, y)
    check(case)


@pytest.mark.xfail(strict=True, reason="torch 2.13 puts the second operand first in this bmm "
                   "(values and gradients agree; the graph's composition differs)")
def test_einsum_operand_order_known_difference():
    def case(t):
        x, y = leaf(t, 2, 1, 2), leaf(t, 2)
        return backprop(t, t.einsum("abc,a->bc", x, y), x, y)
    check(case)


@pytest.mark.parametrize("call", [
    lambda x: x.view((2.5, 2)), lambda x: x.view(2.0, 2), lambda x: x.reshape((2.7, -1)),
    lambda x: x.reshape([2, 2.0]), lambda x: x[:1].expand(3.0, 4), lambda x: x.permute(1.0, 0),
])
def test_a_float_size_is_a_type_error_never_truncated(call):
    x = gradviz.ones(2, 2)
    with pytest.raises(TypeError) as ours:
        call(x)
    real = pytest.importorskip("torch")
    with pytest.raises(TypeError) as theirs:
        call(real.ones(2, 2))
    if "must be tuple of ints, but found element" in str(theirs.value):
        assert str(ours.value) == str(theirs.value)     # torch's other texts vary by parser
