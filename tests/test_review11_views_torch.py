"""Views whose elements overlap in memory (unfold windows, as_strided), against torch 2.13:
the gradient through such a view after its base was edited in place sums every read, and an
in-place write through one is torch's refusal (a zero stride) or a clear NotImplementedError
(other overlaps, which torch writes element by element)."""

import itertools

import numpy as np
import pytest

import gradviz
from gradviz.autograd.graph import internal_overlap

torch = pytest.importorskip("torch")

VIEWS = {
    "unfold_overlapping": lambda b: b.unfold(0, 3, 1),
    "unfold_disjoint": lambda b: b.unfold(0, 2, 2),
    "as_strided_overlapping": lambda b: b.as_strided((4, 3), (1, 1)),
    "as_strided_rows_overlap": lambda b: b.as_strided((2, 3), (2, 1), 1),
    "as_strided_stride0": lambda b: b.as_strided((2, 3), (0, 1)),
    "as_strided_transposed": lambda b: b.as_strided((2, 3), (1, 2)),
}


@pytest.mark.parametrize("name", VIEWS)
def test_grad_through_view_after_base_edit(name):
    make = VIEWS[name]
    grads = []
    for lib in (torch, gradviz):
        x = lib.arange(6., requires_grad=True)
        b = x * 1
        w = make(b)
        b.mul_(2)        # w's grad_fn is regenerated as AsStridedBackward0 over the new base
        (w * w).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[1] == grads[0]


WRITES = {
    "add_": lambda v: v.add_(1),
    "mul_": lambda v: v.mul_(2),
    "copy_": lambda v: v.copy_(v.clone() + 1),
}


@pytest.mark.parametrize("write", WRITES)
def test_write_through_zero_stride_as_strided_refused_as_torch(write):
    messages = []
    for lib in (torch, gradviz):
        x = lib.arange(4.)
        with pytest.raises(RuntimeError) as info:
            WRITES[write](x.as_strided((3,), (0,)))
        messages.append(str(info.value).split(". ")[0])
        assert x.tolist() == [0., 1., 2., 3.]
    assert messages[1] == messages[0]


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("view", ["unfold_overlapping", "as_strided_overlapping"])
def test_write_through_overlapping_windows_refused_clearly(view, write):
    x = torch.arange(6.)
    WRITES[write](VIEWS[view](x))    # torch writes element by element; gradviz does not follow
    y = gradviz.arange(6.)
    with pytest.raises(NotImplementedError, match="--backend torch"):
        WRITES[write](VIEWS[view](y))
    assert y.tolist() == list(range(6))


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("view", ["unfold_disjoint", "as_strided_transposed", "window_of_unfold",
                                  "as_strided_every_other"])
def test_write_through_disjoint_view_as_torch(view, write):
    makers = dict(VIEWS, window_of_unfold=lambda b: b.unfold(0, 3, 1)[1],
                  as_strided_every_other=lambda b: b.as_strided((3,), (2,)))
    values = []
    for lib in (torch, gradviz):
        x = lib.arange(6.)
        WRITES[write](makers[view](x))
        values.append(x.tolist())
    assert values[1] == values[0]


@pytest.mark.parametrize("write", ["fill_", "zero_"])
@pytest.mark.parametrize("view", ["unfold_overlapping", "as_strided_overlapping",
                                  "as_strided_stride0", "expand"])
def test_fill_through_overlapping_view_as_torch(view, write):
    """torch's fill_ and zero_ skip the overlap check: every element gets one value."""
    makers = dict(VIEWS, expand=lambda b: b[1:2].expand(3))
    values = []
    for lib in (torch, gradviz):
        x = lib.arange(6.)
        v = makers[view](x)
        v.fill_(7) if write == "fill_" else v.zero_()
        values.append(x.tolist())
    assert values[1] == values[0]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("write", ["fill_", "zero_"])
@pytest.mark.parametrize("view", ["unfold_overlapping", "as_strided_overlapping",
                                  "as_strided_stride0", "expand"])
