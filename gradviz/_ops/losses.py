"""Losses recorded as one node each, as torch records them: mse_loss (MseLossBackward0),
nll_loss (NllLossBackward0, NllLoss2DBackward0 for images), binary_cross_entropy(_with_logits),
smooth_l1_loss and huber_loss; and the two Scalar overloads torch's composite losses record
(AddBackward1, DivBackward1). gradviz.nn.functional composes the other losses from these and
the other ops exactly where torch composes them (cross_entropy is log_softmax then nll_loss).

`reduction` is torch's enum, as torch saves it: 0 none, 1 mean, 2 sum.
"""

import numpy as np

from .. import _dmath
from .._dmath import row_numbers
from .._derivatives import DERIVATIVES as D
from .._dtype import _promote
from .._registry import records
from .._tensor import _make
from ..autograd.formula import record
from ..autograd.grad_mode import _state
from ._common import _F16, _TORCH_SCALAR, _needs
from .inplace import _check_cast

_REDUCTION = {"none": 0, "mean": 1, "sum": 2}


def reduction_enum(reduction):
    """torch's Reduction enum of a reduction name (torch's ValueError for another name)."""
    try:
        return _REDUCTION[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _reduce(d, reduction):
    if reduction == 1:
        return np.mean(d, dtype=d.dtype) if d.size else d.dtype.type(np.nan)
    if reduction == 2:
        return np.sum(d, dtype=d.dtype)
    return d


def _promoted(x, t):
    """x and t in torch's result dtype: a float32 input with an int64 target stays float32
    (NumPy's x - t would be float64)."""
    if x.dtype == t.dtype:
        return x, t
    dt = _promote(x.dtype, t.dtype)
    return x.astype(dt, copy=False), t.astype(dt, copy=False)


def _same_dtype(x, t):
    """torch's check in the losses whose kernels take input and target of one dtype."""
    if x.dtype != t.dtype:
        raise RuntimeError(f"Found dtype {_TORCH_SCALAR[t.dtype.name]} but expected "
                           f"{_TORCH_SCALAR[x.dtype.name]}")


def _not_differentiable(fn, name, t):
    if t is not None and _state.enabled and t._rg:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{name}'. This input cannot have requires_grad True.")


@records("mse_loss")
def mse_loss(input, target, reduction=1):
    """Mean squared error (MseLossBackward0)."""
    a, b = np.broadcast_arrays(*_promoted(input._data, target._data))
    out = _make(_reduce((a - b) ** 2, reduction))
    if _state.enabled and (input._rg or target._rg):
        record(D["mse_loss"], out, (input, target), (input, target, reduction))
    return out


# ----- nll_loss ----------------------------------------------------------------------------

_I64 = np.dtype(np.int64)


def _check_target(target):
    t = target._data
    # (identity first: `dtype in (np.int64, ...)` converts each type to a dtype per call)
    if t.dtype is not _I64 and t.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_TORCH_SCALAR.get(t.dtype.name, t.dtype.name)}")
    return t


def _reduce_picked(vals, reduction, total_weight, shape, dtype):
    """nll_loss's (value, total_weight) from the weighted negated picks vals, in dtype."""
    dt = dtype.type
    if reduction == 1:
        if total_weight:
            return dt(np.add.reduce(vals, dtype=dtype) / total_weight), total_weight
        # no sample kept: 0 / 0, nan as in torch (no warning)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.add.reduce(vals, dtype=dtype) / total_weight if len(vals) else np.nan
        return dt(r), total_weight
    if reduction == 2:
        return dt(np.add.reduce(vals, dtype=dtype)), total_weight
    return vals.reshape(shape).astype(dtype, copy=False), dt(0)


