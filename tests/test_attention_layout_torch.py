"""scaled_dot_product_attention's CPU kernel lays its output out like the query, as torch 2.13's
does (empty_like): heads split from a (batch, tokens, heads * E) projection and merged back
with `out.transpose(1, 2).reshape(...)` give a view there (ViewBackward0), not a copy."""

import itertools

import numpy as np
import pytest

import gradviz

torch = pytest.importorskip("torch")

SHAPES = [(2, 3, 5, 4), (1, 3, 5, 4), (2, 1, 5, 4), (1, 1, 5, 4), (2, 3, 1, 4)]


def _query(t, shape, perm, sliced):
    """A query of `shape` whose memory holds its dims in the order `perm` (the last dim
    innermost, as the kernel needs), dense or a slice of a larger block."""
    big = [shape[p] for p in perm]
    big[0] *= 2 if sliced else 1
    base = t.tensor(np.arange(np.prod(big), dtype=np.float32).reshape(big) / 100)
    if sliced:
        base = base[:shape[perm[0]]]
    return base.permute(*[perm.index(i) for i in range(4)])


@pytest.mark.parametrize("sliced", [False, True])
@pytest.mark.parametrize("perm", [p + (3,) for p in itertools.permutations(range(3))])
@pytest.mark.parametrize("shape", SHAPES)
def test_output_strides_are_torchs(shape, perm, sliced):
    got = {}
    for t in (gradviz, torch):
        q = _query(t, shape, perm, sliced).requires_grad_()
        out = t.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        got[t] = (out.stride(), type(out.grad_fn).__name__, out.detach().numpy())
    assert got[gradviz][:2] == got[torch][:2]
    assert np.allclose(got[gradviz][2], got[torch][2], rtol=1e-5, atol=1e-6)


def test_merged_heads_are_a_view_as_in_torch():
    names = {}
    for t in (gradviz, torch):
        x = t.ones(2, 5, 24, requires_grad=True)
        qkv = (x * 1).view(2, 5, 3, 2, 4).permute(2, 0, 3, 1, 4)
        h = t.nn.functional.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        merged = h.transpose(1, 2).reshape(2, 5, 8)
        names[t] = (type(merged.grad_fn).__name__,
                    type(merged.grad_fn.next_functions[0][0]).__name__)
    assert names[gradviz] == names[torch] == ("ViewBackward0", "TransposeBackward0")
