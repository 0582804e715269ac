"""gradviz.autograd: backward, grad, Function, gradcheck, grad and anomaly modes."""

from . import functional, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import backward, grad
# torch.autograd has no FunctionCtx, once_differentiable (torch.autograd.function has),
# GradcheckError (torch.autograd.gradcheck, the module, has), is_grad_enabled nor
# is_anomaly_enabled (torch has both): importing them here would make a file run on gradviz only
from .function import Function
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from .._missing import module_getattr as _module_getattr

__all__ = ["backward", "grad", "Function", "gradcheck", "gradgradcheck", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "set_detect_anomaly", "detect_anomaly", "graph",
           "functional"]


# A name PyTorch has and gradviz lacks says so, with the --backend torch hint, instead of
# Python's bare "has no attribute".
__getattr__ = _module_getattr("autograd", __name__, globals())
