"""Math on NumPy arrays or Tensors, for derivative formulas.

A formula runs on arrays for a plain backward and on Tensors under create_graph=True (so that
the gradient is itself differentiable); every function here accepts both. On Tensors they call
the ops through gradviz._registry.ops, so that this module, the derivative table and the ops
never import each other. `fit_to` is the one place where a gradient is summed back to an
input's broadcast shape and cast to its dtype.
"""

import math

import numpy as np

from . import _f32
from ._creation import zeros as tzeros
from ._dtype import _TORCH_SCALAR, from_numpy_dtype
from ._registry import ops
from ._tensor import Tensor, _make
from .autograd.graph import _preserved_copy, apply_view

_ndarray = np.ndarray
_add_reduce = np.add.reduce
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _t(x):
    # (this module's own functions test isinstance(x, Tensor) inline: a call fewer per test,
    # on every formula of a backward)
    return isinstance(x, Tensor)


def exp(x):
    return x.exp() if isinstance(x, Tensor) else np.exp(x)


def log(x):
    if isinstance(x, Tensor):
        return x.log()
    dt = getattr(x, "dtype", None)
    if dt is not None and dt.kind in "biu":
        # torch's log of an integer tensor is computed in the default float dtype (NumPy's
        # in float16 for int8 / uint8 / bool, float64 for int64)
        from ._dtype import _default
        x = x.astype(_default[0].np)
    return np.log(x)


def sin(x):
    return x.sin() if isinstance(x, Tensor) else np.sin(x)


def cos(x):
    return x.cos() if isinstance(x, Tensor) else np.cos(x)


def sign(x):
    return x.sign() if isinstance(x, Tensor) else np.sign(x)


def mask(cond, x):
    """x where cond, else 0; cond is a constant boolean array (never differentiated). On
    arrays a select, as torch's formulas (where, masked_fill, threshold_backward): an inf or
    nan of x where cond is False gives 0, where multiplying by the mask gives nan."""
    if isinstance(cond, Tensor):
        cond = cond._data
    if isinstance(x, Tensor):
        return x * _make(np.asarray(cond, dtype=x._data.dtype))
    x = np.asarray(x)
    if x.dtype.kind != "f":
        return np.where(cond, x, 0)[()]
    # the select on the bits: x's bits AND all ones where cond, AND 0 (+0.0) elsewhere; exact
    # (no -0.0 from a product, no nan from inf * 0) and branch-free, where np.where on a random
    # mask costs 1 ms per 100k elements (a mispredicted branch per element)
    bits = np.dtype(f"u{x.dtype.itemsize}")
    keep = np.negative(cond, dtype=bits)        # all ones where cond: one fresh array...
    out = keep if type(keep) is np.ndarray and keep.shape == x.shape else None
    return np.bitwise_and(x.view(bits), keep, out=out).view(x.dtype)[()]   # ...reused


def scale_by_mask(cond, x):
    """x times the constant boolean cond, for the formulas torch writes as a multiplication
    (amax/amin's scale_grad_by_count, the inf-norm): there an inf or nan of x where cond is
    False gives nan, in torch too."""
    if isinstance(x, Tensor):
        return mask(cond, x)
    return _times_mask(cond, x)


def _times_mask(cond, x):
    return x * cond.astype(np.result_type(x), copy=False) if np.ndim(cond) else x * cond


def value(x):
    """The raw array of a saved value (for masks, shapes and indices)."""
    return x._data if isinstance(x, Tensor) else x


def expand(x, shape):
    if isinstance(x, Tensor):
        return x.expand(tuple(shape))
    return np.broadcast_to(x, shape)


def reshape(x, shape):
    if type(x) is _ndarray:
        return x.reshape(shape)         # np.reshape's own call, without its Python wrapper
    return x.reshape(tuple(shape)) if isinstance(x, Tensor) else np.reshape(x, shape)


def sum_dims(x, dims, keepdim=False):
    if isinstance(x, Tensor):
        return x.sum(dim=dims, keepdim=keepdim)
    # What np.sum calls for arrays, scalars and numbers, without its Python wrappers.
    return _add_reduce(x, axis=dims, keepdims=keepdim)


def unsqueeze_dims(x, dims, ndim):
    """Re-insert reduced dims (given as non-negative dims of the ndim-D input) into x."""
    if isinstance(x, Tensor):
        for d in sorted(dims):
            x = x.unsqueeze(d)      # torch's unsqueeze_multiple (UnsqueezeBackward0)
        return x
    shape = list(np.shape(x))
    for d in sorted(dims):
        shape.insert(d, 1)
    return np.reshape(x, tuple(shape))


def transpose(x, d0=-2, d1=-1):
    if isinstance(x, Tensor):
        return x.transpose(d0, d1)
    return x.swapaxes(d0, d1)       # the method: np.swapaxes adds a Python wrapper


def permute(x, dims):
    return x.permute(tuple(dims)) if isinstance(x, Tensor) else np.transpose(x, dims)


def matmul(a, b):
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return _tensor(a) @ _tensor(b)
    return np.matmul(a, b)


def outer(a, b):
    # torch's ger: a.reshape({n, 1}) * b
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return _tensor(a).reshape(-1, 1) * _tensor(b)
    return np.multiply.outer(a, b)


