"""gradviz.optim: SGD, Adam, AdamW, RMSprop, Adagrad and Adadelta with torch's defaults, parameter
groups and state_dict, and the learning-rate schedulers of `gradviz.optim.lr_scheduler`.

Each step runs outside the graph (under no_grad, as torch's) and computes torch's
single-tensor update in the same order of float operations; each in-place update of a
parameter counts in its `_version` as torch's does.

>>> import gradviz as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.Adam([w], lr=0.1)
>>> (w * 3).sum().backward(); opt.step(); w._version
1
"""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .._missing import module_getattr as _module_getattr

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
           "lr_scheduler"]


# A name PyTorch has and gradviz lacks says so, with the --backend torch hint, instead of
# Python's bare "has no attribute".
__getattr__ = _module_getattr("optim", __name__, globals())
