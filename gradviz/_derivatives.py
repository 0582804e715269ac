"""The derivative table: one entry per differentiable op, as torch's derivatives.yaml.

Each entry names the op, torch's grad_fn class name, the values the forward passes in for
saving (`args`, exposed on the node as `_saved_<name>`), and one backward formula per
differentiable input, in next_functions order. Names in scope in a formula are its parameters:

    grad      the gradient w.r.t. the op's output (`grads`, a list, for several outputs)
    result    the op's output (saved as `_saved_result`)
    <arg>     any name in `args` (`self`, `other`, `self_sym_sizes`, `dim`, ...)

A formula only receives the names it lists, and only the values the formulas of inputs that
need a gradient use are kept alive and version-checked, as in torch. Formulas work on NumPy
arrays (a plain backward) and on Tensors (create_graph=True, so that the gradient is itself
differentiable); every function they call below accepts both. Gradients are summed back to
each input's broadcast shape and cast to its dtype in one place, `fit_to`, never per rule.
"""

import numpy as np

from ._tensor import Tensor, _make
from .autograd.graph import make_node_class

__all__ = ["DERIVATIVES", "Derivative", "fit_to"]


class Derivative:
    """One table entry; `cls` is the generated Node subclass named `node`."""

    def __init__(self, op, node, args, formulas, n_out=1, variadic=False, name=None,
                 wrapped=()):
        self.op = op
        self.node = node
        self.display = name or node     # what node.name() says, when torch's differs
        self.wrapped = frozenset(wrapped)
        self.args = tuple(args)
        self.inputs = tuple(formulas)
        self.n_out = n_out
        self.variadic = variadic
        self.result_index = len(self.args)
        scope = self.args + ("result",)
        self.formulas = []
        for name, f in formulas.items():
            code = f.__code__
            params = code.co_varnames[:code.co_argcount]
            skip = 2 if variadic else 1            # grad (and mask for variadic formulas)
            for p in params[skip:]:
                if p not in scope:
                    raise TypeError(f"{node}: formula for {name!r} uses unknown name {p!r}")
            self.formulas.append((f, tuple(scope.index(p) for p in params[skip:])))
        self._needed = {}
        self._plans = {}
        self.saves_tensors = False
        self.cls = make_node_class(self)

    def plan(self, mask):
        """The Plan for the inputs in `mask` (cached): what to keep and how to call formulas."""
        p = self._plans.get(mask)
        if p is None:
            p = self._plans[mask] = Plan(self, mask)
        return p

    def needed(self, mask):
        """Indices of args (and result) used by the formulas of inputs in `mask`."""
        r = self._needed.get(mask)
        if r is None:
            used = set()
            for i, (_, idx) in enumerate(self.formulas):
                if self.variadic or mask >> i & 1:
                    used.update(idx)
            r = self._needed[mask] = tuple(sorted(used))
        return r

    def saved_names(self, mask):
        scope = self.args + ("result",)
        return tuple(scope[j] for j in self.needed(mask))

    def __repr__(self):
        return f"<Derivative {self.op} -> {self.node}>"


class Plan:
    """How a node of one entry saves and calls, for one set of inputs needing a gradient.

    `keep` lists the args kept alive (only those the needed formulas use, as torch saves
    only what it will need); the node stores them in that order, followed by the result at
    backward time. `calls` are (input index, formula, positions into that list).
    """

    __slots__ = ("keep", "all_args", "saves_result", "calls", "position", "n_inputs",
                 "n_args")

    def __init__(self, entry, mask):
        needed = entry.needed(mask)
        self.keep = tuple(j for j in needed if j != entry.result_index)
        self.n_args = len(entry.args)
        self.all_args = self.keep == tuple(range(self.n_args))
        self.saves_result = entry.result_index in needed
        self.position = {j: k for k, j in enumerate(self.keep)}
        self.position[entry.result_index] = len(self.keep)
        self.n_inputs = len(entry.formulas)
        self.calls = tuple((i, f, tuple(self.position[j] for j in idx))
                           for i, (f, idx) in enumerate(entry.formulas)
                           if entry.variadic or mask >> i & 1)


