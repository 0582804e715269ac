"""torch.optim.Adam and AdamW (amsgrad, weight decay coupled or decoupled, maximize)."""

import numpy as np

from .._tensor import Tensor
from . import _functional as F
from .optimizer import Optimizer, check_ranges, increment, refuse, single_tensor_step

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, with torch's defaults and its order of float32 operations.

    >>> import gradviz as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    >>> opt = torch.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w
    Parameter containing:
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    step = single_tensor_step
    _LOAD_DEFAULTS = {"amsgrad": False, "maximize": False, "foreach": None,
                      "capturable": False, "differentiable": False,
                      "decoupled_weight_decay": False, "fused": None}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        owner = type(self).__name__
        if isinstance(betas[0], Tensor) or isinstance(betas[1], Tensor):
            refuse(owner, "betas", "Tensors")
        check_ranges(owner, lr=lr, eps=eps)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        check_ranges(owner, weight_decay=weight_decay)
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)


    @staticmethod
    def _state_names(group):
        return ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())

    def _update(self, group, p, grad, state):
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        step = increment(state["step"])
        param = p._array()
        wd = group["weight_decay"]
        if wd != 0 and group["decoupled_weight_decay"]:
            # AdamW: the parameter shrinks first (the loop adds the L2 form only when coupled).
            param *= param.dtype.type(1 - lr * wd)
            F.bump(p, "mul_")
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        m = exp_avg._array()
        F.lerp(m, grad, 1 - beta1, out=m)
        F.bump(exp_avg, "lerp_")
        v = F.decay_square(exp_avg_sq, grad, beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if group["amsgrad"]:
            vmax = state["max_exp_avg_sq"]
            # torch's torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq): an out=
            # write, which the inspector records as "out" (as for any out= call)
            v = np.maximum(vmax._array(), v, out=vmax._array())
            F.bump(vmax, "out")
        dt = v.dtype.type
        denom = F.sqrt(v)
        denom /= dt(bias_correction2_sqrt)
        denom += dt(group["eps"])
        F.addcdiv(param, m, denom, -step_size, out=param)
        F.bump(p, "addcdiv_")


class AdamW(Adam):
    """Adam with decoupled weight decay (the parameter is first scaled by 1 - lr * wd).

    >>> import gradviz as torch
    >>> opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(2))])
    >>> opt.defaults["weight_decay"], opt.defaults["decoupled_weight_decay"]
    (0.01, True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def _loaded(self):
        super()._loaded()
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
