"""torch.optim.RMSprop (momentum, centered, weight decay, maximize)."""

import numpy as np

from .._tensor import _make
from ..autograd.grad_mode import no_grad
from . import _functional as F
from .optimizer import (Optimizer, check_number, check_plain, increment, run_closure,
                        scalar_state)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, with torch's defaults and its order of float32 operations.

    >>> import gradviz as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = torch.optim.RMSprop([w], lr=0.01)
    >>> (w * 2).sum().backward(); opt.step(); w
    Parameter containing:
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_number("RMSprop", lr=lr, weight_decay=weight_decay)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        check_plain("RMSprop", capturable=capturable, foreach=foreach,
                    differentiable=differentiable)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _loaded(self):
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient (torch's single-tensor
        RMSprop)."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                param = p._array()
                state = self.state[p]
                if not state:
                    state["step"] = scalar_state()
                    state["square_avg"] = _make(np.zeros_like(param))
                    if momentum > 0:
                        state["momentum_buffer"] = _make(np.zeros_like(param))
                    if centered:
                        state["grad_avg"] = _make(np.zeros_like(param))
                grad = np.asarray(p.grad._data)
                if group["maximize"]:
                    grad = -grad
                increment(state["step"])
                if wd != 0:
                    grad = F.add(grad, param, wd)
                sq = state["square_avg"]
                s = sq._array()
                s *= s.dtype.type(alpha)
                F.addcmul(s, grad, grad, 1 - alpha, out=s)
                F.bump(sq, "addcmul_", 2)
                if centered:
                    ga = state["grad_avg"]
                    g = ga._array()
                    F.lerp(g, grad, 1 - alpha, out=g)
                    F.bump(ga, "lerp_")
                    avg = F.sqrt(F.addcmul(s, g, g, -1))
                else:
                    avg = F.sqrt(s)
                avg += avg.dtype.type(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    b = buf._array()
                    b *= b.dtype.type(momentum)
                    F.addcdiv(b, grad, avg, 1, out=b)
                    F.bump(buf, "addcdiv_", 2)
                    F.add(param, b, -lr, out=param)
                    F.bump(p, "add_")
                else:
                    F.addcdiv(param, grad, avg, -lr, out=param)
                    F.bump(p, "addcdiv_")
        return loss
