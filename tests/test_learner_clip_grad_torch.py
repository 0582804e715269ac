"""torch.nn.utils' gradient clipping against torch 2.13: the returned norm, the clipped
gradients, their _version, norm types, non-finite norms and the refusal of the rest of
nn.utils (packed sequences)."""

import pytest

import gradviz
from test_learner_surface import _same


def _params(t):
    a = t.nn.Parameter(t.tensor([[3.0, -4.0], [1.0, 2.0]]))
    b = t.nn.Parameter(t.tensor([0.5, -12.0]))
    c = t.nn.Parameter(t.tensor([1.0]))          # no gradient: left out
    a.grad = t.tensor([[3.0, -4.0], [1.0, 2.0]])
    b.grad = t.tensor([0.5, -12.0])
    return [a, b, c]


def _clipped(t, fn):
    ps = _params(t)
    out = fn(t, ps)
    return out, [p.grad for p in ps[:2]], [p.grad._version for p in ps[:2]]


CASES = {
    "norm_clips": lambda t: _clipped(t, lambda t, ps: t.nn.utils.clip_grad_norm_(ps, 1.0)),
    "norm_below_max": lambda t: _clipped(t, lambda t, ps: t.nn.utils.clip_grad_norm_(ps, 100)),
    "norm_inf": lambda t: _clipped(t, lambda t, ps: t.nn.utils.clip_grad_norm_(
        ps, 2.0, norm_type="inf")),
    "norm_one": lambda t: _clipped(t, lambda t, ps: t.nn.utils.clip_grad_norm_(
        ps, 2.0, norm_type=1)),
    "norm_generator": lambda t: _clipped(t, lambda t, ps: t.nn.utils.clip_grad_norm_(
        (p for p in ps), 1.0)),
    "norm_one_tensor": lambda t: _clipped(t, lambda t, ps: t.nn.utils.clip_grad_norm_(
        ps[1], 1.0)),
    "norm_no_grads": lambda t: t.nn.utils.clip_grad_norm_([t.nn.Parameter(t.ones(2))], 1.0),
    "value": lambda t: _clipped(t, lambda t, ps: t.nn.utils.clip_grad_value_(ps, 2.5)),
    "total_norm": lambda t: t.nn.utils.get_total_norm([t.ones(3), t.ones(2, 2) * 2]),
    "nonfinite": lambda t: _clipped(t, lambda t, ps: (
        ps[0].grad.fill_(float("nan")),
        t.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True))),
    "packed_sequences": lambda t: t.nn.utils.rnn.pack_padded_sequence,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_clipping_matches_torch(case):
    if case == "packed_sequences":
        # torch.nn.utils.rnn has pad_sequence only: the packed sequences refuse by name
        with pytest.raises(AttributeError, match=r"does not implement torch\.nn\.utils\.rnn\."
                                                 r"pack_padded_sequence .*--backend torch"):
            CASES[case](gradviz)
        return
    _same(CASES[case])


def test_an_empty_generator_warns_as_torch():
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        gradviz.nn.utils.clip_grad_norm_((p for p in []), 1.0)