def product(a, b):
    """a * b, a Tensor product (MulBackward0, a's edge first) when either is a Tensor."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return _tensor(a) * _tensor(b)
    return a * b


def _tensor(x):
    return x if isinstance(x, Tensor) else _make(np.asarray(x))


def mat_t(x):
    """The transpose of a matrix: torch's formulas call `.t()` on 2-D tensors (TBackward0)."""
    return x.t() if isinstance(x, Tensor) else x.swapaxes(-2, -1)


def bmm(a, b):
    """A batched matrix product (BmmBackward0 on Tensors, never matmul's reshapes)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return ops.bmm(_tensor(a), _tensor(b))
    return np.matmul(a, b)


def const_minus(s, x):
    """s - x for a Python number s. torch's C++ `1 - t` subtracts from a wrapped number:
    SubBackward0 with no edge for s (not Python's RsubBackward1)."""
    if isinstance(x, Tensor):
        return ops.sub(_make(np.asarray(s, dtype=x._data.dtype)), x)
    return s - x


def const_over(s, x):
    """s / x for a Python number s: C++ `value / t` divides a wrapped number (DivBackward0
    with no edge for s)."""
    if isinstance(x, Tensor):
        return ops.div(_make(np.asarray(s, dtype=x._data.dtype)), x)
    return s / x


def masked_zero(x, cond):
    """x with 0 where the constant boolean cond holds: torch's `x.masked_fill(cond, 0)`
    (MaskedFillBackward0 on Tensors)."""
    if isinstance(x, Tensor):
        return ops.masked_fill(x, _make(np.asarray(cond)), 0)
    return where0(cond, x)


def div_rounded(a, b, rounding_mode):
    """a.div(b, rounding_mode=...) (DivBackward2 on Tensors: its gradient is 0); on arrays a
    constant."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return ops.div(_tensor(a), _tensor(b), rounding_mode=rounding_mode)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.true_divide(a, b)
    return np.floor(q) if rounding_mode == "floor" else np.trunc(q)


def sgn(x):
    """torch's x.sgn() (SgnBackward0 on Tensors); the sign, 0 at 0 and at nan."""
    if isinstance(x, Tensor):
        return ops.sgn(x)
    r = np.sign(x)
    return np.where(r != r, r.dtype.type(0), r) if np.result_type(r).kind == "f" else r


def unsqueeze_to(grad, dim, sizes):
    """torch's unsqueeze_to: the gradient of a squeeze, unsqueezed back where sizes had a 1
    (UnsqueezeBackward0 on Tensors; a reshape on arrays). dim None: every size-1 dim."""
    if not isinstance(grad, Tensor):
        return np.reshape(grad, sizes)
    dims = range(len(sizes)) if dim is None else (dim,) if isinstance(dim, int) else dim
    for d in sorted(d % len(sizes) for d in dims):
        if sizes[d] == 1:
            grad = grad.unsqueeze(d)
    return grad


def pow_(x, e):
    return x ** e


def scale(x, s):
    """x * s for a Python number s; on Tensors torch's mul(Tensor, Scalar) (MulBackward1)."""
    if isinstance(x, Tensor):
        return ops.mul_scalar(x, s)
    return x * s


def divide_by(x, s):
    """x / s for a Python number s; on Tensors torch's div(Tensor, Scalar) (DivBackward1)."""
    if isinstance(x, Tensor):
        return ops.div_scalar(x, s)
    return x / s


def shift(x, s):
    """x + s for a Python number s; on Tensors torch's sub(Tensor, Scalar) (SubBackward1)."""
    if isinstance(x, Tensor):
        return ops.sub_scalar(x, -s)
    return x + s


def plus(x, s):
    """x + s for a Python number s; on Tensors torch's add(Tensor, Scalar) (AddBackward1)."""
    if isinstance(x, Tensor):
        return ops.add_scalar(x, s)
    return x + s


def where0(cond, x):
    """0 where the constant boolean cond holds, else x (torch's at::where(cond, zeros, x)):
    unlike mask(), a nan or inf in x under cond does not leak through as nan."""
    if isinstance(x, Tensor):
        return ops.where(_make(np.asarray(cond)), 0, x)
    return np.where(cond, x.dtype.type(0) if hasattr(x, "dtype") else 0, x)


def sum_to(x, shape):
    """Sum a broadcast gradient back to `shape` (the one place broadcasting is undone)."""
    xs = x.shape if type(x) is _ndarray else np.shape(value(x))
    shape = tuple(shape)
    if xs == shape:
        return x
    if not shape and isinstance(x, Tensor):
        return x.sum()      # torch's sum_to: to a 0-d shape, one sum() (SumBackward0)
    lead = len(xs) - len(shape)
    if shape and lead > 0 and type(x) is _ndarray and xs[lead:] == shape:
        # only leading dims to sum away (a bias's gradient): one reduction, whose result is
        # the values the general case below reshapes, in an array of its own (which a
        # leaf's AccumulateGrad can then take without a copy). (Not to shape (): a reduction
        # over every dim gives a NumPy scalar, not a 0-d array.)
        return _add_reduce(x, axis=tuple(range(lead)))
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                     if s == 1 and xs[i + lead] != 1)
    r = sum_dims(x, dims, keepdim=True) if dims else x
    # torch's sum_to views the result only when leading dims were summed away.
    return reshape(r, shape) if lead else r


def fit_to(g, shape, dtype):
    """A gradient summed to an input's shape and cast to its dtype (engine-wide rule)."""
    g = sum_to(g, shape)
    if isinstance(g, Tensor):
        return g if g._data.dtype == dtype else g.to(from_numpy_dtype(dtype))
    gd = g.dtype if type(g) is _ndarray else np.result_type(g)
    return g if gd == dtype else np.asarray(g, dtype=dtype)


