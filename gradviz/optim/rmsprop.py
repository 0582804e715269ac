"""torch.optim.RMSprop (momentum, centered, weight decay, maximize)."""

from . import _functional as F
from .optimizer import Optimizer, check_ranges, increment, single_tensor_step

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, with torch's defaults and its order of float32 operations.

    >>> import gradviz as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = torch.optim.RMSprop([w], lr=0.01, centered=True)
    >>> (w * 2).sum().backward(); opt.step()
    >>> sorted(opt.state[w]), round(w.item(), 4)
    (['grad_avg', 'square_avg', 'step'], 0.8995)
    """

    step = single_tensor_step
    _LOAD_DEFAULTS = {"momentum": 0, "centered": False, "foreach": None, "maximize": False,
                      "differentiable": False, "capturable": False}

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_ranges("RMSprop", lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                     alpha=alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)


    @staticmethod
    def _state_names(group):
        return (("square_avg",) + (("momentum_buffer",) if group["momentum"] > 0 else ())
                + (("grad_avg",) if group["centered"] else ()))

    def _update(self, group, p, grad, state):
        alpha = group["alpha"]
        increment(state["step"])
        s = F.decay_square(state["square_avg"], grad, alpha)
        if group["centered"]:
            ga = state["grad_avg"]
            g = ga._array()
            F.lerp(g, grad, 1 - alpha, out=g)
            F.bump(ga, "lerp_")
            avg = F.sqrt(F.addcmul(s, g, g, -1))
        else:
            avg = F.sqrt(s)
        avg += avg.dtype.type(group["eps"])
        param = p._array()
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            b = buf._array()
            b *= b.dtype.type(group["momentum"])
            F.addcdiv(b, grad, avg, 1, out=b)
            F.bump(buf, "mul_", "addcdiv_")
            F.add(param, b, -group["lr"], out=param)
            F.bump(p, "add_")
        else:
            F.addcdiv(param, grad, avg, -group["lr"], out=param)
            F.bump(p, "addcdiv_")