DERIVATIVES = {}


def defderiv(op, node, args=(), n_out=1, variadic=False, saves_tensors=True, name=None,
             wrapped=(), **formulas):
    """Add a table entry; `formulas` maps each differentiable input to its formula.

    n_out is the number of outputs whose gradients the node receives (None: as many as the op
    returns, and the formula then gets the list `grads`); variadic formulas take one list of
    tensors (cat, stack) and return one gradient per tensor; `name` is node.name() when torch's
    differs from the class name; `wrapped` names the args that torch declares as Tensors, so a
    Python number saved there reads back as a 0-d tensor (torch's wrapped number).
    """
    if op in DERIVATIVES:
        raise ValueError(f"duplicate derivative for {op}")
    d = DERIVATIVES[op] = Derivative(op, node, args, formulas, n_out, variadic, name, wrapped)
    d.saves_tensors = saves_tensors
    return d


def entry(op):
    """The table entry of op; a missing rule fails loudly and names the op."""
    try:
        return DERIVATIVES[op]
    except KeyError:
        raise NotImplementedError(f"gradviz has no derivative for '{op}'") from None


# ----- Functions usable on arrays and on Tensors ------------------------------------------

def _t(x):
    return isinstance(x, Tensor)


def exp(x):
    return x.exp() if _t(x) else np.exp(x)


def log(x):
    return x.log() if _t(x) else np.log(x)


def sin(x):
    return x.sin() if _t(x) else np.sin(x)


def cos(x):
    return x.cos() if _t(x) else np.cos(x)


def sign(x):
    return x.sign() if _t(x) else np.sign(x)


def mask(cond, x):
    """x where cond, else 0; cond is a constant boolean array (never differentiated)."""
    if _t(cond):
        cond = cond._data
    if _t(x):
        return x * _make(np.asarray(cond, dtype=x._data.dtype))
    return x * cond.astype(np.result_type(x), copy=False) if np.ndim(cond) else x * cond


def value(x):
    """The raw array of a saved value (for masks, shapes and indices)."""
    return x._data if _t(x) else x


def expand(x, shape):
    if _t(x):
        return x.expand(*shape)
    return np.broadcast_to(x, shape)


def reshape(x, shape):
    return x.reshape(*shape) if _t(x) else np.reshape(x, shape)


def sum_dims(x, dims, keepdim=False):
    if _t(x):
        return x.sum(dim=dims, keepdim=keepdim)
    return np.sum(x, axis=dims, keepdims=keepdim)


def unsqueeze_dims(x, dims, ndim):
    """Re-insert reduced dims (given as non-negative dims of the ndim-D input) into x."""
    shape = list(np.shape(value(x)))
    for d in sorted(dims):
        shape.insert(d, 1)
    return reshape(x, tuple(shape))


def transpose(x, d0=-2, d1=-1):
    if _t(x):
        return x.transpose(d0, d1)
    return np.swapaxes(x, d0, d1)


def permute(x, dims):
    return x.permute(*dims) if _t(x) else np.transpose(x, dims)


def matmul(a, b):
    if _t(a) or _t(b):
        return _tensor(a) @ _tensor(b)
    return np.matmul(a, b)


def outer(a, b):
    if _t(a) or _t(b):
        return _tensor(a).unsqueeze(1) * _tensor(b).unsqueeze(0)
    return np.multiply.outer(a, b)


def _tensor(x):
    return x if _t(x) else _make(np.asarray(x))


def pow_(x, e):
    return x ** e


def scale(x, s):
    """x * s for a Python number s; on Tensors torch's mul(Tensor, Scalar) (MulBackward1)."""
    if _t(x):
        from ._ops import mul_scalar
        return mul_scalar(x, s)
    return x * s


