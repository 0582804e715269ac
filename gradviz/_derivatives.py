"""The derivative table: one row per differentiable op, as torch's derivatives.yaml.

A row is `defderiv(signature, grad_fn name, saved names, formulas)`:

    signature   the op as gradviz's forward takes it, in torch's schema notation:
                "mul(Tensor self, Tensor other)". Its Tensor parameters are the node's inputs,
                in next_functions order; each has a formula below, keyed by its name, or is
                listed in `nondiff` (never differentiated, no edge: where's condition).
    node        torch's grad_fn class name (MulBackward0); `name=` when node.name() differs.
    args        the values the forward passes in for saving, under torch's `_saved_<name>`
                names (`self`, `other`, `self_sym_sizes`, `dim`, ...).
    exact       (optional) True when every formula gives its input's gradient in that input's
                own shape and dtype (mm's, view's): the node keeps none to fit gradients to.

Names in scope in a formula are its parameters:

    grad      the gradient w.r.t. the op's output (`grads`, a list, for several outputs)
    result    the op's output (saved as `_saved_result`)
    <arg>     any name in the row's saved names

A formula only receives the names it lists, and only the values the formulas of inputs that
need a gradient use are kept alive and version-checked, as in torch. Formulas work on NumPy
arrays (a plain backward) and on Tensors (create_graph=True), through gradviz._dmath. Gradients
are summed back to each input's broadcast shape and cast to its dtype in one place
(`_dmath.fit_to`), never per row. The machinery (rows, plans, nodes, the import-time checks
that a row matches its op) is gradviz.autograd.formula; a forward names the rows it records
with `gradviz._registry.records`.
"""

import math
import operator

import numpy as np

from ._dmath import (as_tensor, cat, clamp_min, gelu_derivative, gelu_second_derivative,
                     log_sigmoid, mean_dims, narrow, sigmoid, times_constant)
from ._dmath import (expand, log, mask, matmul, put, put_view, reshape, scale,
                     shift, sign, sin, cos, exp, split_grad, stack_grads, sum_dims, sum_to,
                     take, transpose, permute, unsqueeze_dims, unstack_grad, value, where0,
                     zeros_like, maybe_multiply, floor_div, outer, pow_, rsqrt, sinh, cosh,
                     xlogy, trunc_div, plus, tanh_backward, sigmoid_backward,
                     threshold_backward, softmax_backward_data, log_softmax_backward_data,
                     select_backward, slice_backward, mse_loss_backward,
                     huber_loss_backward, smooth_l1_loss_backward, nll_loss_backward,
                     ones_like, binary_cross_entropy_backward, clamped_unrecorded, logit)
from ._dmath import fit_to
from ._dmath import (bmm, causal_fill, const_minus, const_over, div_rounded, masked_zero,
                     mat_t, sgn, unsqueeze_to, divide_by, product, zero_at_key)
from ._dmath import diagonal_fill, keep_where, scale_by_mask, spread, times_one, zero_where
from ._dmath import tanh
from . import _scratch
from ._registry import ops
from ._tensor import Tensor, _make
from ._windows import (avg_pool_grad, constant_pad, conv, conv_grad_input, conv_grad_weight,
                       gather_pad_grad, max_pool_grad)
from .autograd.formula import DERIVATIVES, defderiv, derive
from .autograd.graph import internal_overlap

__all__ = ["DERIVATIVES"]

scale_ = scale      # for formulas whose parameter `scale` (elu's) shadows the helper
_LN2 = 0.6931471805599453
_LN10 = 2.3025850929940456     # derivatives.yaml's literal (math.log(10) is 1 ulp more)
_TWO_OVER_SQRT_PI = 1.1283791670955126
_GELU_K_BETA = _TWO_OVER_SQRT_PI * 0.7071067811865476 * 0.5   # torch: M_2_SQRTPI * M_SQRT1_2 * 0.5


# ----- Named helpers for the longer formulas ----------------------------------------------

def on_tensors(*xs):
    """A formula runs under create_graph=True: its grad or saved values are Tensors. (A loop,
    not any() over a generator: half the cost, on every backward of the nn formulas.)"""
    for x in xs:
        if isinstance(x, Tensor):
            return True
    return False


def forward_of(op, x, *args):
    """op(x, *args) for a Tensor x; for an array, the value of op on it (no history). The
    gradient of a backward op that is linear in grad_output is the forward op itself."""
    if isinstance(x, Tensor):
        return op(x, *args)
    return op(as_tensor(x), *args)._data


def mm_mat2_grad(grad, self, mat2_t):
    """The gradient of self @ mat2 w.r.t. mat2, self.T @ grad. When mat2 was a transposed view
    (x @ W.t(), as nn.Linear does) it is computed as (grad.T @ self).T, so that after the
    transpose back W's gradient comes out contiguous (torch's mm_mat2_backward does the same):
    no copy to accumulate it, and fast in-place updates of W afterwards."""
    if type(grad) is _ndarray and type(self) is _ndarray:
        return (grad.T @ self).T if mat2_t else self.T @ grad
    if mat2_t:
        return mat_t(matmul(mat_t(grad), self))
    return matmul(mat_t(self), grad)


def log_sigmoid_buffer(x):
    """torch's CPU log_sigmoid_forward buffer, exp(-|x|) in x's dtype."""
    x = x._data
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(-np.abs(x)).astype(x.dtype, copy=False)


def lu_factor(A, det=False):
    """(LU, pivots) of a square matrix or a batch of them (a Tensor) as LAPACK's getrf gives
    them (torch's linalg.lu_factor): partial pivoting on the first largest |entry|, a zero
    pivot left unscaled (a singular matrix), pivots 1-based int32. det: of A.mT() when A is
    contiguous, as torch's det factors it."""
    a = A._data
    if det and A.is_contiguous():
        a = np.swapaxes(a, -1, -2)
    n = a.shape[-1]
    flat = np.array(a.reshape((-1, n, n)), dtype=a.dtype, copy=True)
    pivots = np.zeros(flat.shape[:-1], dtype=np.int32)
    for lu, piv in zip(flat, pivots):
        for j in range(n):
            p = j + int(np.argmax(np.abs(lu[j:, j])))
            piv[j] = p + 1
            if p != j:
                lu[[j, p]] = lu[[p, j]]
            if lu[j, j] != 0:
                lu[j + 1:, j] /= lu[j, j]
            lu[j + 1:, j + 1:] -= np.outer(lu[j + 1:, j], lu[j, j + 1:])
    return flat.reshape(a.shape), pivots.reshape(a.shape[:-1])


_INT64_MAX = (1 << 63) - 1
_ndarray = np.ndarray


def slice_as_given(node, name, v):
    """SliceBackward0's start or end as torch saves them for x[a:b]: as Python gave them
    (PySlice_Unpack: None is 0 for start and 2**63 - 1 for end, a negative one stays
    negative), where the formula uses them in range; v (in range) for narrow or a bound that
    is no plain int."""
    given = node._saved_lookup("given")
    if given is None:
        return v
    b = given.start if name == "start" else given.stop
    if b is None:
        return 0 if name == "start" else _INT64_MAX
    if type(b) is not int:
        try:
            # a NumPy integer, or an integer tensor of one element (x[t:]): torch reads it as
            # its __index__, so a negative one stays negative too
            b = operator.index(b)
        except TypeError:
            return v
    b = min(max(b, -_INT64_MAX - 1), _INT64_MAX)
    return b + (1 << 64) if b < 0 else b


def mm_strides(node, name, strides):
    """A saved input's strides as torch's `_saved_mat1_sym_strides` reads them, from the NumPy
    strides (bytes) its forward saved; an empty array's are its contiguous ones, a dim of
    size 0 counted as 1 (gradviz._tensor._empty_strided)."""
    shape = node._saved_lookup(name.replace("_strides", "_sizes"))
    step = node._saved_lookup("itemsize")
    if not any(strides) and 0 in shape:
        steps, n_bytes = [], step
        for n in reversed(shape):
            steps.append(n_bytes)
            n_bytes *= max(n, 1)
        strides = tuple(reversed(steps))
    return tuple(s // step for s in strides)


def no_gradient(grad):
    """Zeros: the derivative of a piecewise-constant function (torch's zeros_like(grad))."""
    return zeros_like(grad)


def no_derivative_floor_divide(grad):
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


def no_derivative_floor_divide_(grad):
    raise RuntimeError("derivative for aten::floor_divide_ is not implemented")    # `x //= y`


def no_derivative_remainder(grad):
    raise RuntimeError("derivative for aten::remainder is not implemented")


_BOOL_SUB = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
             "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def minus(a, b):
    """a - b in a formula; a bool tensor among them is torch's error (NumPy would subtract a
    bool array from a float one), as torch's backward raises it."""
    for x in (a, b):
        if not isinstance(x, Tensor) and getattr(x, "dtype", None) == np.bool_:
            raise RuntimeError(_BOOL_SUB)
    return a - b


def pow_grad_self(grad, self, exponent):
    """torch's pow_backward_self: grad * (exponent * self ** (exponent - 1)), with 0 where the
    exponent is 0 (self ** -1 would otherwise turn 0 ** 0 into 0 * inf = nan)."""
    if not isinstance(exponent, (Tensor, np.ndarray, np.generic)):
        if exponent == 0:
            return zeros_like(grad)     # torch: plain zeros, no history under create_graph
        exponent = float(exponent)      # torch: exponent.toDouble() (its nodes save 2.0, not 2)
        return grad * scale(pow_(self, exponent - 1), exponent)
    if not isinstance(exponent, Tensor) and exponent.dtype.kind == "b":
        raise RuntimeError(_BOOL_SUB)       # torch's exponent - 1 on a bool tensor
    if not isinstance(exponent, Tensor) and exponent.dtype.kind == "u":
        # a uint8 exponent's exponent - 1 (torch wraps 0 - 1 to 255, masked below; NumPy
        # refuses the -1)
        less = exponent.astype(np.int64) - 1
    else:
        less = shift(exponent, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = grad * (exponent * pow_(self, less))
    return where0(value(exponent) == 0, g)


def pow_grad_exponent(grad, self, exponent, result):
    """torch's pow_backward_exponent: grad * where(self == 0 and exponent >= 0, 0,
    result * log(self)), so that 0 ** b has gradient 0 w.r.t. b instead of 0 * -inf = nan."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = (value(self) == 0) & (value(exponent) >= 0)
        if not isinstance(self, Tensor) and self.dtype.kind in "biu":
            # torch's pow_backward_exponent: self.to(result_type(self, exponent)).log()
            self = self.astype(np.result_type(value(result)))
        return grad * where0(cond, result * log(self))


def pow_scalar_grad_exponent(grad, self, exponent, result):
    """d(base ** x)/dx for a Python number base (PowBackward2): grad * (result * log(base)),
    masked to 0 where base == 0 and x >= 0, as torch does."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_base = float(np.log(np.float64(self)))
        if self == 0:
            return grad * where0(value(exponent) >= 0, scale(result, log_base))
        return grad * scale(result, log_base)


def prod_grad(grad, self, result, dim=None, keepdim=False):
    """d prod / d x_i = the product of the others; exact even when some x are zero (then
    computed as such a product, in O(n), or under create_graph from the n x n pairs)."""
    x = value(self)
    if dim is not None and not keepdim and x.ndim:     # (a 0-d input's dim 0 keeps it 0-d)
        grad = unsqueeze_dims(grad, (dim,), x.ndim)
        result = unsqueeze_dims(result, (dim,), x.ndim)
    if not np.any(x == 0):
        return grad * (result / self)       # torch: grad * (result / input)
    if x.ndim == 0:
        return grad
    if dim is None:
        return grad * reshape(prod_of_others(reshape(self, (-1,)), 0), x.shape)
    return grad * prod_of_others(self, dim)


def prod_of_others(self, dim):
    """For each x_i along dim, the product of the other x_j."""
    if isinstance(self, Tensor):
        n = self.shape[dim]
        xt = self.transpose(dim, -1)
        rows = fill_where(xt.unsqueeze(-2).expand(*xt.shape[:-1], n, n), np.eye(n, dtype=bool),
                          1.0)
        return rows.prod(-1).transpose(dim, -1)
    xm = np.moveaxis(self, dim, -1)
    ones = np.ones(xm.shape[:-1] + (1,), dtype=xm.dtype)
    before = np.cumprod(np.concatenate([ones, xm[..., :-1]], -1), -1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(xm, -1)[..., :-1]], -1), -1), -1)
    return np.moveaxis(before * after, -1, dim)


def evenly_distribute(grad, self, result):
    """Whole-tensor max/min/median: the gradient is shared evenly among the tied extreme
    values (among the NaNs when the result is NaN, as torch's evenly_distribute_backward)."""
    r = value(result)
    hit = np.isnan(value(self)) if np.isnan(r) else value(self) == r
    return spread(hit, grad / int(hit.sum()))


def value_selecting_grad(grad, dim, keepdim, indices, self_sym_sizes):
    """torch's value_selecting_reduction_backward (max, min, sort, topk, median along a
    dim): each gradient goes back to the position its value was taken from."""
    if not self_sym_sizes:
        return grad
    g = restore_dims(grad, dim, keepdim, len(self_sym_sizes))
    idx = restore_dims(value(indices), dim, keepdim, len(self_sym_sizes))
    return scatter_to(self_sym_sizes, dim, idx, g)


def reduce_grad(grad, self_sym_sizes, dim, keepdim):
    if dim is None:
        return expand(grad, self_sym_sizes)
    if not keepdim:
        grad = unsqueeze_dims(grad, dim, len(self_sym_sizes))
    return expand(grad, self_sym_sizes)


def mean_backward(grad, self_sym_sizes, dim, keepdim, count, self_sym_numel):
    """torch expands the gradient, then divides it by the count (DivBackward1); an array is
    divided before it is broadcast (the same values, count times fewer divisions). (torch's
    mean_backward takes self_sym_numel too, to tell a mean over every dim: saved as torch's.)"""
    if isinstance(grad, Tensor):
        return divide_by(reduce_grad(grad, self_sym_sizes, dim, keepdim), count)
    return reduce_grad(grad / count, self_sym_sizes, dim, keepdim)


def mean_all_grad(grad, self_sym_sizes, self_sym_numel):
    """mean_backward over every dim."""
    if isinstance(grad, Tensor):
        return divide_by(expand(grad, self_sym_sizes), self_sym_numel)
    return expand(grad / self_sym_numel, self_sym_sizes)


def softmax_grad(grad, result, dim):
    return softmax_backward_data(grad, result, dim)


def log_softmax_grad(grad, result, dim):
    return log_softmax_backward_data(grad, result, dim)


def softmax_double_backward(grad, grad_output, dim, output):
    """d/d(output) of _softmax_backward_data, torch's softmax_double_backward."""
    return (grad_output * grad - sum_dims(output * grad_output, dim, keepdim=True) * grad
            - grad_output * sum_dims(output * grad, dim, keepdim=True))


def maximum_grad(grad, self, other, pick_self):
    """grad where self wins, half of it at ties; torch writes it
    where(self == other, grad / 2, grad).masked_fill_(self loses, 0)."""
    a, b = value(self), value(other)
    tie = a == b
    if on_tensors(grad):
        lose = (a < b) if pick_self else (a > b)
        return fill_where(ops.where(as_tensor(tie), divide_by(grad, 2), grad), lose, 0)
    lose = (a < b) if pick_self else (a > b)
    # selects, as torch: an inf or nan gradient where self loses gives 0, not nan
    return zero_where(lose, np.where(tie, grad / 2, grad) if tie.any() else grad)


def clamp_grad(grad, self, min, max):
    """grad where min <= self <= max. The bounds may broadcast self beyond its shape: keep has
    the result's shape then (the gradient is summed back to self's shape after the row)."""
    x = value(self)
    keep = np.ones(np.shape(x), dtype=bool) if min is None else x >= value(min)
    if max is not None:
        keep = keep & (x <= value(max))
    return keep_where(keep, grad)


def clamp_min_grad(grad, self, min, max):
    """min gets the gradient where it clamps, unless it is above max (max wins), as torch."""
    lo = value(min)
    keep = lo > value(self)
    if max is not None:
        keep = keep & (lo < value(max))
    return keep_where(keep, grad)


def clamp_max_grad(grad, self, min, max):
    """max gets the gradient where it clamps, and wherever min > max (the result is max)."""
    hi = value(max)
    keep = hi < value(self)
    if min is not None:
        keep = keep | (value(min) > hi)
    return keep_where(keep, grad)


def atan2_recip(self, other):
    """1 / (self^2 + other^2), and 0 where both are 0: atan2's gradient there is 0 in torch,
    not 0 * inf = nan."""
    denom = self * self + other * other
    with np.errstate(divide="ignore"):
        return masked_zero(denom.reciprocal() if isinstance(denom, Tensor) else 1 / denom,
                           value(denom) == 0)


def xlogy_self_grad(grad, self, other):
    """d xlogy(x, y) / dx = log(y), written xlogy(grad, y) (0 where grad is 0), and 0 where
    x == 0 and y <= 0: there xlogy is the constant 0 (torch's masked_fill)."""
    return masked_zero(xlogy(grad, other), (value(self) == 0) & (value(other) <= 0))


def logit_grad(grad, self, eps=None):
    """torch's logit_backward (infinitely_differentiable_logit_backward under create_graph):
    grad / (self (1 - self)) for self in [0, 1], nan outside; with eps, for self in
    [eps, 1 - eps], 0 outside."""
    x = value(self)
    lo = 0.0 if eps is None else eps
    inside = (x >= lo) & (x <= 1.0 - lo)
    outside = np.nan if eps is None else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        g = grad / (self * const_minus(1.0, self))
    if on_tensors(g):
        return ops.where(as_tensor(inside), g, outside)
    edge = (x == 0) | (x == 1)
    if np.any(edge):
        # torch's kernel: dy * inf at 0 and 1 (so at -0.0 too, where dy / (x (1 - x)) is -inf)
        with np.errstate(invalid="ignore"):
            g = np.where(edge, grad * np.array(np.inf, dtype=np.result_type(g)), g)
    return np.where(inside, g, outside)


# ----- Helpers of the neural-network rows (activations, losses, normalization) ------------

def gelu_grad(grad, self, approximate):
    if isinstance(grad, Tensor) or isinstance(self, Tensor):
        return ops.gelu_backward(as_tensor(grad), as_tensor(self), approximate)
    return grad * gelu_derivative(self, approximate)


def gelu_double_grad_self(grad, grad_output, self, approximate):
    """grad * grad_output * gelu''(self). On Tensors with approximate='none', composed as
    torch's gelu_double_backward: with s = self * self and pdf = kBeta * exp(-0.5 * s),
    gelu'' = 2 * pdf - s * pdf (the Scalar products are MulBackward1, as torch records them)."""
    if approximate == "tanh" or not on_tensors(grad, grad_output, self):
        return grad * grad_output * gelu_second_derivative(self, approximate)
    self_sq = self * self
    pdf = scale(exp(scale(self_sq, -0.5)), _GELU_K_BETA)
    return grad * grad_output * (scale(pdf, 2) - self_sq * pdf)


def leaky_relu_grad(grad, self, negative_slope):
    if isinstance(grad, Tensor) or isinstance(self, Tensor):
        return ops.leaky_relu_backward(as_tensor(grad), as_tensor(self), negative_slope)
    return times_constant(grad, np.where(self > 0, 1.0, negative_slope))


def hardtanh_grad(grad, self, min_val, max_val):
    if isinstance(grad, Tensor) or isinstance(self, Tensor):
        return ops.hardtanh_backward(as_tensor(grad), as_tensor(self), min_val, max_val)
    # torch's kernel drops where self <= min_val or self >= max_val: a nan of self keeps grad
    return mask(~((self <= min_val) | (self >= max_val)), grad)


def silu_grad(grad, self):
    s = sigmoid(self)
    return grad * s * plus(self * const_minus(1, s), 1)


def softplus_grad(grad, self, beta, threshold):
    """grad * sigmoid(beta x), and grad itself where beta x > threshold (the linear part)."""
    if isinstance(grad, Tensor) or isinstance(self, Tensor):
        return ops.softplus_backward(as_tensor(grad), as_tensor(self), beta, threshold)
    z = scale(self, beta)
    linear = value(z) > threshold
    return mask(linear, grad) + mask(~linear, grad * sigmoid(z))


def softplus_second(grad, grad_output, self, beta, threshold):
    """torch's softplus_double_backward: sigmoid_backward(grad * grad_output, sigmoid(beta x))
    * beta, 0 in the linear part."""
    z = scale(self, beta)
    return scale(mask(value(z) <= threshold, sigmoid_backward(grad * grad_output, sigmoid(z))),
                 beta)


def log_sigmoid_grad(grad, self):
    if isinstance(grad, Tensor) or isinstance(self, Tensor):
        return ops.log_sigmoid_backward(as_tensor(grad), as_tensor(self))
    return grad * sigmoid(-self)


def log_sigmoid_second(grad, grad_output, self):
    """torch's log_sigmoid_double_backward: grad * grad_output * (s - 1) * s, s = sigmoid."""
    s = sigmoid(self)
    return grad * grad_output * shift(s, -1) * s


def elu_second(grad, grad_output, self_or_result, alpha, scale, input_scale, is_result):
    """d/dx of elu's gradient: alpha * scale * input_scale^2 * exp(x * input_scale) where
    x < 0 (strictly, as torch's elu_double_backward), else 0; from the result, the
    derivative of (result + alpha * scale) * input_scale w.r.t. the result."""
    neg = value(self_or_result) < 0
    if is_result:
        return mask(neg, scale_(grad * grad_output, input_scale))
    if isinstance(grad, Tensor) or isinstance(grad_output, Tensor):
        g = as_tensor(scale_(grad * grad_output, input_scale))
        return mask(neg, ops.elu_backward(g, as_tensor(self_or_result), alpha, scale,
                                          input_scale, False))
    with np.errstate(over="ignore", invalid="ignore"):
        e = exp(where0(~neg, self_or_result * input_scale))
    return mask(neg, grad * grad_output * e * (alpha * scale * input_scale * input_scale))


