"""gradviz.optim: SGD (with momentum, dampening, weight decay, nesterov), as torch's."""

import numpy as np

from ..autograd.grad_mode import no_grad

__all__ = ["Optimizer", "SGD"]


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(params[0], dict):
            params = [{"params": params}]
        self.param_groups = []
        for g in params:
            group = dict(defaults)
            group.update(g)
            group["params"] = list(group["params"])
            self.param_groups.append(group)
        self.state = {}

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad._array()[...] = 0


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
                 nesterov=False, maximize=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    @no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            lr, mom, damp = group["lr"], group["momentum"], group["dampening"]
            wd, nesterov = group["weight_decay"], group["nesterov"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                d = p.grad._data
                if wd:
                    d = d + wd * p._data
                if mom:
                    buf = self.state.get(id(p))
                    if buf is None:
                        buf = self.state[id(p)] = np.array(d, copy=True)
                    else:
                        buf *= mom
                        buf += (1 - damp) * d
                    d = d + mom * buf if nesterov else buf
                if group["maximize"]:
                    d = -d
                _update(p, d, lr)
        return loss


def _update(p, d, lr):
    """p -= lr * d in place, counted as one in-place edit (p._version + 1), as torch's."""
    from .._ops.inplace import bump_version
    a = p._array()
    a -= np.asarray(lr * d, dtype=a.dtype)
    bump_version(p, "sub_")