@records("nll_loss", "nll_loss2d")
def nll_loss(input, target, weight=None, reduction=1, ignore_index=-100):
    """Negative log likelihood of class indices: -weight[t] * input[t] per sample
    (NllLossBackward0; NllLoss2DBackward0 for (N, C, H, W) input, as in torch)."""
    x = input._data
    t = _check_target(target)
    if x.ndim not in (1, 2, 4):
        raise NotImplementedError(f"gradviz: nll_loss of a {x.ndim}-D input is not implemented "
                                  "by gradviz's core; run with --backend torch to use PyTorch")
    if x.ndim == 2 and t.shape[:1] != x.shape[:1]:
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 1}).")
    c = x.shape[0] if x.ndim == 1 else x.shape[1]
    if x.ndim == 4 and t.shape != (x.shape[0],) + x.shape[2:]:
        raise RuntimeError(f"size mismatch (got input: {list(x.shape)}, target: "
                           f"{list(t.shape)})")
    if weight is not None:
        _not_differentiable("nll_loss_forward", "weight", weight)
        if weight._data.shape != (c,):
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or "
                               f"no classes but got weight tensor of shape: "
                               f"[{', '.join(map(str, weight._data.shape))}]")
        if weight._data.dtype != x.dtype:
            # torch's kernel reads the weights as the input's scalar type (cross_entropy's
            # class weights too)
            raise RuntimeError(f"expected scalar type {_TORCH_SCALAR[x.dtype.name]} but found "
                               f"{_TORCH_SCALAR[weight._data.dtype.name]}")
    if x.ndim == 2:
        x2 = x
    else:
        x2 = x.reshape(1, c) if x.ndim == 1 else np.moveaxis(x, 1, -1).reshape(-1, c)
    t2 = t if t.ndim == 1 else t.reshape(-1)
    m = len(t2)
    picked = None
    # (np.minimum.reduce: ndarray.min adds a Python wrapper that costs more than the 32
    # comparisons of a batch)
    if m and 0 <= np.minimum.reduce(t2) and not 0 <= ignore_index < c:
        # The common case, no target ignored: one reduction instead of the masks below, and
        # the indexing itself finds a target past the last class.
        all_valid = True
        safe = t2
        try:
            picked = x2[row_numbers(m), t2]
        except IndexError:
            pass
    if picked is None:
        valid = t2 != ignore_index
        all_valid = valid.all()
        safe = t2 if all_valid else np.where(valid, t2, 0)
        if (safe.astype(np.uint64, copy=False) >= c).any():      # negatives wrap to huge
            raise IndexError(f"Target {safe[(safe < 0) | (safe >= c)][0]} is out of bounds.")
        picked = x2[row_numbers(m), safe]
    dt = x.dtype.type
    if weight is None:
        w = None if all_valid else valid.astype(x.dtype)
        total_weight = dt(m if all_valid else int(valid.sum()))
    else:
        w = weight._data[safe] if all_valid else weight._data[safe] * valid
        total_weight = dt(np.add.reduce(w, dtype=x.dtype))
    if reduction == 1 and w is None and m:
        # -sum(picked) is sum(-picked) exactly: one negation of a number, not of the batch.
        r = dt(-np.add.reduce(picked, dtype=x.dtype) / total_weight)
    else:
        r, total_weight = _reduce_picked(-picked if w is None else -picked * w, reduction,
                                         total_weight, t.shape, x.dtype)
    out = _make(r)
    if _state.enabled and input._rg:
        row = D["nll_loss2d"] if x.ndim == 4 else D["nll_loss"]
        record(row, out, (input,), (input, target, weight, reduction, ignore_index,
                                    _make(total_weight)))
    return out


@records("nll_loss_backward", "nll_loss2d_backward")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """The gradient of nll_loss as an op (NllLossBackwardBackward0, NllLoss2DBackwardBackward0
    for images), recorded under create_graph=True as torch does."""
    out = _make(_dmath.nll_loss_backward(grad_output._data, self._data, target, weight,
                                         reduction, ignore_index, total_weight))
    if _needs(grad_output, self):
        row = D["nll_loss2d_backward"] if self._data.ndim == 4 else D["nll_loss_backward"]
        record(row, out, (grad_output, self), (target, weight, reduction, ignore_index))
    return out


# ----- Binary cross entropy ------------------------------------------------------------------

def _reduction_args(input, target, weight):
    if weight is not None:
        return np.broadcast_to(weight._data, input._data.shape)
    return None


@records("binary_cross_entropy")
def binary_cross_entropy(self, target, weight=None, reduction=1):
    """-w (t log x + (1 - t) log(1 - x)), each log clamped to >= -100 as torch does
    (BinaryCrossEntropyBackward0)."""
    _not_differentiable("binary_cross_entropy", "weight", weight)
    x, t = self._data, target._data
    _same_dtype(x, t)
    if np.any((x < 0) | (x > 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        d = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
    return _weighted_loss("binary_cross_entropy", d, self, target, weight, reduction,
                          (self, target, weight, reduction))


@records("binary_cross_entropy_backward")
def binary_cross_entropy_backward(grad_output, self, target, weight, reduction):
    """The gradient of binary_cross_entropy w.r.t. its input as an op
    (BinaryCrossEntropyBackwardBackward0), recorded under create_graph=True as torch does."""
    w = None if weight is None else weight._data
    out = _make(np.asarray(_dmath.binary_cross_entropy_backward(
        grad_output._data, self._data, target._data, w, reduction)))
    if _needs(grad_output, self, target):
        record(D["binary_cross_entropy_backward"], out, (grad_output, self, target),
               (grad_output, self, target, weight, reduction))
    return out


def _weighted_loss(row, d, self, target, weight, reduction, saved):
    """The elementwise loss d times the weight, reduced, recorded as row's node."""
    w = _reduction_args(self, target, weight)
    if w is not None:
        d = d * w
    out = _make(_reduce(d.astype(self._data.dtype, copy=False), reduction))
    if _needs(self, target):
        record(D[row], out, (self, target), saved)
    return out


def np_log_sigmoid(a):
    return np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))


