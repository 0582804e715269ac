"""torch.optim.SGD: momentum, dampening, nesterov, weight decay, maximize."""

import numpy as np

from .._tensor import _make
from ..autograd.grad_mode import no_grad
from . import _functional as F
from .optimizer import Optimizer, check_number, refuse, required, run_closure

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

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        check_number("SGD", lr=lr, weight_decay=weight_decay)
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        for name, value, allowed in (("foreach", foreach, (None, False)),
                                     ("differentiable", differentiable, (False,)),
                                     ("fused", fused, (None, False))):
            if value not in allowed:
                refuse("SGD", name, value)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _loaded(self):
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient (torch's single-tensor SGD)."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                param = p._array()
                grad = np.asarray(p.grad._data)
                if maximize:
                    grad = -grad
                if wd != 0:
                    grad = F.add(grad, param, wd)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = _make(np.array(grad, copy=True))
                    else:
                        b = buf._array()
                        b *= b.dtype.type(momentum)
                        F.add(b, grad, 1 - dampening, out=b)
                        F.bump(buf, "add_", 2)
                    grad = F.add(grad, buf._array(), momentum) if nesterov else buf._array()
                F.add(param, grad, -lr, out=param)
                F.bump(p, "add_")
        return loss