def elu_grad(grad, self, alpha, scale, input_scale, is_result=False):
    """grad * scale where x > 0, else grad * alpha * scale * input_scale * exp(x * input_scale);
    where0 keeps exp's overflow for large positive x out of the sum. With is_result, `self` is
    elu's result (in place): grad * (result + alpha * scale) * input_scale where it is <= 0."""
    if isinstance(grad, Tensor) or isinstance(self, Tensor):
        return ops.elu_backward(as_tensor(grad), as_tensor(self), alpha, scale, input_scale,
                                is_result)
    pos = ~(value(self) <= 0)         # torch's kernel tests x <= 0: a nan x takes grad * scale
    if is_result:
        t = np.result_type(self).type     # torch's negcoef: alpha * scale in the input's dtype
        return (mask(pos, grad * scale)
                + mask(~pos, grad * (self + t(alpha) * t(scale)) * input_scale))
    # exp of x clamped to x < 0 where it matters: at x = 0 torch's second derivative is 0.
    with np.errstate(over="ignore", invalid="ignore"):
        e = exp(where0(value(self) >= 0, self * input_scale))
        neg = where0(pos, grad * e * (alpha * scale * input_scale))
    return mask(pos, grad * scale) + neg


def glu_halves(self, dim):
    """(dim, the first half of self along it, the second half)."""
    n = np.shape(value(self))
    d = dim % len(n)
    half = n[d] // 2
    return d, narrow(self, d, 0, half), narrow(self, d, half, half)


def glu_grad(grad, self, dim):
    if on_tensors(grad, self):
        return ops.glu_backward(as_tensor(grad), as_tensor(self), dim)
    d, first, second = glu_halves(self, dim)
    s = sigmoid(second)
    return cat([grad * s, grad * first * s * (1 - s)], d)


def glu_double_grad_output(grad, self, dim):
    """torch's glu_double_backward_grad_output: grad * glu_backward(ones, self), its two
    halves added."""
    d, first, _ = glu_halves(self, dim)
    ones = np.ones(np.shape(value(first)), dtype=np.result_type(value(self)))
    tmp = grad * glu_grad(ones, self, dim)
    half = np.shape(value(first))[d]
    return narrow(tmp, d, 0, half) + narrow(tmp, d, half, half)


def glu_double_grad_self(grad, grad_output, self, dim):
    """torch's glu_double_backward: the derivative of glu_backward(grad_output, self) w.r.t.
    self, applied to grad (written as torch's C++ composes it)."""
    d, first, second = glu_halves(self, dim)
    half = np.shape(value(first))[d]
    sig = sigmoid(second)
    one_sub_sig = const_minus(1, sig)
    sig_one_sub_sig = sig * one_sub_sig
    gg_first, gg_second = narrow(grad, d, 0, half), narrow(grad, d, half, half)
    gi_first = gg_second * grad_output * sig_one_sub_sig
    second_order = sig_one_sub_sig * one_sub_sig - sig * sig_one_sub_sig
    gi_second = (gg_second * first * grad_output * second_order
                 + gg_first * grad_output * sig_one_sub_sig)
    return cat([gi_first, gi_second], d)


def nll_double_grad_output(grad, target, weight, reduction, ignore_index):
    """torch's nll_loss(grad, target, weight, reduction, ignore_index): the backward of
    nll_loss is linear in grad_output, with nll_loss itself as its transpose."""
    out = ops.nll_loss(as_tensor(grad), as_tensor(target),
                       None if weight is None else as_tensor(weight), reduction, ignore_index)
    return out if isinstance(grad, Tensor) else out._data


def loss_scale(g, grad, weight, reduction):
    """g * grad, times the element weights, over the element count for the mean (in torch's
    order: the count is a Python number, DivBackward1)."""
    g = g * grad
    if weight is not None:
        g = times_constant(g, value(weight))
    if reduction == 1:
        g = divide_by(g, np.size(value(g)))
    return g


def bce_grad_target(grad, self, weight, reduction):
    """torch's binary_cross_entropy_target_backward: -logit(self) grad."""
    return loss_scale(-logit(self), grad, weight, reduction)


# binary_cross_entropy_backward's formulas, torch's binary_cross_entropy_double_backward*: the
# 1e-12 keeps self = 0 or 1 finite.

def bce_double_grad_self(grad, grad_output, self, target, weight, reduction):
    """(x^2 - 2 x t + t) / ((x + eps)^2 (1 - x + eps)^2) grad grad_output."""
    num = self * self - scale(self, 2) * target + target
    den = pow_(plus(self, 1e-12), 2) * pow_(plus(const_minus(1, self), 1e-12), 2)
    return loss_scale(num / den, grad * grad_output, weight, reduction)


def bce_double_grad_target(grad, grad_output, self, weight, reduction):
    """-grad grad_output / max((1 - x) x, eps), the max taken without recording (torch clamps
    in place under NoGradGuard)."""
    res = -grad * grad_output
    if weight is not None:
        res = times_constant(res, value(weight))
    res = res / clamped_unrecorded(const_minus(1, self) * self, 1e-12)
    return loss_mean(res, reduction, self)


def bce_double_grad_output(grad, self, target, weight, reduction):
    """(x - t) / ((x + eps) (1 - x + eps)) grad, summed to grad_output's shape."""
    ggo = (self - target) / (plus(self, 1e-12) * plus(const_minus(1, self), 1e-12))
    return loss_scale(ggo, grad, weight, reduction)


def bce_logits_grad_self(grad, self, target, weight, pos_weight, reduction):
    s = sigmoid(self)
    if pos_weight is None:
        g = s - target
    else:
        t = product(pos_weight, target)        # torch: pos_weight.mul(target).add(1)...
        g = (plus(t, 1) - target) * s - t
    return in_dtype_of(loss_scale(g, grad, weight, reduction), self)


def bce_logits_grad_target(grad, self, target, weight, pos_weight, reduction):
    if pos_weight is None:
        g = -self
    else:
        g = log_sigmoid(-self) - times_constant(log_sigmoid(self), value(pos_weight))
    return in_dtype_of(loss_scale(g, grad, weight, reduction), target)


def in_dtype_of(g, x):
    """g in x's dtype. torch's engine casts every gradient to its input's dtype; a node keeps
    nothing to fit the inputs of its output's shape and dtype with (gradviz.autograd.formula),
    and this loss's dtype is the target's: a float64 input's gradient, or a pos_weight of a
    wider dtype, would widen the target's or the input's."""
    return fit_to(g, np.shape(value(x)), value(x).dtype)


def loss_mean(g, reduction, self):
    """g over self's element count for the mean (torch's `/= input.sym_numel()`)."""
    return divide_by(g, np.size(value(self))) if reduction == 1 else g


def pointwise_loss_double_grad_output(backward, grad, grad_output, self, target, reduction,
                                      param):
    """torch's huber_loss_double_backward_grad_output (and smooth_l1's): the backward of
    grad itself when unreduced, else (backward(ones) * grad).sum()."""
    if reduction == 0:
        return backward(grad, self, target, reduction, param)
    return (backward(ones_like(grad_output), self, target, reduction, param) * grad).sum()


# The formulas of smooth_l1_loss_backward and huber_loss_backward, as derivatives.yaml writes
# them: `self: *_double_backward(grad * grad_output, ...)`, `target: -*_double_backward(...)`
# and `grad_output: *_double_backward_grad_output(...)`.

def smooth_l1_double_grad(grad, grad_output, self, target, reduction, beta):
    """torch's smooth_l1_loss_double_backward of grad * grad_output: that over beta where
    |self - target| < beta."""
    if beta == 0:
        return zeros_like(grad)
    small = np.abs(value(self) - value(target)) < beta
    return loss_mean(divide_by(mask(small, grad * grad_output), beta), reduction, self)


def huber_double_grad(grad, grad_output, self, target, reduction, delta):
    """torch's huber_loss_double_backward of grad * grad_output: that where
    |self - target| < delta."""
    small = np.abs(value(self) - value(target)) < delta
    return loss_mean(mask(small, grad * grad_output), reduction, self)


def smooth_l1_double_target(grad, grad_output, self, target, reduction, beta):
    return -smooth_l1_double_grad(grad, grad_output, self, target, reduction, beta)


def huber_double_target(grad, grad_output, self, target, reduction, delta):
    return -huber_double_grad(grad, grad_output, self, target, reduction, delta)


def smooth_l1_double_grad_output(grad, grad_output, self, target, reduction, beta):
    return pointwise_loss_double_grad_output(smooth_l1_loss_backward, grad, grad_output, self,
                                             target, reduction, beta)


def huber_double_grad_output(grad, grad_output, self, target, reduction, delta):
    return pointwise_loss_double_grad_output(huber_loss_backward, grad, grad_output, self,
                                             target, reduction, delta)


def layer_norm_grads(grads, mask, input, normalized_shape, weight, bias, result1, result2, eps):
    """The gradients of input, weight and bias, those in `mask`, from the output's gradient
    grads[0]. Under create_graph=True they are the three outputs of one
    native_layer_norm_backward op (NativeLayerNormBackwardBackward0), as in torch."""
    grad = grads[0]
    if on_tensors(grad, input):
        outs = ops.native_layer_norm_backward(as_tensor(grad), as_tensor(input),
                                              normalized_shape, as_tensor(result1),
                                              as_tensor(result2), weight, bias)
        return [g if mask >> i & 1 else None for i, g in enumerate(outs)]
    return layer_norm_array_grads(grad, mask, input, normalized_shape, weight, result1,
                                  result2)


def layer_norm_array_grads(grad, mask, x, normalized_shape, weight, mean, rstd):
    """layer_norm's gradients on arrays, on the input viewed as m rows of n as torch's kernel
    views it: with xhat = (x - mean) * rstd and gw = grad * weight, per row
    grad_input = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), and over the rows
    grad_weight = sum(grad * xhat), grad_bias = sum(grad). Row and column sums are einsum's
    (one pass, no product array); xhat's array is reused for xhat * mean(gw * xhat)."""
    if np.result_type(x) == np.float16:
        # torch's kernel computes a float16 input's gradients in float32 and rounds each once
        # to its input's dtype (the weight's and bias's may be float32: mixed types)
        dts = [np.float16] + [np.float16 if weight is None else np.result_type(weight)] * 2
        out = layer_norm_array_grads(
            np.asarray(grad, np.float32), mask, np.asarray(x, np.float32), normalized_shape,
            None if weight is None else np.asarray(weight, np.float32),
            np.asarray(mean, np.float32), np.asarray(rstd, np.float32))
        return [None if g is None else g.astype(dt) for g, dt in zip(out, dts)]
    n = math.prod(normalized_shape)
    m = math.prod(np.shape(x)[:np.ndim(x) - len(normalized_shape)])
    g = np.reshape(grad, (m, n))
    out = [None, None, None]
    if mask & 4:
        out[2] = np.einsum("ij->j", g).reshape(normalized_shape)
    if not mask & 3:
        return out
    r = np.reshape(rstd, (m, 1))
    xhat = np.reshape(x, (m, n)) - np.reshape(mean, (m, 1))
    xhat *= r
    if mask & 2:
        out[1] = np.einsum("ij,ij->j", g, xhat).reshape(normalized_shape)
    if mask & 1:
        gw = g if weight is None else g * np.reshape(weight, n)
        gi = gw - (np.einsum("ij->i", gw) / n)[:, None]
        gi -= np.multiply(xhat, (np.einsum("ij,ij->i", gw, xhat) / n)[:, None], out=xhat)
        gi *= r
        out[0] = gi.reshape(np.shape(x))
    return out


def constant_like(a, x):
    """The constant array a, as a Tensor without history when x is a Tensor."""
    return as_tensor(a) if on_tensors(x) else a


def layer_norm_double_grads(grads, mask, grad_out, input, mean, normalized_shape, rstd, weight):
    """torch's layer_norm_double_backward: from the gradients ggI, ggG, ggB of
    native_layer_norm_backward's outputs, those of grad_out, input and weight, on the inputs
    viewed as M rows of N. mean and rstd are constants there (torch has no derivative for
    them), their dependence on the input is in the formulas. torch's 3. / N is a double
    division: inf for an empty normalized shape (N = 0), where every (M, N) term is empty."""
    if mask & 0b1100:
        raise NotImplementedError("the derivative for 'native_layer_norm_backward mean' is not "
                                  "implemented.")
    ggi, ggg, ggb = grads
    shape = np.shape(value(input))
    axis = len(shape) - len(normalized_shape)
    m, n = int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))
    dt = value(input).dtype
    x, go = reshape(input, (m, n)), reshape(grad_out, (m, n))
    gamma = (constant_like(np.ones(1, dtype=dt), go) if weight is None
             else reshape(weight, (1, n)))
    ggg = None if ggg is None or weight is None else reshape(ggg, (1, n))
    ggi = None if ggi is None else reshape(ggi, (m, n))
    x_mu = x - reshape(mean, (m, 1))
    r1 = reshape(rstd, (m, 1))                 # (var + eps) ** -1/2
    r2, r3 = pow_(r1, 2), pow_(r1, 3)
    x_mu_r3 = x_mu * r3
    gi = None
    if ggi is not None:
        gxhat = go * gamma
        gxhat_mu_sum = sum_dims(gxhat * x_mu, (1,), keepdim=True)
        gxhat_sum = sum_dims(gxhat, (1,), keepdim=True)
        ggi_sum = sum_dims(ggi, (1,), keepdim=True)
        ggi_mu_sum = sum_dims(ggi * x_mu, (1,), keepdim=True)
        all_sub = (divide_by(ggi_sum * gxhat_sum, n) - sum_dims(ggi * gxhat, (1,), keepdim=True)
                   + scale(r2 * gxhat_mu_sum * ggi_mu_sum, 3.0 / n if n else math.inf))
        gi_0 = divide_by(x_mu_r3 * all_sub, n)
        gi_1 = divide_by(ggi_mu_sum * r3, n) * (divide_by(gxhat_sum, n) - gxhat)
        gi_2 = divide_by(gxhat_mu_sum * r3, n) * (divide_by(ggi_sum, n) - ggi)
        gi = gi_0 + gi_1 + gi_2
    if ggg is not None:
        t0 = go * ggg * r1
        t1 = divide_by(r1 * sum_dims(go * ggg, (1,), keepdim=True), -n)
        t2 = divide_by(x_mu_r3 * sum_dims(go * ggg * x_mu, (1,), keepdim=True), -n)
        term = t0 + t1 + t2
        gi = term if gi is None else gi + term
    if gi is not None:
        gi = reshape(gi, shape)

    def first_backward(g, gam):
        """The first backward's grad_input for the output gradient g and weight gam."""
        h0 = divide_by(gam * r1, n)
        h1 = (scale(g, n) - sum_dims(g, (1,), keepdim=True)
              - x_mu * r2 * sum_dims(g * x_mu, (1,), keepdim=True))
        return h0 * h1

    gg = None
    if weight is not None and ggi is not None:
        gg = first_backward(ggi, constant_like(np.ones((), dtype=dt), go))
        gg = reshape(sum_dims(go * gg, (0,)), np.shape(value(weight)))
    ggo = None if ggi is None else first_backward(ggi, gamma)
    if ggg is not None:
        term = ggg * x_mu * r1
        ggo = term if ggo is None else ggo + term
    if ggb is not None:
        term = reshape(ggb, (1, n))
        ggo = term if ggo is None else ggo + term
    if ggo is not None:
        ggo = reshape(expand(ggo, (m, n)), shape)
    return [ggo, gi, None, None, gg, None]


def batch_norm_parts(input, running_mean, running_var, result1, result2, training, eps):
    """(xhat, rstd, reduced dims, channel shape): batch statistics in training, the running
    ones (constants) in eval."""
    x = value(input)
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    dims = (0,) + tuple(range(2, x.ndim))
    if training:
        rstd = np.reshape(value(result2), shape)
        xhat = (input - np.reshape(value(result1), shape)) * rstd
    else:
        rstd = (1 / np.sqrt(value(running_var) + eps)).reshape(shape)
        xhat = (input - value(running_mean).reshape(shape)) * rstd
    return xhat, rstd, dims, shape


def constant(value, dtype):
    """The Python number value as a read-only 0-d array of dtype, cached. In an expression
    with arrays of dtype it gives the same arithmetic as the number itself (NumPy casts a
    Python scalar to the array's dtype), without converting a Python scalar on every call,
    which costs more than the arithmetic on a vector of a few hundred channels."""
    key = (value, dtype)
    c = _CONSTANTS.get(key)
    if c is None:
        if len(_CONSTANTS) >= 256:      # momentum, eps and batch sizes: a handful in practice
            _CONSTANTS.clear()
        c = _CONSTANTS[key] = np.array(value, dtype=dtype)
        c.flags.writeable = False
    return c


_CONSTANTS = {}


