"""Examples of the upsampling rows (nn.functional.interpolate's nearest and bilinear modes,
and their recorded backwards), merged into tests/test_core_table.py's EXAMPLES."""

import gradviz as torch

X1 = [[[0.3, -1.2, 2.1]]]                                   # (1, 1, 3)
X2 = [[[[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]]]               # (1, 1, 2, 3)


def _double(**options):
    """interpolate's gradient with create_graph=True, for a gradient g that requires grad: its
    Upsample...BackwardBackward0 node."""
    def example(x, g):
        y = torch.nn.functional.interpolate(x, **options)
        (gx,) = torch.autograd.grad(y, x, g.reshape(y.shape), create_graph=True)
        return gx
    return example


EXAMPLES = {
    "upsample_nearest1d": (lambda x: torch.nn.functional.interpolate(x, scale_factor=1.7),
                           (X1,), {}),
    "upsample_nearest2d": (lambda x: torch.nn.functional.interpolate(x, size=(3, 5)), (X2,), {}),
    "upsample_bilinear2d": (lambda x: torch.nn.functional.interpolate(
        x, scale_factor=1.5, mode="bilinear"), (X2,), {}),
    "upsample_nearest1d_backward": (_double(size=5), (X1, [0.5, -1.0, 2.0, 0.7, 1.1]), {}),
    "upsample_nearest2d_backward": (_double(scale_factor=2), (X2, [0.1 * k - 1 for k in range(24)]),
                                    {}),
    "upsample_bilinear2d_backward": (_double(size=(3, 4), mode="bilinear", align_corners=True),
                                     (X2, [0.2 * k - 1 for k in range(12)]), {}),
}