def causal_fill(s):
    """-inf above the diagonal of the last two dims of the array s (in place when s is a
    writable array, as a fresh product is): the causal mask of the attention kernel and of its
    backward, arrays only."""
    above = ~np.tri(s.shape[-2], s.shape[-1], dtype=bool)
    if type(s) is np.ndarray and s.flags.writeable:
        np.copyto(s, -np.inf, where=above)
        return s
    return np.where(above, -np.inf, s)


def zeros_like(x):
    """Zeros shaped like x, without history (torch's grad.zeros_like() in a formula)."""
    if isinstance(x, Tensor):
        return _make(np.zeros_like(x._data))
    return np.zeros_like(x)


def ones_like(x):
    """Ones shaped like x, without history (torch's ones_like(grad_output) in a formula)."""
    if isinstance(x, Tensor):
        return _make(np.ones_like(x._data))
    return np.ones_like(x)


def maybe_multiply(x, s):
    """x * s, skipped when s == 1 (torch's maybe_multiply); s is a Python number."""
    return x if s == 1 else scale(x, s)


def zeros(shape, like):
    if isinstance(like, Tensor):
        return tzeros(tuple(shape), dtype=like.dtype)
    return np.zeros(shape, dtype=np.result_type(like))


def put(grad, shape, key, accumulate=False):
    """A zero array of `shape` with grad written (or added) at `key`: the backward of indexing."""
    if isinstance(grad, Tensor):
        return ops.index_put_impl(tzeros(tuple(shape), dtype=grad.dtype), key, grad, accumulate)
    out = np.zeros(shape, dtype=np.result_type(grad))
    if accumulate:
        np.add.at(out, key, grad)
    else:
        out[key] = grad
    return out


def put_view(grad, shape, steps):
    """zeros(shape) with grad written through the view steps (the backward of a view after an
    in-place edit). Under create_graph=True it is an index_put of recorded ops, so second
    derivatives flow through it (they were silently cut off)."""
    if isinstance(grad, Tensor) and grad.requires_grad:
        where = view_positions(shape, steps).reshape(-1)
        flat = tzeros(math.prod(shape), dtype=grad.dtype)
        if np.unique(where).size < where.size:     # a view that overlaps itself: sums
            return ops.index_put_impl(flat, (where,), grad.reshape(-1), True).view(tuple(shape))
        return ops.index_put(flat, (where,), grad.reshape(-1)).view(tuple(shape))
    g = value(grad)
    out = np.zeros(shape, dtype=np.result_type(g))
    view = apply_view(out, steps)
    if view.flags.writeable:
        view[...] = g
    else:
        # a view that overlaps itself (an expand): each element gets the sum of the gradients
        # of every place that reads it, as torch's as_strided backward sums them
        np.add.at(out.reshape(-1), view_positions(shape, steps).reshape(-1),
                  np.broadcast_to(g, view.shape).reshape(-1))
    return _make(out) if isinstance(grad, Tensor) else out


def view_positions(shape, steps):
    """The flat positions in a tensor of shape that the view steps select, in the view's
    order: the view applied to arange."""
    return apply_view(np.arange(math.prod(shape)).reshape(shape), steps)


def take(grad, key):
    return grad[key] if not isinstance(grad, Tensor) else grad[_wrap_key(key)]


def _wrap_key(key):
    if isinstance(key, tuple):
        return tuple(_make(k) if isinstance(k, np.ndarray) else k for k in key)
    return _make(key) if isinstance(key, np.ndarray) else key


def stack_grads(grads, like_shape, dim, dtype):
    """Stack per-output gradients along dim, zeros where an output got no gradient."""
    if any(isinstance(g, Tensor) for g in grads):
        parts = [g if g is not None else tzeros(tuple(like_shape)) for g in grads]
        return ops.stack([_tensor(p) for p in parts], dim)
    parts = [g if g is not None else np.zeros(like_shape, dtype=dtype) for g in grads]
    return np.stack(parts, axis=dim)


def split_grad(grad, sizes, dim):
    """Pieces of grad along dim (the backward of cat)."""
    bounds = np.cumsum(sizes)[:-1]
    if isinstance(grad, Tensor):
        out, start = [], 0
        for s in sizes:
            out.append(grad.narrow(dim, start, s))
            start += s
        return out
    return np.split(grad, bounds, axis=dim)


def unstack_grad(grad, dim, n):
    """The backward of stack: the slices of grad along dim (views, no copies, on arrays)."""
    if isinstance(grad, Tensor):
        return [grad.select(dim, i) for i in range(n)]
    return list(np.moveaxis(np.asarray(grad), dim, 0))


def select_grad(grad, dim, index):
    return grad.select(dim, index) if isinstance(grad, Tensor) else np.take(grad, index, axis=dim)


def is_transposed(a):
    """A 2-D array laid out as the transpose of a contiguous one (W.t())."""
    return a.ndim == 2 and a.flags.f_contiguous and not a.flags.c_contiguous


def floor_div(a, b):
    """a // b on values (a constant in remainder's formula: never differentiated)."""
    q = np.floor_divide(value(a), value(b))
    return _make(q) if isinstance(a, Tensor) or isinstance(b, Tensor) else q


# ----- Activations, losses and normalization (gradviz.nn.functional) -------------------------

def np_erf(a):
    """erf of a float array, in its dtype: torch.erf's vectorised fdlibm kernel (imported at
    call time, since gradviz._ops imports this module)."""
    from ._ops.special import _np_erf
    return _np_erf(a)


