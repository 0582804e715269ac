"""nn.MultiheadAttention and F.multi_head_attention_forward against torch 2.13: the
initialisation draw for draw under manual_seed, torch's parameter names, outputs, attention
weights, gradients and the whole grad_fn graph (torch's Python path, which it takes in training
mode with parameters that require grad), masks, batch_first, unbatched input, errors."""

import warnings

import numpy as np
import pytest

import gradviz
from test_core_table import _walk_names

real = pytest.importorskip("torch")


CAUSAL = np.triu(np.ones((4, 4), bool), 1)
PADDING = [[False] * 4 + [True], [False] * 5]

CASES = {
    "self": ({}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "no_weights": ({}, {"need_weights": False}),
    "per_head": ({}, {"average_attn_weights": False}),
    "cross_padding": ({"num_heads": 4, "batch_first": True}, {"self": False, "kpm": PADDING}),
    "causal_bool": ({}, {"am": CAUSAL}),
    "causal_sdpa": ({}, {"am": CAUSAL, "need_weights": False}),
    "causal_hint": ({}, {"am": CAUSAL, "need_weights": False, "is_causal": True}),
    "float_mask": ({}, {"am": np.where(CAUSAL, -1e9, 0.0).astype(np.float32)}),
    "no_bias": ({"bias": False}, {}),
    "kdim_vdim": ({"kdim": 3, "vdim": 5}, {"self": False}),
    "bias_kv_zero_attn": ({"add_bias_kv": True, "add_zero_attn": True},
                          {"kpm": [[False, False, False, True], [False] * 4]}),
    "dropout": ({"dropout": 0.3}, {}),
    "unbatched": ({}, {"unbatched": True}),
}


def _run(torch, case):
    ctor, call = CASES[case]
    ctor = {"embed_dim": 8, "num_heads": 2, **ctor}
    call = dict(call)
    torch.manual_seed(0)
    m = torch.nn.MultiheadAttention(**ctor)
    gen = np.random.default_rng(0)
    e, bf = ctor["embed_dim"], ctor.get("batch_first", False)
    shape = (2, 4, e) if bf else (4, 2, e)
    if call.pop("unbatched", False):
        shape = (4, e)
    q = torch.tensor(gen.standard_normal(shape), dtype=torch.float32, requires_grad=True)
    if call.pop("self", True):
        k = v = q
    else:
        kshape = lambda d: (2, 5, d) if bf else (5, 2, d)      # noqa: E731
        k = torch.tensor(gen.standard_normal(kshape(m.kdim)), dtype=torch.float32,
                         requires_grad=True)
        v = k if m.vdim == m.kdim else torch.tensor(gen.standard_normal(kshape(m.vdim)),
                                                    dtype=torch.float32)
    if "kpm" in call:
        call["key_padding_mask"] = torch.tensor(call.pop("kpm"))
    if "am" in call:
        call["attn_mask"] = torch.tensor(call.pop("am"))
    out, w = m(q, k, v, **call)
    params = [(n, p.detach().numpy().copy()) for n, p in m.named_parameters()]
    graph = [entry[:2] for entry in _walk_names(torch, out.grad_fn)]
    (out.sum() if w is None else out.sum() + 3 * w.sum()).backward()
    return (out.detach().numpy(), None if w is None else w.detach().numpy(),
            [p.grad for p in m.parameters()], params, graph, repr(m))


@pytest.mark.parametrize("case", sorted(CASES))
def test_multihead_attention_matches_torch(case):
    ours, theirs = _run(gradviz, case), _run(real, case)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    assert (ours[1] is None) == (theirs[1] is None)
    if ours[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    for g, tg in zip(ours[2], theirs[2]):
        assert (g is None) == (tg is None)
        if g is not None:
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-4, atol=1e-5)
    assert [n for n, _ in ours[3]] == [n for n, _ in theirs[3]]
    for (_, p), (_, tp) in zip(ours[3], theirs[3]):
        np.testing.assert_array_equal(p, tp)         # torch's initialisation, bit for bit
    assert ours[4] == theirs[4]
    assert ours[5] == theirs[5]


def test_eval_mode_without_grad_gives_torchs_values():
    """torch takes its fused kernel here; gradviz its Python path: the same numbers."""
    outs = []
    for torch in (gradviz, real):
        torch.manual_seed(1)
        m = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
        x = torch.tensor(np.random.default_rng(3).standard_normal((2, 4, 8)),
                         dtype=torch.float32)
        with torch.no_grad():
            out, w = m(x, x, x, key_padding_mask=torch.tensor(PADDING)[:, :4])
        outs.append((out.numpy(), w.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _error(torch, case):
    m = torch.nn.MultiheadAttention(8, 2)
    x = torch.rand(4, 2, 8)
    cases = {
        "divisible": lambda: torch.nn.MultiheadAttention(8, 3),
        "positive": lambda: torch.nn.MultiheadAttention(0, 2),
        "query_dims": lambda: m(torch.rand(8), torch.rand(8), torch.rand(8)),
        "key_dims": lambda: m(x, torch.rand(4, 8), torch.rand(4, 8)),
        "mask_2d": lambda: m(x, x, x, attn_mask=torch.zeros(3, 4)),
        "mask_3d": lambda: m(x, x, x, attn_mask=torch.zeros(3, 4, 4)),
        "mask_int": lambda: m(x, x, x, attn_mask=torch.zeros(4, 4, dtype=torch.long)),
        "kpm_shape": lambda: m(x, x, x, key_padding_mask=torch.zeros(2, 3, dtype=torch.bool)),
        "causal_without_mask": lambda: m(x, x, x, is_causal=True),
        "embed": lambda: m(torch.rand(4, 2, 6), torch.rand(4, 2, 6), torch.rand(4, 2, 6)),
    }
    with pytest.raises(Exception) as info:
        cases[case]()
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("case", ["divisible", "positive", "query_dims", "key_dims", "mask_2d",
                                  "mask_3d", "mask_int", "kpm_shape", "causal_without_mask",
                                  "embed"])
def test_errors_match_torch(case):
    assert _error(gradviz, case) == _error(real, case)


def test_mismatched_mask_types_warn_as_torch():
    for torch in (gradviz, real):
        m = torch.nn.MultiheadAttention(8, 2)
        x = torch.rand(4, 2, 8)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(x, x, x, key_padding_mask=torch.zeros(2, 4, dtype=torch.bool),
              attn_mask=torch.zeros(4, 4))
        assert [str(w.message) for w in caught] == [
            "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same "
            "type for both instead."]
