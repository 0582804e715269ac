"""Strides as torch 2.13 gives them: empty tensors have contiguous strides (a dim of size 0
counted as 1) and their views follow; unsqueeze gives the new dim the size times the stride of
the dim after it; expand keeps the stride of a dim of size 1 that stays 1; clone keeps a dense
tensor's strides and makes a non-dense one (an expanded tensor) dense in the order of its
strides. `.stride()` and `.is_contiguous()` are compared over a table and over
hypothesis-generated shapes and view chains.

Left out on purpose: the strides TensorIterator gives results (x * 2, reductions with
keepdim) in dims of size 1, and a NumPy array's own strides kept by from_numpy."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

SOURCES = {
    "contiguous": "t.zeros(2, 3)", "transposed": "t.zeros(2, 3).t()",
    "column": "t.zeros(3, 1)", "row": "t.zeros(1, 3)", "column_t": "t.zeros(3, 1).t()",
    "expanded": "t.zeros(3, 1).expand(3, 4)", "expanded_t": "t.zeros(3, 1).expand(3, 4).t()",
    "unsqueezed": "t.zeros(3).unsqueeze(0)", "permuted": "t.zeros(2, 1, 3).permute(2, 1, 0)",
    "strided": "t.zeros(4, 3)[:, ::2]", "narrow_column": "t.zeros(4, 3)[:, 1:2]",
    "first_column": "t.zeros(2, 3)[:, :1]", "scalar": "t.tensor(1.0)",
    "view_ones": "t.zeros(6).view(1, 6, 1)", "ones": "t.zeros(1, 1)",
    "expanded_scalar": "t.zeros(1).expand(3)",
    "channels_last": "t.zeros(2, 3, 4, 5).permute(0, 2, 3, 1)",
    "transposed3": "t.zeros(4, 1, 3).transpose(0, 2)",
    "empty": "t.zeros(0, 3)", "empty_t": "t.zeros(0, 3).t()", "empty3": "t.zeros(2, 0, 3)",
    "empty1": "t.tensor([])", "arange0": "t.arange(0)", "empty_row": "t.zeros(1, 0)",
}
CHAINS = ["x", "x.clone()", "x.contiguous()", "x.unsqueeze(0)", "x.unsqueeze(-1)", "x[None]",
          "x.t() if x.dim() == 2 else x", "x.reshape(-1)", "x.expand(2, *x.shape)",
          "x.permute(*reversed(range(x.dim()))) if x.dim() else x", "x.squeeze()",
          "t.zeros_like(x)", "x.detach()", "x.flatten()", "x.unsqueeze(0).clone()",
          "x.expand(2, *x.shape).clone()", "x.transpose(0, -1) if x.dim() else x",
          "x.unsqueeze(0).unsqueeze(0).squeeze(0)", "x.unsqueeze(0).unsqueeze(0).squeeze((0, 1))",
          "x.unsqueeze(-1).unsqueeze(0).squeeze(-1)"]


def _layout(t, source, chain):
    x = eval(SOURCES[source], {"t": t})
    r = eval(chain, {"t": t, "x": x})
    return tuple(r.stride()), r.is_contiguous()


@pytest.mark.parametrize("chain", CHAINS)
@pytest.mark.parametrize("source", list(SOURCES))
def test_strides_are_torchs(source, chain):
    assert _layout(gradviz, source, chain) == _layout(torch, source, chain)


# one step of a view chain: (name, function of (module, tensor) or None when it does not apply)
def _step(name, x, k):
    n = x.dim()
    if name == "unsqueeze":
        return lambda t, y: y.unsqueeze(k % (n + 1))
    if name == "transpose" and n >= 2:
        return lambda t, y: y.transpose(k % n, (k + 1) % n)
    if name == "expand" and n:
        sizes = [4 if s == 1 and k % 2 else s for s in x.shape]
        return lambda t, y: y.expand(2, *sizes)
    if name == "narrow" and n and x.shape[k % n] > 1:
        return lambda t, y: y.narrow(k % n, 1, x.shape[k % n] - 1)
    if name == "select" and n and x.shape[k % n]:
        return lambda t, y: y.select(k % n, 0)
    if name == "clone":
        return lambda t, y: y.clone()
    if name == "contiguous":
        return lambda t, y: y.contiguous()
    if name == "squeeze" and n:
        return lambda t, y: y.squeeze(k % n)
    return None


@settings(max_examples=150, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3),
       steps=st.lists(st.tuples(st.sampled_from(["unsqueeze", "transpose", "expand", "narrow",
                                                  "select", "clone", "contiguous", "squeeze"]),
                                st.integers(0, 5)), max_size=4))
def test_view_chains_have_torchs_strides(shape, steps):
    xs = {t: t.zeros(tuple(shape)) for t in (gradviz, torch)}
    for name, k in steps:
        if xs[torch].dim() > 5:
            break
        fn = _step(name, xs[torch], k)
        if fn is None:
            continue
        xs = {t: fn(t, x) for t, x in xs.items()}
        assert tuple(xs[gradviz].shape) == tuple(xs[torch].shape)
        assert (xs[gradviz].stride(), xs[gradviz].is_contiguous()) == \
            (xs[torch].stride(), xs[torch].is_contiguous()), (shape, steps)