def batch_norm_train_grads(grad, mask, x, weight, mean, invstd):
    """batch_norm's gradients in training on arrays, as torch's CPU kernel computes them: with
    xc = x - mean, dot_p = sum(grad * xc) and total = sum(grad) per channel,
    grad_input = (grad - total / n - xc * (dot_p * invstd**2 / n)) * (invstd * weight),
    grad_weight = dot_p * invstd and grad_bias = total. The per-channel factors are computed
    once on C values, not on the whole batch (and dot_p * invstd once for both gradients);
    a 2-D input (N, C) broadcasts them as they are."""
    c = x.shape[1]
    dt = x.dtype
    n = constant(x.size // c, dt)
    if x.ndim == 2:
        # (N, C): the per-channel vectors broadcast as they are, no reshape calls
        xc = x - mean
        dot_p = np.add.reduce(grad * xc, axis=0, dtype=dt)
        total = np.add.reduce(grad, axis=0, dtype=dt)
        gw = dot_p * invstd if mask & 3 else None
        gi = None
        if mask & 1:
            gi = grad - total / n
            gi -= np.multiply(xc, gw * invstd / n, out=xc)
            gi *= invstd if weight is None else invstd * weight
        return [gi, gw if mask & 2 else None, total if mask & 4 else None]
    shape = (1, c) + (1,) * (x.ndim - 2)
    dims = (0,) + tuple(range(2, x.ndim))
    xc = x - mean.reshape(shape)
    dot_p = np.add.reduce(grad * xc, axis=dims, dtype=dt)
    total = np.add.reduce(grad, axis=dims, dtype=dt)
    gw = dot_p * invstd if mask & 3 else None
    gi = None
    if mask & 1:
        gi = grad - (total / n).reshape(shape)
        gi -= np.multiply(xc, (gw * invstd / n).reshape(shape), out=xc)
        gi *= (invstd if weight is None else invstd * weight).reshape(shape)
    return [gi, gw if mask & 2 else None, total if mask & 4 else None]


def batch_norm_grads(grads, mask, input, weight, running_mean, running_var, result1, result2,
                     training, eps):
    """The gradients of input, weight and bias, those in `mask`, from the output's gradient
    grads[0]. Under create_graph=True they are the three outputs of one
    native_batch_norm_backward op (NativeBatchNormBackwardBackward0), as in torch."""
    grad = grads[0]
    if training and mask & 3 and type(grad) is _ndarray and type(input) is _ndarray:
        return batch_norm_train_grads(grad, mask, input, weight, result1, result2)
    stats = (running_mean, running_var, result1, result2, training, eps)
    if on_tensors(grad, input):
        outs = ops.native_batch_norm_backward(as_tensor(grad), as_tensor(input), weight,
                                              *stats)
        return [g if mask >> i & 1 else None for i, g in enumerate(outs)]
    if not mask & 3:
        return [None, None, channel_sum(grad, input)]
    if training:
        return batch_norm_train_grads(grad, mask, input, weight, result1, result2)
    # xhat once for both gradients (torch's kernel also recomputes it from the saved mean and
    # invstd: it saves neither the normalized input nor anything under another name).
    xhat, rstd, dims, shape = batch_norm_parts(input, *stats)
    gi = None
    if mask & 1:
        gw = grad if weight is None else grad * reshape(weight, shape)
        gi = gw * rstd        # in eval (training returned above)
    return [gi, sum_dims(grad * xhat, dims) if mask & 2 else None,
            channel_sum(grad, input) if mask & 4 else None]


def sum_exclude_dim1(x, keepdim=True):
    """x summed over every dim but 1, one dim at a time (torch's helper of the same name)."""
    r = sum_dims(x, (0,), keepdim=keepdim)
    for d in range(np.ndim(value(r)) - 1, 1 if keepdim else 0, -1):
        r = sum_dims(r, (d,), keepdim=keepdim)
    return r


def channels_as_dim1(v, ndim):
    """A per-channel vector unsqueezed to broadcast along dim 1 of an ndim-D input (torch's
    unsqueeze_dim1)."""
    while np.ndim(value(v)) < ndim - 1:
        v = unsqueeze_dims(v, (1,), ndim)
    if np.ndim(value(v)) == ndim - 1:
        v = unsqueeze_dims(v, (0,), ndim)
    return v


def expand_as_dim1(v, shape):
    """A per-channel vector expanded to the input's shape (torch's expand_as_dim1)."""
    while np.ndim(value(v)) < len(shape) - 1:
        v = unsqueeze_dims(v, (1,), len(shape))
    return expand(v, shape)


def batch_norm_double_grads(grads, mask, grad_out, input, weight, running_mean, running_var,
                            save_mean, save_invstd, train, eps):
    """torch's batchnorm_double_backward: from the gradients ggI, ggG, ggB of
    native_batch_norm_backward's outputs, those of grad_out, input and weight. The saved
    statistics are constants there (torch has no derivative for them), their dependence on the
    input is in the formulas."""
    if mask & 0b11000:
        raise NotImplementedError("the derivative for 'native_batch_norm_backward save_mean' is "
                                  "not implemented.")
    ggi, ggg, ggb = grads
    shape = np.shape(value(input))
    nd = len(shape)
    go = grad_out
    if weight is not None:
        gamma = expand_as_dim1(weight, shape)
        ggg = None if ggg is None else expand_as_dim1(ggg, shape)
        ggb = None if ggb is None else expand_as_dim1(ggb, shape)
    else:
        gamma = constant_like(np.ones((), dtype=value(input).dtype), go)
        ggg = None
    m = shape[0] * int(np.prod(shape[2:]))
    mu = channels_as_dim1(save_mean if train else running_mean, nd)
    x_mu = input - mu
    r1 = channels_as_dim1(save_invstd if train else pow_(plus(running_var, eps), -0.5), nd)
    r2, r3 = pow_(r1, 2), pow_(r1, 3)
    x_mu_r3 = x_mu * r3
    go_mu_sum = sum_exclude_dim1(go * x_mu)
    go_sum = sum_exclude_dim1(go)
    gi = None
    if ggi is not None and train:
        ggi_sum = sum_exclude_dim1(ggi)
        ggi_mu_sum = sum_exclude_dim1(ggi * x_mu)
        all_sub = (divide_by(ggi_sum * go_sum, m) - sum_exclude_dim1(go * ggi)
                   + scale(r2 * go_mu_sum * ggi_mu_sum, 3.0 / m))
        gi_0 = divide_by(x_mu_r3 * all_sub, m)
        gi_1 = divide_by(ggi_mu_sum * r3, m) * (divide_by(go_sum, m) - go)
        gi_2 = divide_by(go_mu_sum * r3, m) * (divide_by(ggi_sum, m) - ggi)
        gi = gamma * (gi_0 + gi_1 + gi_2)
    if ggg is not None:
        if train:
            t0 = go * r1
            t1 = divide_by(r1 * go_sum, -m)
            t2 = divide_by(x_mu_r3 * sum_exclude_dim1(go * x_mu), -m)
            term = ggg * (t0 + t1 + t2)
        else:
            term = ggg * r1 * go
        gi = term if gi is None else gi + term

    def first_backward(g, gam):
        """The first backward's grad_input (training) for the output gradient g, weight gam."""
        h0 = divide_by(gam * r1, m)
        h1 = scale(g, m) - sum_exclude_dim1(g) - x_mu * r2 * sum_exclude_dim1(g * x_mu)
        return h0 * h1

    gg = None
    if weight is not None and ggi is not None:
        if train:
            one = constant_like(np.ones((), dtype=value(input).dtype), go)
            gg = sum_exclude_dim1(ggi * first_backward(go, one), keepdim=False)
        else:
            gg = sum_exclude_dim1(ggi * go * r1, keepdim=False)
    ggo = None
    if ggi is not None:
        ggo = first_backward(ggi, gamma) if train else ggi * r1 * gamma
    if ggg is not None:
        term = ggg * x_mu * r1
        ggo = term if ggo is None else ggo + term
    if ggb is not None:
        ggo = ggb if ggo is None else ggo + ggb
    return [ggo, gi, gg, None, None]


def unsqueezed_in_place(x, dim):
    """x with a size-1 dim inserted at dim (< 0 counts from the end); torch's in-place
    unsqueeze_ on a formula's fresh result (UnsqueezeBackward1) on Tensors."""
    if on_tensors(x):
        return ops.unsqueeze_(x, dim)
    return np.expand_dims(x, dim)


def group_norm_grads(grads, mask, input, weight, N, C, HxW, group, eps, result1, result2):
    """torch's infinitely_differentiable_native_group_norm_backward: the gradients of input,
    weight and bias from those of the output (dY) and of the mean and rstd (dmean, drstd:
    outputs 1 and 2 of the node, which its own create_graph=True graph reads, as torch's
    does), on the input viewed as (N, G, C / G, HxW)."""
    dy, dmean, drstd = grads
    g, d = group, C // group
    s = 1.0 / (d * HxW)
    x = reshape(input, (N, g, d, HxW))
    mean, rstd = reshape(result1, (N, g, 1, 1)), reshape(result2, (N, g, 1, 1))
    gamma = None if weight is None else reshape(weight, (1, g, d, 1))
    dx = dgamma = dbeta = None
    if dy is not None:
        dy = reshape(dy, (N, g, d, HxW))
        ds = unsqueezed_in_place(sum_dims(dy * x, (3,)), -1)
        db = unsqueezed_in_place(sum_dims(dy, (3,)), -1)
    if mask & 1:
        rstd_cube = rstd * rstd * rstd
        spread = None
        # torch adds the mean and rstd terms only when both have a gradient.
        if dmean is not None and drstd is not None:
            dvar = scale(rstd_cube, -0.5) * reshape(drstd, (N, g, 1, 1))
            spread = var_mean_grad([dvar, reshape(dmean, (N, g, 1, 1))], x, (2, 3), 0, True)
        if dy is not None:
            a = rstd if gamma is None else rstd * gamma
            b = unsqueezed_in_place(sum_dims(ds if gamma is None else ds * gamma, (2,)), -2)
            c = unsqueezed_in_place(sum_dims(db if gamma is None else db * gamma, (2,)), -2)
            b = scale((c * mean - b) * rstd_cube, s)
            c = -b * mean - scale(c * rstd, s)
            dx = a * dy + b * x + c
            if spread is not None:
                dx = dx + spread
        else:
            dx = spread
        if dx is not None:
            dx = reshape(dx, np.shape(value(input)))
    if mask & 2 and dy is not None:
        dgamma = reshape(sum_dims((ds - db * mean) * rstd, (0,)), np.shape(value(weight)))
    if mask & 4 and dy is not None:
        dbeta = reshape(sum_dims(db, (0,)), (C,))
    return [dx, dgamma, dbeta]


def lstm_layer_grads(grads, mask, input, weight0, weight1, weight2, weight3, hx_, cx_, reverse,
                     batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional,
                     batch_first, train, result0, result1, result2):
    """The gradients of mkldnn_rnn_layer's inputs (input, weight0, weight1, weight2, weight3,
    hx_, cx_) from those of its outputs (output, hy, cy): backpropagation through time of
    the LSTM layer. The gates are computed again from the saved inputs, step by step as the
    forward did (gate order i, f, g, o; c' = f c + i g, h' = o tanh(c')). Under
    create_graph=True every step is Tensor ops, so the gradients differentiate again (torch's
    mkldnn_rnn_layer_differentiable_backward does the same, in other ops). The other
    arguments are only saved, as torch saves them (one layer, time-major: batch_sizes, mode,
    num_layers, bidirectional and batch_first do not change the math)."""
    g_out, g_hy, g_cy = (list(grads) + [None, None, None])[:3]
    x, w_ih, w_hh = input, weight0, weight1
    steps = value(input).shape[0]
    x_proj = matmul(x, transpose(w_ih, 0, 1))
    if has_biases:
        x_proj = x_proj + weight2 + weight3
    order = list(range(steps - 1, -1, -1)) if reverse else list(range(steps))
    h, c = hx_, cx_
    saved = {}
    for t in order:
        gates = x_proj[t] + matmul(h, transpose(w_hh, 0, 1))
        i, f, g, o = (narrow(gates, 1, k * gates.shape[1] // 4, gates.shape[1] // 4)
                      for k in range(4))
        i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
        c_new = f * c + i * g
        saved[t] = (h, c, i, f, g, o, tanh(c_new))
        h, c = o * saved[t][6], c_new
    dh, dc = g_hy, g_cy
    dxs = [None] * steps
    dw_ih = dw_hh = db = None
    for t in reversed(order):
        h_prev, c_prev, i, f, g, o, tc = saved[t]
        if g_out is not None:
            dh = g_out[t] if dh is None else dh + g_out[t]
        if dh is None and dc is None:
            dgates = zeros_like(cat([i, f, g, o], 1))
        else:
            do = zeros_like(o) if dh is None else dh * tc
            dct = zeros_like(tc) if dh is None else dh * o * (1 - tc * tc)
            dc = dct if dc is None else dc + dct
            dgates = cat([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                          dc * i * (1 - g * g), do * o * (1 - o)], 1)
            dc = dc * f
        dxs[t] = matmul(dgates, w_ih)
        gt = transpose(dgates, 0, 1)
        dw_ih = matmul(gt, x[t]) if dw_ih is None else dw_ih + matmul(gt, x[t])
        dw_hh = matmul(gt, h_prev) if dw_hh is None else dw_hh + matmul(gt, h_prev)
        db = sum_dims(dgates, (0,)) if db is None else db + sum_dims(dgates, (0,))
        dh = matmul(dgates, w_hh)
    dc = zeros_like(value(cx_)) if dc is None else dc
    dx = stack_grads(dxs, np.shape(value(dxs[0])), 0, value(input).dtype) if mask & 1 else None
    return [dx, dw_ih if mask & 2 else None,
            dw_hh if mask & 4 else None, db if mask & 8 else None,
            db if mask & 16 else None, dh if mask & 32 else None, dc if mask & 64 else None]


def channel_sum(grad, input):
    """grad summed over every dim but the channels' (dim 1): the bias gradient of batch_norm and
    group_norm."""
    return sum_dims(grad, (0,) + tuple(range(2, np.ndim(value(input)))))


def one_hot_columns(idx, n, dtype):
    """The (n, len(idx)) matrix whose column j is one-hot at idx[j], contiguous, in dtype. For
    a small table its rows are taken from a cached identity (one take instead of comparing
    every pair: 17 -> 12 us with the product, makemore's table); the values, layout and so the
    product's bits are the same either way."""
    if n > 512:
        return (np.arange(n)[:, None] == idx).astype(dtype)
    eye = _IDENTITY[0]
    if eye.shape[0] != n or eye.dtype != dtype:
        eye = _IDENTITY[0] = np.eye(n, dtype=dtype)
        eye.flags.writeable = False
    return eye.take(idx, axis=0).T.copy()


_IDENTITY = [np.eye(0)]


def embedding_grad(grad, weight_sym_argsize_0, indices, padding_idx, scale_grad_by_freq,
                   sparse):
    """Each looked-up row's gradient added into its row of the table (divided by how often the
    index occurs with scale_grad_by_freq); the padding row gets none. On Tensors torch's
    embedding_dense_backward op (EmbeddingDenseBackwardBackward0). (sparse is always False
    here: named so that the node saves it, as torch's embedding_backward does.)"""
    if isinstance(grad, Tensor):
        return ops.embedding_dense_backward(grad, indices, weight_sym_argsize_0, padding_idx,
                                            scale_grad_by_freq)
    idx = value(indices).reshape(-1)
    if type(grad) is not _ndarray:
        grad = np.asarray(grad)
    g = grad.reshape(idx.size, grad.shape[-1])
    dim = g.shape[1]
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=weight_sym_argsize_0)
        g = times_constant(g, (1.0 / counts[idx])[:, None])
    if not isinstance(g, Tensor) and weight_sym_argsize_0 * idx.size <= 1 << 20:
        # A small table: summing rows by a one-hot matrix product beats np.add.at's
        # per-element loop (makemore's 27-row table: ~90 -> ~10 us).
        out = one_hot_columns(idx, weight_sym_argsize_0, g.dtype) @ g
    else:
        out = put(g, (weight_sym_argsize_0, dim), (idx,), accumulate=True)
    if padding_idx >= 0:
        keep = np.ones((weight_sym_argsize_0, 1))
        keep[padding_idx] = 0
        out = times_constant(out, keep)
    return out


# ----- Arithmetic --------------------------------------------------------------------------

defderiv("add(Tensor self, Tensor other, *, Scalar alpha)",
         "AddBackward0", ("alpha",), saves_tensors=False,
         # torch saves alpha whichever input needs a gradient: self's formula names it too
         self=lambda grad, alpha: grad,
         other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)
defderiv("sub(Tensor self, Tensor other, *, Scalar alpha)",
         "SubBackward0", ("alpha",), saves_tensors=False,
         self=lambda grad, alpha: grad,          # (alpha saved always, as torch)
         other=lambda grad, alpha: maybe_multiply(-grad, alpha))
defderiv("rsub(Tensor self, Scalar other, *, Scalar alpha)",
         "RsubBackward1", ("alpha",), saves_tensors=False,
         self=lambda grad, alpha: -grad if alpha == 1 else -grad * alpha)
defderiv("rsub_tensor(Tensor self, Tensor other, *, Scalar alpha)",
         "RsubBackward0", ("alpha",), saves_tensors=False,
         self=lambda grad, alpha: maybe_multiply(-grad, alpha),
         other=lambda grad, alpha: grad)
defderiv("mul(Tensor self, Tensor other)",
         "MulBackward0", ("self", "other"), wrapped=("other",),
         self=lambda grad, other: grad * other,
         other=lambda grad, self: grad * self)
defderiv("div(Tensor self, Tensor other)",
         "DivBackward0", ("self", "other"), wrapped=("other",),
         self=lambda grad, other: grad / other,
         other=lambda grad, self, other: -grad * ((self / other) / other))
defderiv("neg(Tensor self)",
         "NegBackward0", saves_tensors=False,
         self=lambda grad: -grad)
# torch's div.Tensor_mode row: `rounding_mode.has_value() ? grad.zeros_like() : grad / other`
# (and `-grad * self / other / other` for other). The formulas name what torch's use, so the
# node saves (and version-checks) self and other as torch's does, with a zero gradient.
defderiv("div_mode(Tensor self, Tensor other, *, str rounding_mode)",
         "DivBackward2", ("self", "other", "rounding_mode"), wrapped=("other",),
         self=lambda grad, other, rounding_mode: zeros_like(grad),
         other=lambda grad, self, other, rounding_mode: zeros_like(grad))
defderiv("remainder_scalar(Tensor self, Scalar other)",
         "RemainderBackward0", saves_tensors=False,
         self=lambda grad: grad)
defderiv("remainder(Tensor self, Tensor other)",
         "RemainderBackward1", ("self", "other"),
         self=lambda grad: grad,
         other=lambda grad, self, other: -grad * div_rounded(self, other, "floor"))
# Ops torch records without a derivative: a node named NotImplemented that fails in backward.
defderiv("floor_divide(Tensor self, Tensor other)",
         "NotImplemented", name="torch::autograd::NotImplemented", saves_tensors=False,
         self=no_derivative_floor_divide,
         other=no_derivative_floor_divide)
defderiv("floor_divide_scalar(Tensor self, Scalar other)",
         "NotImplemented", name="torch::autograd::NotImplemented", saves_tensors=False,
         self=no_derivative_floor_divide)
defderiv("floor_divide_inplace(Tensor self, Tensor other)",
         "NotImplemented", name="torch::autograd::NotImplemented", saves_tensors=False,
         self=no_derivative_floor_divide_,
         other=no_derivative_floor_divide_)
defderiv("floor_divide_inplace_scalar(Tensor self, Scalar other)",
         "NotImplemented", name="torch::autograd::NotImplemented", saves_tensors=False,
         self=no_derivative_floor_divide_)
defderiv("rremainder(Tensor self, Scalar other)",
         "NotImplemented", name="torch::autograd::NotImplemented", saves_tensors=False,
         self=no_derivative_remainder)
# The Scalar overloads torch's own formulas call (C++ `t * 2.0`, `t - 1`); Python-level
# `t * 2` is MulBackward0 with a wrapped number, as in torch.
defderiv("mul_scalar(Tensor self, Scalar other)",
         "MulBackward1", ("other",), saves_tensors=False,
         self=lambda grad, other: scale(grad, other))
defderiv("sub_scalar(Tensor self, Scalar other)",
         "SubBackward1", saves_tensors=False,
         self=lambda grad: grad)
defderiv("add_scalar(Tensor self, Scalar other)",
         "AddBackward1", saves_tensors=False,
         self=lambda grad: grad)
defderiv("abs(Tensor self)",
         "AbsBackward0", ("self",),
         self=lambda grad, self: grad * sgn(self))
defderiv("reciprocal(Tensor self)",
         "ReciprocalBackward0", (),
         self=lambda grad, result: -grad * (result * result))
defderiv("pow(Tensor self, Scalar exponent)",
         "PowBackward0", ("self", "exponent"),
         self=pow_grad_self)
defderiv("pow_tensor(Tensor self, Tensor exponent)",
         "PowBackward1", ("self", "exponent"),
         self=pow_grad_self,
         exponent=pow_grad_exponent)
defderiv("pow_scalar(Scalar self, Tensor exponent)",
         "PowBackward2", ("self", "exponent"),
         exponent=pow_scalar_grad_exponent)

# ----- Unary functions ---------------------------------------------------------------------

defderiv("exp(Tensor self)", "ExpBackward0",
         self=lambda grad, result: grad * result)
defderiv("log(Tensor self)", "LogBackward0", ("self",),
         self=lambda grad, self: grad / self)
defderiv("sqrt(Tensor self)", "SqrtBackward0",
         self=lambda grad, result: grad / scale(result, 2))
defderiv("sin(Tensor self)", "SinBackward0", ("self",),
         self=lambda grad, self: grad * cos(self))
defderiv("cos(Tensor self)", "CosBackward0", ("self",),
         self=lambda grad, self: grad * -sin(self))
defderiv("tanh(Tensor self)", "TanhBackward0", exact=True,
         self=tanh_backward)
defderiv("sigmoid(Tensor self)", "SigmoidBackward0",
         self=sigmoid_backward)
# relu: mask by result > 0, not by self > 0 (torch's threshold_backward on the result).
defderiv("relu(Tensor self)", "ReluBackward0",
         self=lambda grad, result: threshold_backward(grad, result, 0))
defderiv("clamp(Tensor self, Scalar? min, Scalar? max)",
         "ClampBackward1", ("self", "min", "max"),
         self=clamp_grad)
defderiv("clamp_tensor(Tensor self, Tensor? min, Tensor? max)",
         "ClampBackward0", ("self", "min", "max"), wrapped=("min", "max"),
         self=clamp_grad,
         min=clamp_min_grad,
         max=clamp_max_grad)
defderiv("clamp_min(Tensor self, Scalar min)", "ClampMinBackward0", ("self", "min"),
         self=lambda grad, self, min: keep_where(value(self) >= min, grad))
defderiv("clamp_min_tensor(Tensor self, Tensor min)", "ClampMinBackward1", ("self", "min"),
         self=lambda grad, self, min: keep_where(value(self) >= value(min), grad),
         min=lambda grad, self, min: keep_where(value(self) < value(min), grad))
defderiv("clamp_max(Tensor self, Scalar max)", "ClampMaxBackward0", ("self", "max"),
         self=lambda grad, self, max: keep_where(value(self) <= max, grad))
defderiv("clamp_max_tensor(Tensor self, Tensor max)", "ClampMaxBackward1", ("self", "max"),
         self=lambda grad, self, max: keep_where(value(self) <= value(max), grad),
         max=lambda grad, self, max: keep_where(value(self) > value(max), grad))
defderiv("maximum(Tensor self, Tensor other)",
         "MaximumBackward0", ("self", "other"),
         self=lambda grad, self, other: maximum_grad(grad, self, other, True),
         other=lambda grad, self, other: maximum_grad(grad, other, self, True))
defderiv("minimum(Tensor self, Tensor other)",
         "MinimumBackward0", ("self", "other"),
         self=lambda grad, self, other: maximum_grad(grad, self, other, False),
         other=lambda grad, self, other: maximum_grad(grad, other, self, False))
defderiv("where(Tensor condition, Tensor input, Tensor other)",
         "WhereBackward0", ("condition",), nondiff=("condition",),
         input=lambda grad, condition: keep_where(value(condition), grad),
         other=lambda grad, condition: zero_where(value(condition), grad))
defderiv("clone(Tensor self)", "CloneBackward0", saves_tensors=False,
         self=lambda grad: grad)
# Piecewise-constant functions: torch records them and sends back zeros.
for _op, _node in (("sign", "SignBackward0"),
                   ("floor", "FloorBackward0"), ("ceil", "CeilBackward0"),
                   ("trunc", "TruncBackward0"), ("round", "RoundBackward0")):
    defderiv(f"{_op}(Tensor self)", _node, saves_tensors=False, self=no_gradient)
# torch's sgn_backward(self, grad, result) (zeros for real inputs) keeps self and the result
defderiv("sgn(Tensor self)", "SgnBackward0", ("self",),
         self=lambda grad, self, result: no_gradient(grad))
defderiv("round_decimals(Tensor self, *, int decimals)",
         "RoundBackward1", ("decimals",), saves_tensors=False, internal=("decimals",),
         self=no_gradient)

# ----- Reductions --------------------------------------------------------------------------

defderiv("sum(Tensor self)", "SumBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: expand(grad, self_sym_sizes))
defderiv("sum_dim(Tensor self, int[1]? dim, bool keepdim)",
         "SumBackward1", ("self_sym_sizes", "dim", "keepdim"), saves_tensors=False,
         self=reduce_grad)
defderiv("mean(Tensor self)",
         "MeanBackward0", ("self_sym_sizes", "self_sym_numel"), saves_tensors=False,
         self=mean_all_grad)
defderiv("mean_dim(Tensor self, int[1]? dim, bool keepdim)",
         "MeanBackward1", ("self_sym_sizes", "dim", "keepdim", "count", "self_sym_numel"),
         saves_tensors=False,
         internal=("count",),
         self=mean_backward)
defderiv("prod(Tensor self)", "ProdBackward0", ("self",),
         self=lambda grad, self, result: prod_grad(grad, self, result))
defderiv("prod_dim(Tensor self, int dim, bool keepdim)",
         "ProdBackward1", ("self", "dim", "keepdim"),
         self=lambda grad, self, dim, keepdim, result:
             prod_grad(grad, self, result, dim, keepdim))
for _op, _node, _dim_node in (("max", "MaxBackward1", "MaxBackward0"),
                              ("min", "MinBackward1", "MinBackward0")):
    defderiv(f"{_op}(Tensor self)", _node, ("self",), self=evenly_distribute)
    defderiv(f"{_op}_dim(Tensor self, int dim, bool keepdim)",
             _dim_node, ("self_sym_sizes", "dim", "keepdim", "indices"),
             self=value_selecting_grad)
defderiv("softmax(Tensor self, int dim)", "SoftmaxBackward0", ("dim",), exact=True,
         self=softmax_grad)
defderiv("log_softmax(Tensor self, int dim)", "LogSoftmaxBackward0", ("dim",), exact=True,
         self=log_softmax_grad)

# ----- Linear algebra ----------------------------------------------------------------------

# torch's mm row: mm_mat1_backward(grad, mat2, self.sym_sizes(), self.sym_strides(), ...) and
# mm_mat2_backward(grad, self, mat2.sym_sizes(), mat2.sym_strides(), ...). torch saves both
# sizes always, and each strides only for its input's gradient (else reads them as ()).
# As addmm's below: the forward saves the arrays' NumPy strides (bytes) and itemsize, turned
# into torch's strides when read (mm_strides), never per node.
_MM_ARGS = ("self", "mat2", "mat2_t", "self_sym_sizes", "self_sym_strides", "mat2_sym_sizes",
            "mat2_sym_strides", "itemsize")


def mm_mat1_grad(grad, mat2):
    """The gradient of self @ mat2 w.r.t. self, grad @ mat2.T (a t op under create_graph)."""
    if type(grad) is _ndarray and type(mat2) is _ndarray:
        return grad @ mat2.T
    return matmul(grad, mat_t(mat2))


_mm = defderiv(
    "mm(Tensor self, Tensor mat2)", "MmBackward0", _MM_ARGS, internal=("mat2_t", "itemsize"),
    exact=True,
    self=lambda grad, mat2, self_sym_sizes, self_sym_strides, mat2_sym_sizes, itemsize:
        mm_mat1_grad(grad, mat2),
    mat2=lambda grad, self, mat2_t, mat2_sym_sizes, mat2_sym_strides, self_sym_sizes, itemsize:
        mm_mat2_grad(grad, self, mat2_t))
_mm.unsaved.update(self_sym_strides=(), mat2_sym_strides=())
_mm.readers.update(self_sym_strides=mm_strides, mat2_sym_strides=mm_strides)
defderiv("bmm(Tensor self, Tensor mat2)", "BmmBackward0", ("self", "mat2"),
         self=lambda grad, mat2: bmm(grad, transpose(mat2, 1, 2)),
         mat2=lambda grad, self: bmm(transpose(self, 1, 2), grad))
defderiv("mv(Tensor self, Tensor vec)", "MvBackward0", ("self", "vec"),
         self=lambda grad, vec: outer(grad, vec),
         vec=lambda grad, self: matmul(mat_t(self), grad))
defderiv("dot(Tensor self, Tensor tensor)", "DotBackward0", ("self", "tensor"),
         self=lambda grad, tensor: grad * tensor,
         tensor=lambda grad, self: grad * self)
# addmm's row is mm's (sizes always saved, strides only for an input needing a gradient, alpha
# and beta always): its forward passes the arrays' shapes and NumPy strides (in bytes), which
# `_saved_mat1_sym_strides` turns into torch's strides when read (mm_strides).
_ADDMM_ARGS = ("mat1", "mat2", "alpha", "beta", "mat2_t", "mat1_sym_sizes", "mat1_sym_strides",
               "mat2_sym_sizes", "mat2_sym_strides", "itemsize")
_addmm = defderiv(
    "addmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta, Scalar alpha)",
    "AddmmBackward0", _ADDMM_ARGS, internal=("mat2_t", "itemsize"),
    input=lambda grad, beta, alpha, mat1_sym_sizes, mat2_sym_sizes: maybe_multiply(grad, beta),
    mat1=lambda grad, mat2, alpha, beta, mat1_sym_sizes, mat1_sym_strides, mat2_sym_sizes,
    itemsize: maybe_multiply(matmul(grad, mat_t(mat2)), alpha),
    mat2=lambda grad, mat1, alpha, beta, mat2_t, mat2_sym_sizes, mat2_sym_strides,
    mat1_sym_sizes, itemsize: maybe_multiply(mm_mat2_grad(grad, mat1, mat2_t), alpha))
_addmm.unsaved.update(mat1_sym_strides=(), mat2_sym_strides=())
_addmm.readers.update(mat1_sym_strides=mm_strides, mat2_sym_strides=mm_strides)

# ----- Views and shape ---------------------------------------------------------------------

def unsqueeze_grad(grad, dim, self_sym_sizes):
    """grad.squeeze(dim) (SqueezeBackward1 under create_graph=True)."""
    if isinstance(grad, Tensor):
        return grad.squeeze(dim)
    return reshape(grad, self_sym_sizes)


def t_grad(grad):
    """grad.t(): a t op under create_graph=True (TBackward0, as torch's `grad.t()`)."""
    if isinstance(grad, Tensor):
        return grad.t()
    return np.swapaxes(grad, 0, 1) if np.ndim(grad) == 2 else grad


defderiv("t(Tensor self)", "TBackward0", saves_tensors=False, self=t_grad)
defderiv("transpose(Tensor self, int dim0, int dim1)",
         "TransposeBackward0", ("dim0", "dim1"), saves_tensors=False,
         # (a 0-d tensor's transpose(0, -1) is itself: NumPy has no axes to swap)
         self=lambda grad, dim0, dim1: transpose(grad, dim0, dim1) if dim0 != dim1 else grad)
defderiv("permute(Tensor self, int[] dims)", "PermuteBackward0", ("dims",), saves_tensors=False,
         self=lambda grad, dims: permute(grad, tuple(np.argsort(dims))))
defderiv("view(Tensor self, SymInt[] size)",
         "ViewBackward0", ("self_sym_sizes",), saves_tensors=False, exact=True,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("reshape_alias(Tensor self, SymInt[] size)",
         "ReshapeAliasBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("unsafe_view(Tensor self, SymInt[] size)",
         "UnsafeViewBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("squeeze(Tensor self)",
         "SqueezeBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: unsqueeze_to(grad, None, self_sym_sizes))
defderiv("squeeze_dim(Tensor self, int dim)",
         "SqueezeBackward1", ("self_sym_sizes", "dim"), saves_tensors=False,
         self=lambda grad, self_sym_sizes, dim: unsqueeze_to(grad, dim, self_sym_sizes))
defderiv("squeeze_dims(Tensor self, int[] dim)",
         "SqueezeBackward2", ("self_sym_sizes", "dim"), saves_tensors=False,
         self=lambda grad, self_sym_sizes, dim: unsqueeze_to(grad, dim, self_sym_sizes))
defderiv("squeeze_dim_(Tensor self, int dim)",
         "SqueezeBackward4", ("self_sym_sizes", "dim"), saves_tensors=False,
         self=lambda grad, self_sym_sizes, dim: unsqueeze_to(grad, dim, self_sym_sizes))
# torch: grad.squeeze(dim) (SqueezeBackward1 in a second-order graph).
defderiv("unsqueeze(Tensor self, int dim)",
         "UnsqueezeBackward0", ("dim", "self_sym_sizes"), saves_tensors=False,
         internal=("self_sym_sizes",),
         self=unsqueeze_grad)
# In place: torch's formulas unsqueeze_ their fresh results (group_norm's gradient).
defderiv("unsqueeze_(Tensor self, int dim)",
         "UnsqueezeBackward1", ("dim", "self_sym_sizes"), saves_tensors=False,
         internal=("self_sym_sizes",),
         self=unsqueeze_grad)
defderiv("expand(Tensor self, SymInt[] size)",
         "ExpandBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: sum_to(grad, self_sym_sizes))

defderiv("select(Tensor self, int dim, SymInt index)",
         "SelectBackward0", ("self_sym_sizes", "dim", "index", "key", "layout"),
         saves_tensors=False, internal=("key", "layout"),
         # `layout` (self's dims from the outermost in memory, None when C-contiguous) is read
         # by the engine's in-place path (gradviz._ops.views._select_into), not here.
         self=lambda grad, self_sym_sizes, dim, index, key, layout: select_backward(
             grad, self_sym_sizes, dim, index, key))
# `given`: the Python slice of x[a:b] (None for narrow), from which `_saved_start` and
# `_saved_end` are read as torch saves them (slice_as_given)
_slice = defderiv(
    "slice(Tensor self, int dim, SymInt? start, SymInt? end, SymInt step)",
    "SliceBackward0", ("self_sym_sizes", "dim", "start", "end", "step", "key", "given"),
    saves_tensors=False, internal=("key", "given"),
    self=lambda grad, self_sym_sizes, dim, start, end, step, key, given: slice_backward(
        grad, self_sym_sizes, dim, start, end, step, key))
_slice.readers.update(start=slice_as_given, end=slice_as_given)
defderiv("index(Tensor self, Tensor?[] indices)",
         "IndexBackward0", ("self_sym_sizes", "indices"), saves_tensors=False,
         nondiff=("indices",),
         self=lambda grad, self_sym_sizes, indices: put(grad, self_sym_sizes, indices, True))
# A view edited in place reads its gradient back from its base (after CopySlices).
# size, stride and storage_offset: the view's geometry in its base's storage, as torch saves it.
defderiv("as_strided(Tensor self, SymInt[] size)",
         "AsStridedBackward0", ("size", "stride", "storage_offset", "self_sym_sizes", "steps"),
         saves_tensors=False, internal=("self_sym_sizes", "steps"),
         self=lambda grad, size, stride, storage_offset, self_sym_sizes, steps: put_view(
             grad, self_sym_sizes, steps))
defderiv("alias(Tensor self)", "AliasBackward0", saves_tensors=False,
         self=lambda grad: grad)
defderiv("to_copy(Tensor self, *, ScalarType dtype)", "ToCopyBackward0", saves_tensors=False,
         self=lambda grad: grad)
# The backward of indexing, itself differentiable (for create_graph=True): torch writes the
# gradient into zeros with _index_put_impl_.
defderiv("index_put_impl(Tensor self, Tensor?[] indices, Tensor values, bool accumulate)",
         "IndexPutImplBackward0", ("indices", "accumulate", "values_sym_sizes"),
         saves_tensors=False, nondiff=("indices",), internal=("values_sym_sizes",),
         self=lambda grad, indices, accumulate:
             grad if accumulate else grad - put(take(grad, indices), np.shape(value(grad)),
                                                indices),
         values=lambda grad, indices, values_sym_sizes: sum_to(take(grad, indices),
                                                               values_sym_sizes))
defderiv("cat(Tensor[] tensors, int dim)",
         "CatBackward0", ("dim", "sizes"), saves_tensors=False, internal=("sizes",),
         tensors=lambda grad, mask, dim, sizes: split_grad(grad, sizes, dim))
defderiv("stack(Tensor[] tensors, int dim)",
         "StackBackward0", ("dim", "n"), saves_tensors=False, internal=("n",),
         tensors=lambda grad, mask, dim, n: unstack_grad(grad, dim, n))
defderiv("unbind(Tensor self, int dim)",
         "UnbindBackward0", ("dim", "self_sym_sizes", "part_shape", "dtype"),
         internal=("self_sym_sizes", "part_shape", "dtype"),
         n_out=None, variadic=True, saves_tensors=False,
         self=lambda grads, mask, dim, part_shape, dtype:
             [stack_grads(grads, part_shape, dim, dtype)])

# ----- In-place ----------------------------------------------------------------------------

defderiv("zero_(Tensor self)", "ZeroBackward0", saves_tensors=False,
         self=lambda grad: zeros_like(grad))
defderiv("fill_(Tensor self, Scalar value)", "FillBackward2", saves_tensors=False,
         self=lambda grad: zeros_like(grad))
defderiv("fill_tensor_(Tensor self, Tensor value)", "FillBackward3", saves_tensors=False,
         self=lambda grad: zeros_like(grad),
         value=lambda grad: sum_dims(grad, None))
defderiv("copy_(Tensor self, Tensor src)",
         "CopyBackwards", ("src_sym_sizes",), saves_tensors=False, internal=("src_sym_sizes",),
         name="torch::autograd::CopyBackwards",
         self=lambda grad: zeros_like(grad),
         src=lambda grad, src_sym_sizes: sum_to(grad, src_sym_sizes))
defderiv("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate)",
         "IndexPutBackward0", ("indices", "accumulate", "values_sym_sizes"), saves_tensors=False,
         internal=("values_sym_sizes",),
         nondiff=("indices",),
         self=lambda grad, indices, accumulate, values_sym_sizes:
             grad if accumulate else zero_at_key(grad, indices, values_sym_sizes),
         values=lambda grad, indices, values_sym_sizes: sum_to(take(grad, indices),
                                                               values_sym_sizes))

# ----- Losses ------------------------------------------------------------------------------

defderiv("mse_loss(Tensor input, Tensor target, int reduction)",
         "MseLossBackward0", ("self", "target", "reduction"),
         input=lambda grad, self, target, reduction: mse_loss_backward(grad, self, target,
                                                                       reduction),
         # torch's formula for target swaps the arguments: 2 (target - self) grad.
         target=lambda grad, self, target, reduction: mse_loss_backward(grad, target, self,
                                                                        reduction))

# ----- Pointwise and special functions -----------------------------------------------------
# (formulas as torch's derivatives.yaml writes them; `self` is the input before the op)

defderiv("tan(Tensor self)", "TanBackward0",
         self=lambda grad, result: grad * plus(pow_(result, 2), 1))
defderiv("atan(Tensor self)", "AtanBackward0", ("self",),
         self=lambda grad, self: grad / plus(self * self, 1))
defderiv("asin(Tensor self)", "AsinBackward0", ("self",),
         self=lambda grad, self: grad * rsqrt(plus(-self * self, 1)))
defderiv("acos(Tensor self)", "AcosBackward0", ("self",),
         self=lambda grad, self: grad * -rsqrt(plus(-self * self, 1)))
defderiv("sinh(Tensor self)", "SinhBackward0", ("self",),
         self=lambda grad, self: grad * cosh(self))
defderiv("cosh(Tensor self)", "CoshBackward0", ("self",),
         self=lambda grad, self: grad * sinh(self))
defderiv("erf(Tensor self)", "ErfBackward0", ("self",),
         self=lambda grad, self: scale(exp(-pow_(self, 2)), _TWO_OVER_SQRT_PI) * grad)
defderiv("erfc(Tensor self)", "ErfcBackward0", ("self",),
         self=lambda grad, self: scale(exp(-pow_(self, 2)), -_TWO_OVER_SQRT_PI) * grad)
defderiv("asinh(Tensor self)", "AsinhBackward0", ("self",),
         self=lambda grad, self: grad * rsqrt(plus(pow_(self, 2), 1)))
defderiv("acosh(Tensor self)", "AcoshBackward0", ("self",),
         self=lambda grad, self: grad * rsqrt(shift(self * self, -1)))
defderiv("atanh(Tensor self)", "AtanhBackward0", ("self",),
         self=lambda grad, self: times_one(grad) / const_minus(1, pow_(self, 2)))
defderiv("logit(Tensor self, float? eps)", "LogitBackward0", ("self", "eps"),
         self=logit_grad)
defderiv("log1p(Tensor self)", "Log1PBackward0", ("self",),
         self=lambda grad, self: grad / plus(self, 1))
defderiv("expm1(Tensor self)", "Expm1Backward0",
         self=lambda grad, result: grad * plus(result, 1))
defderiv("log2(Tensor self)", "Log2Backward0", ("self",),
         self=lambda grad, self: grad / scale(self, _LN2))
defderiv("log10(Tensor self)", "Log10Backward0", ("self",),
         self=lambda grad, self: grad / scale(self, _LN10))
defderiv("exp2(Tensor self)", "Exp2Backward0",
         self=lambda grad, result: scale(grad * result, _LN2))
defderiv("rsqrt(Tensor self)", "RsqrtBackward0",
         self=lambda grad, result: scale(grad, -0.5) * pow_(result, 3))
defderiv("frac(Tensor self)", "FracBackward0", saves_tensors=False,
         self=lambda grad: grad)
defderiv("atan2(Tensor self, Tensor other)", "Atan2Backward0", ("self", "other"),
         self=lambda grad, self, other: grad * other * atan2_recip(self, other),
         other=lambda grad, self, other: grad * -self * atan2_recip(self, other))
defderiv("hypot(Tensor self, Tensor other)", "HypotBackward0", ("self", "other"),
         self=lambda grad, self, result: grad * self / result,
         other=lambda grad, other, result: grad * other / result)
defderiv("logaddexp(Tensor self, Tensor other)", "LogaddexpBackward0", ("self", "other"),
         self=lambda grad, self, other: grad / plus(exp(minus(other, self)), 1),
         other=lambda grad, self, other: grad / plus(exp(minus(self, other)), 1))
defderiv("logaddexp2(Tensor self, Tensor other)", "Logaddexp2Backward0", ("self", "other"),
         self=lambda grad, self, other: grad / plus(2.0 ** minus(other, self), 1),
         other=lambda grad, self, other: grad / plus(2.0 ** minus(self, other), 1))
defderiv("xlogy(Tensor self, Tensor other)", "XlogyBackward0", ("self", "other"),
         self=xlogy_self_grad,
         other=lambda grad, self, other: grad * self / other)
defderiv("xlogy_scalar_self(Scalar self, Tensor other)", "XlogyBackward1", ("self", "other"),
         other=lambda grad, self, other: scale(grad, self) / other)
defderiv("xlogy_scalar_other(Tensor self, Scalar other)", "XlogyBackward2", ("self", "other"),
         self=lambda grad, self, other:
             xlogy(grad, other) if other > 0 else xlogy_self_grad(grad, self, other))
defderiv("fmod_scalar(Tensor self, Scalar other)", "FmodBackward0", saves_tensors=False,
         self=lambda grad: grad)
defderiv("fmod(Tensor self, Tensor other)", "FmodBackward1", ("self", "other"),
         self=lambda grad: grad,
         other=lambda grad, self, other: -grad * div_rounded(self, other, "trunc"))
defderiv("lerp(Tensor input, Tensor end, Scalar weight)", "LerpBackward0", ("weight",),
         saves_tensors=False,
         input=lambda grad, weight: scale(grad, 1 - weight),
         end=lambda grad, weight: scale(grad, weight))
defderiv("lerp_tensor(Tensor input, Tensor end, Tensor weight)",
         "LerpBackward1", ("self", "end", "weight"),
         input=lambda grad, weight: grad * const_minus(1, weight),
         end=lambda grad, weight: grad * weight,
         weight=lambda grad, self, end: grad * (end - self))
def wrapped(x, value):
    """value as torch multiplies it into the integer tensor x: cast to x's dtype, modulo
    2**bits (value * a uint8 tensor with value -3 multiplies by 253; NumPy refuses -3)."""
    if type(value) is int and not isinstance(x, Tensor) and x.dtype.kind in "iu":
        from ._ops._common import _wrap_int     # (the forward's own cast; _ops imports this)
        return _wrap_int(value, x.dtype)
    return value


def addcdiv_grad_tensor1(grad, tensor2, value):
    """grad * (value / tensor2). torch computes value / tensor2 as tensor2.reciprocal() (a
    float) multiplied into tensor2's dtype in place, so an integer or bool tensor2 fails."""
    dt = np.asarray(tensor2._data if isinstance(tensor2, Tensor) else tensor2).dtype
    if dt.kind in "biu":
        from ._dtype import _TORCH_SCALAR
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_TORCH_SCALAR[dt.name]}")
    return grad * const_over(value, tensor2)


defderiv("addcmul(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value)",
         "AddcmulBackward0", ("tensor1", "tensor2", "value"),
         input=lambda grad: grad,
         tensor1=lambda grad, tensor2, value: grad * scale(tensor2, wrapped(tensor2, value)),
         tensor2=lambda grad, tensor1, value: grad * scale(tensor1, wrapped(tensor1, value)))
defderiv("addcdiv(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value)",
         "AddcdivBackward0", ("tensor1", "tensor2", "value"),
         input=lambda grad: grad,
         tensor1=lambda grad, tensor2, value: addcdiv_grad_tensor1(grad, tensor2, value),
         tensor2=lambda grad, tensor1, tensor2, value:
             -grad * (scale(tensor1, wrapped(tensor1, value)) / (tensor2 * tensor2)))


# ----- Reductions, scans and sorting -------------------------------------------------------
# (var, std, norm, cumsum, cumprod, logsumexp, amax, amin, sort, topk, median, ...)

from ._dmath import (abs_, cumprod, fill_where, gather, index_add_to,  # noqa: E402
                     index_select, index_zero, masked_sum, reverse_cumsum, scatter_add_to,
                     scatter_to, zero_at, zeroed)


def restore_dims(x, dim, keepdim, ndim):
    """A reduced gradient (or result) with the reduced dims back as size 1, so that it
    broadcasts against the input. `dim` is None (every dim), an int or a tuple of ints."""
    if keepdim or ndim == 0 or dim is None:
        return x            # a 0-d result broadcasts as it is (torch unsqueezes nothing)
    dims = (dim,) if isinstance(dim, int) else dim
    return unsqueeze_dims(x, dims, ndim)


def reduced_count(shape, dim):
    dims = range(len(shape)) if dim is None else dim
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def var_grad(grad, self, dim, correction, keepdim):
    """torch's var_backward: 2 / (N - correction) * grad * (self - self.mean(dim))."""
    shape = np.shape(value(self))
    n = reduced_count(shape, dim)
    c = 1 if correction is None else correction
    dims = tuple(range(len(shape))) if dim is None else dim
    # torch: self - self.mean() over every dim, self.mean(dim, keepdim=True) over some.
    if not shape:
        centered = self - self
    elif dim is None and isinstance(self, Tensor):
        centered = self - self.mean()
    else:
        centered = self - mean_dims(self, dims, keepdim=True)
    if (dim is None or not shape) and n - c <= 0:
        # torch's var_backward: no degrees of freedom over the whole tensor gives NaN where
        # self equals its mean and +inf elsewhere, whatever the sign of self - mean
        x = np.asarray(value(self))
        hit = np.where(x == x.mean(), np.nan, np.inf)
        return times_constant(expand(grad, shape), hit)
    factor = 2.0 / (n - c) if n != c else float("inf")
    return scale(restore_dims(grad, dim, keepdim, len(shape)), factor) * centered


def std_grad(grad, self, dim, correction, keepdim, result):
    """torch's std_backward: var_backward(grad / (2 * result)), 0 where the result is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g = masked_zero(grad / scale(result, 2), value(result) == 0)
    return var_grad(g, self, dim, correction, keepdim)


def mean_grad(grad, self, dim, keepdim):
    """torch's mean_backward: sum_backward(grad) / N, the count a Python number."""
    shape = np.shape(value(self))
    g = restore_dims(grad, dim, keepdim, len(shape))
    return divide_by(expand(g, shape), reduced_count(shape, dim))


def var_mean_grad(grads, self, dim, correction, keepdim, result0=None):
    """var_mean and std_mean: the (std or var) part plus the mean part, either may be None."""
    g_spread, g_mean = grads
    out = None
    if g_spread is not None:
        if result0 is None:
            out = var_grad(g_spread, self, dim, correction, keepdim)
        else:
            out = std_grad(g_spread, self, dim, correction, keepdim, result0)
    if g_mean is not None:
        m = mean_grad(g_mean, self, dim, keepdim)
        out = m if out is None else out + m
    return out


def norm_grad(grad, self, ord, dim, keepdim, result):
    """torch's linalg_vector_norm_backward, ord by ord (0 where the norm is 0)."""
    n = np.ndim(value(self))
    g = restore_dims(grad, dim, keepdim, n)
    r = restore_dims(result, dim, keepdim, n)
    rv = value(r)
    if ord == 0:
        return None         # torch: an undefined gradient (the input's grad stays None)
    if ord == 1:
        return sign(self) * g
    if ord == 2:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self * masked_zero(g / r, rv == 0)
    if np.isinf(ord):
        # The derivative of amax(abs(self)): shared evenly among the ties (and the nans).
        a = np.abs(value(self))
        hit = (a == rv) | np.isnan(a)
        dims = tuple(range(n)) if dim is None else dim
        count = np.sum(hit, axis=dims, keepdims=True).astype(rv.dtype)
        return sign(self) * scale_by_mask(hit, g / count)
    with np.errstate(divide="ignore", invalid="ignore"):
        if ord < 1:
            scaled = sign(self) * masked_zero(pow_(abs_(self), ord - 1), value(self) == 0)
            return scaled * g * pow_(r, 1 - ord)
        if ord < 2:
            scaled = sign(self) * pow_(abs_(self), ord - 1)
        else:
            scaled = self * pow_(abs_(self), ord - 2)
        return scaled * masked_zero(g / pow_(r, ord - 1), rv == 0)


def cumprod_grad(grad, self, dim, result):
    """torch's cumprod_backward, in O(n): reverse_cumsum(grad * result) / self before the first
    zero of each slice; at the first zero, the sum over k >= z of grad_k times the product of
    x_j (j <= k, j != z); 0 after it (every later output has that zero as a factor)."""
    x = value(self)
    if x.ndim == 0 or x.shape[dim] == 1:
        return grad
    is_zero = x == 0
    if not is_zero.any():
        return reverse_cumsum(result * grad, dim) / self
    n = x.shape[dim]
    if isinstance(self, Tensor):
        return cumprod_grad_pairs(grad, self, dim, n)
    pos = np.arange(n).reshape([-1 if k == dim else 1 for k in range(x.ndim)])
    has_zero = is_zero.any(axis=dim, keepdims=True)
    first = np.where(has_zero, np.argmax(is_zero, axis=dim, keepdims=True), n)
    before, at = pos < first, pos == first
    # Before the first zero self is non-zero; ones elsewhere keep the division finite.
    g_before = mask(before, reverse_cumsum(grad * result, dim) / fill_where(self, ~before, 1.0))
    partial = cumprod(fill_where(self, at, 1.0), dim)
    g_at = mask(at, sum_dims(mask(~before, grad * partial), (dim,), keepdim=True))
    return g_before + g_at


def cumprod_grad_pairs(grad, self, dim, n):
    """The same, differentiable once more (create_graph=True): d result_k / d x_i as the
    product of x_j for j <= k, j != i, for every pair (i, k) at once (n x n per slice). Past
    the first zero the gradient is 0 but its derivative w.r.t. that zero is not."""
    eye = np.eye(n, dtype=bool)
    upper = np.triu(np.ones((n, n), dtype=value(self).dtype))     # [i, k]: k >= i
    xt = self.transpose(dim, -1)
    rows = fill_where(xt.unsqueeze(-2).expand(*xt.shape[:-1], n, n), eye, 1.0)
    partial = cumprod(rows, -1) * _make(upper)
    out = sum_dims(partial * grad.transpose(dim, -1).unsqueeze(-2), (-1,))
    return out.transpose(dim, -1)


def amax_grad(grad, self, dim, keepdim, result):
    """amax/amin: the gradient is shared evenly among the tied extreme values."""
    n = np.ndim(value(self))
    r = value(restore_dims(result, dim, keepdim, n))
    hit = value(self) == r
    dims = tuple(range(n)) if not dim else dim
    count = np.sum(hit, axis=dims, keepdims=True).astype(r.dtype)
    # torch's restore_reduced_dims reshapes (ViewBackward0) where restore_dims unsqueezes
    g = reshape(grad, r.shape) if on_tensors(grad) and not keepdim else restore_dims(
        grad, dim, keepdim, n)
    # a constant tensor on Tensors: a Tensor's / leaves an ndarray to NumPy, as torch's does
    return scale_by_mask(hit, g / (as_tensor(count) if on_tensors(g) else count))


defderiv("var(Tensor self, int[1]? dim, *, Scalar? correction, bool keepdim)",
         "VarBackward0", ("self", "dim", "correction", "keepdim"),
         self=var_grad)
defderiv("std(Tensor self, int[1]? dim, *, Scalar? correction, bool keepdim)",
         "StdBackward0", ("self", "dim", "correction", "keepdim"),
         self=std_grad)
defderiv("var_mean(Tensor self, int[1]? dim, *, Scalar? correction, bool keepdim)",
         "VarMeanBackward0", ("self", "dim", "correction", "keepdim"), n_out=2,
         self=lambda grads, self, dim, correction, keepdim:
             var_mean_grad(grads, self, dim, correction, keepdim))
defderiv("std_mean(Tensor self, int[1]? dim, *, Scalar? correction, bool keepdim)",
         "StdMeanBackward0", ("self", "dim", "correction", "keepdim", "result0"), n_out=2,
         self=var_mean_grad)
defderiv("linalg_vector_norm(Tensor self, Scalar ord, int[1]? dim, bool keepdim)",
         "LinalgVectorNormBackward0", ("self", "ord", "dim", "keepdim"),
         self=norm_grad)
def cumsum_grad(grad, dim):
    """torch's cumsum_backward: grad itself when it has one element or dim has size 1 (the
    same tensor: no copy, no FlipBackward0 under create_graph), else reversed_cumsum."""
    v = value(grad)
    if np.size(v) <= 1 or np.shape(v)[dim] == 1:
        return grad
    return reverse_cumsum(grad, dim)


defderiv("cumsum(Tensor self, int dim)", "CumsumBackward0", ("dim",), saves_tensors=False,
         self=lambda grad, dim: cumsum_grad(grad, dim))
defderiv("cumprod(Tensor self, int dim)", "CumprodBackward0", ("self", "dim"),
         self=cumprod_grad)
defderiv("logsumexp(Tensor self, int[1] dim, bool keepdim)",
         "LogsumexpBackward0", ("self", "dim", "keepdim"),
         self=lambda grad, self, dim, keepdim, result:
             restore_dims(grad, dim, keepdim, np.ndim(value(self)))
             * exp(self - restore_dims(result, dim, keepdim, np.ndim(value(self)))))
defderiv("amax(Tensor self, int[1] dim, bool keepdim)",
         "AmaxBackward0", ("self", "dim", "keepdim"),
         self=amax_grad)
defderiv("amin(Tensor self, int[1] dim, bool keepdim)",
         "AminBackward0", ("self", "dim", "keepdim"),
         self=amax_grad)
defderiv("sort(Tensor self, int dim, bool descending)",
         "SortBackward0", ("dim", "self_sym_sizes", "indices"),
         self=lambda grad, dim, indices, self_sym_sizes:
             value_selecting_grad(grad, dim, True, indices, self_sym_sizes))
defderiv("sort_stable(Tensor self, *, bool? stable, int dim, bool descending)",
         "SortBackward1", ("dim", "self_sym_sizes", "indices"),
         self=lambda grad, dim, indices, self_sym_sizes:
             value_selecting_grad(grad, dim, True, indices, self_sym_sizes))
defderiv("topk(Tensor self, SymInt k, int dim, bool largest, bool sorted)",
         "TopkBackward0", ("dim", "self_sym_sizes", "indices"),
         self=lambda grad, dim, indices, self_sym_sizes:
             value_selecting_grad(grad, dim, True, indices, self_sym_sizes))
for _op, _node in (("median", "Median"), ("nanmedian", "Nanmedian")):
    defderiv(f"{_op}(Tensor self)", _node + "Backward0", ("self",), self=evenly_distribute)
    defderiv(f"{_op}_dim(Tensor self, int dim, bool keepdim)",
             _node + "Backward1", ("dim", "keepdim", "self_sym_sizes", "indices"),
             self=value_selecting_grad)


# ----- Gather, scatter and masks -----------------------------------------------------------
# (gather, scatter, scatter_add, index_select, index_add, masked_fill, masked_select, ...)

def scattered_into_zeros(grad, shape, mask):
    """zeros of shape (broadcast with mask) with grad written where mask holds, in order:
    torch's zeros.masked_scatter(mask, grad) (MaskedScatterBackward0 on Tensors)."""
    shape = np.broadcast_shapes(tuple(shape), np.shape(value(mask)))
    if on_tensors(grad):
        return ops.masked_scatter(zeroed(shape, grad), as_tensor(value(mask)), grad)
    # masked_scatter reads its source flat, as many elements as the mask holds (the gradient
    # of masked_scatter_backward is source-shaped, and may be longer)
    m = np.broadcast_to(value(mask), shape)
    return put(np.reshape(grad, -1)[:np.count_nonzero(m)], shape, (m,))


def masked_select_grad(grad, self, mask):
    """torch's masked_select_backward, summed back to self's shape."""
    self_shape = np.shape(value(self))
    return sum_to(scattered_into_zeros(grad, self_shape, mask), self_shape)


def masked_scatter_source_grad(grad, mask, source_sym_sizes):
    """torch's masked_scatter_backward: grad where mask holds, in order, padded with zeros to
    source's element count and viewed in its shape (an op of its own on Tensors,
    MaskedScatterBackwardBackward0)."""
    m = value(mask)
    if on_tensors(grad):
        return ops.masked_scatter_backward(grad, as_tensor(m), tuple(source_sym_sizes))
    shape = np.broadcast_shapes(np.shape(grad), np.shape(m))
    g = np.broadcast_to(grad, shape)[np.broadcast_to(m, shape)]
    missing = int(np.prod(source_sym_sizes)) - np.shape(value(g))[0]
    if missing > 0:
        g = cat([g, zeroed((missing,), g)], 0)
    return reshape(g, tuple(source_sym_sizes))


def scatter_src_grad(grad, dim, index, src_sym_sizes, node):
    """grad.gather(dim, index). When src is larger than index, torch 2.13's backward returns
    this index-shaped gradient and its engine refuses it: gradviz raises the same error."""
    idx_shape = np.shape(value(index))
    if tuple(idx_shape) != tuple(src_sym_sizes):
        raise RuntimeError(f"Function {node} returned an invalid gradient at index 1 - got "
                           f"[{', '.join(map(str, idx_shape))}] but expected shape compatible "
                           f"with [{', '.join(map(str, src_sym_sizes))}]")
    return gather(grad, dim, index)


def index_add_source_grad(grad, dim, index, source, source_dim, alpha):
    """torch: grad.index_select(dim, index), expanded to source (a 0-d source took one
    slice), times alpha."""
    g = index_select(grad, dim, index)
    if source_dim == 0:
        g = reshape(g, ())
    elif on_tensors(g):
        g = expand(g, np.shape(value(source)))      # torch's expand_as(source): ExpandBackward0
    return maybe_multiply(g, alpha)


defderiv("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad)",
         "GatherBackward0", ("dim", "index", "self", "sparse_grad"), nondiff=("index",),
         self=lambda grad, dim, index, self, sparse_grad:
             scatter_add_to(np.shape(value(self)), dim, index, grad))
defderiv("scatter(Tensor self, int dim, Tensor index, Tensor src)",
         "ScatterBackward0", ("dim", "index", "src_sym_sizes"), nondiff=("index",),
         internal=("src_sym_sizes",),
         self=lambda grad, dim, index: zero_at(grad, dim, index),
         src=lambda grad, dim, index, src_sym_sizes:
             scatter_src_grad(grad, dim, index, src_sym_sizes, "ScatterBackward0"))
defderiv("scatter_value(Tensor self, int dim, Tensor index, Scalar value)",
         "ScatterBackward1", ("dim", "index"), nondiff=("index",),
         self=lambda grad, dim, index: zero_at(grad, dim, index))
defderiv("scatter_add(Tensor self, int dim, Tensor index, Tensor src)",
         "ScatterAddBackward0", ("dim", "index", "src_sym_sizes"), nondiff=("index",),
         internal=("src_sym_sizes",),
         self=lambda grad: grad,
         src=lambda grad, dim, index, src_sym_sizes:
             scatter_src_grad(grad, dim, index, src_sym_sizes, "ScatterAddBackward0"))
defderiv("index_select(Tensor self, int dim, Tensor index)",
         "IndexSelectBackward0", ("dim", "index", "self_sym_sizes"), nondiff=("index",),
         self=lambda grad, dim, index, self_sym_sizes:
             index_add_to(self_sym_sizes, dim, index, grad))
defderiv("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha)",
         "IndexAddBackward0", ("alpha", "dim", "index", "source", "source_dim"),
         nondiff=("index",),
         self=lambda grad: grad,
         source=index_add_source_grad)
defderiv("index_copy(Tensor self, int dim, Tensor index, Tensor source)",
         "IndexCopyBackward0", ("dim", "index", "source", "source_dim"), nondiff=("index",),
         self=lambda grad, dim, index: index_zero(grad, dim, index),
         source=lambda grad, dim, index, source, source_dim:
             index_add_source_grad(grad, dim, index, source, source_dim, 1))
defderiv("index_fill(Tensor self, int dim, Tensor index, Scalar value)",
         "IndexFillBackward0", ("dim", "index"), nondiff=("index",),
         self=lambda grad, dim, index: index_zero(grad, dim, index))
defderiv("index_fill_tensor(Tensor self, int dim, Tensor index, Tensor value)",
         "IndexFillBackward1", ("dim", "index"), nondiff=("index",),
         self=lambda grad, dim, index: index_zero(grad, dim, index),
         value=lambda grad, dim, index: sum_dims(index_select(grad, dim, index), None))
defderiv("masked_fill(Tensor self, Tensor mask, Scalar value)",
         "MaskedFillBackward0", ("mask",), nondiff=("mask",),
         self=lambda grad, mask: masked_zero(grad, value(mask)))
defderiv("masked_fill_tensor(Tensor self, Tensor mask, Tensor value)",
         "MaskedFillBackward1", ("mask",), nondiff=("mask",),
         self=lambda grad, mask: masked_zero(grad, value(mask)),
         value=lambda grad, mask: masked_sum(grad, value(mask)))
defderiv("masked_scatter(Tensor self, Tensor mask, Tensor source)",
         "MaskedScatterBackward0", ("mask", "source_sym_sizes"), nondiff=("mask",),
         self=lambda grad, mask: masked_zero(grad, value(mask)),
         source=masked_scatter_source_grad)
defderiv("masked_scatter_backward(Tensor grad_output, Tensor mask, SymInt[] sizes)",
         "MaskedScatterBackwardBackward0", ("mask", "grad_output_sizes"), nondiff=("mask",),
         internal=("grad_output_sizes",), saves_tensors=False,
         grad_output=lambda grad, mask, grad_output_sizes: scattered_into_zeros(
             grad, grad_output_sizes, mask))
defderiv("masked_select(Tensor self, Tensor mask)",
         "MaskedSelectBackward0", ("mask", "self"), nondiff=("mask",),
         self=masked_select_grad)


# ----- Shape -------------------------------------------------------------------------------
# (diag, diagonal, trace, tril/triu, flip, roll, repeat/tile and split/chunk have rows; movedim,
#  swapaxes, unflatten, broadcast_to, meshgrid, the stacks, diff and repeat_interleave are
#  composed from other ops, as torch's graph shows them.)

from ._dmath import cat_grads, diagonal, flip, roll, rot90, tril, triu  # noqa: E402


def diagonal_key(sizes, offset, dim1, dim2):
    """Index arrays (broadcasting to the diagonal's shape) of the diagonal's elements in a
    tensor of `sizes`."""
    n = len(sizes)
    start1, start2 = max(-offset, 0), max(offset, 0)
    length = max(min(sizes[dim1] - start1, sizes[dim2] - start2), 0)
    others = [d for d in range(n) if d not in (dim1, dim2)]
    m = len(others) + 1
    key = [None] * n
    for j, d in enumerate(others):
        shape = [1] * m
        shape[j] = sizes[d]
        key[d] = np.arange(sizes[d]).reshape(shape)
    diag = np.arange(length).reshape([1] * (m - 1) + [length])
    key[dim1] = diag + start1
    key[dim2] = diag + start2
    return tuple(key)


def diagonal_grad(grad, self_sym_sizes, offset, dim1, dim2):
    """torch's diagonal_backward: zeros with grad written on the diagonal (an op of its own,
    DiagonalBackwardBackward0, on Tensors)."""
    key = diagonal_key(self_sym_sizes, offset, dim1, dim2)
    if on_tensors(grad):
        return ops.diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2, key)
    return put(grad, self_sym_sizes, key)


def repeat_grad(grad, self_sym_sizes, repeats):
    """torch's repeat_backward: each leading new dim summed away (sum(0)), then grad viewed as
    (r0, s0, r1, s1, ...), with an r only where it is not 1, and summed over the r axes.
    A repeat of 0 gives constant zeros (torch's at::zeros: no history)."""
    if 0 in repeats:
        return zeroed(tuple(self_sym_sizes), grad)
    for _ in range(len(repeats) - len(self_sym_sizes)):
        grad = sum_dims(grad, 0)
    sizes, dims = [], []
    for r, s in zip(repeats[len(repeats) - len(self_sym_sizes):], self_sym_sizes):
        if r != 1:
            dims.append(len(sizes))
            sizes.append(r)
        sizes.append(s)
    if not dims:
        return grad
    return sum_dims(reshape(grad, tuple(sizes)), tuple(dims))


defderiv("tril(Tensor self, int diagonal)", "TrilBackward0", ("diagonal",), saves_tensors=False,
         self=lambda grad, diagonal: tril(grad, diagonal))
defderiv("triu(Tensor self, int diagonal)", "TriuBackward0", ("diagonal",), saves_tensors=False,
         self=lambda grad, diagonal: triu(grad, diagonal))
defderiv("diagonal(Tensor self, int offset, int dim1, int dim2)",
         "DiagonalBackward0", ("self_sym_sizes", "offset", "dim1", "dim2"), saves_tensors=False,
         self=diagonal_grad)
# torch.diag of a matrix is a copy of its diagonal (diagonal_copy), not a view.
defderiv("diagonal_copy(Tensor self, int offset, int dim1, int dim2)",
         "DiagonalBackward0_copy", ("self_sym_sizes", "offset", "dim1", "dim2"),
         saves_tensors=False,
         self=diagonal_grad)
defderiv("diag_embed(Tensor self, int offset, int dim1, int dim2)",
         "DiagEmbedBackward0", ("offset", "dim1", "dim2"), saves_tensors=False,
         self=lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2))
defderiv("trace(Tensor self)", "TraceBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: diagonal_fill(grad, self_sym_sizes))
defderiv("flip(Tensor self, int[] dims)", "FlipBackward0", ("dims",), saves_tensors=False,
         self=lambda grad, dims: flip(grad, dims))
defderiv("roll(Tensor self, SymInt[1] shifts, int[1] dims)",
         "RollBackward0", ("dims", "shifts"), saves_tensors=False,
         self=lambda grad, dims, shifts: roll(grad, tuple(-s for s in shifts), dims))
defderiv("rot90(Tensor self, int k, int[] dims)", "Rot90Backward0", ("dims", "k"),
         saves_tensors=False,
         self=lambda grad, dims, k: rot90(grad, -k, dims))
defderiv("repeat(Tensor self, SymInt[] repeats)",
         "RepeatBackward0", ("repeats", "self_sym_sizes"), saves_tensors=False,
         self=repeat_grad)
def split_backward(grads, self_sym_sizes, split_size, dim):
    """The backward of split: the pieces' sizes follow from the input's size and split_size."""
    size = self_sym_sizes[dim]
    sizes = [min(split_size, size - s) for s in range(0, size, split_size)] if split_size \
        else [0]
    return cat_grads(grads, sizes or [0], self_sym_sizes, dim)


defderiv("split(Tensor self, SymInt split_size, int dim)",
         "SplitBackward0", ("dim", "self_sym_sizes", "split_size"),
         n_out=None, variadic=True, saves_tensors=False,
         self=lambda grads, mask, dim, self_sym_sizes, split_size:
             [split_backward(grads, self_sym_sizes, split_size, dim)])
defderiv("split_with_sizes(Tensor self, SymInt[] split_sizes, int dim)",
         "SplitWithSizesBackward0", ("dim", "self_sym_sizes", "split_sizes"),
         n_out=None, variadic=True, saves_tensors=False,
         self=lambda grads, mask, dim, self_sym_sizes, split_sizes:
             [cat_grads(grads, split_sizes, self_sym_sizes, dim)])


# ----- Linear algebra, continued -----------------------------------------------------------
# (tensordot, einsum and kron are composed from other ops, as torch's graph shows them.)

from ._dmath import cdist_backward, contiguous, cross  # noqa: E402


def no_derivative_cdist_backward(grad):
    raise NotImplementedError("the derivative for '_cdist_backward' is not implemented.")


def euclidean_ratio(grad, result):
    """grad / dist, 0 where dist is 0 (torch's _euclidean_dist_backward)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return masked_zero(grad / result, value(result) == 0)


def euclidean_grad_x1(grad, x1, x2, result):
    """torch's _euclidean_dist_backward for x1, through matrix products (so that float32
    rounding follows torch's): x1 * sum_j ratio_ij - ratio @ x2."""
    ratio = euclidean_ratio(grad, result)
    return x1 * sum_dims(ratio, -1, keepdim=True) - matmul(ratio, x2)


def euclidean_grad_x2(grad, x1, x2, result):
    ratio = euclidean_ratio(grad, result)
    s = sum_dims(ratio, -2)
    return x2 * unsqueeze_dims(s, (np.ndim(value(s)),), 0) - matmul(transpose(ratio), x1)


def inv_grad(grad, result):
    """torch's linalg_inv_ex backward: -inv^T @ (grad @ inv^T)."""
    # Two transposes, as torch's `inverse.mH()` written twice.
    return -matmul(transpose(result), matmul(grad, transpose(result)))


def det_grad(grad, A, result):
    """d det(A) / dA = det(A) inv(A)^T. Where A is exactly singular (no inverse) the gradient
    is 0, as torch 2.13 gives it (its LU solve of a zero right-hand side), although the
    derivative there is the adjugate's transpose."""
    if isinstance(A, Tensor):
        return det_grad_solved(grad, A, result)
    g = unsqueeze_dims(grad, (np.ndim(grad), np.ndim(grad) + 1), 0)
    a = value(A)
    d = value(result)
    try:
        inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        flat = a.reshape((-1,) + a.shape[-2:])
        inv = np.zeros_like(flat)
        for k, m in enumerate(flat):
            try:
                inv[k] = np.linalg.inv(m)
            except np.linalg.LinAlgError:
                pass        # singular: det is 0, and so is the gradient
        inv = inv.reshape(a.shape)
    return g * (d[..., None, None] * np.swapaxes(inv, -1, -2))


def det_grad_solved(grad, A, result):
    """det's gradient under create_graph=True, as torch's linalg_det_backward computes it then:
    the solution G of A^T G = diag(grad det), by linalg_solve_ex (differentiable in A)."""
    if np.any(np.abs(value(result)) < 100 * np.finfo(value(A).dtype).eps):
        # torch switches to an SVD-based formula for (near-)singular matrices.
        raise NotImplementedError("gradviz: the gradient of det with create_graph=True at a "
                                  "singular matrix is not implemented by gradviz's core; run "
                                  "with --backend torch to use PyTorch")
    d = grad * result
    # torch's (grad * det).unsqueeze(-1): its UnsqueezeBackward0 saves the -1 as given
    d = d.unsqueeze(-1) if isinstance(d, Tensor) else np.expand_dims(d, -1)
    d = expand(d, np.shape(value(A))[:-1])
    return ops.linalg_solve_ex(transpose(A), transpose(ops.diag_embed(d)))


def solve_grads(grad, mask, A, left, result):
    """torch's linalg_solve_backward for X = A^-1 B: gB = A^-T gX (solved again, so that it is
    differentiable in A under create_graph=True) and gA = -gB X^T."""
    if on_tensors(grad, A):
        gb = ops.linalg_solve_ex(transpose(as_tensor(A)), as_tensor(grad))
    else:
        gb = np.linalg.solve(np.swapaxes(A, -1, -2), grad)
    ga = -matmul(gb, transpose(result)) if mask & 1 else None
    return [ga, gb if mask & 2 else None]


def baddbmm_batch1_grad(grad, batch2, alpha):
    return maybe_multiply(bmm(grad, transpose(batch2, 1, 2)), alpha)


def baddbmm_batch2_grad(grad, batch1, alpha):
    return maybe_multiply(bmm(transpose(batch1, 1, 2), grad), alpha)


def addbmm_spread(grad, batch1, batch2):
    """addbmm's 2-D gradient repeated over the batch: grad.unsqueeze(0).expand(b, n, m)."""
    b, n, _ = np.shape(value(batch1))
    return expand(unsqueeze_dims(grad, (0,), 3), (b, n, np.shape(value(batch2))[2]))


defderiv("baddbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta, Scalar alpha)",
         "BaddbmmBackward0", ("alpha", "batch1", "batch2", "beta"),
         input=lambda grad, beta: maybe_multiply(grad, beta),
         batch1=baddbmm_batch1_grad,
         batch2=baddbmm_batch2_grad)
defderiv("addbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta, Scalar alpha)",
         "AddbmmBackward0", ("alpha", "batch1", "batch2", "beta"),
         input=lambda grad, beta: maybe_multiply(grad, beta),
         batch1=lambda grad, batch1, batch2, alpha: baddbmm_batch1_grad(
             addbmm_spread(grad, batch1, batch2), batch2, alpha),
         batch2=lambda grad, batch1, batch2, alpha: baddbmm_batch2_grad(
             addbmm_spread(grad, batch1, batch2), batch1, alpha))
defderiv("addmv(Tensor input, Tensor mat, Tensor vec, *, Scalar beta, Scalar alpha)",
         "AddmvBackward0", ("alpha", "beta", "mat", "vec"),
         input=lambda grad, beta: maybe_multiply(grad, beta),
         mat=lambda grad, vec, alpha: maybe_multiply(outer(grad, vec), alpha),
         vec=lambda grad, mat, alpha: maybe_multiply(matmul(mat_t(mat), grad), alpha))
defderiv("linalg_cross(Tensor input, Tensor other, int dim)",
         "LinalgCrossBackward0", ("dim", "other", "self"),
         input=lambda grad, other, dim: cross(other, grad, dim),
         other=lambda grad, self, dim: cross(grad, self, dim))
defderiv("cdist(Tensor x1, Tensor x2, float p)", "CdistBackward0", ("p", "x1", "x2"),
         x1=lambda grad, x1, x2, p, result: cdist_backward(contiguous(grad), x1, x2, p, result),
         x2=lambda grad, x1, x2, p, result: cdist_backward(
             contiguous(transpose(grad)), x2, x1, p, contiguous(transpose(result))))
# Its backward is an op of its own under create_graph=True, without a derivative (torch's
# not_implemented("_cdist_backward")).
defderiv("cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist)",
         "CdistBackwardBackward0", saves_tensors=False,
         grad=no_derivative_cdist_backward, x1=no_derivative_cdist_backward,
         x2=no_derivative_cdist_backward, cdist=no_derivative_cdist_backward)
defderiv("euclidean_dist(Tensor x1, Tensor x2)", "EuclideanDistBackward0", ("x1", "x2"),
         x1=euclidean_grad_x1,
         x2=euclidean_grad_x2)
defderiv("linalg_inv_ex(Tensor A)", "LinalgInvExBackward0", result_name="inverse",
         A=inv_grad)
defderiv("linalg_det(Tensor A)", "LinalgDetBackward0", ("A",),
         A=det_grad)
defderiv("linalg_solve_ex(Tensor A, Tensor B, bool left)", "LinalgSolveExBackward0",
         ("A", "left"), variadic=True,
         A=solve_grads, B=solve_grads)
# torch's det and solve save the LU factorization their forward computed (LAPACK's getrf:
# L below the diagonal, U on and above it; 1-based int32 row swaps): gradviz factors the
# saved A again when `_saved_LU` or `_saved_pivots` is read. torch's det factors A.mT() when
# A is contiguous (det(A) = det(A^T), and A.mT() is what LAPACK reads without a copy).
for _op, _k in (("linalg_det", 0), ("linalg_det", 1), ("linalg_solve_ex", 0),
                ("linalg_solve_ex", 1)):
    derive(DERIVATIVES[_op], ("LU", "pivots")[_k], "A",
           lambda A, k=_k, det=_op == "linalg_det": lu_factor(A, det)[k])


# ----- Neural-network ops ------------------------------------------------------------------
# (activations, embedding, dropout, convolution, pooling, normalization, losses, attention)

# activations, losses, embedding, dropout, normalization

defderiv("gelu(Tensor self, str approximate)", "GeluBackward0", ("self", "approximate"),
         self=lambda grad, self, approximate: gelu_grad(grad, self, approximate))
# gelu's backward is an op of its own, so that its gradient is differentiable (torch records it
# under create_graph=True).
defderiv("gelu_backward(Tensor grad_output, Tensor self, str approximate)",
         "GeluBackwardBackward0", ("grad_output", "self", "approximate"),
         grad_output=lambda grad, self, approximate: gelu_grad(grad, self, approximate),
         self=gelu_double_grad_self)
defderiv("silu(Tensor self)", "SiluBackward0", ("self",),
         self=silu_grad)
defderiv("softplus(Tensor self, Scalar beta, Scalar threshold)",
         "SoftplusBackward0", ("self", "beta", "threshold"),
         self=softplus_grad)
defderiv("log_sigmoid(Tensor self)", "LogSigmoidBackward0", ("self",),
         self=log_sigmoid_grad)
# The backwards of softplus, logsigmoid and elu are ops of their own under create_graph=True,
# as in torch (SoftplusBackwardBackward0, ...).
defderiv("softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold)",
         "SoftplusBackwardBackward0", ("grad_output", "self", "beta", "threshold"),
         grad_output=lambda grad, self, beta, threshold: softplus_grad(grad, self, beta,
                                                                      threshold),
         self=softplus_second)
defderiv("log_sigmoid_backward(Tensor grad_output, Tensor self)",
         "LogSigmoidBackwardBackward0", ("grad_output", "self"),
         grad_output=lambda grad, self: log_sigmoid_grad(grad, self),
         self=log_sigmoid_second)
for _op in ("log_sigmoid", "log_sigmoid_backward"):
    derive(DERIVATIVES[_op], "buffer", "self", log_sigmoid_buffer)
defderiv("elu_backward(Tensor grad_output, Tensor self, Scalar alpha, Scalar scale, "
         "Scalar input_scale, bool is_result)",
         "EluBackwardBackward0", ("grad_output", "self_or_result", "alpha", "scale",
                                  "input_scale", "is_result"),
         grad_output=lambda grad, self_or_result, alpha, scale, input_scale, is_result:
             elu_grad(grad, self_or_result, alpha, scale, input_scale, is_result),
         self=elu_second)
defderiv("leaky_relu(Tensor self, Scalar negative_slope)",
         "LeakyReluBackward0", ("self", "negative_slope"),
         self=leaky_relu_grad)
# In place, torch saves the result instead of self (its sign is self's).
defderiv("leaky_relu_(Tensor self, Scalar negative_slope)",
         "LeakyReluBackward1", ("negative_slope",),
         self=lambda grad, negative_slope, result: leaky_relu_grad(grad, result, negative_slope))
defderiv("elu_(Tensor self, Scalar alpha, Scalar scale, Scalar input_scale)",
         "EluBackward1", ("alpha", "scale", "input_scale"),
         self=lambda grad, alpha, scale, input_scale, result:
             elu_grad(grad, result, alpha, scale, input_scale, is_result=True))
defderiv("leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope)",
         "LeakyReluBackwardBackward0", ("self", "negative_slope"),
         grad_output=leaky_relu_grad,
         self=lambda grad: zeros_like(grad))
defderiv("elu(Tensor self, Scalar alpha, Scalar scale, Scalar input_scale)",
         "EluBackward0", ("self", "alpha", "scale", "input_scale"),
         self=lambda grad, self, alpha, scale, input_scale:
             elu_grad(grad, self, alpha, scale, input_scale))
# hardtanh: the gradient is 0 at the bounds themselves (torch's hardtanh_backward).
defderiv("hardtanh(Tensor self, Scalar min_val, Scalar max_val)",
         "HardtanhBackward0", ("self", "min_val", "max_val"),
         self=hardtanh_grad)
defderiv("hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val)",
         "HardtanhBackwardBackward0", ("self", "min_val", "max_val"),
         grad_output=hardtanh_grad,
         self=lambda grad: zeros_like(grad))
defderiv("glu(Tensor self, int dim)", "GluBackward0", ("self", "dim"),
         self=glu_grad)
defderiv("glu_backward(Tensor grad_output, Tensor self, int dim)", "GluBackwardBackward0",
         ("grad_output", "self", "dim"),
         grad_output=glu_double_grad_output,
         self=glu_double_grad_self)

for _op, _node in (("nll_loss", "NllLossBackward0"), ("nll_loss2d", "NllLoss2DBackward0")):
    defderiv(f"{_op}(Tensor input, Tensor target, Tensor? weight, int reduction, "
             "SymInt ignore_index)",
             _node, ("self", "target", "weight", "reduction", "ignore_index", "total_weight"),
             nondiff=("target", "weight"), exact=True,
             input=nll_loss_backward)
    # Its backward is an op of its own under create_graph=True, as in torch.
    defderiv(f"{_op}_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
             "int reduction, SymInt ignore_index, Tensor total_weight)",
             _node.replace("Backward0", "BackwardBackward0"),
             ("target", "weight", "reduction", "ignore_index"),
             nondiff=("target", "weight", "total_weight"),
             grad_output=nll_double_grad_output,
             self=lambda grad: zeros_like(grad))
defderiv("binary_cross_entropy(Tensor self, Tensor target, Tensor? weight, int reduction)",
         "BinaryCrossEntropyBackward0", ("self", "target", "weight", "reduction"),
         nondiff=("weight",),
         self=binary_cross_entropy_backward,
         target=bce_grad_target)
# Its gradient w.r.t. self is an op of its own under create_graph=True, as in torch.
defderiv("binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, "
         "Tensor? weight, int reduction)",
         "BinaryCrossEntropyBackwardBackward0",
         ("grad_output", "self", "target", "weight", "reduction"),
         nondiff=("weight",),
         grad_output=bce_double_grad_output,
         self=bce_double_grad_self,
         target=bce_double_grad_target)
defderiv("binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight, "
         "Tensor? pos_weight, int reduction)",
         "BinaryCrossEntropyWithLogitsBackward0",
         ("self", "target", "weight", "pos_weight", "reduction"),
         nondiff=("weight", "pos_weight"),
         self=bce_logits_grad_self,
         target=bce_logits_grad_target)
defderiv("smooth_l1_loss(Tensor self, Tensor target, int reduction, float beta)",
         "SmoothL1LossBackward0", ("self", "target", "reduction", "beta"),
         self=smooth_l1_loss_backward,
         target=lambda grad, self, target, reduction, beta:
             smooth_l1_loss_backward(grad, target, self, reduction, beta))
defderiv("huber_loss(Tensor self, Tensor target, int reduction, float delta)",
         "HuberLossBackward0", ("self", "target", "reduction", "delta"),
         self=huber_loss_backward,
         target=lambda grad, self, target, reduction, delta:
             huber_loss_backward(grad, target, self, reduction, delta))
# Their backwards are ops of their own under create_graph=True (torch's double backwards).
defderiv("smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, "
         "int reduction, float beta)",
         "SmoothL1LossBackwardBackward0", ("grad_output", "self", "target", "reduction", "beta"),
         grad_output=smooth_l1_double_grad_output, self=smooth_l1_double_grad,
         target=smooth_l1_double_target)
defderiv("huber_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "
         "float delta)",
         "HuberLossBackwardBackward0", ("grad_output", "self", "target", "reduction", "delta"),
         grad_output=huber_double_grad_output, self=huber_double_grad, target=huber_double_target)
defderiv("native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, "
         "Tensor? bias, float eps)",
         "NativeLayerNormBackward0",
         ("input", "normalized_shape", "weight", "bias", "result1", "result2", "eps"),
         internal=("eps",), variadic=True, n_out=None,
         input=layer_norm_grads, weight=layer_norm_grads, bias=layer_norm_grads)
# Its backward, recorded under create_graph=True: three outputs (the gradients of input,
# weight and bias), one node; torch has no derivative for mean and rstd, nor gives bias one.
defderiv("native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
         "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias)",
         "NativeLayerNormBackwardBackward0",
         ("grad_out", "input", "mean", "normalized_shape", "rstd", "weight"), n_out=3,
         variadic=True,
         grad_out=layer_norm_double_grads, input=layer_norm_double_grads,
         mean=layer_norm_double_grads, rstd=layer_norm_double_grads,
         weight=layer_norm_double_grads, bias=layer_norm_double_grads)
# The running statistics are inputs torch never differentiates (no edge).
defderiv("native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
         "Tensor? running_var, bool training, float momentum, float eps)",
         "NativeBatchNormBackward0",
         ("input", "weight", "running_mean", "running_var", "result1", "result2", "training",
          "eps"),
         nondiff=("running_mean", "running_var"), variadic=True, n_out=None,
         input=batch_norm_grads, weight=batch_norm_grads, bias=batch_norm_grads)
# Its backward, recorded under create_graph=True: three outputs (the gradients of input,
# weight and bias), one node; torch has no derivative for the saved statistics.
defderiv("native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
         "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
         "bool train, float eps)",
         "NativeBatchNormBackwardBackward0",
         ("grad_out", "input", "weight", "running_mean", "running_var", "save_mean",
          "save_invstd", "train", "eps"), n_out=3, variadic=True,
         nondiff=("running_mean", "running_var"),
         grad_out=batch_norm_double_grads, input=batch_norm_double_grads,
         weight=batch_norm_double_grads, save_mean=batch_norm_double_grads,
         save_invstd=batch_norm_double_grads)
# mean and rstd are outputs 1 and 2 of the node (torch's result1 and result2), so that under
# create_graph=True the gradient's own graph differentiates through them, as torch's does.
defderiv("native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
         "SymInt HxW, int group, float eps)",
         "NativeGroupNormBackward0",
         ("input", "weight", "N", "C", "HxW", "group", "eps", "result1", "result2"),
         variadic=True, n_out=None,
         input=group_norm_grads, weight=group_norm_grads, bias=group_norm_grads)
# torch's CPU LSTM layer (oneDNN): one node per layer and direction, with the gradients of
# all seven inputs from one formula; outputs 0-2 (output, hy, cy) are differentiable.
defderiv("mkldnn_rnn_layer(Tensor input, Tensor weight0, Tensor weight1, Tensor weight2, "
         "Tensor weight3, Tensor hx_, Tensor cx_, bool reverse, int[] batch_sizes, int mode, "
         "int hidden_size, int num_layers, bool has_biases, bool bidirectional, "
         "bool batch_first, bool train)",
         "MkldnnRnnLayerBackward0",
         ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_", "reverse",
          "batch_sizes", "mode", "hidden_size", "num_layers", "has_biases", "bidirectional",
          "batch_first", "train", "result0", "result1", "result2"),
         variadic=True, n_out=None,
         input=lstm_layer_grads, weight0=lstm_layer_grads, weight1=lstm_layer_grads,
         weight2=lstm_layer_grads, weight3=lstm_layer_grads, hx_=lstm_layer_grads,
         cx_=lstm_layer_grads)
defderiv("embedding(Tensor weight, Tensor indices, SymInt padding_idx, bool scale_grad_by_freq, "
         "bool sparse)",
         "EmbeddingBackward0",
         ("weight_sym_argsize_0", "indices", "padding_idx", "scale_grad_by_freq", "sparse"),
         nondiff=("indices",), exact=True,
         weight=embedding_grad)


def embedding_double_grad(grad, indices, padding_idx):
    """torch's embedding_dense_double_backward: each looked-up row of grad (the padding row's
    zeroed), in the indices' shape. It ignores scale_grad_by_freq, as torch does."""
    idx = value(indices).reshape(-1)
    g = index_select(grad, 0, idx)
    if padding_idx >= 0:
        pad = (idx == padding_idx)[:, None]
        # torch fills in place (masked_fill_): the result's _version is 1
        g = g.masked_fill_(as_tensor(pad), 0) if on_tensors(g) else where0(pad, g)
    return reshape(g, np.shape(value(indices)) + (-1,))


defderiv("embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
         "SymInt padding_idx, bool scale_grad_by_freq)",
         "EmbeddingDenseBackwardBackward0", ("indices", "padding_idx"), nondiff=("indices",),
         grad_output=embedding_double_grad)
# The Scalar overload torch's C++ cross_entropy records for probability targets
# (`sum / (numel / C)`; its `+ ls / C` is add_scalar, AddBackward1, above).
defderiv("div_scalar(Tensor self, Scalar other)", "DivBackward1", ("other",),
         saves_tensors=False,
         self=lambda grad, other: divide_by(grad, other))

# convolution, pooling, attention

def _conv_geometry(weight_shape, stride, padding, dilation):
    nd = len(weight_shape) - 2
    return tuple(t * nd if len(t) == 1 else t for t in (stride, padding, dilation))


# The conv and pooling formulas name every saved value, so that each stays readable on the
# node (torch saves them all, whichever inputs need a gradient).

def conv_values(x, weight, stride, padding, dilation, transposed, output_padding, groups):
    """The convolution of arrays x and weight, no bias (stride, padding, dilation, output
    padding as tuples). A transposed convolution is the input gradient of the convolution by the
    same weight (O, C/groups, *k) whose output has x's shape."""
    if not transposed:
        return conv(x, weight, stride, padding, dilation, groups)
    shape = np.shape(x)
    kernel = np.shape(weight)[2:]
    out = tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1 for n, s, p, d, k, o in
                zip(shape[2:], stride, padding, dilation, kernel, output_padding))
    return conv_grad_input(x, (shape[0], np.shape(weight)[1] * groups) + out, weight, stride,
                           padding, dilation, groups)


def conv_input_grad(grad, input, weight, bias_sym_sizes_opt, stride, padding, dilation,
                    transposed, output_padding, groups, input_sizes):
    st, pd, dl = _conv_geometry(np.shape(value(weight)), stride, padding, dilation)
    if transposed:      # the adjoint of a transposed convolution is the convolution
        return conv(grad, weight, st, pd, dl, groups)
    return conv_grad_input(grad, input_sizes, weight, st, pd, dl, groups)


def conv_weight_grad(grad, input, weight, bias_sym_sizes_opt, stride, padding, dilation,
                     transposed, output_padding, groups):
    shape = np.shape(value(weight))
    st, pd, dl = _conv_geometry(shape, stride, padding, dilation)
    if transposed:      # <grad, convT(input, W)> = <input, conv(grad, W)>
        return conv_grad_weight(input, grad, shape, st, pd, dl, groups)
    return conv_grad_weight(grad, input, shape, st, pd, dl, groups)


def conv_bias_grad(grad, input, weight, bias_sym_sizes_opt, stride, padding, dilation,
                   transposed, output_padding, groups):
    nd = np.ndim(value(grad))
    return sum_dims(grad, (0,) + tuple(range(2, nd)))


def conv_grads(grads, mask, input, weight, bias_sym_sizes_opt, stride, padding, dilation,
               transposed, output_padding, groups, input_sizes):
    """The gradients of input, weight and bias, those in `mask`, from the output's gradient
    grads[0]. Under create_graph=True they are the three outputs of one convolution_backward
    op (ConvolutionBackwardBackward0), as in torch."""
    grad = grads[0]
    args = (bias_sym_sizes_opt, stride, padding, dilation, transposed, output_padding, groups)
    if on_tensors(grad, input, weight):
        grads = ops.convolution_backward(as_tensor(grad), as_tensor(input), as_tensor(weight),
                                         *args)
        return [g if mask >> i & 1 else None for i, g in enumerate(grads)]
    return [conv_input_grad(grad, input, weight, *args, input_sizes) if mask & 1 else None,
            conv_weight_grad(grad, input, weight, *args) if mask & 2 else None,
            conv_bias_grad(grad, input, weight, *args) if mask & 4 else None]


def conv_of(x, weight, stride, padding, dilation, transposed, output_padding, groups):
    """The convolution of x with weight, without bias (ConvolutionBackward0 on Tensors; the
    geometry as tuples)."""
    if on_tensors(x, weight):
        return ops.convolution(as_tensor(x), as_tensor(weight), None, stride, padding, dilation,
                               transposed, output_padding, groups)
    return conv_values(x, weight, stride, padding, dilation, transposed, output_padding, groups)


def conv_double_grads(grads, mask, grad_output, input, weight, stride, padding, dilation,
                      transposed, output_padding, groups):
    """torch's _convolution_double_backward: from the gradients ggI, ggW, ggb of
    convolution_backward's three outputs, those of grad_output (conv(ggI, W) + conv(I, ggW)
    + ggb), weight (convolutions of ggI and grad_output transposed, group by group, stride and
    dilation swapped) and input (the transposed convolution of grad_output by ggW), each a
    convolution op as in torch."""
    ggi, ggw, ggb = grads
    if on_tensors(grad_output, input, weight, ggi, ggw, ggb):
        grad_output, input, weight = (as_tensor(t) for t in (grad_output, input, weight))
        ggi, ggw, ggb = (None if g is None else as_tensor(g) for g in (ggi, ggw, ggb))
    wshape, ishape = np.shape(value(weight)), np.shape(value(input))
    gshape = np.shape(value(grad_output))
    st, pd, dl = _conv_geometry(wshape, stride, padding, dilation)
    op = _conv_geometry(wshape, output_padding, (0,), (1,))[0]
    ggo = None
    if ggi is not None:
        ggo = conv_of(ggi, weight, st, pd, dl, transposed, op, groups)
    if ggw is not None:
        term = conv_of(input, ggw, st, pd, dl, transposed, op, groups)
        ggo = term if ggo is None else ggo + term
    if ggb is not None:
        term = expand(reshape(ggb, (1, -1) + (1,) * (len(gshape) - 2)), gshape)
        ggo = term if ggo is None else ggo + term
    gw = None
    if ggi is not None:
        got, ggit = transpose(grad_output, 0, 1), transpose(ggi, 0, 1)
        n_o, n_i = got.shape[0] // groups, ggit.shape[0] // groups
        parts = []
        for g in range(groups):
            got_g = narrow(got, 0, g * n_o, n_o) if groups > 1 else got
            ggit_g = narrow(ggit, 0, g * n_i, n_i) if groups > 1 else ggit
            pair = (got_g, ggit_g) if transposed else (ggit_g, got_g)
            parts.append(conv_of(*pair, dl, pd, st, False, op, 1))
        gw = transpose(parts[0] if groups == 1 else cat(parts, 1), 0, 1)
        for i in range(2, len(wshape)):
            if np.shape(value(gw))[i] > wshape[i]:
                gw = narrow(gw, i, 0, wshape[i])
    gi = None
    if ggw is not None:
        if transposed:
            gi = conv_of(grad_output, ggw, st, pd, dl, False, op, groups)
            for i in range(2, len(ishape)):
                if np.shape(value(gi))[i] > ishape[i]:
                    gi = narrow(gi, i, 0, ishape[i])
        else:
            # The output padding that gives the transposed convolution the input's size.
            op = tuple(n - ((k - 1) * d - 2 * p + s * (m - 1) + 1) for n, k, d, p, s, m in
                       zip(ishape[2:], wshape[2:], dl, pd, st, gshape[2:]))
            gi = conv_of(grad_output, ggw, st, pd, dl, True, op, groups)
    return [ggo if mask & 1 else None, gi if mask & 2 else None, gw if mask & 4 else None]


def max_pool_input_grad(grad, self, kernel_size, stride, padding, dilation, ceil_mode, result1,
                        self_sizes):
    if on_tensors(grad, self):
        return ops.max_pool2d_with_indices_backward(
            as_tensor(grad), as_tensor(self), kernel_size, stride, padding, dilation, ceil_mode,
            as_tensor(result1))
    return max_pool_grad(grad, self_sizes, result1)


def max_pool_double_grad(grad, indices):
    """torch's max_pool_double_backward: the gradient read back at each window's argmax."""
    idx = value(indices)
    shape = np.shape(idx)
    lead = int(np.prod(shape[:-2]))
    g = reshape(grad, (lead, -1))
    return reshape(gather(g, 1, idx.reshape(lead, -1)), shape)


def avg_pool_input_grad(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, geometry):
    if on_tensors(grad, self):
        return ops.avg_pool2d_backward(as_tensor(grad), as_tensor(self), kernel_size, stride,
                                       padding, ceil_mode, count_include_pad,
                                       divisor_override, geometry)
    return avg_pool_grad(grad, geometry)


def adaptive_avg_pool_input_grad(grad, self, bins):
    if on_tensors(grad, self):
        return ops.adaptive_avg_pool2d_backward(as_tensor(grad), as_tensor(self), bins)
    return matmul(matmul(transpose(bins[0]), grad), bins[1])


def pad_input_grad(grad, self, padding, maps, op):
    """`op` is the padding's own name (reflection_pad2d, ...): its backward op's row is
    op + "_backward"."""
    if on_tensors(grad, self):
        return ops.pad_backward(as_tensor(grad), as_tensor(self), padding, maps, op)
    return gather_pad_grad(grad, maps)


def flash_attention_grads(grad, mask, query, key, value, result, logsumexp, dropout_p,
                          is_causal, attn_mask, scale):
    """The gradients of softmax(q k^T * scale + mask) v w.r.t. q, k and v, from the saved
    output (`result`) and row log-sum-exp (the attention weights are recomputed, as torch's
    kernel does). Under create_graph=True they are recorded as the outputs of one
    NotImplemented node, as in torch."""
    g, q, k, v, out = (value_of(t) for t in (grad, query, key, value, result))
    # The scale in the inputs' dtype, as torch's kernel applies it: the default
    # 1 / np.sqrt(E) is a float64 NumPy scalar, which would take `ds *= sc` through float64
    # (two casts of the whole score matrix).
    sc = q.dtype.type(scale if scale is not None else 1.0 / np.sqrt(q.shape[-1]))
    # The two (L, S) arrays are kept from one call to the next (gradviz._scratch: fresh
    # each step, they cost a page fault per 4 KB); the products are the same.
    sbuf = _scratch.take(q.shape[:-1] + k.shape[-2:-1], q.dtype)
    s = np.matmul(q, k.swapaxes(-2, -1), out=sbuf)
    s *= sc                 # (in place on the product, as the forward: the same bits)
    if attn_mask is not None:
        s = s + value_of(attn_mask)
    if is_causal:
        s = causal_fill(s)
    # exp(-inf - lse) is 0 for masked entries, and a fully masked row (lse 0) gives zeros.
    # (In place on the fresh scores: the same arithmetic without temporaries.)
    s -= value_of(logsumexp)[..., None]
    p = np.exp(s, out=s).astype(q.dtype, copy=False)
    dv = np.matmul(p.swapaxes(-2, -1), g)
    dsbuf = _scratch.take(sbuf.shape, q.dtype)
    ds = np.matmul(g, v.swapaxes(-2, -1), out=dsbuf)
    # The row sums of g * out by einsum: one pass and no (..., L, E) product array.
    ds -= np.einsum("...ij,...ij->...i", g, out)[..., None]
    ds *= p
    ds *= sc
    # The (L, S) weights are not needed any more: freed before the two products below, so
    # that the backward holds two (L, S) arrays at most, not three.
    del s, p
    dq = np.matmul(ds, k)
    dk = np.matmul(ds.swapaxes(-2, -1), q)
    del ds
    _scratch.give_back(dsbuf)
    _scratch.give_back(sbuf)
    if isinstance(grad, Tensor):
        grads = list(ops.flash_attention_backward((grad, query, key, value, result),
                                                  (dq, dk, dv)))
    else:
        grads = [dq, dk, dv]
    return [r if mask >> i & 1 else None for i, r in enumerate(grads)]


def value_of(x):
    return x._data if isinstance(x, Tensor) else x


def no_derivative_flash_backward(grad, mask):
    raise RuntimeError("derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward"
                       " is not implemented")


defderiv("convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
         "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, "
         "SymInt groups)",
         "ConvolutionBackward0",
         ("input", "weight", "bias_sym_sizes_opt", "stride", "padding", "dilation", "transposed",
          "output_padding", "groups", "input_sizes"), internal=("input_sizes",),
         # One formula for the three inputs (variadic); n_out=None keeps the row's count of
         # inputs (3) for the arity checks, the formula then gets the list of one gradient.
         variadic=True, n_out=None,
         input=conv_grads, weight=conv_grads, bias=conv_grads)
# The backward of convolution, recorded under create_graph=True: three outputs (the gradients
# of input, weight and bias), one node.
defderiv("convolution_backward(Tensor grad_output, Tensor input, Tensor weight, "
         "SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
         "bool transposed, SymInt[] output_padding, SymInt groups)",
         "ConvolutionBackwardBackward0",
         ("grad_output", "input", "weight", "stride", "padding", "dilation", "transposed",
          "output_padding", "groups"), n_out=3, variadic=True,
         grad_output=conv_double_grads, input=conv_double_grads, weight=conv_double_grads)
defderiv("max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride, "
         "int[2] padding, int[2] dilation, bool ceil_mode)",
         "MaxPool2DWithIndicesBackward0",
         ("self", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "result1",
          "self_sizes"), internal=("self_sizes",),
         self=max_pool_input_grad)
defderiv("avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, "
         "bool ceil_mode, bool count_include_pad, int? divisor_override)",
         "AvgPool2DBackward0",
         ("self", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
          "divisor_override", "geometry"), internal=("geometry",),
         self=avg_pool_input_grad)
defderiv("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size)",
         "AdaptiveAvgPool2DBackward0", ("self", "bins"), internal=("bins",),
         self=adaptive_avg_pool_input_grad)
# The backwards of pooling, recorded under create_graph=True: linear in grad_output (their
# gradient is the pooling itself, or max_pool_double_backward's gather), constant in self.
defderiv("max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, "
         "int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, "
         "Tensor indices)",
         "MaxPool2DWithIndicesBackwardBackward0", ("indices",), nondiff=("indices",),
         grad_output=max_pool_double_grad,
         self=lambda grad: zeros_like(grad))
defderiv("avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
         "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, "
         "int? divisor_override)",
         "AvgPool2DBackwardBackward0",
         ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
          "divisor_override"), saves_tensors=False,
         grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
             divisor_override: forward_of(ops.avg_pool2d, grad, kernel_size, stride, padding,
                                          ceil_mode, count_include_pad, divisor_override),
         self=lambda grad: zeros_like(grad))
