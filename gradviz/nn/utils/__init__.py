"""torch.nn.utils: gradient clipping (clip_grad_norm_, clip_grad_value_, get_total_norm,
clip_grads_with_norm_), as the training loops of char-RNN and transformer tutorials call it.

>>> import gradviz as torch
>>> w = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
>>> w.grad = torch.tensor([3.0, 4.0])
>>> torch.nn.utils.clip_grad_norm_([w], max_norm=1.0)
tensor(5.)
>>> w.grad
tensor([0.6000, 0.8000])
"""

import types
import warnings

from ... import _creation
from ...autograd.callsite import user_stacklevel
from ...autograd.grad_mode import no_grad
from ...linalg import vector_norm
from ..._ops.views import stack
from ..._missing import module_getattr as _module_getattr

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "rnn"]


def _tensors(parameters):
    return [parameters] if hasattr(parameters, "grad") else list(parameters)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of all the tensors' elements together: the norm of their norms."""
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _creation.tensor(0.0)
    with no_grad():
        total = vector_norm(stack([vector_norm(t, norm_type) for t in tensors]), norm_type)
    if error_if_nonfinite and (total.isnan() or total.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale every gradient in place by min(max_norm / (total_norm + 1e-6), 1); torch
    multiplies even when the factor is 1 (each .grad's _version goes up)."""
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Clip the parameters' gradients so that their total norm is at most max_norm; returns
    the total norm before clipping."""
    if not hasattr(parameters, "grad"):
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=user_stacklevel())
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient in place into [-clip_value, clip_value], as torch's foreach path
    on CPU: clamp_min_ then clamp_max_ (two in-place edits of each .grad)."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_min_(-clip_value)
                p.grad.clamp_max_(clip_value)


from . import rnn  # noqa: E402  (pad_sequence; imports nothing of this module)

# A name torch.nn.utils has and gradviz lacks says so, with the --backend torch hint.
__getattr__ = _module_getattr("nn.utils", __name__, __all__)
