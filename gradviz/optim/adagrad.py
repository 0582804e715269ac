"""torch.optim.Adagrad (lr decay, weight decay, initial accumulator value, maximize)."""

import numpy as np

from .._tensor import _make
from ..autograd.grad_mode import no_grad
from . import _functional as F
from .optimizer import (Optimizer, check_number, check_plain, increment, run_closure,
                        scalar_state)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, with torch's defaults and its order of float32 operations. As in torch, the
    state (`step`, `sum`) of every parameter exists from construction.

    >>> import gradviz as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = torch.optim.Adagrad([w], lr=0.5)
    >>> (w * 2).sum().backward(); opt.step(); w
    Parameter containing:
    tensor([0.5000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_number("Adagrad", lr=lr, weight_decay=weight_decay)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_plain("Adagrad", foreach=foreach, differentiable=differentiable, fused=fused)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = scalar_state()
                state["sum"] = _make(np.full_like(p._array(), initial_accumulator_value))

    def _loaded(self):
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient (torch's single-tensor
        Adagrad)."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, lr_decay, eps, wd = (group["lr"], group["lr_decay"], group["eps"],
                                     group["weight_decay"])
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                step = increment(state["step"])
                grad = np.asarray(p.grad._data)
                if group["maximize"]:
                    grad = -grad
                param = p._array()
                if wd != 0:
                    grad = F.add(grad, param, wd)
                clr = lr / (1 + (step - 1) * lr_decay)
                acc = state["sum"]
                s = acc._array()
                F.addcmul(s, grad, grad, 1, out=s)
                F.bump(acc, "addcmul_")
                std = F.sqrt(s)
                std += s.dtype.type(eps)
                F.addcdiv(param, grad, std, -clr, out=param)
                F.bump(p, "addcdiv_")
        return loss