def shift(x, s):
    """x + s for a Python number s; on Tensors torch's sub(Tensor, Scalar) (SubBackward1)."""
    if _t(x):
        from ._ops import sub_scalar
        return sub_scalar(x, -s)
    return x + s


def where0(cond, x):
    """0 where the constant boolean cond holds, else x (torch's at::where(cond, zeros, x)):
    unlike mask(), a nan or inf in x under cond does not leak through as nan."""
    if _t(x):
        from ._ops import where
        return where(_make(np.asarray(cond)), 0, x)
    return np.where(cond, x.dtype.type(0) if hasattr(x, "dtype") else 0, x)


def sum_to(x, shape):
    """Sum a broadcast gradient back to `shape` (the one place broadcasting is undone)."""
    xs = np.shape(value(x))
    if xs == tuple(shape):
        return x
    lead = len(xs) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                     if s == 1 and xs[i + lead] != 1)
    r = sum_dims(x, dims, keepdim=True) if dims else x
    return reshape(r, tuple(shape))


def fit_to(g, shape, dtype):
    """A gradient summed to an input's shape and cast to its dtype (engine-wide rule)."""
    g = sum_to(g, shape)
    if _t(g):
        return g if g._data.dtype == dtype else g.to(dtype)
    return g if np.result_type(g) == dtype else np.asarray(g, dtype=dtype)


def zeros_like(x):
    """Zeros shaped like x, without history (torch's grad.zeros_like() in a formula)."""
    if _t(x):
        return _make(np.zeros_like(x._data))
    return np.zeros_like(x)


def maybe_multiply(x, s):
    """x * s, skipped when s == 1 (torch's maybe_multiply); s is a Python number."""
    return x if s == 1 else scale(x, s)


def zeros(shape, like):
    if _t(like):
        from ._creation import zeros as tzeros
        return tzeros(*shape, dtype=like.dtype)
    return np.zeros(shape, dtype=np.result_type(like))


def put(grad, shape, key, accumulate=False):
    """A zero array of `shape` with grad written (or added) at `key`: the backward of indexing."""
    if _t(grad):
        from ._ops import index_put_zeros
        return index_put_zeros(grad, tuple(shape), key, accumulate)
    out = np.zeros(shape, dtype=np.result_type(grad))
    if accumulate:
        np.add.at(out, key, grad)
    else:
        out[key] = grad
    return out


def put_view(grad, shape, steps):
    """zeros(shape) with grad written through the view steps (the backward of a view after an
    in-place edit). Second derivatives do not flow through it."""
    from .autograd.graph import apply_view
    g = value(grad)
    out = np.zeros(shape, dtype=np.result_type(g))
    apply_view(out, steps)[...] = g
    return _make(out) if _t(grad) else out


def take(grad, key):
    return grad[key] if not _t(grad) else grad[_wrap_key(key)]


def _wrap_key(key):
    if isinstance(key, tuple):
        return tuple(_make(k) if isinstance(k, np.ndarray) else k for k in key)
    return _make(key) if isinstance(key, np.ndarray) else key


def stack_grads(grads, like_shape, dim, dtype):
    """Stack per-output gradients along dim, zeros where an output got no gradient."""
    if any(_t(g) for g in grads):
        from ._ops import stack
        from ._creation import zeros as tzeros
        parts = [g if g is not None else tzeros(*like_shape) for g in grads]
        return stack([_tensor(p) for p in parts], dim)
    parts = [g if g is not None else np.zeros(like_shape, dtype=dtype) for g in grads]
    return np.stack(parts, axis=dim)


def split_grad(grad, sizes, dim):
    """Pieces of grad along dim (the backward of cat)."""
    bounds = np.cumsum(sizes)[:-1]
    if _t(grad):
        out, start = [], 0
        for s in sizes:
            out.append(grad.narrow(dim, start, s))
            start += s
        return out
    return np.split(grad, bounds, axis=dim)


def unstack_grad(grad, dim, n):
    """The backward of stack: the slices of grad along dim (views, no copies, on arrays)."""
    if _t(grad):
        return [grad.select(dim, i) for i in range(n)]
    return list(np.moveaxis(np.asarray(grad), dim, 0))


