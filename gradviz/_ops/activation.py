"""Activation functions of torch.nn.functional, each one node as torch records it: gelu
(GeluBackward0), silu, softplus, leaky_relu, elu, hardtanh (relu6 is hardtanh(0, 6), as in
torch), logsigmoid and glu; and gelu_backward, the differentiable backward of gelu that torch
records under create_graph=True (GeluBackwardBackward0).
"""

import math

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._derivatives import elu_grad, glu_grad, hardtanh_grad, log_sigmoid_grad, softplus_grad
from .._dmath import gelu_derivative, np_erf
from .._registry import records
from .._tensor import _make
from ..autograd.formula import record
from ..autograd.grad_mode import _state
from ._common import _TORCH_SCALAR, _needs
from ._iterator import iter_layout, preserved
from .inplace import _check_inplace, _commit, _write

_SQRT1_2 = 1 / math.sqrt(2)
_SQRT_2_PI = math.sqrt(2 / math.pi)        # tanh approximation: sqrt(2/pi) (x + 0.044715 x^3)


def _float_input(self, kernel):
    """The input's array; torch's error for an integer tensor names its CPU kernel."""
    a = self._data
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_TORCH_SCALAR[a.dtype.name]}'")
    return a


def _unary(entry, self, r, args):
    out = _make(r)
    if _state.enabled and self._rg:
        record(entry, out, (self,), (self,) + args)
    return out


# ----- gelu --------------------------------------------------------------------------------

def np_gelu(a, approximate):
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(_SQRT_2_PI * (a + 0.044715 * a * a * a)))
    return 0.5 * a * (1 + np_erf(a * _SQRT1_2))