defderiv("adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self)",
         "AdaptiveAvgPool2DBackwardBackward0",
         ("grad_output_sym_argsize_minus_2", "grad_output_sym_argsize_minus_1"),
         saves_tensors=False,
         grad_output=lambda grad, grad_output_sym_argsize_minus_2,
             grad_output_sym_argsize_minus_1: forward_of(
                 ops.adaptive_avg_pool2d, grad,
                 (grad_output_sym_argsize_minus_2, grad_output_sym_argsize_minus_1)),
         self=lambda grad: zeros_like(grad))
defderiv("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value)",
         "ConstantPadNdBackward0", ("pad",), saves_tensors=False,
         self=lambda grad, pad: constant_pad(grad, [-p for p in pad]))
for _op, _node in (("reflection_pad1d", "ReflectionPad1D"), ("reflection_pad2d", "ReflectionPad2D"),
                   ("replication_pad1d", "ReplicationPad1D"),
                   ("replication_pad2d", "ReplicationPad2D")):
    _size = 2 if _op.endswith("1d") else 4
    defderiv(f"{_op}(Tensor self, SymInt[{_size}] padding)",
             f"{_node}Backward0", ("self", "padding", "maps", "op"), internal=("maps", "op"),
             self=pad_input_grad)
    # The backward, recorded under create_graph=True: its gradient is the padding itself.
    defderiv(f"{_op}_backward(Tensor grad_output, Tensor self, SymInt[{_size}] padding)",
             f"{_node}BackwardBackward0", ("padding", "op"), internal=("op",),
             saves_tensors=False,
             grad_output=lambda grad, padding, op: forward_of(getattr(ops, op), grad, padding),
             self=lambda grad: zeros_like(grad))
