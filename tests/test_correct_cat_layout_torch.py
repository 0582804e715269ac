"""torch.cat of 4-D and 5-D tensors: the result's strides as torch 2.13's
(compute_output_memory_format): channels-last when every input's strides suggest it, size-1
dims included, else C-ordered. Before, gradviz kept NumPy's order of the inputs' dims for
every 4-D and 5-D cat (a permuted input gave a permuted result torch never makes) and gave
size-1 dims NumPy's strides."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _cl(t, *shape):
    """A channels-last tensor of shape (N, C, *spatial): its memory is (N, *spatial, C)."""
    n, c, *spatial = shape
    numel = n * c
    for s in spatial:
        numel *= s
    return t.arange(float(numel)).reshape(n, *spatial, c).permute(0, len(shape) - 1,
                                                                   *range(1, len(shape) - 1))


def _permuted(t, *shape):
    return t.arange(24.0).reshape(*shape).permute(0, 2, 3, 1)


CASES = {     # (inputs, dim)
    "channels_last_dim0": (lambda t: [_cl(t, 2, 3, 4, 5), _cl(t, 1, 3, 4, 5)], 0),
    "channels_last_dim1": (lambda t: [_cl(t, 2, 3, 4, 5), _cl(t, 2, 2, 4, 5)], 1),
    "channels_last_dim3": (lambda t: [_cl(t, 2, 3, 4, 5), _cl(t, 2, 3, 4, 1)], 3),
    "channels_last_one_sample": (lambda t: [_cl(t, 1, 3, 4, 5), _cl(t, 1, 3, 4, 5)], 1),
    "channels_last_one_channel": (lambda t: [_cl(t, 2, 1, 4, 5), _cl(t, 2, 1, 4, 5)], 0),
    "channels_last_1x1": (lambda t: [_cl(t, 2, 3, 1, 1), _cl(t, 2, 3, 1, 1)], 1),
    "channels_last_and_contiguous": (lambda t: [_cl(t, 2, 3, 4, 5), t.zeros(2, 3, 4, 5)], 1),
    "contiguous_and_channels_last": (lambda t: [t.zeros(2, 3, 4, 5), _cl(t, 2, 3, 4, 5)], 1),
    "permuted_otherwise": (lambda t: [_permuted(t, 1, 3, 4, 2), _permuted(t, 1, 3, 4, 2)], 0),
    "transposed": (lambda t: [t.zeros(2, 3, 4, 5).transpose(2, 3)] * 2, 1),
    "channels_last_3d": (lambda t: [_cl(t, 2, 3, 4, 5, 6), _cl(t, 2, 3, 4, 5, 6)], 1),
    "channels_last_3d_and_contiguous": (lambda t: [_cl(t, 2, 3, 4, 5, 6),
                                                   t.zeros(2, 3, 4, 5, 6)], 2),
    "empty_channels_last": (lambda t: [_cl(t, 0, 3, 4, 5), _cl(t, 2, 3, 4, 5)], 0),
}


def _cat(t, case):
    make, dim = CASES[case]
    inputs = [x.requires_grad_() for x in (y.detach().clone() if False else y
                                           for y in make(t))]
    out = t.cat(inputs, dim)
    out.backward(t.arange(float(out.numel())).reshape(out.shape))
    return out.stride(), tuple(out.shape), out.tolist(), [x.grad.tolist() for x in inputs]


@pytest.mark.parametrize("case", list(CASES))
def test_cat_lays_out_its_result_as_torch(case):
    assert _cat(gradviz, case) == _cat(torch, case)