def select_grad(grad, dim, index):
    return grad.select(dim, index) if _t(grad) else np.take(grad, index, axis=dim)


# ----- Named helpers for the longer formulas ----------------------------------------------

def mm_mat2_grad(grad, self, mat2_t):
    """The gradient of self @ mat2 w.r.t. mat2, self.T @ grad. When mat2 was a transposed view
    (x @ W.t(), as nn.Linear does) it is computed as (grad.T @ self).T, so that after the
    transpose back W's gradient comes out contiguous (torch's mm_mat2_backward does the same):
    no copy to accumulate it, and fast in-place updates of W afterwards."""
    if mat2_t:
        return transpose(matmul(transpose(grad), self))
    return matmul(transpose(self), grad)


def is_transposed(a):
    """A 2-D array laid out as the transpose of a contiguous one (W.t())."""
    return a.ndim == 2 and a.flags.f_contiguous and not a.flags.c_contiguous

def floor_div(a, b):
    """a // b on values (a constant in remainder's formula: never differentiated)."""
    q = np.floor_divide(value(a), value(b))
    return _make(q) if _t(a) or _t(b) else q


def no_derivative_floor_divide(grad):
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


def no_derivative_remainder(grad):
    raise RuntimeError("derivative for aten::remainder is not implemented")


def pow_grad_self(grad, self, exponent):
    """torch's pow_backward_self: grad * (exponent * self ** (exponent - 1)), with 0 where the
    exponent is 0 (self ** -1 would otherwise turn 0 ** 0 into 0 * inf = nan)."""
    if not isinstance(exponent, (Tensor, np.ndarray, np.generic)):
        if exponent == 0:
            return zeros_like(grad)     # torch: plain zeros, no history under create_graph
        return grad * scale(pow_(self, exponent - 1), exponent)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = grad * (exponent * pow_(self, shift(exponent, -1)))
    return where0(value(exponent) == 0, g)


