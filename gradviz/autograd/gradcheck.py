"""gradcheck: analytic gradients against central finite differences, in float64."""

import numpy as np

from .engine import grad as autograd_grad

__all__ = ["gradcheck", "gradgradcheck", "numerical_jacobian", "analytical_jacobian",
           "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when a Jacobian mismatches (and raise_exception=True)."""


def _inputs(inputs):
    from .._tensor import Tensor
    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def _outputs(out):
    from .._tensor import Tensor
    return (out,) if isinstance(out, Tensor) else tuple(o for o in out if isinstance(o, Tensor))


def numerical_jacobian(fn, inputs, eps=1e-6):
    """One Jacobian per (input, output) pair, by central differences on each element.

    fn runs in the caller's grad mode, as in torch, so that it may itself call
    autograd.grad (a check of second derivatives)."""
    inputs = _inputs(inputs)
    outs = _outputs(fn(*inputs))
    jac = []
    for t in inputs:
        if not t._rg:
            jac.append(None)
            continue
        x = t._array()
        flat = x.reshape(-1)
        cols = [np.zeros((x.size, o.numel())) for o in outs]
        for i in range(x.size):
            orig = flat[i].item()
            # The perturbation writes the storage directly: no version bump, no history.
            flat[i] = orig + eps
            plus = [np.array(o._data, dtype=np.float64).reshape(-1)
                    for o in _outputs(fn(*inputs))]
            flat[i] = orig - eps
            minus = [np.array(o._data, dtype=np.float64).reshape(-1)
                     for o in _outputs(fn(*inputs))]
            flat[i] = orig
            for c, p, m in zip(cols, plus, minus):
                c[i] = (p - m) / (2 * eps)
        jac.append(cols)
    return jac


def analytical_jacobian(fn, inputs):
    """The same Jacobians from backward, one output element at a time."""
    inputs = _inputs(inputs)
    outs = _outputs(fn(*inputs))
    diff = [t for t in inputs if t._rg]
    jac = {id(t): [np.zeros((t.numel(), o.numel())) for o in outs] for t in diff}
    for k, o in enumerate(outs):
        if not o._rg:
            continue
        for j in range(o.numel()):
            from .._tensor import _make
            g = np.zeros(o._data.shape, dtype=o._data.dtype)
            g.reshape(-1)[j] = 1
            gs = autograd_grad(o, diff, _make(g), retain_graph=True, allow_unused=True)
            for t, gi in zip(diff, gs):
                if gi is not None:
                    jac[id(t)][k][:, j] = np.asarray(gi._data, dtype=np.float64).reshape(-1)
    return [jac.get(id(t)) for t in inputs]


# Options of torch's gradcheck that select checks gradviz does not run: they may only keep
# their default (or the value that switches the check off).
_GRADCHECK_OPTIONS = {"check_grad_dtypes": (False,), "check_batched_grad": (False,),
                      "check_batched_forward_grad": (False,), "check_forward_ad": (False,),
                      "check_backward_ad": (True,), "fast_mode": (False,),
                      "masked": (None, False), "check_fwd_over_rev": (False,),
                      "check_rev_over_rev": (True,), "gen_non_contig_grad_outputs": (False,)}


def _check_options(name, options):
    for key, value in options.items():
        allowed = _GRADCHECK_OPTIONS.get(key)
        if allowed is None:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if value not in allowed:
            raise NotImplementedError(f"gradviz: torch.autograd.{name}({key}={value!r}) is not "
                                      "implemented by gradviz's core; run with --backend torch "
                                      "to use PyTorch")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, **options):
    """True when backward agrees with central finite differences for every input element.

    Inputs that require grad should be float64, as torch also warns. gradviz's backward is
    deterministic, so `nondet_tol` has nothing to tolerate.

    >>> import gradviz as torch
    >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(lambda x: (x ** 3).sum(), (x,))
    True
    """
    _check_options("gradcheck", options)
    inputs = _inputs(inputs)
    num = numerical_jacobian(func, inputs, eps)
    ana = analytical_jacobian(func, inputs)
    for i, (n, a) in enumerate(zip(num, ana)):
        if n is None:
            continue
        for k, (nk, ak) in enumerate(zip(n, a if a is not None else [np.zeros_like(x) for x in n])):
            if not np.allclose(ak, nk, rtol=rtol, atol=atol, equal_nan=False):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {k} with respect to input {i},\n"
                        f"numerical:{_fmt(nk)}\nanalytical:{_fmt(ak)}\n")
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, **options):
    """gradcheck of the gradient: checks the second derivatives of func by running gradcheck
    on the function (inputs, grad_outputs) -> autograd.grad(func(inputs), inputs,
    grad_outputs, create_graph=True), as torch does. Without grad_outputs, random ones in
    [-1, 1) are drawn (torch's draws for the same seed).

    >>> import gradviz as torch
    >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradgradcheck(lambda x: x.sin() * x, (x,))
    True
    """
    from .._creation import empty
    from .._dtype import float64
    _check_options("gradgradcheck", options)
    inputs = _inputs(inputs)
    if grad_outputs is None:
        outs = [o for o in _outputs(func(*inputs)) if o._rg]
        grad_outputs = tuple(
            empty(tuple(o.shape), dtype=o.dtype if o.is_floating_point() else float64)
            .uniform_(-1, 1).requires_grad_() for o in outs)
    else:
        grad_outputs = _inputs(grad_outputs)
    n_out = len(grad_outputs)
    diff_inputs = {i for i, x in enumerate(inputs) if getattr(x, "_rg", False)}

    def first_derivatives(*args):
        xs = args[:-n_out]
        outs = [o for o in _outputs(func(*xs)) if o._rg]
        wrt = tuple(x for i, x in enumerate(xs) if i in diff_inputs)
        grads = autograd_grad(outs, wrt, args[-n_out:], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad)


def _fmt(m):
    from .._tensor import _make
    return repr(_make(np.asarray(m, dtype=np.float64)))
