"""The activation functions learners reach after relu and gelu, each recorded as torch records
it: selu and celu (elu with torch's constants: EluBackward0, CeluBackward0), prelu
(PreluKernelBackward0 over a view of the weight), mish, hardswish, hardsigmoid, softshrink,
hardshrink and threshold, their in-place forms where torch has them, and the recorded backwards
torch shows under create_graph=True (HardswishBackwardBackward0, ...). softsign and tanhshrink
are compositions in torch too (nn.functional writes them).
"""

import numpy as np

from .._derivatives import DERIVATIVES as D
from .._derivatives import hardshrink_grad, hardswish_grad, prelu_array_grads, softshrink_grad
from .._registry import export, records
from .._tensor import _make
from ..autograd.formula import record, record_outputs
from ..autograd.grad_mode import _state
from ._common import _needs
from .activation import _float_input, _inplace, _unary
from .inplace import _check_inplace, _commit, _write

# torch's SELU constants (nn.functional.selu's docs; elu(x, alpha, scale) with these)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ONE_SIXTH = float(np.float32(1) / np.float32(6))   # torch's hardsigmoid_backward: 1.0f / 6.0f


def _inplace_saving_self(self, entry, r, args, op):
    """Write r into self and record entry with self's old values saved (torch saves a clone of
    self for the in-place forms whose formula reads self: HardswishBackward0,
    ThresholdBackward1, ...)."""
    _check_inplace(self)
    orig = self.clone() if _state.enabled and self._rg else self
    _write(self, r)
    _commit(self, entry, (self,), (orig,) + args, op)
    return self


def _apply(row, self, r, args, inplace):
    """r recorded as row's node over self, or written into self in place."""
    if inplace:
        return _inplace_saving_self(self, D[row], r, args, row + "_")
    return _unary(D[row], self, r, args)


# ----- selu, celu: elu with torch's coefficients ----------------------------------------------

def _np_elu(a, alpha, scale, input_scale):
    """torch's elu kernel: scale * x where x > 0, else alpha * scale * expm1(x * input_scale),
    the coefficients multiplied in the input's dtype (torch's opmath for float)."""
    t = a.dtype.type
    with np.errstate(over="ignore"):
        neg = np.expm1(np.where(a > 0, t(0), a) * t(input_scale)) * (t(alpha) * t(scale))
    return np.where(a > 0, a * t(scale), neg).astype(a.dtype, copy=False)


def _elu_with(self, row, alpha, scale, input_scale, saved, inplace):
    a = _float_input(self, "elu_cpu")
    r = _np_elu(a, alpha, scale, input_scale)
    if inplace:
        return _inplace(self, D[row + "_"], r, saved, row + "_")
    return _unary(D[row], self, r, saved)


@export("selu", tensor=False)
def selu(self):
    """scale * elu(x, alpha) with torch's SELU constants (EluBackward0)."""
    return _elu_with(self, "elu", _SELU_ALPHA, _SELU_SCALE, 1, (_SELU_ALPHA, _SELU_SCALE, 1),
                     False)


@export("selu_", tensor=False)
def selu_(self):
    """selu in place (EluBackward1)."""
    return _elu_with(self, "elu", _SELU_ALPHA, _SELU_SCALE, 1, (_SELU_ALPHA, _SELU_SCALE, 1),
                     True)


@records("celu", "celu_")
def celu_op(self, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (CeluBackward0; CeluBackward1 in
    place)."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu_with(self, "celu", alpha, 1, 1 / alpha, (alpha,), inplace)


@export("celu", tensor=False)
def celu(self, alpha=1.0):
    return celu_op(self, alpha)


@export("celu_", tensor=False)
def celu_(self, alpha=1.0):
    return celu_op(self, alpha, True)


# ----- prelu -------------------------------------------------------------------------------

@export("prelu")
@records("prelu_kernel")
def prelu(self, weight):
    """x where x > 0, else weight * x, with one weight per channel (dim 1) or one for all
    (PreluKernelBackward0; torch reshapes the weight first, a ViewBackward0)."""
    a, w = self._data, weight._data
    if a.ndim == 0:
        raise RuntimeError("Not allow zero-dim input tensor.")
    if w.size != 1:
        channels = a.shape[1] if a.ndim > 1 else 1
        if channels != w.size:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {w.size} and channel size = {channels}.")
    if a.dtype != w.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_name(a.dtype)} and {_name(w.dtype)}")
    if w.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {w.ndim}")
    shape = [1] * a.ndim
    if a.ndim > 1:
        shape[1] = w.size
    weight = weight.reshape(shape)
    r = np.where(a > 0, a, weight._data * a).astype(a.dtype, copy=False)
    out = _make(r)
    if _needs(self, weight):
        record(D["prelu_kernel"], out, (self, weight), (self, weight))
    return out


def _name(dtype):
    return {"float64": "Double", "float32": "Float", "float16": "Half"}.get(dtype.name,
                                                                          dtype.name)


# ----- mish, hardswish, hardsigmoid ---------------------------------------------------------

@records("mish")
def mish(self, inplace=False):
    """x * tanh(softplus(x)) (MishBackward0, also in place)."""
    a = _float_input(self, "mish_cpu")
    with np.errstate(over="ignore"):
        r = a * np.tanh(np.log1p(np.exp(a)))
    return _apply("mish", self, r, (), inplace)