def pow_grad_exponent(grad, self, exponent, result):
    """torch's pow_backward_exponent: grad * where(self == 0 and exponent >= 0, 0,
    result * log(self)), so that 0 ** b has gradient 0 w.r.t. b instead of 0 * -inf = nan."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = (value(self) == 0) & (value(exponent) >= 0)
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
    """d prod / d x_i = product of the others; exact even when some x are zero."""
    x = value(self)
    if dim is None:
        if not np.any(x == 0):
            return grad * result / self
        flat = x.reshape(-1)
        others = np.array([np.prod(np.delete(flat, i)) for i in range(flat.size)],
                          dtype=x.dtype).reshape(x.shape)
        return grad * others
    g = grad if keepdim else unsqueeze_dims(grad, (dim,), x.ndim)
    r = result if keepdim else unsqueeze_dims(result, (dim,), x.ndim)
    if not np.any(x == 0):
        return g * r / self
    moved = np.moveaxis(x, dim, -1)
    n = moved.shape[-1]
    others = np.stack([np.prod(np.delete(moved, i, axis=-1), axis=-1) for i in range(n)], -1)
    return g * np.moveaxis(others, -1, dim)


def evenly_distribute(grad, self, result):
    """Whole-tensor max/min: the gradient is shared evenly among the tied extreme values."""
    hit = value(self) == value(result)
    return mask(hit, grad / int(hit.sum()))


def select_along(grad, self_sym_sizes, dim, keepdim, indices):
    """max/min over dim: the gradient goes to the chosen index of each slice."""
    if not self_sym_sizes:
        return grad         # a 0-d input is its own maximum
    idx = value(indices)
    if not keepdim:
        idx = np.expand_dims(idx, dim)
        grad = unsqueeze_dims(grad, (dim,), len(self_sym_sizes))
    key = tuple(idx if d == dim else np.arange(s).reshape([-1 if k == d else 1
                                                          for k in range(len(self_sym_sizes))])
                for d, s in enumerate(self_sym_sizes))
    return put(grad, self_sym_sizes, key)


def reduce_grad(grad, self_sym_sizes, dim, keepdim):
    if dim is None:
        return expand(grad, self_sym_sizes)
    if not keepdim:
        grad = unsqueeze_dims(grad, dim, len(self_sym_sizes))
    return expand(grad, self_sym_sizes)


def softmax_grad(grad, result, dim):
    return result * (grad - sum_dims(grad * result, dim, keepdim=True))


def log_softmax_grad(grad, result, dim):
    return grad - exp(result) * sum_dims(grad, dim, keepdim=True)


def maximum_grad(grad, self, other, pick_self):
    a, b = value(self), value(other)
    win = (a > b) if pick_self else (a < b)
    tie = a == b
    return mask(win, grad) + mask(tie, grad) / 2


def clamp_grad(grad, self, min, max):
    x = value(self)
    keep = np.ones(np.shape(x), dtype=bool)
    if min is not None:
        keep &= x >= value(min)
    if max is not None:
        keep &= x <= value(max)
    return mask(keep, grad)


def nll_grad(grad, self, target, reduction, ignore_index):
    x = value(self)
    t = value(target).astype(np.int64)
    n = x.shape[0] if x.ndim == 2 else 1
    valid = t != ignore_index
    count = int(valid.sum())
    rows = np.arange(n) if x.ndim == 2 else ()
    key = (rows[valid], t[valid]) if x.ndim == 2 else (t,)
    if reduction == "mean":
        scale = -1.0 / max(count, 1)
    else:
        scale = -1.0
    if reduction == "none":
        g = grad[valid] if not _t(grad) else grad[_make(valid)]
        return put(g * scale, x.shape, key)
    vals = expand(reshape(grad * scale, (1,)), (len(key[0]) if x.ndim == 2 else 1,))
    return put(vals, x.shape, key)


def mse_grad(grad, self, target, reduction):
    diff = self - target
    n = np.size(value(diff))
    g = grad * 2 * diff
    return g / n if reduction == "mean" else g


# ----- Arithmetic --------------------------------------------------------------------------

defderiv("add", "AddBackward0", ("alpha",), saves_tensors=False,
         self=lambda grad: grad,
         other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)
defderiv("sub", "SubBackward0", ("alpha",), saves_tensors=False,
         self=lambda grad: grad,
         other=lambda grad, alpha: -grad if alpha == 1 else -grad * alpha)
defderiv("rsub", "RsubBackward1", ("alpha",), saves_tensors=False,
         self=lambda grad, alpha: -grad if alpha == 1 else -grad * alpha)
defderiv("mul", "MulBackward0", ("self", "other"), wrapped=("other",),
         self=lambda grad, other: grad * other,
         other=lambda grad, self: grad * self)
defderiv("div", "DivBackward0", ("self", "other"), wrapped=("other",),
         self=lambda grad, other: grad / other,
         other=lambda grad, self, other: -grad * self / (other * other))
defderiv("neg", "NegBackward0", saves_tensors=False, self=lambda grad: -grad)
defderiv("div_mode", "DivBackward2", ("rounding_mode",), saves_tensors=False,
         self=lambda grad: zeros_like(grad), other=lambda grad: zeros_like(grad))
defderiv("remainder_scalar", "RemainderBackward0", saves_tensors=False, self=lambda grad: grad)
defderiv("remainder", "RemainderBackward1", ("self", "other"),
         self=lambda grad: grad,
         other=lambda grad, self, other: -grad * floor_div(self, other))
# Ops torch records without a derivative: a node named NotImplemented that fails in backward.
defderiv("floor_divide", "NotImplemented", name="torch::autograd::NotImplemented",
         saves_tensors=False, self=no_derivative_floor_divide,
         other=no_derivative_floor_divide)
defderiv("rremainder", "NotImplemented", name="torch::autograd::NotImplemented",
         saves_tensors=False, self=no_derivative_remainder)
# The Scalar overloads torch's own formulas call (C++ `t * 2.0`, `t - 1`); Python-level
# `t * 2` is MulBackward0 with a wrapped number, as in torch.
defderiv("mul_scalar", "MulBackward1", ("other",), saves_tensors=False,
         self=lambda grad, other: scale(grad, other))
defderiv("sub_scalar", "SubBackward1", saves_tensors=False, self=lambda grad: grad)
defderiv("abs", "AbsBackward0", ("self",), self=lambda grad, self: grad * sign(self))
defderiv("reciprocal", "ReciprocalBackward0", (),
         self=lambda grad, result: -grad * result * result)
defderiv("pow", "PowBackward0", ("self", "exponent"), self=pow_grad_self)
defderiv("pow_tensor", "PowBackward1", ("self", "exponent"),
         self=pow_grad_self, exponent=pow_grad_exponent)
defderiv("pow_scalar", "PowBackward2", ("self", "exponent"),
         exponent=pow_scalar_grad_exponent)

# ----- Unary functions ---------------------------------------------------------------------

defderiv("exp", "ExpBackward0", self=lambda grad, result: grad * result)
defderiv("log", "LogBackward0", ("self",), self=lambda grad, self: grad / self)
defderiv("sqrt", "SqrtBackward0", self=lambda grad, result: grad / (2 * result))
defderiv("sin", "SinBackward0", ("self",), self=lambda grad, self: grad * cos(self))
defderiv("cos", "CosBackward0", ("self",), self=lambda grad, self: grad * -sin(self))
defderiv("tanh", "TanhBackward0", self=lambda grad, result: grad * (1 - result * result))
defderiv("sigmoid", "SigmoidBackward0",
         self=lambda grad, result: grad * result * (1 - result))
# relu: mask by result > 0, not by self > 0 (torch's threshold_backward on the result).
defderiv("relu", "ReluBackward0", self=lambda grad, result: mask(value(result) > 0, grad))
defderiv("clamp", "ClampBackward1", ("self", "min", "max"), self=clamp_grad)
defderiv("clamp_tensor", "ClampBackward0", ("self", "min", "max"), wrapped=("min", "max"),
         self=clamp_grad,
         min=lambda grad, self, min: mask(value(self) < value(min), grad),
         max=lambda grad, self, max: mask(value(self) > value(max), grad))
defderiv("maximum", "MaximumBackward0", ("self", "other"),
         self=lambda grad, self, other: maximum_grad(grad, self, other, True),
         other=lambda grad, self, other: maximum_grad(grad, other, self, True))
defderiv("minimum", "MinimumBackward0", ("self", "other"),
         self=lambda grad, self, other: maximum_grad(grad, self, other, False),
         other=lambda grad, self, other: maximum_grad(grad, other, self, False))
defderiv("where", "WhereBackward0", ("condition",),
         self=lambda grad, condition: mask(value(condition), grad),
         other=lambda grad, condition: mask(~value(condition), grad))
defderiv("clone", "CloneBackward0", saves_tensors=False, self=lambda grad: grad)
# Piecewise-constant functions: torch records them and sends back zeros.
defderiv("sign", "SignBackward0", saves_tensors=False, self=lambda grad: zeros_like(grad))
defderiv("floor", "FloorBackward0", saves_tensors=False, self=lambda grad: zeros_like(grad))
defderiv("ceil", "CeilBackward0", saves_tensors=False, self=lambda grad: zeros_like(grad))
defderiv("trunc", "TruncBackward0", saves_tensors=False, self=lambda grad: zeros_like(grad))
defderiv("round", "RoundBackward0", saves_tensors=False, self=lambda grad: zeros_like(grad))
defderiv("round_decimals", "RoundBackward1", ("decimals",), saves_tensors=False,
         self=lambda grad: zeros_like(grad))

# ----- Reductions --------------------------------------------------------------------------

defderiv("sum", "SumBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: expand(grad, self_sym_sizes))
defderiv("sum_dim", "SumBackward1", ("self_sym_sizes", "dim", "keepdim"), saves_tensors=False,
         self=reduce_grad)
defderiv("mean", "MeanBackward0", ("self_sym_sizes", "self_sym_numel"), saves_tensors=False,
         self=lambda grad, self_sym_sizes, self_sym_numel:
             expand(grad / self_sym_numel, self_sym_sizes))
defderiv("mean_dim", "MeanBackward1", ("self_sym_sizes", "dim", "keepdim", "count"),
         saves_tensors=False,
         self=lambda grad, self_sym_sizes, dim, keepdim, count:
             reduce_grad(grad / count, self_sym_sizes, dim, keepdim))
defderiv("prod", "ProdBackward0", ("self",),
         self=lambda grad, self, result: prod_grad(grad, self, result))
defderiv("prod_dim", "ProdBackward1", ("self", "dim", "keepdim"),
         self=lambda grad, self, dim, keepdim, result:
             prod_grad(grad, self, result, dim, keepdim))
defderiv("max", "MaxBackward1", ("self",), self=evenly_distribute)
defderiv("min", "MinBackward1", ("self",), self=evenly_distribute)
defderiv("max_dim", "MaxBackward0", ("self_sym_sizes", "dim", "keepdim", "indices"),
         self=select_along)
defderiv("min_dim", "MinBackward0", ("self_sym_sizes", "dim", "keepdim", "indices"),
         self=select_along)
defderiv("softmax", "SoftmaxBackward0", ("dim",), self=softmax_grad)
defderiv("log_softmax", "LogSoftmaxBackward0", ("dim",), self=log_softmax_grad)

# ----- Linear algebra ----------------------------------------------------------------------

defderiv("mm", "MmBackward0", ("self", "mat2", "mat2_t"),
         self=lambda grad, mat2: matmul(grad, transpose(mat2)),
         mat2=lambda grad, self, mat2_t: mm_mat2_grad(grad, self, mat2_t))
defderiv("bmm", "BmmBackward0", ("self", "mat2"),
         self=lambda grad, mat2: matmul(grad, transpose(mat2)),
         mat2=lambda grad, self: matmul(transpose(self), grad))
defderiv("mv", "MvBackward0", ("self", "vec"),
         self=lambda grad, vec: outer(grad, vec),
         vec=lambda grad, self: matmul(transpose(self), grad))
defderiv("dot", "DotBackward0", ("self", "tensor"),
         self=lambda grad, tensor: grad * tensor,
         tensor=lambda grad, self: grad * self)
defderiv("addmm", "AddmmBackward0", ("mat1", "mat2", "alpha", "beta", "mat2_t"),
         self=lambda grad, beta: maybe_multiply(grad, beta),
         mat1=lambda grad, mat2, alpha: maybe_multiply(matmul(grad, transpose(mat2)), alpha),
         mat2=lambda grad, mat1, alpha, mat2_t: maybe_multiply(mm_mat2_grad(grad, mat1, mat2_t),
                                                               alpha))

# ----- Views and shape ---------------------------------------------------------------------

defderiv("t", "TBackward0", saves_tensors=False, self=lambda grad: transpose(grad, 0, -1)
         if np.ndim(value(grad)) == 2 else grad)
defderiv("transpose", "TransposeBackward0", ("dim0", "dim1"), saves_tensors=False,
         self=lambda grad, dim0, dim1: transpose(grad, dim0, dim1))
defderiv("permute", "PermuteBackward0", ("dims",), saves_tensors=False,
         self=lambda grad, dims: permute(grad, tuple(np.argsort(dims))))
defderiv("view", "ViewBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("reshape_alias", "ReshapeAliasBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("unsafe_view", "UnsafeViewBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("squeeze", "SqueezeBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("squeeze_dim", "SqueezeBackward1", ("self_sym_sizes", "dim"), saves_tensors=False,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("squeeze_dims", "SqueezeBackward2", ("self_sym_sizes", "dim"), saves_tensors=False,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("squeeze_dim_", "SqueezeBackward4", ("self_sym_sizes", "dim"), saves_tensors=False,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("unsqueeze", "UnsqueezeBackward0", ("dim", "self_sym_sizes"), saves_tensors=False,
         self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
defderiv("expand", "ExpandBackward0", ("self_sym_sizes",), saves_tensors=False,
         self=lambda grad, self_sym_sizes: sum_to(grad, self_sym_sizes))
defderiv("select", "SelectBackward0", ("self_sym_sizes", "dim", "index", "key"),
         saves_tensors=False,
         self=lambda grad, self_sym_sizes, key: put(grad, self_sym_sizes, key))
defderiv("slice", "SliceBackward0", ("self_sym_sizes", "dim", "start", "end", "step", "key"),
         saves_tensors=False,
         self=lambda grad, self_sym_sizes, key: put(grad, self_sym_sizes, key))
defderiv("index", "IndexBackward0", ("self_sym_sizes", "indices"), saves_tensors=False,
         self=lambda grad, self_sym_sizes, indices: put(grad, self_sym_sizes, indices, True))
defderiv("as_strided", "AsStridedBackward0", ("self_sym_sizes", "steps"), saves_tensors=False,
         self=lambda grad, self_sym_sizes, steps: put_view(grad, self_sym_sizes, steps))
defderiv("alias", "AliasBackward0", saves_tensors=False, self=lambda grad: grad)
defderiv("to_copy", "ToCopyBackward0", saves_tensors=False, self=lambda grad: grad)
defderiv("index_put_zeros", "IndexPutBackwardBackward0", ("key",), saves_tensors=False,
         grad_=lambda grad, key: take(grad, key))
defderiv("cat", "CatBackward0", ("dim", "sizes"), variadic=True, saves_tensors=False,
         tensors=lambda grad, mask, dim, sizes: split_grad(grad, sizes, dim))
defderiv("stack", "StackBackward0", ("dim", "n"), variadic=True, saves_tensors=False,
         tensors=lambda grad, mask, dim, n: unstack_grad(grad, dim, n))
defderiv("unbind", "UnbindBackward0", ("dim", "self_sym_sizes", "part_shape", "dtype"),
         n_out=None, variadic=True, saves_tensors=False,
         self=lambda grads, mask, dim, part_shape, dtype:
             [stack_grads(grads, part_shape, dim, dtype)])

# ----- In-place ----------------------------------------------------------------------------

defderiv("zero_", "ZeroBackward0", saves_tensors=False, self=lambda grad: zeros_like(grad))
defderiv("fill_", "FillBackward2", saves_tensors=False, self=lambda grad: zeros_like(grad))
defderiv("fill_tensor_", "FillBackward3", saves_tensors=False,
         self=lambda grad: zeros_like(grad),
         value=lambda grad: sum_dims(grad, None))
defderiv("copy_", "CopyBackwards", ("src_sym_sizes",), saves_tensors=False,
         name="torch::autograd::CopyBackwards",
         self=lambda grad: zeros_like(grad),
         src=lambda grad, src_sym_sizes: sum_to(grad, src_sym_sizes))
defderiv("index_put", "IndexPutBackward0", ("indices", "values_sym_sizes"),
         saves_tensors=False,
         self=lambda grad, indices: grad - put(take(grad, indices), np.shape(value(grad)),
                                               indices),
         values=lambda grad, indices, values_sym_sizes: sum_to(take(grad, indices),
                                                               values_sym_sizes))

# ----- Losses ------------------------------------------------------------------------------

defderiv("mse_loss", "MseLossBackward0", ("self", "target", "reduction"),
         self=mse_grad,
         target=lambda grad, self, target, reduction: -mse_grad(grad, self, target, reduction))
defderiv("nll_loss", "NllLossBackward0", ("self", "target", "reduction", "ignore_index"),
         self=nll_grad)