def tanh(x):
    return x.tanh() if isinstance(x, Tensor) else np.tanh(x)


def sigmoid(x):
    if isinstance(x, Tensor):
        return x.sigmoid()
    with np.errstate(over="ignore"):
        return np.reciprocal(1 + np.exp(-x))


def times_constant(x, factor):
    """x * factor for a constant array (never differentiated): the gradient of piecewise
    linear functions (leaky_relu's slope where x <= 0)."""
    if isinstance(x, Tensor):
        return x * _make(np.asarray(factor, dtype=x._data.dtype))
    return x * factor.astype(np.result_type(x), copy=False)


def mean_dims(x, dims, keepdim=False):
    if isinstance(x, Tensor):
        return x.mean(dim=dims, keepdim=keepdim)
    # np.add.reduce, not np.mean: the same sum without np.mean's per-call overhead.
    shape = np.shape(x)
    n = 1
    for d in (dims if isinstance(dims, tuple) else (dims,)):
        n *= shape[d]
    return np.add.reduce(x, axis=dims, keepdims=keepdim) / np.result_type(x).type(n)


def cat(parts, dim):
    if any(isinstance(p, Tensor) for p in parts):
        return ops.cat([_tensor(p) for p in parts], dim)
    return np.concatenate(parts, axis=dim)


def narrow(x, dim, start, length):
    if isinstance(x, Tensor):
        return x.narrow(dim, start, length)
    key = [slice(None)] * np.ndim(x)
    key[dim] = slice(start, start + length)
    return x[tuple(key)]


_SQRT1_2 = 1 / math.sqrt(2)
_SQRT_2_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def gelu_derivative(a, approximate):
    """d gelu / dx of an array (torch's gelu_backward without the incoming gradient)."""
    if approximate == "tanh":
        t = np.tanh(_SQRT_2_PI * (a + 0.044715 * a * a * a))
        d_inner = _SQRT_2_PI * (1 + 3 * 0.044715 * a * a)
        return 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * d_inner
    cdf = 0.5 * (1 + np_erf(a * _SQRT1_2))
    pdf = np.exp(-0.5 * a * a) * _INV_SQRT_2PI
    return cdf + a * pdf


def gelu_second_derivative(x, approximate):
    """d^2 gelu / dx^2, on arrays or Tensors (composed of exp/tanh, so differentiable)."""
    if approximate == "tanh":
        k, c = _SQRT_2_PI, 0.044715
        t = tanh((x + x * x * x * c) * k)
        d1 = (x * x * (3 * c) + 1) * k
        d2 = x * (6 * k * c)
        return (1 - t * t) * (d1 + x * 0.5 * (d2 - t * d1 * d1 * 2))
    return exp(x * x * -0.5) * _INV_SQRT_2PI * (2 - x * x)


def as_tensor(x):
    """x as a Tensor (an array is wrapped without history)."""
    return _tensor(x)


def clamp_min(x, lo):
    """max(x, lo) for a Python number lo (torch's clamp_min in a formula)."""
    return ops.clamp(x, min=lo) if isinstance(x, Tensor) else np.maximum(x, lo)


def log_sigmoid(x):
    """log(sigmoid(x)) without overflow, on arrays or Tensors (LogSigmoidBackward0)."""
    if isinstance(x, Tensor):
        return ops.logsigmoid(x)
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
# ----- Reductions, scans, gather and scatter ---------------------------------------------

def along(index, dim, ndim=0):
    """The NumPy key addressing, for each element of `index`, position index[...] along dim
    and its own position along the other dims (torch's gather/scatter addressing). A 0-d
    index addresses the one element of a 0-d tensor (torch checks that it is 0), or, in an
    array of `ndim` 1, the element it names (torch counts a 0-d index as 1-d there)."""
    if not np.ndim(index):
        return (np.asarray(index),) if ndim else ()
    key = list(np.indices(np.shape(index), sparse=True))
    key[dim] = index
    return tuple(key)


def gather(x, dim, index):
    """x.gather(dim, index)."""
    idx = value(index)
    if isinstance(x, Tensor):
        return ops.gather(x, dim, _tensor(idx))
    return x[along(idx, dim, np.ndim(x))]


def scatter_to(shape, dim, index, src):
    """zeros(shape).scatter(dim, index, src): the backward of sort, topk and median."""
    idx = value(index)
    if isinstance(src, Tensor):
        return ops.scatter(tzeros(tuple(shape), dtype=src.dtype), dim, _tensor(idx), src)
    out = np.zeros(shape, dtype=np.result_type(src))
    out[along(idx, dim, len(shape))] = src
    return out


def scatter_add_to(shape, dim, index, src):
    """zeros(shape).scatter_add(dim, index, src): the backward of gather."""
    idx = value(index)
    if isinstance(src, Tensor):
        return ops.scatter_add(tzeros(tuple(shape), dtype=src.dtype), dim, _tensor(idx), src)
    out = np.zeros(shape, dtype=np.result_type(src))
    np.add.at(out, along(idx, dim, len(shape)), src)
    return out


def zero_at(grad, dim, index):
    """grad.scatter(dim, index, 0): the gradient of what scatter overwrote is 0."""
    idx = value(index)
    if isinstance(grad, Tensor):
        return ops.scatter(grad, dim, _tensor(idx), 0)
    out = np.array(grad, copy=True)
    out[along(idx, dim, out.ndim)] = 0
    return out


