"""torch.optim.Adadelta (weight decay, maximize), the optimizer of PyTorch's MNIST example."""

from . import _functional as F
from .optimizer import Optimizer, check_ranges, increment, single_tensor_step

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, with torch's defaults and its order of float32 operations.

    >>> import gradviz as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = torch.optim.Adadelta([w])
    >>> (w * 2).sum().backward(); opt.step()
    >>> sorted(opt.state[w]), round(w.item(), 4)
    (['acc_delta', 'square_avg', 'step'], 0.9968)
    """

    step = single_tensor_step
    _LOAD_DEFAULTS = {"foreach": None, "maximize": False, "differentiable": False,
                      "capturable": False}

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_ranges("Adadelta", lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        if not rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    @staticmethod
    def _state_names(group):
        return ("square_avg", "acc_delta")

    def _update(self, group, p, grad, state):
        # torch's _single_tensor_adadelta, operation by operation
        rho = group["rho"]
        increment(state["step"])
        s = F.decay_square(state["square_avg"], grad, rho)
        eps = s.dtype.type(group["eps"])
        std = F.sqrt(s + eps)
        acc = state["acc_delta"]
        delta = F.sqrt(acc._array() + eps)
        delta /= std
        delta *= grad
        F.decay_square(acc, delta, rho)
        param = p._array()
        F.add(param, delta, -group["lr"], out=param)
        F.bump(p, "add_")
