"""Row examples for unique and svd (merged by tests/test_core_table.py): unique records a node
torch cannot differentiate, so backward fails naming the op. The lambdas use the global
`torch`."""

import gradviz as torch

NO_DERIVATIVE = {
    "unique": (lambda x: torch.unique(x * 2), "the derivative for '_unique2' is not implemented"),
    "unique_dim": (lambda x: (x * 2).unique(dim=0),
                   "the derivative for 'unique_dim' is not implemented"),
}

M32 = [[0.3, -1.2], [2.1, 1.1], [0.4, -0.6]]

# svdvals: the gradient through S alone; the second derivative needs U's and Vh's gradients,
# which gradviz refuses (see tests/test_learner_svd_torch.py)
EXAMPLES = {
    "linalg_svd": (lambda x: torch.linalg.svdvals(x * 2), (M32,), {"second": False}),
}
