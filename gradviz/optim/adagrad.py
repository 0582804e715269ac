"""torch.optim.Adagrad (lr decay, weight decay, initial accumulator value, maximize)."""

import numpy as np

from .._tensor import _make
from . import _functional as F
from .optimizer import Optimizer, check_ranges, increment, scalar_state, single_tensor_step

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, with torch's defaults and its order of float32 operations. As in torch, the
    state (`step`, `sum`) of every parameter exists from construction.

    >>> import gradviz as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> torch.optim.Adagrad([w], initial_accumulator_value=0.5).state[w]
    {'step': tensor(0.), 'sum': tensor([0.5000])}
    """

    step = single_tensor_step
    _LOAD_DEFAULTS = {"foreach": None, "maximize": False, "differentiable": False,
                      "fused": None}

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_ranges("Adagrad", lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                     initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p, group)


    def _init_state(self, state, p, group):
        # torch fills the accumulator with the constructor's value, not the group's.
        state["step"] = scalar_state()
        state["sum"] = _make(np.full_like(p._array(), self.defaults["initial_accumulator_value"]))

    def _update(self, group, p, grad, state):
        step = increment(state["step"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        acc = state["sum"]
        s = acc._array()
        F.addcmul(s, grad, grad, 1, out=s)
        F.bump(acc, "addcmul_")
        std = F.sqrt(s)
        std += s.dtype.type(group["eps"])
        param = p._array()
        F.addcdiv(param, grad, std, -clr, out=param)
        F.bump(p, "addcdiv_")