# The CPU attention kernel torch 2.13 picks for 4-D float inputs without dropout and with a
# mask that needs no gradient. Its one formula gives all three gradients (variadic), and is not
# itself differentiable (torch records a NotImplemented node for create_graph=True).
defderiv("scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, "
         "float dropout_p, bool is_causal, *, Tensor? attn_mask, float? scale)",
         "ScaledDotProductFlashAttentionForCpuBackward0",
         ("query", "key", "value", "logsumexp", "dropout_p", "is_causal", "attn_mask",
          "scale"), variadic=True, nondiff=("attn_mask",), result_name="output",
         query=flash_attention_grads, key=flash_attention_grads, value=flash_attention_grads)
_BILINEAR = ((1, 3), (0,), (1, 2), (2, 3))     # bilinear's expand1, expand2, expand3, sumdim


def trilinear_call(i1, i2, i3, expand1, expand2, expand3, sumdim):
    """_trilinear on Tensors (TrilinearBackward0 under create_graph=True, as torch's
    _trilinear_backward), or its value on arrays."""
    r = ops._trilinear(as_tensor(i1), as_tensor(i2), as_tensor(i3), expand1, expand2, expand3,
                       sumdim)
    return r if on_tensors(i1, i2, i3) else r._data


def bilinear_arrays(grad, *xs):
    """bilinear's layout on arrays: the matrix products below, not the general einsum."""
    return not on_tensors(grad, *xs) and xs[-4:] == _BILINEAR


