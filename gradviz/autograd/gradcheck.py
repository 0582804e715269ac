"""gradcheck: analytic gradients against central finite differences, in float64."""

import numpy as np

from .engine import grad as autograd_grad

__all__ = ["gradcheck", "numerical_jacobian", "analytical_jacobian", "GradcheckError"]


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


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              **unused):
    """True when backward agrees with central finite differences for every input element.

    Inputs that require grad should be float64, as torch also warns.

    >>> import gradviz as torch
    >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(lambda x: (x ** 3).sum(), (x,))
    True
    """
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


def _fmt(m):
    from .._tensor import _make
    return repr(_make(np.asarray(m, dtype=np.float64)))
