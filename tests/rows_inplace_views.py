"""Row examples for the in-place view ops (merged by tests/test_core_table.py): squeeze_,
t_ and transpose_ change self's shape in place and record their own nodes (SqueezeBackward3
and 5, TBackward1, TransposeBackward1). The lambdas use the global `torch`."""

import gradviz as torch  # noqa: F401  (rebound to torch by the differential tests)

A3 = [0.3, -1.2, 2.1]
M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]

EXAMPLES = {
    "squeeze_": (lambda x: (x.unsqueeze(1) * 2).squeeze_(), (A3,), {}),
    "squeeze_dims_": (lambda x: (x.unsqueeze(1) * 2).squeeze_((1,)), (A3,), {}),
    "t_": (lambda x: (x * 2).t_(), (M23,), {}),
    "transpose_": (lambda x: (x * 2).transpose_(0, 1), (M23,), {}),
}
