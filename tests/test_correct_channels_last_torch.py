"""The memory format of conv2d's, max_pool2d's and adaptive_avg_pool2d's results for an input
(or a conv2d weight) laid out channels-last, on gradviz and on torch 2.13: channels-last, as
torch's kernels give it. Before, gradviz's conv2d output, max_pool2d's indices and
adaptive_avg_pool2d's output were C-ordered. (gradviz has no torch.channels_last: such a layout
comes from a permute, `x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)` and alike.)"""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _cl(t, n, c, h, w):
    return (t.arange(float(n * c * h * w)) / 50).reshape(n, h, w, c).permute(0, 3, 1, 2)


def _weight(t, *shape):
    n = 1
    for s in shape:
        n *= s
    return t.arange(float(n)).reshape(*shape) / 30 - 0.5


CASES = {
    "conv2d_input": lambda t, F: F.conv2d(_cl(t, 2, 3, 6, 6), _weight(t, 4, 3, 3, 3)),
    "conv2d_weight": lambda t, F: F.conv2d(_weight(t, 2, 3, 6, 6),
                                           _cl(t, 4, 3, 3, 3)),
    "conv2d_bias_stride_padding": lambda t, F: F.conv2d(
        _cl(t, 2, 3, 7, 7), _weight(t, 4, 3, 3, 3), _weight(t, 4), stride=2, padding=1),
    "conv2d_groups": lambda t, F: F.conv2d(_cl(t, 2, 4, 6, 6), _weight(t, 4, 2, 3, 3),
                                           groups=2),
    "conv2d_1x1_output": lambda t, F: F.conv2d(_cl(t, 2, 3, 1, 1), _weight(t, 4, 3, 1, 1)),
    "conv2d_c_ordered": lambda t, F: F.conv2d(_weight(t, 2, 3, 6, 6), _weight(t, 4, 3, 3, 3)),
    "max_pool2d": lambda t, F: F.max_pool2d(_cl(t, 2, 3, 6, 6), 2),
    "max_pool2d_indices": lambda t, F: F.max_pool2d(_cl(t, 2, 3, 6, 6), 2,
                                                    return_indices=True)[1],
    "avg_pool2d": lambda t, F: F.avg_pool2d(_cl(t, 2, 3, 6, 6), 2),
    "adaptive_avg_pool2d": lambda t, F: F.adaptive_avg_pool2d(_cl(t, 2, 3, 6, 6), 2),
    "batch_norm": lambda t, F: F.batch_norm(_cl(t, 2, 3, 4, 5), None, None, training=True),
}


@pytest.mark.parametrize("case", CASES)
def test_a_channels_last_input_gives_torchs_layout(case):
    def run(t):
        out = CASES[case](t, t.nn.functional)
        return out.stride(), out.flatten().tolist()
    mine, theirs = run(gradviz), run(torch)
    assert mine[0] == theirs[0]
    assert mine[1] == pytest.approx(theirs[1], rel=1e-5, abs=1e-5)