def index_select(x, dim, index):
    idx = np.reshape(value(index), -1)
    if isinstance(x, Tensor):
        return ops.index_select(x, dim, _tensor(idx))
    return np.take(x, idx, axis=dim)


def index_add_to(shape, dim, index, src):
    """zeros(shape).index_add(dim, index, src): the backward of index_select."""
    idx = np.reshape(value(index), -1)
    if isinstance(src, Tensor):
        return ops.index_add(tzeros(tuple(shape), dtype=src.dtype), dim, _tensor(idx), src)
    out = np.zeros(shape, dtype=np.result_type(src))
    np.add.at(out, (slice(None),) * dim + (idx,), src)
    return out


def index_zero(grad, dim, index):
    """grad.index_fill(dim, index, 0)."""
    idx = np.reshape(value(index), -1)
    if isinstance(grad, Tensor):
        return ops.index_fill(grad, dim, _tensor(idx), 0)
    out = np.array(grad, copy=True)
    out[(slice(None),) * dim + (idx,)] = 0
    return out


def cumsum(x, dim):
    return ops.cumsum(x, dim) if isinstance(x, Tensor) else np.cumsum(x, axis=dim)


def reverse_cumsum(x, dim):
    """Sums from each position to the end along dim (the backward of cumsum): torch's
    reversed_cumsum, x.flip(dim).cumsum(dim).flip(dim) (FlipBackward0 on Tensors)."""
    if isinstance(x, Tensor):
        return ops.flip(ops.cumsum(ops.flip(x, (dim,)), dim), (dim,))
    from ._ops._iterator import c_order      # (gradviz._ops imports this module)
    return flip(c_order(np.cumsum(flip(x, (dim,)), axis=dim)), (dim,))    # cumsum: contiguous


def abs_(x):
    return x.abs() if isinstance(x, Tensor) else np.abs(x)


def cumprod(x, dim):
    return ops.cumprod(x, dim) if isinstance(x, Tensor) else np.cumprod(x, axis=dim)


def fill_where(x, cond, v):
    """x with the number v where the constant boolean cond holds (masked_fill)."""
    if isinstance(x, Tensor):
        return ops.masked_fill(x, _make(np.asarray(cond)), v)
    return np.where(cond, np.asarray(v, dtype=x.dtype), x)


# ----- Shape and linear algebra (tril/triu, flip, roll, diagonal, cross, split) ---------------

def tril(x, k):
    return ops.tril(x, k) if isinstance(x, Tensor) else np.tril(x, k)


def triu(x, k):
    return ops.triu(x, k) if isinstance(x, Tensor) else np.triu(x, k)


def flip(x, dims):
    if isinstance(x, Tensor):
        return ops.flip(x, dims)
    if not np.ndim(x):
        return x
    # as torch's flip: a copy laid out as x (NumPy's flip is a view of negative strides)
    out = _preserved_copy(x)
    out[...] = np.flip(x, dims)
    return out


def roll(x, shifts, dims):
    if isinstance(x, Tensor):
        return ops.roll(x, shifts, dims)
    return np.roll(x, shifts, axis=dims if dims else None)


def rot90(x, k, dims):
    return ops.rot90(x, k, dims) if isinstance(x, Tensor) else np.rot90(x, k, axes=dims)


def diagonal(x, offset, d1, d2):
    """The diagonal of x (a copy on arrays; the view op on Tensors)."""
    if isinstance(x, Tensor):
        return ops.diagonal(x, offset, d1, d2)
    return np.diagonal(x, offset, d1, d2)


def cross(a, b, dim):
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return ops._linalg_cross(_tensor(a), _tensor(b), dim)
    return np.cross(a, b, axis=dim)


def cat_grads(grads, sizes, shape, dim):
    """The backward of split: the pieces' gradients concatenated along dim, zeros (of the
    gradients' dtype) for pieces that got none."""
    dtype = next(np.result_type(value(g)) for g in grads if g is not None)
    parts = []
    for g, s in zip(grads, sizes):
        if g is None:
            part = list(shape)
            part[dim] = s
            g = np.zeros(part, dtype=dtype)
        parts.append(g)
    if any(isinstance(g, Tensor) for g in parts):
        return ops.cat([_tensor(p) for p in parts], dim)
    return np.concatenate(parts, axis=dim)


def inverse(x):
    return ops.linalg_inv(x) if isinstance(x, Tensor) else np.linalg.inv(x)


# ----- Pointwise and special functions -----------------------------------------------------

def rsqrt(x):
    return x.rsqrt() if isinstance(x, Tensor) else 1 / np.sqrt(x)


def sinh(x):
    return x.sinh() if isinstance(x, Tensor) else np.sinh(x)


def cosh(x):
    return x.cosh() if isinstance(x, Tensor) else np.cosh(x)


def xlogy(x, y):
    """x * log(y), 0 where x == 0 unless y is nan (torch's xlogy). On Tensors, torch's xlogy op
    (x may be a constant array, as in xlogy's own derivative `xlogy(self != 0, other)`)."""
    if isinstance(x, Tensor) or isinstance(y, Tensor):
        return ops.xlogy(_tensor(x) if not isinstance(x, (int, float)) else x, y)
    yd = getattr(y, "dtype", None)
    if yd is not None and yd.kind in "biu":
        # torch's xlogy(x, y) computes in the promoted dtype: x's float dtype, or the default
        # (NumPy's log of int8 is float16, of int64 float64)
        xd = getattr(x, "dtype", None)
        from ._dtype import _default
        y = y.astype(xd if xd is not None and xd.kind == "f" else _default[0].np)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = x * np.log(y)
    zero = np.asarray(x) == 0
    if np.any(zero):
        r = np.where(zero & ~np.isnan(y), np.zeros((), dtype=np.result_type(r)), r)
    return r