def trilinear_mid(grad, i2):
    """sum_o grad[n, o] i2[o, i, j], as (N, I, J): shared by the gradients of i1 and i3."""
    o, i, j = np.shape(value(i2))
    return reshape(matmul(grad, reshape(i2, (o, i * j))), (-1, i, j))


def trilinear_i1_grad(grad, i2, i3, expand1, expand2, expand3, sumdim):
    if not bilinear_arrays(grad, i2, i3, expand1, expand2, expand3, sumdim):
        return trilinear_call(grad, i2, i3, sumdim, expand2, expand3, expand1)
    mid = trilinear_mid(grad, i2)
    return reshape(matmul(mid, unsqueeze_dims(i3, (2,), 3)), np.shape(value(mid))[:2])


def trilinear_i2_grad(grad, i1, i2, i3, expand1, expand2, expand3, sumdim):
    if not bilinear_arrays(grad, i1, i3, expand1, expand2, expand3, sumdim):
        return trilinear_call(i1, grad, i3, expand1, sumdim, expand3, expand2)
    n, i = np.shape(value(i1))
    j = np.shape(value(i3))[1]
    pairs = reshape(unsqueeze_dims(i1, (2,), 3) * unsqueeze_dims(i3, (1,), 3), (n, i * j))
    return reshape(matmul(transpose(grad), pairs), np.shape(value(i2)))