def _check_approximate(approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


@records("gelu")
def gelu(self, approximate="none"):
    """x * Phi(x) (GeluBackward0); approximate='tanh' uses torch's tanh formula."""
    _check_approximate(approximate)
    a = _float_input(self, "GeluKernelImpl")
    return _unary(D["gelu"], self, np_gelu(a, approximate), (approximate,))


@records("gelu_backward")
def gelu_backward(grad_output, self, approximate="none"):
    """grad_output * gelu'(self), recorded (GeluBackwardBackward0) so that gelu's gradient is
    itself differentiable under create_graph=True, as in torch."""
    out = _make(grad_output._data * gelu_derivative(self._data, approximate))
    if _state.enabled and (grad_output._rg or self._rg):
        record(D["gelu_backward"], out, (grad_output, self),
               (grad_output, self, approximate))
    return out


# ----- silu, softplus, logsigmoid ------------------------------------------------------------

def _np_sigmoid(a):
    with np.errstate(over="ignore"):
        return np.reciprocal(1 + np.exp(-a))


@records("silu")
def silu(self):
    """x * sigmoid(x) (SiluBackward0)."""
    a = _float_input(self, "silu_cpu")
    return _unary(D["silu"], self, a * _np_sigmoid(a), ())


@records("softplus")
def softplus(self, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (SoftplusBackward0)."""
    a = _float_input(self, "softplus_cpu")
    z = a * beta
    with np.errstate(over="ignore"):
        soft = np.log1p(np.exp(z)) / beta
    r = iter_layout(np.where(z > threshold, a, soft).astype(a.dtype, copy=False), a)
    return _unary(D["softplus"], self, r, (beta, threshold))


@records("log_sigmoid")
def logsigmoid(self):
    """log(sigmoid(x)), computed as -softplus(-x) without overflow (LogSigmoidBackward0)."""
    a = _float_input(self, "log_sigmoid_cpu")
    r = np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))
    return _unary(D["log_sigmoid"], self, r.astype(a.dtype, copy=False), ())


# ----- leaky_relu, elu, hardtanh -------------------------------------------------------------

def _inplace(self, entry, r, args, op):
    """Write r into self and record entry over self's history (torch's in-place forms save
    their result: LeakyReluBackward1, EluBackward1)."""
    _check_inplace(self)
    _write(self, r)
    _commit(self, entry, (self,), args, op)
    return self


@records("leaky_relu", "leaky_relu_")
def leaky_relu(self, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x (LeakyReluBackward0; LeakyReluBackward1 in
    place)."""
    a = _float_input(self, "leaky_relu_cpu")
    r = iter_layout(np.where(a > 0, a, a * negative_slope).astype(a.dtype, copy=False), a)
    if inplace:
        return _inplace(self, D["leaky_relu_"], r, (negative_slope,), "leaky_relu_")
    return _unary(D["leaky_relu"], self, r, (negative_slope,))


@records("elu", "elu_")
def elu(self, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1) (EluBackward0, with torch's saved scale and
    input_scale of 1; EluBackward1 in place)."""
    a = _float_input(self, "elu_cpu")
    r = iter_layout(np.where(a > 0, a, alpha * np.expm1(np.minimum(a, 0))).astype(
        a.dtype, copy=False), a)
    if inplace:
        if alpha < 0:
            raise RuntimeError("In-place elu backward calculation is triggered with a negative "
                               "slope which is not supported. This is caused by calling "
                               "in-place forward function with a negative slope, please call "
                               "out-of-place version instead.")
        return _inplace(self, D["elu_"], r, (alpha, 1, 1), "elu_")
    return _unary(D["elu"], self, r, (alpha, 1, 1))


@records("hardtanh")
def hardtanh(self, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val] (HardtanhBackward0; relu6 is hardtanh(x, 0, 6))."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    a = self._data
    if inplace:
        _check_inplace(self)
        orig = self.clone() if _state.enabled and self._rg else self
        _write(self, np.clip(a, min_val, max_val))
        _commit(self, D["hardtanh"], (self,), (orig, min_val, max_val), "hardtanh_")
        return self
    r = preserved(np.clip(a, min_val, max_val), a)      # torch: self's strides when dense
    if a.dtype.kind != "f":
        return _make(r.astype(a.dtype, copy=False))      # integers: no gradient, as in torch
    return _unary(D["hardtanh"], self, r.astype(a.dtype, copy=False), (min_val, max_val))


# The backwards of the piecewise-linear functions, recorded under create_graph=True as torch
# records them, so that their gradient w.r.t. self exists (and is 0).

def _piecewise_backward(entry, grad_output, self, value, args):
    out = _make(value)
    if _needs(grad_output, self):
        record(entry, out, (grad_output, self), (self,) + args)
    return out


@records("leaky_relu_backward")
def leaky_relu_backward(grad_output, self, negative_slope):
    g = grad_output._data
    factor = np.where(self._data > 0, 1.0, negative_slope).astype(g.dtype, copy=False)
    return _piecewise_backward(D["leaky_relu_backward"], grad_output, self, g * factor,
                               (negative_slope,))


@records("hardtanh_backward")
def hardtanh_backward(grad_output, self, min_val, max_val):
    return _piecewise_backward(D["hardtanh_backward"], grad_output, self,
                               hardtanh_grad(grad_output._data, self._data, min_val, max_val),
                               (min_val, max_val))


def _backward_op(entry, fn, grad_output, self, args):
    """A recorded backward (torch's XBackwardBackward0): its value is the row's own first
    derivative on arrays, fn(grad, self, *args)."""
    out = _make(fn(grad_output._data, self._data, *args))
    if _needs(grad_output, self):
        record(entry, out, (grad_output, self), (grad_output, self) + args)
    return out


@records("softplus_backward")
def softplus_backward(grad_output, self, beta, threshold):
    return _backward_op(D["softplus_backward"], softplus_grad, grad_output, self,
                        (beta, threshold))


@records("log_sigmoid_backward")
def log_sigmoid_backward(grad_output, self):
    return _backward_op(D["log_sigmoid_backward"], log_sigmoid_grad, grad_output, self, ())


@records("elu_backward")
def elu_backward(grad_output, self, alpha, scale, input_scale, is_result=False):
    return _backward_op(D["elu_backward"], elu_grad, grad_output, self,
                        (alpha, scale, input_scale, is_result))


# ----- glu ---------------------------------------------------------------------------------

@records("glu")
def glu(self, dim=-1):
    """a * sigmoid(b) for the two halves a, b of self along dim (GluBackward0)."""
    a = self._data
    if a.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + a.ndim if dim < 0 else dim
    if not 0 <= d < a.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-a.ndim}, {a.ndim - 1}], but got {dim})")
    n = a.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a = _float_input(self, "glu_cpu")
    first, second = np.split(a, 2, axis=d)
    return _unary(D["glu"], self, first * _np_sigmoid(second), (dim,))


@records("glu_backward")
def glu_backward(grad_output, self, dim):
    """glu's gradient as an op (GluBackwardBackward0), as torch records it under
    create_graph=True."""
    return _backward_op(D["glu_backward"], glu_grad, grad_output, self, (dim,))