def trunc_div(a, b):
    """a / b rounded toward zero, on values (a constant in fmod's formula)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.trunc(np.true_divide(value(a), value(b)))
    return _make(q) if isinstance(a, Tensor) or isinstance(b, Tensor) else q


def _one_minus_square64(y):
    """1 - y*y for float64 y, rounded once: y*y = hi + lo exactly (Dekker's split), then
    1 - hi with its rounding error (Knuth's two-sum), then the error and lo."""
    hi = y * y
    c = 134217729.0 * y             # 2**27 + 1
    y_hi = c - (c - y)
    y_lo = y - y_hi
    lo = ((y_hi * y_hi - hi) + 2.0 * y_hi * y_lo) + y_lo * y_lo
    s = 1.0 - hi
    b = s - 1.0
    err = (1.0 - (s - b)) + (-hi - b)
    return s + (err - lo)


def tanh_grad_array(grad, result):
    """grad * (1 - result**2) on arrays, rounded as torch's CPU tanh_backward.

    torch's vectorized `1 - b * b` is compiled into one fused multiply-add, rounded once:
    rounding the square first differed from torch in about half the elements (1 ulp), so a
    tanh network's gradients drifted from torch's after a step. float32 and float16: the
    square of a float32 is exact in float64, and the difference is rounded once to float32,
    the type torch's kernel computes half in; float64: _one_minus_square64.
    """
    if type(grad) is _ndarray and type(result) is _ndarray and grad.dtype is _F32 \
            and result.dtype is _F32:
        # float32, the common case: the square of a float64 copy, in place (the product with
        # dtype=float64 gives the same exact value in one call fewer, but through NumPy's
        # buffered casting loop: 57k instructions where these two take 35k on 32 x 200)
        y = result.astype(_F64)
        np.multiply(y, y, out=y)
        np.subtract(1.0, y, out=y)
        factor = y.astype(_F32)
        return np.multiply(grad, factor, out=factor)
    grad, result = np.asarray(grad), np.asarray(result)
    dtype = np.result_type(grad, result)
    if dtype == np.float64:
        return grad * _one_minus_square64(result.astype(np.float64, copy=False))
    y = result.astype(np.float64)
    np.multiply(y, y, out=y)
    np.subtract(1.0, y, out=y)
    factor = y.astype(np.float32)
    if dtype == np.float32:
        return np.multiply(grad, factor, out=factor)
    return (grad.astype(np.float32) * factor).astype(dtype)


# ----- Backward functions that record their own node under create_graph ----------------------

def _both(a, b):
    """a and b as Tensors when either is one (create_graph), else None."""
    return _tensors(a, b)


# tanh and sigmoid are on the hot path of every small network: the array case is tested
# first, without a helper call. (The parameter is named `result` so that the rows of tanh and
# sigmoid can use these functions as their formulas directly.)

def tanh_backward(grad, result):
    """grad * (1 - result**2); TanhBackwardBackward0 on Tensors."""
    if type(grad) is _ndarray and type(result) is _ndarray or not (
            isinstance(result, Tensor) or isinstance(grad, Tensor)):
        return tanh_grad_array(grad, result)
    return ops.tanh_backward(*_both(grad, result))


def sigmoid_backward(grad, result):
    """grad * (1 - result) * result; SigmoidBackwardBackward0 on Tensors."""
    if not (isinstance(result, Tensor) or isinstance(grad, Tensor)):
        # in torch's kernel's order: grad * result first rounded otherwise in ~35% of elements
        return grad * (1 - result) * result
    return ops.sigmoid_backward(*_both(grad, result))


def threshold_backward(grad, self, threshold):
    """0 where self <= threshold, else grad (kept at a nan of self, as torch's kernel);
    ThresholdBackwardBackward0 on Tensors."""
    if not (isinstance(self, Tensor) or isinstance(grad, Tensor)):
        return mask(~(self <= threshold), grad)
    return ops.threshold_backward(*_both(grad, self), threshold)


def softmax_backward_data(grad, output, dim):
    """output * (grad - sum(grad * output, dim)); SoftmaxBackwardDataBackward0 on Tensors."""
    tt = _both(grad, output)
    if tt is None:
        return output * (grad - np.add.reduce(grad * output, axis=dim, keepdims=True))
    return ops.softmax_backward_data(tt[0], tt[1], dim)


def log_softmax_backward_data(grad, output, dim):
    """grad - exp(output) * sum(grad, dim); LogSoftmaxBackwardDataBackward0 on Tensors."""
    if (type(grad) is _ndarray and type(output) is _ndarray and grad.dtype is output.dtype
            and not _f32.TORCH_BITS):
        # the plain backward's case: the same three operations as below, into one new array
        e = np.exp(output)
        np.multiply(e, _add_reduce(grad, axis=dim, keepdims=True), out=e)
        return np.subtract(grad, e, out=e)
    tt = _both(grad, output)
    if tt is None:
        if _f32.TORCH_BITS and _f32.lastdim_float32(grad, output, dim):
            return _f32.log_softmax_backward_lastdim(grad, output)  # torch's kernel, bit for bit
        # np.add.reduce is np.sum without its Python wrapper (this runs once per step)
        return grad - np.exp(output) * np.add.reduce(grad, axis=dim, keepdims=True)
    return ops.log_softmax_backward_data(tt[0], tt[1], dim)


def select_backward(grad, input_sizes, dim, index, key):
    """zeros(input_sizes) with grad at [key]; SelectBackwardBackward0 on Tensors."""
    if isinstance(grad, Tensor):
        return ops.select_backward(grad, input_sizes, dim, index, key)
    return put(grad, input_sizes, key)


def slice_backward(grad, input_sizes, dim, start, end, step, key):
    """zeros(input_sizes) with grad at [key]; SliceBackwardBackward0 on Tensors."""
    if isinstance(grad, Tensor):
        return ops.slice_backward(grad, input_sizes, dim, start, end, step, key)
    return put(grad, input_sizes, key)


def _tensors(*xs):
    """Each of xs as a Tensor when any is one (create_graph), else None."""
    return [_tensor(x) for x in xs] if any(isinstance(x, Tensor) for x in xs) else None


def mse_loss_backward(grad, self, target, reduction):
    """2 (self - target) grad, over the element count for "mean"; MseLossBackwardBackward0
    on Tensors."""
    tt = _tensors(grad, self, target)
    if tt is not None:
        return ops.mse_loss_backward(*tt, reduction)
    d = self - target
    g = 2 * d * grad
    return g / np.size(d) if reduction == 1 else g   # 1: torch's Reduction::Mean


_ROWS = [np.arange(0)]


def row_numbers(n):
    """np.arange(n), cached: a batch's row numbers are the same every step (nll_loss)."""
    a = _ROWS[0]
    if len(a) != n:
        a = _ROWS[0] = np.arange(n)
    return a


def nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight):
    """-weight[t] at each sample's target class (divided by the total weight for the mean),
    0 elsewhere and for ignored samples; (N, C, H, W) inputs have their classes on dim 1.
    NllLossBackwardBackward0 (NllLoss2DBackwardBackward0) on Tensors."""
    if isinstance(grad, Tensor) or isinstance(self, Tensor):
        return ops.nll_loss_backward(_tensor(grad), _tensor(self), target, weight, reduction,
                                     ignore_index, total_weight)
    c = self.shape[0] if self.ndim == 1 else self.shape[1]
    t = value(target).reshape(-1).astype(np.int64, copy=False)
    m = len(t)
    tw = value(total_weight)
    if weight is None and self.ndim == 2 and reduction == 1 and 0 < m <= 2048 and float(tw) == m:
        # The common case (a batch of class indices, the mean): the total weight counts the
        # samples kept, so all m were kept (a count up to 2048 is exact even in float16). The
        # same values as below, -grad / total_weight at each target, without the selections.
        # ((-1) / tw is -(1 / tw) exactly: a division rounds the same either side of 0.)
        out = np.zeros(self.shape, dtype=self.dtype)
        out[row_numbers(m), t] = grad * (self.dtype.type(-1) / tw)
        return out
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    w = valid.astype(self.dtype) if weight is None else value(weight)[safe] * valid
    if reduction == 1:
        # Only the kept samples are divided: none left gives zeros, not 0 / 0 (as torch).
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(valid, w / value(total_weight), 0).astype(self.dtype, copy=False)
    out = np.zeros((m, c), dtype=self.dtype)
    out[row_numbers(m), safe] = (grad.reshape(m) if reduction == 0 else grad) * -w
    if self.ndim == 1:
        return out.reshape(c)
    if self.ndim == 2:
        return out
    n, _, h, wd = self.shape
    # contiguous, as torch's: the gradient's views (nll_loss_nd's reshape) stay views.
    return np.ascontiguousarray(out.reshape(n, h, wd, c).transpose(0, 3, 1, 2))


def cdist_backward(grad, x1, x2, p, cdist):
    """d cdist(x1, x2, p) / d x1 (torch's _cdist_backward): with d = x1_i - x2_j and
    dist = cdist_ij, grad_ij * sign(d) |d|^(p-1) / dist^(p-1) summed over j, 0 where dist is
    0; for p = inf only the coordinates where |d| = dist; for p = 0 zeros.
    CdistBackwardBackward0 on Tensors."""
    tt = _tensors(grad, x1, x2, cdist)
    if tt is not None:
        return ops.cdist_backward(tt[0], tt[1], tt[2], p, tt[3])
    if p == 0:
        return np.zeros_like(x1)
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    d, g = cdist[..., None], grad[..., None]
    if p == 1:
        w = g * np.sign(diff)
    elif p == np.inf:
        w = g * np.sign(diff) * (np.abs(diff) == d)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == 2:
                w = np.where(d == 0, 0, g * diff / d)
            else:
                w = np.where(d == 0, 0, g * diff * np.abs(diff) ** (p - 2) / d ** (p - 1))
    return w.sum(-2)


def contiguous(x):
    """x.contiguous() (CloneBackward0 when x is not) on Tensors; arrays as they are."""
    return x.contiguous() if isinstance(x, Tensor) else x


def huber_loss_backward(grad, self, target, reduction, delta):
    """(self - target) clamped to [-delta, delta], times grad, over the element count for
    "mean"; HuberLossBackwardBackward0 on Tensors."""
    tt = _tensors(grad, self, target)
    if tt is not None:
        return ops.huber_loss_backward(*tt, reduction, delta)
    if self.dtype != target.dtype:
        # torch's backward kernel takes one dtype (its forward computes in the promoted one)
        raise RuntimeError(f"Found dtype {_TORCH_SCALAR[target.dtype.name]} but expected "
                           f"{_TORCH_SCALAR[self.dtype.name]}")
    g = np.clip(self - target, -delta, delta) * grad
    return g / np.size(g) if reduction == 1 else g


def smooth_l1_loss_backward(grad, self, target, reduction, beta):
    """(self - target) / beta clamped to [-1, 1] (its sign for beta 0), times grad, over the
    element count for "mean"; SmoothL1LossBackwardBackward0 on Tensors."""
    tt = _tensors(grad, self, target)
    if tt is not None:
        return ops.smooth_l1_loss_backward(*tt, reduction, beta)
    z = self - target
    g = (np.clip(z / beta, -1, 1) if beta else np.sign(z)) * grad
    return g / np.size(g) if reduction == 1 else g


# ----- binary_cross_entropy's backward and logit -------------------------------------------

def logit(x):
    """log(x / (1 - x)); LogitBackward0 on Tensors."""
    if isinstance(x, Tensor):
        return ops.logit(x)
    return np.log(x / (1 - x))


# torch's CPU kernel clamps with EPSILON = 1e-12f, a float: 9.99999996e-13 as a double (at
# self = 0 a float64 gradient differs in the 9th digit from one clamped at 1e-12)
_BCE_EPSILON = float(np.float32(1e-12))


def binary_cross_entropy_backward(grad, self, target, weight, reduction):
    """grad (self - target) / max((1 - self) self, 1e-12), times the weight, over the element
    count for "mean" (torch's CPU kernel); BinaryCrossEntropyBackwardBackward0 on Tensors."""
    tt = _tensors(grad, self, target)
    if tt is not None:
        return ops.binary_cross_entropy_backward(*tt, None if weight is None else _tensor(weight),
                                                 reduction)
    g = grad * (self - target) / np.maximum((1 - self) * self, _BCE_EPSILON)
    if weight is not None:
        g = g * weight
    return g / np.size(g) if reduction == 1 else g


def clamped_unrecorded(x, lo):
    """x raised to lo where below it, in place and unrecorded on a Tensor (torch's clamp_min_
    under NoGradGuard in a formula: the gradient flows through x as if unclamped)."""
    if isinstance(x, Tensor):
        np.maximum(x._data, lo, out=x._data)
        return x
    return np.maximum(x, lo)


# ----- where, masked_fill and index_fill as torch's formulas write them ---------------------
# On arrays these select (mask()); on Tensors they record torch's ops, so that a gradient's
# own graph is torch's.

def keep_where(cond, grad):
    """grad where the constant boolean cond holds, else 0: torch's where(cond, grad, 0)."""
    if isinstance(grad, Tensor):
        return ops.where(_make(np.asarray(cond)), grad, 0)
    return mask(cond, grad)


def zero_where(cond, grad):
    """0 where the constant boolean cond holds, else grad: torch's where(cond, 0, grad)."""
    if isinstance(grad, Tensor):
        return ops.where(_make(np.asarray(cond)), 0, grad)
    return mask(~cond, grad)


def spread(hit, x):
    """x where the constant boolean hit holds, else 0: torch's
    zeros_like(input).masked_fill_(hit, x) (MaskedFillBackward1) with x a 0-d Tensor."""
    if isinstance(x, Tensor):
        return ops.masked_fill(tzeros(tuple(np.shape(hit)), dtype=x.dtype), _make(np.asarray(hit)), x)
    return mask(hit, x)


def times_one(grad):
    """grad * 1, which torch's formulas write (MulBackward1) and arrays need not compute."""
    return ops.mul_scalar(grad, 1) if isinstance(grad, Tensor) else grad


def diagonal_fill(grad, sizes):
    """zeros(sizes) with grad (0-d) on the main diagonal: torch's trace_backward, which
    index_fills a flat zeros (IndexFillBackward1) and views it as sizes."""
    rows, cols = sizes
    if isinstance(grad, Tensor):
        flat = tzeros(rows * cols, dtype=grad.dtype)
        steps = _make(np.arange(0, rows * cols, cols + 1))
        return ops.index_fill(flat, 0, steps, grad).view(rows, cols)
    eye = np.arange(min(rows, cols))
    return put(grad, sizes, (eye, eye))


def masked_sum(x, cond):
    """The sum of x where the constant boolean cond holds: torch's `x.masked_select(cond).sum()`
    (SumBackward0 of MaskedSelectBackward0 on Tensors)."""
    if isinstance(x, Tensor):
        return ops.masked_select(x, _make(np.asarray(cond))).sum()
    return _add_reduce(where0(~cond, x), axis=None)


def zeroed(shape, like):
    """torch's at::zeros called by a backward formula: empty().zero_(), so that on Tensors
    the zeros come back with _version 1 (and no history)."""
    if isinstance(like, Tensor):
        return tzeros(tuple(shape), dtype=like.dtype).zero_()
    return np.zeros(shape, dtype=np.result_type(like))


def zero_at_key(grad, key, values_shape):
    """grad with 0 written at key: torch's `grad.index_put(indices, zeros_like(values))`
    (IndexPutBackward0 on Tensors), the gradient of index_put_ w.r.t. the edited tensor."""
    if isinstance(grad, Tensor):
        return ops.index_put(grad, key, tzeros(tuple(values_shape), dtype=grad.dtype))
    out = np.array(grad, copy=True)
    out[key] = 0
    return out