def trilinear_i3_grad(grad, i1, i2, expand1, expand2, expand3, sumdim):
    if not bilinear_arrays(grad, i1, i2, expand1, expand2, expand3, sumdim):
        return trilinear_call(i1, i2, grad, expand1, expand2, sumdim, expand3)
    mid = trilinear_mid(grad, i2)
    n, j = np.shape(value(mid))[0], np.shape(value(mid))[2]
    return reshape(matmul(unsqueeze_dims(i1, (1,), 3), mid), (n, j))


# bilinear's product (torch's _trilinear with bilinear's expand and sum dims)
defderiv("trilinear(Tensor i1, Tensor i2, Tensor i3, int[] expand1, int[] expand2, "
         "int[] expand3, int[] sumdim)",
         "TrilinearBackward0", ("i1", "i2", "i3", "expand1", "expand2", "expand3", "sumdim"),
         i1=trilinear_i1_grad, i2=trilinear_i2_grad, i3=trilinear_i3_grad)
# torch's softmax for attention weights: a row masked out entirely (all -inf) gives zeros.
defderiv("safe_softmax(Tensor self, int dim)", "SafeSoftmaxBackward0", ("dim",),
         self=softmax_grad)
# torch records the attention kernel's backward with its autograd fallback for ops without a
# derivative: one NotImplemented node whose edges are the inputs that require grad only (of
# grad_out, query, key, value and the forward's output), in that order.
defderiv("scaled_dot_product_flash_attention_for_cpu_backward(Tensor[] tensors)",
         "NotImplemented", name="torch::autograd::NotImplemented", saves_tensors=False,
         tensors=no_derivative_flash_backward)


# ----- Higher-order nodes ------------------------------------------------------------------
# The backward functions torch records as ops under create_graph=True, so that the graph of a
# gradient shows TanhBackwardBackward0, ... Their first edge is the incoming gradient's.
# Their own formulas are composed as torch's C++ formulas are: `-2 * output` there is
# mul(Tensor, Scalar) (MulBackward1), `+ 1` is add(Tensor, Scalar) (AddBackward1, `plus`).

defderiv("tanh_backward(Tensor grad_output, Tensor output)",
         "TanhBackwardBackward0", ("grad_output", "output"),
         grad_output=lambda grad, output: tanh_backward(grad, output),
         output=lambda grad, grad_output, output: grad * (scale(output, -2) * grad_output))
defderiv("sigmoid_backward(Tensor grad_output, Tensor output)",
         "SigmoidBackwardBackward0", ("grad_output", "output"),
         grad_output=lambda grad, output: sigmoid_backward(grad, output),
         output=lambda grad, grad_output, output: grad * grad_output * plus(
             scale(output, -2), 1))
# torch's relu backward is threshold_backward(grad, result, 0): `self` is relu's result, and
# its gradient is zero (the mask is piecewise constant).
defderiv("threshold_backward(Tensor grad_output, Tensor self, Scalar threshold)",
         "ThresholdBackwardBackward0", ("self", "threshold"),
         grad_output=lambda grad, self, threshold: threshold_backward(grad, self, threshold),
         self=lambda grad: zeros_like(grad))
defderiv("_softmax_backward_data(Tensor grad_output, Tensor output, int dim)",
         "SoftmaxBackwardDataBackward0", ("dim", "grad_output", "output"),
         grad_output=lambda grad, dim, output: softmax_backward_data(grad, output, dim),
         output=lambda grad, dim, grad_output, output: softmax_double_backward(
             grad, grad_output, dim, output))
defderiv("_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim)",
         "LogSoftmaxBackwardDataBackward0", ("dim", "grad_output", "output"),
         # not log_softmax_backward_data again: this linear map is not its own adjoint.
         grad_output=lambda grad, dim, output: grad - sum_dims(grad * exp(output), dim,
                                                               keepdim=True),
         output=lambda grad, dim, grad_output, output: -sum_dims(
             grad_output, dim, keepdim=True) * exp(output) * grad)
defderiv("select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index)",
         "SelectBackwardBackward0", ("dim", "index", "key"), saves_tensors=False,
         internal=("key",),
         grad_output=lambda grad, key: take(grad, key))
defderiv("diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, "
         "int dim2)",
         "DiagonalBackwardBackward0", ("offset", "dim1", "dim2"), saves_tensors=False,
         grad_output=lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2))
defderiv("slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, "
         "SymInt end, SymInt step)",
         "SliceBackwardBackward0", ("dim", "start", "end", "step", "key"), saves_tensors=False,
         internal=("key",),
         grad_output=lambda grad, key: take(grad, key))


def mse_double_grad_output(grad, self, target, reduction):
    """d/d(grad_output) of mse_loss_backward: the reduction of 2 (self - target) grad."""
    r = mse_loss_backward(grad, self, target, 0)       # torch's Reduction: 0 none, 1 mean, 2 sum
    if reduction == 0:
        return r
    total = r.sum()
    return divide_by(total, np.size(value(r))) if reduction == 1 else total


def mse_double_grad_input(grad, grad_output, self, target, reduction):
    """d/d(self) of mse_loss_backward: 2 grad grad_output, over the element count for mean."""
    g = scale(grad * grad_output, 2)
    if reduction == 1:
        g = divide_by(g, int(np.prod(np.broadcast_shapes(np.shape(value(self)),
                                                         np.shape(value(target))))))
    return g


defderiv("mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction)",
         "MseLossBackwardBackward0", ("grad_output", "self", "target", "reduction"),
         grad_output=lambda grad, self, target, reduction: mse_double_grad_output(
             grad, self, target, reduction),
         self=mse_double_grad_input,
         target=lambda grad, grad_output, self, target, reduction: -mse_double_grad_input(
             grad, grad_output, self, target, reduction))



# ----- Ops torch records without a derivative (NotImplementedError in backward) --------------

def no_derivative_unique(grad):
    raise NotImplementedError("the derivative for '_unique2' is not implemented.")


def no_derivative_unique_dim(grad):
    raise NotImplementedError("the derivative for 'unique_dim' is not implemented.")


defderiv("unique(Tensor self)", "Unique2Backward0", saves_tensors=False,
         self=no_derivative_unique)
defderiv("unique_dim(Tensor self)", "UniqueDimBackward0", saves_tensors=False,
         self=no_derivative_unique_dim)


# ----- In-place view ops: self takes the view's shape and strides (x.t_(), x.squeeze_()) ------

def squeeze_all_grad(grad, self_sym_sizes):
    return unsqueeze_to(grad, None, self_sym_sizes)


defderiv("squeeze_(Tensor self)", "SqueezeBackward3", ("self_sym_sizes",),
         saves_tensors=False, self=squeeze_all_grad)
defderiv("squeeze_dims_(Tensor self, int[] dim)", "SqueezeBackward5", ("self_sym_sizes", "dim"),
         saves_tensors=False, self=lambda grad, self_sym_sizes, dim: unsqueeze_to(
             grad, dim, self_sym_sizes))