def _into(ufunc, a, b, dt):
    """ufunc(a, b) in torch's promoted dtype, written into a tensor of dtype dt: an in-place
    op's cast, and its refusal of a float result into an integer."""
    pt = _promote(a.dtype, b.dtype)
    _check_cast(pt, dt, of_tensors=True)
    r = ufunc(a.astype(pt, copy=False), b.astype(pt, copy=False))
    if r.shape != a.shape:
        raise RuntimeError(f"output with shape {list(a.shape)} doesn't match the broadcast "
                           f"shape {list(r.shape)}")
    return r.astype(dt, copy=False)


@records("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
    """-w (pos_weight t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), computed without
    overflow (BinaryCrossEntropyWithLogitsBackward0)."""
    _not_differentiable("binary_cross_entropy_with_logits", "weight", weight)
    _not_differentiable("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    x, t = self._data, target._data
    # torch's Loss.cpp, step by step, each result in the dtype torch writes it to: the loss
    # is (1 - target), edited in place, so it has the target's dtype (a float64 target makes
    # a float32 input's loss float64; an integer target is refused), and log_sigmoid(x) keeps
    # the input's (float16: computed in float32, rounded once)
    if t.dtype == np.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    log_sig = np_log_sigmoid(x.astype(np.float32) if x.dtype == _F16 else x).astype(x.dtype)
    if pos_weight is not None:
        pw = pos_weight._data
        dt = _promote(pw.dtype, t.dtype)
        log_weight = (pw - pw.dtype.type(1)).astype(dt) * t.astype(dt) + dt.type(1)
        log_sig = _into(np.multiply, log_sig, log_weight, x.dtype)
    d = _into(np.multiply, t.dtype.type(1) - t, x, t.dtype)
    d = _into(np.subtract, d, log_sig, t.dtype)
    if weight is not None:
        d = _into(np.multiply, d, weight._data, t.dtype)
    out = _make(_reduce(d, reduction))
    if _needs(self, target):
        record(D["binary_cross_entropy_with_logits"], out, (self, target),
               (self, target, weight, pos_weight, reduction))
    return out


# ----- Smooth L1 and Huber -------------------------------------------------------------------

@records("smooth_l1_loss")
def smooth_l1_loss(self, target, reduction=1, beta=1.0):
    """0.5 z^2 / beta where |z| < beta, else |z| - 0.5 beta, for z = x - t
    (SmoothL1LossBackward0)."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x, t = np.broadcast_arrays(*_promoted(self._data, target._data))
    z = np.abs(x - t)
    d = np.where(z < beta, 0.5 * z * z / beta if beta else z, z - 0.5 * beta)
    out = _make(_reduce(d.astype(z.dtype, copy=False), reduction))
    if _needs(self, target):
        record(D["smooth_l1_loss"], out, (self, target), (self, target, reduction, beta))
    return out


@records("huber_loss")
def huber_loss(self, target, reduction=1, delta=1.0):
    """0.5 z^2 where |z| < delta, else delta (|z| - 0.5 delta), for z = x - t
    (HuberLossBackward0)."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    # torch: computed in the promoted dtype, written into a loss of the input's dtype (its
    # backward refuses the mixed dtypes: _dmath.huber_loss_backward)
    x, t = np.broadcast_arrays(*_promoted(self._data, target._data))
    dt = self._data.dtype
    _check_cast(x.dtype, dt, of_tensors=True)
    z = np.abs(x - t)
    d = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    out = _make(_reduce(d.astype(dt, copy=False), reduction))
    if _needs(self, target):
        record(D["huber_loss"], out, (self, target), (self, target, reduction, delta))
    return out


# The backwards of smooth_l1_loss and huber_loss are ops of their own under create_graph=True,
# as in torch (SmoothL1LossBackwardBackward0, HuberLossBackwardBackward0).

def _pointwise_loss_backward(row, grad_output, self, target, reduction, param):
    fn = getattr(_dmath, row)
    out = _make(np.asarray(fn(grad_output._data, self._data, target._data, reduction, param)))
    if _needs(grad_output, self, target):
        record(D[row], out, (grad_output, self, target),
               (grad_output, self, target, reduction, param))
    return out


@records("smooth_l1_loss_backward")
def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    return _pointwise_loss_backward("smooth_l1_loss_backward", grad_output, self, target,
                                    reduction, beta)


@records("huber_loss_backward")
def huber_loss_backward(grad_output, self, target, reduction, delta):
    return _pointwise_loss_backward("huber_loss_backward", grad_output, self, target,
                                    reduction, delta)


# ----- The Scalar overload recorded by cross_entropy's probability targets -----------------

@records("div_scalar")
def div_scalar(self, other):
    """self / a Python number as torch's C++ div(Tensor, Scalar) (DivBackward1): recorded by
    cross_entropy's mean over probability targets."""
    out = _make(self._data / other)
    if _state.enabled and self._rg:
        record(D["div_scalar"], out, (self,), (other,))
    return out
