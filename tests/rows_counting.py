"""Row examples for unique (merged by tests/test_core_table.py): torch records a node it cannot
differentiate, so backward fails naming the op. The lambdas use the global `torch`."""

import gradviz as torch

NO_DERIVATIVE = {
    "unique": (lambda x: torch.unique(x * 2), "the derivative for '_unique2' is not implemented"),
    "unique_dim": (lambda x: (x * 2).unique(dim=0),
                   "the derivative for 'unique_dim' is not implemented"),
}