defderiv("t_(Tensor self)", "TBackward1", saves_tensors=False, self=t_grad)
defderiv("transpose_(Tensor self, int dim0, int dim1)",
         "TransposeBackward1", ("dim0", "dim1"), saves_tensors=False,
         # (a 0-d tensor's transpose(0, -1) is itself: NumPy has no axes to swap)
         self=lambda grad, dim0, dim1: transpose(grad, dim0, dim1) if dim0 != dim1 else grad)


# ----- Singular value decomposition -----------------------------------------------------------

def svd_grad(grads, U, S, Vh, full_matrices):
    """torch's svd_backward for a gradient through S alone (svdvals): U diag(gS) Vh, over the
    first k = len(S) singular vectors. A gradient through U or Vh is not implemented."""
    gU, gS, gVh = grads
    if gU is not None or gVh is not None:
        raise NotImplementedError("gradviz: the gradient of torch.linalg.svd through U or Vh "
                                  "is not implemented by gradviz's core (only a first "
                                  "derivative through S, as svdvals: a second one goes "
                                  "through U and Vh); run with --backend torch to use PyTorch")
    k = np.shape(value(S))[-1]
    if full_matrices:
        U, Vh = narrow(U, -1, 0, k), narrow(Vh, -2, 0, k)
    m, n = np.shape(value(U))[-2], np.shape(value(Vh))[-1]
    nd = np.ndim(value(gS))
    if m >= n:
        return matmul(U, unsqueeze_dims(gS, (nd,), nd + 1) * Vh)
    return matmul(U * unsqueeze_dims(gS, (nd - 1,), nd + 1), Vh)


defderiv("linalg_svd(Tensor A)", "LinalgSvdBackward0",
         ("U", "S", "Vh", "full_matrices", "S_sym_argsize_minus_1"), n_out=None,
         A=lambda grads, U, S, Vh, full_matrices: svd_grad(grads, U, S, Vh, full_matrices))


# ----- Order statistics and running extremes (kthvalue, cummax, cummin) ------------------------

def cummaxmin_grad(grad, self, indices, dim):
    """torch's cummaxmin_backward: each gradient added at the index its running extreme came
    from (zeros(self).scatter_add(dim, indices, grad))."""
    if np.ndim(value(self)) == 0 or np.size(value(self)) == 0:
        return grad
    return scatter_add_to(np.shape(value(self)), dim, indices, grad)


defderiv("kthvalue(Tensor self, int k, int dim, bool keepdim)",
         "KthvalueBackward0", ("dim", "indices", "keepdim", "self_sym_sizes"),
         self=value_selecting_grad)
defderiv("cummax(Tensor self, int dim)", "CummaxBackward0", ("dim", "indices", "self"),
         self=cummaxmin_grad)
defderiv("cummin(Tensor self, int dim)", "CumminBackward0", ("dim", "indices", "self"),
         self=cummaxmin_grad)


# ----- Sums that skip NaN ----------------------------------------------------------------------

def nansum_grad(grad, self, dim, keepdim):
    """torch's nansum_backward: the sum's gradient, zero where self is NaN. torch multiplies by
    self.isnan().logical_not() rather than selecting: an inf gradient (nanmean over an all-NaN
    row divides by a count of 0) gives nan at the NaN elements, in torch too."""
    x = value(self)
    return scale_by_mask(~np.isnan(x), reduce_grad(grad, np.shape(x), dim, keepdim))


defderiv("nansum(Tensor self, int[1]? dim, bool keepdim)", "NansumBackward0",
         ("dim", "keepdim", "self"), self=nansum_grad)


# ----- Counting ops torch records without a derivative ---------------------------------------

def no_derivative_unique_consecutive(grad):
    raise NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")


def no_derivative_bincount(grad):
    raise RuntimeError("derivative for aten::bincount is not implemented")


defderiv("unique_consecutive(Tensor self)", "UniqueConsecutiveBackward0", saves_tensors=False,
         self=no_derivative_unique_consecutive)
defderiv("bincount(Tensor weights)", "NotImplemented", name="torch::autograd::NotImplemented",
         saves_tensors=False, weights=no_derivative_bincount)


# ----- Sliding windows (Tensor.unfold) ----------------------------------------------------------

def unfold_windows(a, dim, size, step):
    """The NumPy view of a's windows of `size` every `step` along dim, as a new last dim (a
    0-d array gives its one element as a window of 1, as torch)."""
    if a.ndim == 0:
        return a.reshape(1)
    n = (a.shape[dim] - size) // step + 1
    shape = a.shape[:dim] + (n,) + a.shape[dim + 1:] + (size,)
    strides = a.strides[:dim] + (a.strides[dim] * step,) + a.strides[dim + 1:] + (a.strides[dim],)
    return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=False)


def unfold_grad(grad, input_sizes, dim, size, step):
    """torch's unfold_backward: zeros(input_sizes) with each window's gradient added where
    the window read (overlapping windows sum); UnfoldBackwardBackward0 on Tensors."""
    if isinstance(grad, Tensor):
        return ops.unfold_backward(grad, input_sizes, dim, size, step)
    shape = tuple(input_sizes)
    positions = unfold_windows(np.arange(int(np.prod(shape))).reshape(shape), dim, size, step)
    out = np.zeros(int(np.prod(shape)), dtype=np.result_type(grad))
    np.add.at(out, positions.reshape(-1), np.reshape(grad, -1))
    return out.reshape(shape)


defderiv("unfold(Tensor self, int dimension, int size, int step)", "UnfoldBackward0",
         ("dimension", "self_sym_sizes", "size", "step"), saves_tensors=False,
         self=lambda grad, dimension, self_sym_sizes, size, step: unfold_grad(
             grad, self_sym_sizes, dimension, size, step))
defderiv("unfold_backward(Tensor grad_in, int dim, int size, int step)",
         "UnfoldBackwardBackward0", ("dim", "size", "step"), saves_tensors=False,
         grad_in=lambda grad, dim, size, step: forward_of(ops.unfold, grad, dim, size, step))


# ----- Views of the storage (torch.as_strided) --------------------------------------------------

def storage_memory(a):
    """The dense array a's memory as a flat view, in address order (a column-major a read
    down its columns), or None when a is not dense with non-negative strides."""
    order = sorted(range(a.ndim), key=lambda k: -a.strides[k])
    m = a.transpose(order)
    if not m.flags.c_contiguous or min(a.strides, default=0) < 0:
        return None
    return m.reshape(-1)


def storage_view(a, size, stride, offset):
    """The NumPy view of the dense array a's memory with sizes, strides (in elements) and
    offset, as torch's as_strided reads its storage; read-only when two of its elements share
    memory, so that no write goes through it silently."""
    flat = storage_memory(a)[offset:]
    steps = tuple(s * a.itemsize for s in stride)
    return np.lib.stride_tricks.as_strided(
        flat, size, steps, writeable=not internal_overlap(size, steps, a.itemsize))


def as_strided_grad(grad, size, stride, storage_offset, self_positions, storage_numel):
    """torch's as_strided_backward: the gradient added into a buffer the size of the storage
    at the places the view read (summed where they repeat), then read back at self's places.
    No storage_offset: self's own, where its first element is (an empty self takes none)."""
    offset = storage_offset
    if offset is None:
        offset = int(self_positions.reshape(-1)[0]) if self_positions.size else 0
    read = storage_view(np.arange(storage_numel), size, stride, offset).reshape(-1)
    if isinstance(grad, Tensor):
        buf = ops.index_put_impl(ops.zeros(storage_numel, dtype=grad.dtype), (read,),
                                 grad.reshape(-1), True)
        return take(buf, self_positions)
    buf = np.zeros(storage_numel, dtype=np.result_type(grad))
    np.add.at(buf, read, np.reshape(grad, -1))
    return buf[self_positions]


defderiv("as_strided_storage(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset)",
         "AsStridedBackward0", ("size", "stride", "storage_offset", "self_positions",
                                "storage_numel"),
         saves_tensors=False, internal=("self_positions", "storage_numel"),
         self=as_strided_grad)


# ----- Sliding blocks of images (F.unfold / F.fold) ---------------------------------------------

def im2col_array(a, kernel, dilation, padding, stride):
    """(N, C * kh * kw, L) columns of a (N, C, H, W) or (C * kh * kw, L) of (C, H, W)."""
    from ._windows import out_size, pad_value, windows
    out = tuple(out_size(n, k, s, p, d) for n, k, s, p, d
                in zip(a.shape[-2:], kernel, stride, padding, dilation))
    w = windows(pad_value(a, [(p, p) for p in padding]), kernel, stride, dilation, out)
    lead = a.shape[:-3]
    cols = np.moveaxis(w, (-4, -3), (-2, -1))      # (..., C, kh, kw, oh, ow)
    return np.ascontiguousarray(cols).reshape(lead + (a.shape[-3] * kernel[0] * kernel[1],
                                                      out[0] * out[1]))


def col2im_array(cols, size, kernel, dilation, padding, stride):
    """The adjoint of im2col_array: columns summed back into images of spatial `size`."""
    from ._windows import col2im, crop, out_size
    padded = tuple(n + 2 * p for n, p in zip(size, padding))
    out = tuple(out_size(n, k, s, p, d) for n, k, s, p, d
                in zip(size, kernel, stride, padding, dilation))
    lead = cols.shape[:-2]
    c = cols.shape[-2] // (kernel[0] * kernel[1])
    w = cols.reshape(lead + (c,) + tuple(kernel) + out)
    w = np.moveaxis(w, (-2, -1), (-4, -3))           # (..., C, oh, ow, kh, kw)
    img = col2im(np.ascontiguousarray(w), padded, kernel, stride, dilation, out)
    return np.ascontiguousarray(crop(img, [(p, p) for p in padding]))


def im2col_grad(grad, self_sym_argsize_minus_2, self_sym_argsize_minus_1, kernel_size,
                dilation, padding, stride):
    size = (self_sym_argsize_minus_2, self_sym_argsize_minus_1)
    if isinstance(grad, Tensor):
        return ops.col2im(grad, size, kernel_size, dilation, padding, stride)
    return col2im_array(grad, size, kernel_size, dilation, padding, stride)


def col2im_grad(grad, kernel_size, dilation, padding, stride):
    if isinstance(grad, Tensor):
        return ops.im2col(grad, kernel_size, dilation, padding, stride)
    return im2col_array(grad, kernel_size, dilation, padding, stride)


defderiv("im2col(Tensor input, int[2] kernel_size, int[2] dilation, int[2] padding, "
         "int[2] stride)", "Im2ColBackward0",
         ("kernel_size", "dilation", "padding", "stride", "self_sym_argsize_minus_1",
          "self_sym_argsize_minus_2"), saves_tensors=False, input=im2col_grad)
defderiv("col2im(Tensor input, int[2] output_size, int[2] kernel_size, int[2] dilation, "
         "int[2] padding, int[2] stride)", "Col2ImBackward0",
         ("kernel_size", "dilation", "padding", "stride"), saves_tensors=False,
         input=col2im_grad)


# ----- More activations: selu/celu (elu's rows), prelu, mish, hardswish, hardsigmoid, shrinks --

def celu_input_scale(alpha):
    """torch's celu backward passes 1.0 / alpha.toFloat(): alpha rounded to a float, even for
    double tensors (its forward divides by the double alpha)."""
    return 1.0 / float(np.float32(alpha))


def celu_grad(grad, self, alpha):
    """celu is elu(x, alpha, 1, 1 / alpha): its gradient is elu's (torch's elu_backward)."""
    return elu_grad(grad, self, alpha, 1, celu_input_scale(alpha))


def prelu_grads(grad, mask, self, weight):
    """The gradients of self (grad where x > 0, else weight * grad; a nan x takes the weight,
    as torch's kernel) and weight (x * grad where x <= 0, then summed to its shape). Under
    create_graph=True both are the outputs of one _prelu_kernel_backward op
    (PreluKernelBackwardBackward0), as in torch."""
    if on_tensors(grad, self, weight):
        outs = ops.prelu_kernel_backward(as_tensor(grad), as_tensor(self), as_tensor(weight))
    else:
        outs = prelu_array_grads(grad, self, weight)
    return [g if mask >> i & 1 else None for i, g in enumerate(outs)]


def prelu_array_grads(grad, self, weight):
    pos = self > 0
    g_self = np.where(pos, grad, weight * grad)
    g_weight = np.where(pos, 0, self * grad)     # self's shape: summed to weight's in fit_to
    return g_self.astype(grad.dtype, copy=False), g_weight.astype(grad.dtype, copy=False)


def prelu_double_grads(grads, mask, grad_output, self, weight):
    """torch's formulas of _prelu_kernel_backward (note self >= 0 where the forward has
    self > 0): from the gradients gI, gW of its two outputs, those of grad_output, self and
    weight."""
    g_i, g_w = grads
    nonneg = value(self) >= 0
    out = [None, None, None]
    if mask & 1:
        if g_i is None:
            out[0] = where_select(nonneg, 0, g_w * self)
        else:
            other = g_i * weight if g_w is None else g_i * weight + g_w * self
            out[0] = where_select(nonneg, g_i, other)
    if mask & 2:
        out[1] = zeros_like(self) if g_w is None else where_select(nonneg, 0, grad_output * g_w)
    if mask & 4:
        out[2] = zeros_like(self) if g_i is None else where_select(nonneg, 0, grad_output * g_i)
    return out


def where_select(cond, a, b):
    """torch's at::where(cond, a, b) for a constant boolean cond (a or b may be 0)."""
    if on_tensors(a, b):
        return ops.where(as_tensor(np.asarray(cond)), a, b)
    return np.where(cond, a, b)


def mish_grad(grad, self):
    """grad * (tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)), sp = softplus(x): torch's
    mish_backward kernel, and on Tensors its infinitely_differentiable_mish_backward, composed
    of sigmoid, exp, log1p and tanh."""
    if not on_tensors(grad, self):
        with np.errstate(over="ignore"):
            s = 1 / (1 + np.exp(-self))
            ts = np.tanh(np.log1p(np.exp(self)))
        return grad * (ts + self * s * (1 - ts * ts))
    s = sigmoid(self)
    ts = self.exp().log1p().tanh()
    return grad * (ts + self * s * const_minus(1.0, ts * ts))


def hardswish_grad(grad, self):
    """0 up to -3, grad * (x / 3 + 0.5) below 3, grad from 3 on (torch 2.13's
    hardswish_backward: -3 and 3 themselves take the outer branches; a nan x keeps grad)."""
    if on_tensors(grad, self):
        return ops.hardswish_backward(as_tensor(grad), as_tensor(self))
    x = value(self)
    g = np.where(x <= -3, 0, np.where(x < 3, grad * (x / 3 + 0.5), grad))
    return g.astype(np.result_type(grad), copy=False)


def hardswish_second(grad, grad_output, self):
    """torch's: where(-3 < x < 3, grad * grad_output / 3, 0)."""
    x = value(self)
    return keep_where((x > -3) & (x < 3), divide_by(grad * grad_output, 3.0))


def hardsigmoid_grad(grad, self):
    """grad / 6 strictly between -3 and 3, else 0 (torch's hardsigmoid_backward, which torch
    records without a derivative under create_graph=True)."""
    if on_tensors(grad, self):
        return ops.hardsigmoid_backward((as_tensor(grad), as_tensor(self)))
    x = value(self)
    return mask((x > -3) & (x < 3), grad * np.result_type(grad).type(_HARDSIGMOID_SLOPE))


_HARDSIGMOID_SLOPE = float(np.float32(1) / np.float32(6))     # torch's 1.0f / 6.0f


def no_derivative_hardsigmoid_backward(grad, mask):
    raise RuntimeError("derivative for aten::hardsigmoid_backward is not implemented")


def _shrink_grad(op, grad, self, lambd):
    """grad outside [-lambd, lambd], 0 inside (softshrink's and hardshrink's backward)."""
    if on_tensors(grad, self):
        return getattr(ops, op)(as_tensor(grad), as_tensor(self), lambd)
    x = value(self)
    return mask(~((x >= -lambd) & (x <= lambd)), grad)


def softshrink_grad(grad, self, lambd):
    return _shrink_grad("softshrink_backward", grad, self, lambd)


def hardshrink_grad(grad, self, lambd):
    return _shrink_grad("hardshrink_backward", grad, self, lambd)


defderiv("celu(Tensor self, Scalar alpha)", "CeluBackward0", ("self", "alpha"),
         self=celu_grad)
defderiv("celu_(Tensor self, Scalar alpha)", "CeluBackward1", ("alpha",),
         self=lambda grad, alpha, result: elu_grad(grad, result, alpha, 1,
                                                   celu_input_scale(alpha), is_result=True))
defderiv("prelu_kernel(Tensor self, Tensor weight)", "PreluKernelBackward0", ("self", "weight"),
         variadic=True, self=prelu_grads, weight=prelu_grads)
defderiv("prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight)",
         "PreluKernelBackwardBackward0", ("grad_output", "self", "weight"), n_out=2,
         variadic=True, grad_output=prelu_double_grads, self=prelu_double_grads,
         weight=prelu_double_grads)
defderiv("mish(Tensor self)", "MishBackward0", ("self",), self=mish_grad)
defderiv("hardswish(Tensor self)", "HardswishBackward0", ("self",), self=hardswish_grad)
defderiv("hardswish_backward(Tensor grad_output, Tensor self)", "HardswishBackwardBackward0",
         ("grad_output", "self"),
         grad_output=lambda grad, self: hardswish_grad(grad, self), self=hardswish_second)
defderiv("hardsigmoid(Tensor self)", "HardsigmoidBackward0", ("self",), self=hardsigmoid_grad)
defderiv("hardsigmoid_backward(Tensor[] tensors)",
         "NotImplemented", name="torch::autograd::NotImplemented", saves_tensors=False,
         tensors=no_derivative_hardsigmoid_backward)
defderiv("softshrink(Tensor self, Scalar lambd)", "SoftshrinkBackward0", ("self", "lambd"),
         self=softshrink_grad)
defderiv("softshrink_backward(Tensor grad_output, Tensor self, Scalar lambd)",
         "SoftshrinkBackwardBackward0", ("grad_output", "self", "lambd"), internal=("grad_output",),
         grad_output=softshrink_grad, self=lambda grad: zeros_like(grad))
defderiv("hardshrink(Tensor self, Scalar lambd)", "HardshrinkBackward0", ("self", "lambd"),
         self=hardshrink_grad)
defderiv("hardshrink_backward(Tensor grad_output, Tensor self, Scalar lambd)",
         "HardshrinkBackwardBackward0", ("grad_output", "self", "lambd"), internal=("grad_output",),
         grad_output=hardshrink_grad, self=lambda grad: zeros_like(grad))
defderiv("threshold(Tensor self, Scalar threshold)", "ThresholdBackward0", ("self", "threshold"),
         self=lambda grad, self, threshold: threshold_backward(grad, self, threshold))
defderiv("threshold_(Tensor self, Scalar threshold)", "ThresholdBackward1",
         ("self", "threshold"),
         self=lambda grad, self, threshold: threshold_backward(grad, self, threshold))


# ----- Upsampling (nn.functional.interpolate: nearest, bilinear) ---------------------------------
# Linear in self: the gradient is the backward op (recorded under create_graph=True, as torch),
# and the backward's own gradient is the forward again.

def upsample_grad(op, grad, input_size, *args):
    """ops.<op>_backward(grad, ...) on Tensors; its value on arrays."""
    backward = getattr(ops, op + "_backward")
    if isinstance(grad, Tensor):
        return backward(grad, *args[:1], input_size, *args[1:])
    return backward(as_tensor(grad), *args[:1], input_size, *args[1:])._data


defderiv("upsample_nearest1d(Tensor self, SymInt[] output_size, float? scales)",
         "UpsampleNearest1DBackward0", ("output_size", "scales", "self_sym_sizes"),
         saves_tensors=False,
         self=lambda grad, output_size, scales, self_sym_sizes: upsample_grad(
             "upsample_nearest1d", grad, self_sym_sizes, output_size, scales))
defderiv("upsample_nearest2d(Tensor self, SymInt[] output_size, float? scales_h, "
         "float? scales_w)",
         "UpsampleNearest2DBackward0", ("output_size", "scales_h", "scales_w", "self_sym_sizes"),
         saves_tensors=False,
         self=lambda grad, output_size, scales_h, scales_w, self_sym_sizes: upsample_grad(
             "upsample_nearest2d", grad, self_sym_sizes, output_size, scales_h, scales_w))
defderiv("upsample_bilinear2d(Tensor self, SymInt[] output_size, bool align_corners, "
         "float? scales_h, float? scales_w)",
         "UpsampleBilinear2DBackward0",
         ("align_corners", "output_size", "scales_h", "scales_w", "self_sym_sizes"),
         saves_tensors=False,
         self=lambda grad, align_corners, output_size, scales_h, scales_w, self_sym_sizes:
             upsample_grad("upsample_bilinear2d", grad, self_sym_sizes, output_size,
                           align_corners, scales_h, scales_w))
defderiv("upsample_nearest1d_backward(Tensor grad_output, SymInt[] output_size, "
         "SymInt[] input_size, float? scales)",
         "UpsampleNearest1DBackwardBackward0", ("output_size", "scales"), saves_tensors=False,
         grad_output=lambda grad, output_size, scales: forward_of(
             ops.upsample_nearest1d, grad, output_size, scales))
defderiv("upsample_nearest2d_backward(Tensor grad_output, SymInt[] output_size, "
         "SymInt[] input_size, float? scales_h, float? scales_w)",
         "UpsampleNearest2DBackwardBackward0", ("output_size", "scales_h", "scales_w"),
         saves_tensors=False,
         grad_output=lambda grad, output_size, scales_h, scales_w: forward_of(
             ops.upsample_nearest2d, grad, output_size, scales_h, scales_w))
defderiv("upsample_bilinear2d_backward(Tensor grad_output, SymInt[] output_size, "
         "SymInt[] input_size, bool align_corners, float? scales_h, float? scales_w)",
         "UpsampleBilinear2DBackwardBackward0",
         ("align_corners", "output_size", "scales_h", "scales_w"), saves_tensors=False,
         grad_output=lambda grad, align_corners, output_size, scales_h, scales_w: forward_of(
             ops.upsample_bilinear2d, grad, output_size, align_corners, scales_h, scales_w))