def test_backward_of_fill_through_overlapping_view_as_torch(view, write, create_graph):
    """CopySlices writes the op's gradient into the view's region: torch refuses that for a
    zero stride, in backward, and computes it for other overlaps."""
    makers = dict(VIEWS, expand=lambda b: b[1:2].expand(3))
    outcomes = []
    for lib in (torch, gradviz):
        leaf = lib.arange(6., requires_grad=True)
        x = leaf * 1
        v = makers[view](x)
        v.fill_(7) if write == "fill_" else v.zero_()
        try:
            (x * x).sum().backward(create_graph=create_graph)
            outcomes.append((x.tolist(), leaf.grad.tolist()))
        except (RuntimeError, NotImplementedError) as exc:
            outcomes.append(str(exc).split(". ")[0])
    if create_graph and view in ("unfold_overlapping", "as_strided_overlapping"):
        # the recorded CopySlices copies the gradient into the region with copy_, which
        # gradviz refuses on windows that share elements
        assert "--backend torch" in outcomes[1]
    else:
        assert outcomes[1] == outcomes[0]


SHAPES = [(4, 3), (3, 2), (2, 2, 2), (5,), (2, 3), (1, 4), (0, 3)]


@pytest.mark.parametrize("shape", SHAPES)
def test_internal_overlap_exact(shape):
    """Against counting the distinct byte offsets, over every small stride."""
    for strides in itertools.product(range(0, 7), repeat=len(shape)):
        steps = tuple(8 * s for s in strides)
        offsets = np.zeros(shape, dtype=np.int64)
        for d, s in enumerate(steps):
            offsets = offsets + s * np.arange(shape[d]).reshape(
                (-1,) + (1,) * (len(shape) - d - 1))
        expect = np.unique(offsets).size < offsets.size
        assert internal_overlap(shape, steps, 8) == expect, (shape, steps)


# ----- Result layouts that as_strided reads ---------------------------------------------------

def _input(lib, kind):
    a = lib.tensor([[4., 1., 0.], [2., 3., 1.], [1., 5., 2.]])
    b = lib.arange(24.).reshape(2, 3, 4)
    return {"square": a, "square_t": a.t(), "batch": lib.stack([a, a.t() * 2]),
            "permuted": b.permute(2, 0, 1), "sliced": b[:, :, ::2],
            "expanded": b[:1].expand(3, 3, 4),
            "strided_t": b.transpose(0, 2)[::2]}[kind]


LAYOUTS = {
    "linalg.inv": (["square", "square_t", "batch"], lambda lib, x: [lib.linalg.inv(x)]),
    "inverse": (["square", "batch"], lambda lib, x: [lib.inverse(x)]),
    "linalg.svd": (["square", "batch", "permuted"],
                   lambda lib, x: [lib.linalg.svd(x)[0], lib.linalg.svd(x)[2]]),
    "linalg.svd_reduced": (["permuted", "sliced"], lambda lib, x: [
        t for i, t in enumerate(lib.linalg.svd(x, full_matrices=False)) if i != 1]),
    "svd": (["square", "batch"], lambda lib, x: [lib.svd(x)[0], lib.svd(x)[2]]),
    "sort": (["square", "square_t", "permuted", "sliced", "expanded", "strided_t"],
             lambda lib, x: list(lib.sort(x, 1)) + list(lib.sort(x, 0))),
    "argsort": (["square_t", "permuted", "expanded", "strided_t"],
                lambda lib, x: [lib.argsort(x, 1)]),
    "cat": (["square", "square_t", "permuted", "sliced"],
            lambda lib, x: [lib.cat([x, x], 0), lib.cat([x, x], 1), lib.cat([x, x * 1], -1)]),
}


@pytest.mark.filterwarnings("ignore:gradviz. the singular vectors")
@pytest.mark.parametrize("op, kind", [(op, k) for op, (kinds, _) in LAYOUTS.items()
                                      for k in kinds])
def test_result_strides_and_storage_as_torch(op, kind):
    """The strides of each result, and its storage read back by as_strided (values only
    where they are unique: not the singular vectors, whose signs may differ)."""
    f = LAYOUTS[op][1]
    got, want = f(gradviz, _input(gradviz, kind)), f(torch, _input(torch, kind))
    assert [t.stride() for t in got] == [t.stride() for t in want]
    if "svd" not in op:
        for g, w in zip(got, want):
            flat = (g.numel(),)
            np.testing.assert_allclose(g.as_strided(flat, (1,)).tolist(),
                                       w.as_strided(flat, (1,)).tolist(), rtol=1e-5, atol=1e-5)
