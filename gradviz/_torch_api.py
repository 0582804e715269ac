"""Public names of PyTorch (the release named by VERSION), one frozenset per namespace.

The names are data: docs/update_torch_api.py writes them to _torch_api.json from an installed
torch, and tests/test_missing_names.py fails when that file is stale.
"""

import json
import pathlib

_NAMES = json.loads(pathlib.Path(__file__).with_name("_torch_api.json").read_text(
    encoding="utf-8"))

VERSION = _NAMES["version"]

(TORCH, TENSOR, NN, FUNCTIONAL, OPTIM, LINALG, AUTOGRAD, AUTOGRAD_FUNCTIONAL,
 AUTOGRAD_GRAPH, NN_UTILS, NN_INIT, OPTIM_LR_SCHEDULER, UTILS, UTILS_DATA) = (
    frozenset(_NAMES[key]) for key in (
        "torch", "Tensor", "nn", "functional", "optim", "linalg", "autograd",
        "autograd_functional", "autograd_graph", "nn_utils", "nn_init", "optim_lr_scheduler",
        "utils", "utils_data"))

# torch's overloads of each `torch.X` and `Tensor.X` gradviz exports, as signature strings
# ("(input, dim, keepdim=False, *, dtype=None, out=None)"): read by gradviz._keywords.
SIGNATURES = _NAMES["signatures"]
# For the names whose signatures come from torch's stubs, each overload's tensor parameters (in
# SIGNATURES' order): "name" takes a Tensor, "name+" a Tensor or a number, "name?" a Tensor or
# None. gradviz._keywords reads them for torch's TypeError on an argument of another type.
TENSORS = _NAMES["tensors"]
