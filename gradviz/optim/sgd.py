"""torch.optim.SGD: momentum, dampening, nesterov, weight decay, maximize."""

import numpy as np

from .._tensor import _make
from . import _functional as F
from .optimizer import Optimizer, check_ranges, single_tensor_step

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent; updates parameters in place, outside the graph.

    >>> import gradviz as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = torch.optim.SGD([w], lr=0.1)
    >>> (w * 3).sum().backward(); opt.step(); w
    Parameter containing:
    tensor([0.7000], requires_grad=True)
    """

    step = single_tensor_step
    _LOAD_DEFAULTS = {"nesterov": False, "maximize": False, "foreach": None,
                      "differentiable": False, "fused": False}

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        check_ranges("SGD", nan_passes=True, lr=lr, momentum=momentum,
                     weight_decay=weight_decay)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)


    def _state_of(self, p, group):
        # torch keeps no state (not even an empty dict) for a parameter without momentum.
        return self.state[p] if group["momentum"] != 0 else None

    def _update(self, group, p, grad, state):
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = _make(np.array(grad, copy=True))
            else:
                b = buf._array()
                b *= b.dtype.type(momentum)
                F.add(b, grad, 1 - group["dampening"], out=b)
                F.bump(buf, "mul_", "add_")
            grad = F.add(grad, buf._array(), momentum) if group["nesterov"] else buf._array()
        param = p._array()
        F.add(param, grad, -group["lr"], out=param)
        F.bump(p, "add_")