@records("hardswish")
def hardswish(self, inplace=False):
    """x * relu6(x + 3) / 6 (HardswishBackward0, also in place)."""
    a = _float_input(self, "hardswish_cpu")
    r = a * np.minimum(np.maximum(a + 3, 0), 6) / 6
    return _apply("hardswish", self, r.astype(a.dtype, copy=False), (), inplace)


@records("hardsigmoid")
def hardsigmoid(self, inplace=False):
    """relu6(x + 3) / 6 (HardsigmoidBackward0, also in place)."""
    a = _float_input(self, "hardsigmoid_cpu")
    r = np.minimum(np.maximum(a + 3, 0), 6) / 6
    return _apply("hardsigmoid", self, r.astype(a.dtype, copy=False), (), inplace)


# ----- softshrink, hardshrink, threshold -----------------------------------------------------

@records("softshrink")
def softshrink(self, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0 (SoftshrinkBackward0)."""
    a = _float_input(self, "softshrink_cpu")
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, 1.79769e+308] for input dtype "
                           f"{_name(a.dtype)}, but found {lambd}")
    r = np.where(a > lambd, a - lambd, np.where(a < -lambd, a + lambd, a * 0))
    _vector_zeros(r, (a >= -lambd) & (a <= lambd))
    return _unary(D["softshrink"], self, r.astype(a.dtype, copy=False), (lambd,))


def _vector_zeros(r, middle):
    """torch's softshrink kernel gives a * 0 in the middle (-0.0 for a negative a) in its scalar
    loop, but +0.0 in its vector loop, which takes the elements in whole 64-byte vectors (its
    AVX-512 kernel) and leaves the remainder to the scalar loop: the same zeros here, for a
    contiguous result."""
    flat = r.reshape(-1)
    whole = flat.size - flat.size % (64 // r.itemsize)
    np.copyto(flat[:whole], 0, where=middle.reshape(-1)[:whole])


@export("hardshrink")
@records("hardshrink")
def hardshrink(self, lambd=0.5):
    """x outside [-lambd, lambd], else 0 (HardshrinkBackward0)."""
    a = _float_input(self, "hardshrink_cpu")
    r = np.where((a >= -lambd) & (a <= lambd), 0, a).astype(a.dtype, copy=False)
    return _unary(D["hardshrink"], self, r, (lambd,))


@records("threshold", "threshold_")
def threshold_op(self, threshold, value, inplace=False):
    """value where x <= threshold, else x (ThresholdBackward0; ThresholdBackward1 in place)."""
    a = self._data
    r = np.where(a <= threshold, value, a).astype(a.dtype, copy=False)
    if a.dtype.kind != "f":
        if inplace:
            _check_inplace(self)
            _write(self, r)
            _commit(self, None, (), (), "threshold_")
            return self
        return _make(r)
    if inplace:
        return _inplace_saving_self(self, D["threshold_"], r, (threshold,), "threshold_")
    return _unary(D["threshold"], self, r, (threshold,))


@export("threshold", tensor=False)
def threshold(self, threshold, value):
    return threshold_op(self, threshold, value)


@export("threshold_", tensor=False)
def threshold_(self, threshold, value):
    return threshold_op(self, threshold, value, True)


# ----- The recorded backwards (create_graph=True) --------------------------------------------

def _backward(row, fn, grad_output, self, saved):
    out = _make(fn(grad_output._data, self._data, *saved[2:]))
    if _needs(grad_output, self):
        record(D[row], out, (grad_output, self), saved)
    return out


@records("hardswish_backward")
def hardswish_backward(grad_output, self):
    return _backward("hardswish_backward", hardswish_grad, grad_output, self,
                     (grad_output, self))


@records("softshrink_backward")
def softshrink_backward(grad_output, self, lambd):
    return _backward("softshrink_backward", softshrink_grad, grad_output, self,
                     (grad_output, self, lambd))


@records("hardshrink_backward")
def hardshrink_backward(grad_output, self, lambd):
    return _backward("hardshrink_backward", hardshrink_grad, grad_output, self,
                     (grad_output, self, lambd))


@records("prelu_kernel_backward")
def prelu_kernel_backward(grad_output, self, weight):
    """prelu's gradients of self and weight as one op with two outputs
    (PreluKernelBackwardBackward0), as torch records them under create_graph=True."""
    outs = [_make(g) for g in prelu_array_grads(grad_output._data, self._data, weight._data)]
    if _needs(grad_output, self, weight):
        record_outputs(D["prelu_kernel_backward"], outs, (grad_output, self, weight),
                       (grad_output, self, weight))
    return outs


@records("hardsigmoid_backward")
def hardsigmoid_backward(tensors):
    """hardsigmoid's gradient (of tensors = grad_output, self) under create_graph=True: torch
    records it without a derivative (a NotImplemented node over the inputs that require
    grad)."""
    grad_output, self = tensors
    g, x = grad_output._data, self._data
    out = _make(np.where((x > -3) & (x < 3), g * g.dtype.type(_ONE_SIXTH), 0).astype(g.dtype))
    needed = [t for t in (grad_output, self) if t._rg]
    if _needs(*needed):
        record(D["hardsigmoid_backward"], out, needed)
    return out


__all__ = ["selu", "selu_", "celu", "celu_", "prelu", "mish", "hardswish", "hardsigmoid",
           "softshrink", "hardshrink", "threshold", "threshold_"]
