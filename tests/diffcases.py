"""Differential cases: the same snippet run on torch 2.13 and on gradviz.

Every ``case_*`` function takes the backend module (``torch`` or ``gradviz``) as its only
argument and returns plain data built from public API only: dicts, lists, tuples, str,
int, float, bool, None, plus three small records defined here:

- ``Value``  a tensor's dtype, shape and values, tagged forward ("fwd") or backward ("bwd")
             so that the comparison can apply separate float32 tolerances to each;
- ``Err``    an exception: its type and the first sentence of its message;
- ``Warn``   a warning: its category and the first sentence of its message.

Names, flags, graph structure, versions and strings are compared exactly. Data is
deterministic (literals, arange, ones): never randn, so both backends see the same
numbers. ``tests/test_torch_diff.py`` collects every ``case_*`` function of this module.

Helpers live at the top; the cases follow in sections.
"""

import warnings

# ----- Records and helpers ----------------------------------------------------------------


class Value:
    """A tensor's dtype, shape and values; kind is "fwd" (forward) or "bwd" (a gradient)."""

    __slots__ = ("kind", "dtype", "shape", "data")

    def __init__(self, kind, dtype, shape, data):
        self.kind = kind
        self.dtype = dtype
        self.shape = shape
        self.data = data

    def __repr__(self):
        return f"Value({self.kind}, {self.dtype}, {self.shape}, {self.data!r})"


class Err:
    """An exception: exact type name, nearest builtin base, first sentence and full text."""

    __slots__ = ("name", "base", "first", "message")

    def __init__(self, exc):
        self.name = type(exc).__name__
        self.base = next(k.__name__ for k in type(exc).__mro__ if k.__module__ == "builtins")
        self.message = str(exc)
        self.first = first_sentence(self.message)

    def __repr__(self):
        return f"Err({self.name}: {self.first!r})"


class Warn:
    """A warning: category name and the first sentence of its message."""

    __slots__ = ("category", "first")

    def __init__(self, category, message):
        self.category = category
        self.first = first_sentence(message)

    def __repr__(self):
        return f"Warn({self.category}: {self.first!r})"


def first_sentence(msg):
    """The message up to and including the first '.' followed by whitespace or the end.

    A '.' inside a word ('torch.FloatTensor', '.backward()') does not end a sentence, so
    the in-place error keeps its whole first sentence: '... [torch.FloatTensor [2]], which
    is output 0 of AddBackward0, is at version 1; expected version 0 instead.' — tensor
    type, shape, producing node and both version numbers are all compared. A first line
    without such a '.' ends the sentence at the newline; a message without one is whole.

    >>> first_sentence("a leaf Variable is used. Hint: x")
    'a leaf Variable is used.'
    """
    text = str(msg).strip()
    for i, ch in enumerate(text):
        if ch == "\n":
            return text[:i].rstrip()
        if ch == "." and (i + 1 == len(text) or text[i + 1] in " \t\r\n"):
            return text[: i + 1]
    return text


def _shape(t):
    return [int(s) for s in t.shape]


def _value(kind, t):
    if t is None:
        return None
    if not hasattr(t, "detach"):
        # Not a tensor (e.g. a saved Python scalar): compare what it is, do not crash.
        return ("not a tensor", type(t).__name__, repr(t))
    return Value(kind, str(t.dtype), _shape(t), t.detach().tolist())


def val(t):
    """Forward value of a tensor (None stays None)."""
    return _value("fwd", t)


def gval(t):
    """A gradient's value (None stays None)."""
    return _value("bwd", t)


def fn_name(fn):
    """Class name of a graph node, or None."""
    return None if fn is None else type(fn).__name__


def graph(fn):
    """next_functions as nested tuples, with node sharing made visible.

    A node seen for the first time becomes (name, k, ((child, input_nr), ...)), where k
    numbers nodes in depth-first order; meeting it again gives just (name, k). So a
    diamond, a leaf used twice (one AccumulateGrad) or the outputs of one UnbindBackward0
    show up as shared, as they are in torch. None edges are kept as (None, input_nr).
    """
    numbers = {}
    alive = []  # keep every visited node alive so that id() values cannot be reused

    def walk(node):
        if node is None:
            return None
        if id(node) in numbers:
            return (type(node).__name__, numbers[id(node)])
        numbers[id(node)] = len(numbers)
        alive.append(node)
        k = numbers[id(node)]
        return (type(node).__name__, k, tuple((walk(n), i) for n, i in node.next_functions))

    return walk(fn)


def info(t):
    """The autograd-visible state of one tensor."""
    return {
        "value": val(t),
        "requires_grad": t.requires_grad,
        "is_leaf": t.is_leaf,
        "grad_fn": fn_name(t.grad_fn),
        "grad_fn_name": None if t.grad_fn is None else t.grad_fn.name(),
        "graph": graph(t.grad_fn),
        "version": t._version,
    }


def outcome(fn):
    """Err for an exception, else ("ok", result of fn())."""
    try:
        result = fn()
    except Exception as exc:  # noqa: BLE001 - the exception is the observable
        return Err(exc)
    return ("ok", result)


def caught_warnings(fn):
    """(result of fn(), [Warn, ...]) with every warning recorded."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        result = fn()
    return result, [Warn(w.category.__name__, str(w.message)) for w in got]


def quiet_grad(t):
    """t.grad without letting the non-leaf warning reach the test output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad


def leaf(torch, data, rg=True, dtype=None):
    """A leaf tensor from literal data."""
    if dtype is None:
        return torch.tensor(data, requires_grad=rg)
    return torch.tensor(data, dtype=dtype, requires_grad=rg)


def upstream(torch, out):
    """A non-uniform upstream gradient 0.5, 1.0, 1.5, ... shaped like out."""
    n = out.numel()
    return (torch.arange(1, n + 1, dtype=out.dtype) * 0.5).reshape(out.shape)


def run_op(torch, fn, *inputs):
    """Apply fn, record the output, backward a non-uniform gradient, record every input's grad."""
    out = fn(*inputs)
    obs = {"out": info(out)}
    if out.requires_grad:
        out.backward(upstream(torch, out))
    obs["grads"] = [gval(x.grad) if x.is_leaf else None for x in inputs]
    return obs


def run_multi(torch, fn, *inputs):
    """Like run_op for ops returning a tuple/list of tensors."""
    outs = fn(*inputs)
    obs = {"outs": [info(o) for o in outs]}
    total = None
    for o in outs:
        if o.requires_grad:
            term = (o * upstream(torch, o)).sum()
            total = term if total is None else total + term
    if total is not None:
        total.backward()
    obs["grads"] = [gval(x.grad) for x in inputs]
    return obs


def second_order(torch, f, *xs):
    """Value, first and second derivative (via create_graph) of sum(f(x)) at leaves xs."""
    y = f(*xs)
    firsts = torch.autograd.grad(y.sum(), xs, create_graph=True)
    weight = [upstream(torch, g) for g in firsts]
    z = sum((g * w).sum() for g, w in zip(firsts, weight))
    seconds = torch.autograd.grad(z, xs, allow_unused=True)
    return {
        "y": val(y),
        "first": [gval(g) for g in firsts],
        "first_requires_grad": [g.requires_grad for g in firsts],
        "first_is_leaf": [g.is_leaf for g in firsts],
        "second": [gval(g) for g in seconds],
        "leaf_grads_untouched": [x.grad is None for x in xs],
    }


A3 = [1.0, 2.0, 3.0]
B3 = [0.5, -1.5, 2.0]
M23 = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]
P23 = [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]]


# ----- Arithmetic: tensor with tensor ----------------------------------------------------


def case_add_same_shape(torch):
    return run_op(torch, lambda a, b: a + b, leaf(torch, A3), leaf(torch, B3))


def case_add_method(torch):
    return run_op(torch, lambda a, b: a.add(b), leaf(torch, M23), leaf(torch, P23))


def case_add_broadcast_row(torch):
    return run_op(torch, lambda a, b: a + b, leaf(torch, M23), leaf(torch, B3))


def case_add_broadcast_both(torch):
    a = leaf(torch, [[1.0], [2.0], [3.0]])
    b = leaf(torch, [[10.0, 20.0, 30.0, 40.0]])
    return run_op(torch, lambda x, y: x + y, a, b)


def case_add_0d_and_matrix(torch):
    return run_op(torch, lambda a, b: a + b, leaf(torch, 2.5), leaf(torch, M23))


def case_add_only_one_requires_grad(torch):
    return run_op(torch, lambda a, b: a + b, leaf(torch, A3), leaf(torch, B3, rg=False))


def case_add_neither_requires_grad(torch):
    return run_op(torch, lambda a, b: a + b, leaf(torch, A3, rg=False), leaf(torch, B3, rg=False))


def case_add_same_tensor_twice(torch):
    return run_op(torch, lambda a: a + a, leaf(torch, A3))


def case_sub_same_shape(torch):
    return run_op(torch, lambda a, b: a - b, leaf(torch, A3), leaf(torch, B3))


def case_sub_broadcast_column(torch):
    return run_op(torch, lambda a, b: a - b, leaf(torch, M23), leaf(torch, [[1.0], [-1.0]]))


def case_sub_0d_minus_vector(torch):
    return run_op(torch, lambda a, b: a - b, leaf(torch, 4.0), leaf(torch, B3))


def case_mul_same_shape(torch):
    return run_op(torch, lambda a, b: a * b, leaf(torch, A3), leaf(torch, B3))


def case_mul_broadcast(torch):
    return run_op(torch, lambda a, b: a * b, leaf(torch, M23), leaf(torch, [[2.0], [-3.0]]))


def case_mul_0d_0d(torch):
    return run_op(torch, lambda a, b: a * b, leaf(torch, 2.0), leaf(torch, 3.0))


def case_mul_same_tensor_twice(torch):
    return run_op(torch, lambda a: a * a, leaf(torch, B3))


def case_mul_no_grad_input_is_none_edge(torch):
    return run_op(torch, lambda a, b: b * a, leaf(torch, A3), leaf(torch, B3, rg=False))


def case_div_same_shape(torch):
    return run_op(torch, lambda a, b: a / b, leaf(torch, A3), leaf(torch, B3))


def case_div_broadcast_both(torch):
    a = leaf(torch, [[1.0], [2.0], [4.0]])
    b = leaf(torch, [[0.5, 2.0, -4.0]])
    return run_op(torch, lambda x, y: x / y, a, b)


def case_pow_tensor_exponent(torch):
    return run_op(torch, lambda a, b: a ** b, leaf(torch, A3), leaf(torch, [2.0, 0.5, -1.0]))


def case_pow_tensor_exponent_broadcast(torch):
    return run_op(torch, lambda a, b: a ** b, leaf(torch, P23), leaf(torch, 2.0))


def case_pow_0d_tensor_exponent_no_grad(torch):
    return run_op(torch, lambda a, b: a ** b, leaf(torch, A3), leaf(torch, 3.0, rg=False))


def case_torch_pow_function(torch):
    return run_op(torch, torch.pow, leaf(torch, A3), leaf(torch, [1.0, 2.0, 3.0]))


def case_torch_functional_forms(torch):
    return run_op(
        torch,
        lambda a, b: torch.add(torch.mul(a, b), torch.sub(a, torch.div(b, a))),
        leaf(torch, A3),
        leaf(torch, B3),
    )


# ----- Arithmetic: Python scalars on either side ------------------------------------------


def case_add_scalar_right(torch):
    return run_op(torch, lambda a: a + 2, leaf(torch, A3))


def case_add_scalar_left(torch):
    return run_op(torch, lambda a: 2 + a, leaf(torch, A3))


def case_add_float_scalar_left_0d(torch):
    return run_op(torch, lambda a: 1.0 + a, leaf(torch, 1.5))


def case_sub_scalar_right(torch):
    return run_op(torch, lambda a: a - 2, leaf(torch, A3))


def case_rsub_scalar_left(torch):
    return run_op(torch, lambda a: 2 - a, leaf(torch, A3))


def case_mul_scalar_right(torch):
    return run_op(torch, lambda a: a * 3, leaf(torch, A3))


def case_mul_scalar_left(torch):
    return run_op(torch, lambda a: 2 * a, leaf(torch, A3))


def case_div_scalar_right(torch):
    return run_op(torch, lambda a: a / 2, leaf(torch, A3))


def case_rdiv_scalar_left(torch):
    return run_op(torch, lambda a: 2 / a, leaf(torch, A3))


def case_rdiv_float_scalar_left(torch):
    return run_op(torch, lambda a: 1.0 / a, leaf(torch, [0.5, -2.0, 4.0]))


def case_pow_int_scalar(torch):
    return run_op(torch, lambda a: a ** 2, leaf(torch, B3))


def case_pow_float_scalar(torch):
    return run_op(torch, lambda a: a ** 0.5, leaf(torch, [0.25, 1.0, 4.0]))


def case_pow_negative_scalar(torch):
    return run_op(torch, lambda a: a ** -1, leaf(torch, [0.5, 2.0, -4.0]))


def case_pow_zero_scalar(torch):
    return run_op(torch, lambda a: a ** 0, leaf(torch, B3))


def case_pow_method_scalar(torch):
    return run_op(torch, lambda a: a.pow(3), leaf(torch, B3))


def case_rpow_scalar_base(torch):
    return run_op(torch, lambda a: 2 ** a, leaf(torch, [0.0, 1.0, -1.0, 2.5]))


def case_rpow_float_base(torch):
    return run_op(torch, lambda a: 0.5 ** a, leaf(torch, [0.0, 1.0, 3.0]))


def case_neg(torch):
    return run_op(torch, lambda a: -a, leaf(torch, B3))


def case_neg_method(torch):
    return run_op(torch, lambda a: a.neg(), leaf(torch, M23))


def case_abs_with_zero(torch):
    return run_op(torch, lambda a: a.abs(), leaf(torch, [-2.0, 0.0, 3.0]))


def case_torch_abs_function(torch):
    return run_op(torch, lambda a: torch.abs(a), leaf(torch, M23))


def case_scalar_iadd_tensor_seed(torch):
    # seed: x = 1.0; x += a turns the float into a Tensor.
    a = leaf(torch, [0.25], rg=False).squeeze()
    x = 1.0
    x += a
    b = leaf(torch, 0.5)
    y = 1.0
    y += b
    y.backward()
    return {
        "a_shape": _shape(a),
        "x_type": type(x).__name__,
        "x_is_tensor": isinstance(x, torch.Tensor),
        "x": info(x),
        "y": info(y),
        "b_grad": gval(b.grad),
    }


def case_compound_expression(torch):
    def f(a, b):
        return (a * b + 2) / (1 + a ** 2) - b.exp() * 0.5

    return run_op(torch, f, leaf(torch, A3), leaf(torch, B3))


# ----- Dtype promotion ---------------------------------------------------------------------


def _dtypes(*ts):
    return [str(t.dtype) for t in ts]


def case_dtype_defaults(torch):
    return {
        "float_list": _dtypes(torch.tensor([1.0, 2.0]), torch.tensor([1, 2.0])),
        "int_list": _dtypes(torch.tensor([1, 2]), torch.tensor(3)),
        "bool_list": _dtypes(torch.tensor([True, False]), torch.tensor(True)),
        "ones_zeros": _dtypes(torch.ones(2), torch.zeros(2, 2)),
        "arange": _dtypes(torch.arange(5), torch.arange(0.0, 3.0), torch.arange(0, 3, 0.5)),
        "explicit": _dtypes(
            torch.tensor([1, 2], dtype=torch.float64),
            torch.ones(2, dtype=torch.int64),
            torch.zeros(2, dtype=torch.bool),
        ),
    }


def case_dtype_int_tensor_times_float_scalar(torch):
    a = torch.tensor([1, 2, 3])
    return {"mul": val(a * 1.5), "add": val(a + 0.5), "rsub": val(2.5 - a)}


def case_dtype_int_tensor_int_scalar(torch):
    a = torch.tensor([1, 2, 3])
    return {"mul": val(a * 2), "add": val(a + 1), "sub": val(5 - a), "pow": val(a ** 2)}


def case_dtype_int_true_division(torch):
    a = torch.tensor([1, 2, 3])
    return {"div_int": val(a / 2), "div_tensor": val(a / torch.tensor([2, 2, 2]))}


def case_dtype_float32_with_float64(torch):
    a = leaf(torch, A3)
    b = leaf(torch, B3, dtype=torch.float64)
    return run_op(torch, lambda x, y: x * y, a, b)


def case_dtype_0d_float64_with_float32_vector(torch):
    a = leaf(torch, 2.0, dtype=torch.float64)
    b = leaf(torch, A3)
    return run_op(torch, lambda x, y: x * y, a, b)


def case_dtype_float64_leaf_ops(torch):
    return run_op(torch, lambda a: (a.exp() * 2).sum(), leaf(torch, B3, dtype=torch.float64))


def case_dtype_int_with_float_tensor(torch):
    a = torch.tensor([1, 2, 3])
    b = leaf(torch, B3)
    return run_op(torch, lambda x: a + x, b)


def case_dtype_bool_results(torch):
    a = torch.tensor([1.0, 2.0, 3.0])
    mask = a > 1.5
    return {
        "gt": val(mask),
        "lt": val(a < 2),
        "ge": val(a >= 2.0),
        "le": val(a <= 2.0),
        "eq": val(a == 2),
        "ne": val(a != 2),
        "mask_times_float": val(mask * 2.5),
        "mask_plus_int": val(mask + 1),
        "mask_sum": val(mask.sum()),
        "int_sum": val(torch.tensor([1, 2, 3]).sum()),
    }


def case_dtype_comparison_of_requires_grad(torch):
    a = leaf(torch, A3)
    m = a > 1.5
    return {"mask": info(m)}


def case_dtype_conversions(torch):
    a = leaf(torch, A3)
    return {
        "double": info(a.double()),
        "float_of_float": info(a.float()),
        "to_float64": info(a.to(torch.float64)),
        "to_int64": val(torch.tensor([1.7, -1.7]).to(torch.int64)),
        "int_to_float": val(torch.tensor([1, 2]).float()),
    }


def case_dtype_reprs(torch):
    return {
        "repr": [repr(torch.float32), repr(torch.float64), repr(torch.int64), repr(torch.bool)],
        "str": [str(torch.float32), str(torch.int64)],
        "aliases": [torch.float is torch.float32, torch.double is torch.float64,
                    torch.long is torch.int64],
        "is_floating_point": [
            torch.ones(1).is_floating_point(),
            torch.ones(1, dtype=torch.int64).is_floating_point(),
        ],
    }


def case_dtype_requires_grad_on_int_tensor(torch):
    return {
        "kwarg": outcome(lambda: torch.tensor([1, 2], requires_grad=True)),
        "method": outcome(lambda: torch.tensor([1, 2]).requires_grad_()),
        "attribute": outcome(lambda: setattr(torch.tensor([1, 2]), "requires_grad", True)),
        "bool_kwarg": outcome(lambda: torch.tensor([True], requires_grad=True)),
        "ones_int": outcome(lambda: torch.ones(2, dtype=torch.int64, requires_grad=True)),
    }


# ----- Unary and elementwise ops -----------------------------------------------------------


def case_exp(torch):
    return run_op(torch, lambda a: a.exp(), leaf(torch, B3))


def case_torch_exp_function(torch):
    return run_op(torch, lambda a: torch.exp(a), leaf(torch, M23))


def case_log(torch):
    return run_op(torch, lambda a: a.log(), leaf(torch, [0.5, 1.0, 4.0]))


def case_sqrt(torch):
    return run_op(torch, lambda a: a.sqrt(), leaf(torch, [0.25, 1.0, 9.0]))


def case_sin(torch):
    return run_op(torch, lambda a: a.sin(), leaf(torch, B3))


def case_cos(torch):
    return run_op(torch, lambda a: torch.cos(a), leaf(torch, B3))


def case_tanh(torch):
    return run_op(torch, lambda a: a.tanh(), leaf(torch, M23))


def case_sigmoid(torch):
    return run_op(torch, lambda a: torch.sigmoid(a), leaf(torch, M23))


def case_relu_with_zero(torch):
    return run_op(torch, lambda a: a.relu(), leaf(torch, [-1.0, 0.0, 2.0]))


def case_torch_relu_function(torch):
    return run_op(torch, lambda a: torch.relu(a), leaf(torch, M23))


def case_clamp_both_with_boundaries(torch):
    return run_op(torch, lambda a: a.clamp(-1.0, 2.0), leaf(torch, [-2.0, -1.0, 0.5, 2.0, 3.0]))


def case_clamp_min_only(torch):
    return run_op(torch, lambda a: a.clamp(min=0.0), leaf(torch, [-2.0, 0.0, 3.0]))


def case_clamp_max_only(torch):
    return run_op(torch, lambda a: torch.clamp(a, max=1.0), leaf(torch, [-2.0, 1.0, 3.0]))


def case_maximum_with_tie(torch):
    a = leaf(torch, [1.0, 2.0, 3.0])
    b = leaf(torch, [3.0, 2.0, 1.0])
    return run_op(torch, torch.maximum, a, b)


def case_minimum_with_tie_broadcast(torch):
    return run_op(torch, torch.minimum, leaf(torch, M23), leaf(torch, [1.0, 0.0, 3.0]))


def case_where(torch):
    a = leaf(torch, A3)
    b = leaf(torch, B3)
    return run_op(torch, lambda x, y: torch.where(x > 1.5, x, y), a, b)


def case_where_broadcast(torch):
    a = leaf(torch, M23)
    b = leaf(torch, 10.0)
    return run_op(torch, lambda x, y: torch.where(x > 0, x * 2, y), a, b)


def case_chain_of_unaries(torch):
    return run_op(torch, lambda a: a.sin().exp().tanh().sigmoid(), leaf(torch, B3))


# ----- Reductions ----------------------------------------------------------------------------


def case_sum_all(torch):
    return run_op(torch, lambda a: a.sum(), leaf(torch, M23))


def case_sum_dim(torch):
    return run_op(torch, lambda a: a.sum(0), leaf(torch, M23))


def case_sum_dim_keepdim(torch):
    return run_op(torch, lambda a: a.sum(dim=1, keepdim=True), leaf(torch, M23))


def case_sum_negative_dim(torch):
    return run_op(torch, lambda a: torch.sum(a, -1), leaf(torch, M23))


def case_sum_0d(torch):
    return run_op(torch, lambda a: a.sum(), leaf(torch, 3.0))


def case_mean_all(torch):
    return run_op(torch, lambda a: a.mean(), leaf(torch, M23))


def case_mean_dim_keepdim(torch):
    return run_op(torch, lambda a: a.mean(0, keepdim=True), leaf(torch, M23))


def case_mean_dim(torch):
    return run_op(torch, lambda a: torch.mean(a, dim=1), leaf(torch, M23))


def case_prod_all(torch):
    return run_op(torch, lambda a: a.prod(), leaf(torch, [1.5, -2.0, 3.0]))


def case_prod_with_one_zero(torch):
    return run_op(torch, lambda a: a.prod(), leaf(torch, [2.0, 0.0, 3.0]))


def case_prod_dim(torch):
    return run_op(torch, lambda a: a.prod(1), leaf(torch, M23))


def case_max_all(torch):
    return run_op(torch, lambda a: a.max(), leaf(torch, M23))


def case_max_all_ties_even_split(torch):
    return run_op(torch, lambda a: a.max(), leaf(torch, [1.0, 3.0, 3.0, 2.0, 3.0]))


def case_min_all_ties_even_split(torch):
    return run_op(torch, lambda a: torch.min(a), leaf(torch, [[0.0, 1.0], [0.0, 5.0]]))


def case_max_dim_values_indices(torch):
    a = leaf(torch, [[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]])
    values, indices = a.max(dim=1)
    values.backward(torch.tensor([1.0, 2.0]))
    return {"values": info(values), "indices": val(indices), "grad": gval(a.grad)}


def case_max_dim_named_fields(torch):
    a = leaf(torch, M23)
    res = torch.max(a, 0)
    return {
        "type_name": type(res).__name__,
        "values": val(res.values),
        "indices": val(res.indices),
        "len": len(res),
        "indices_info": info(res.indices),
    }


def case_max_dim_keepdim(torch):
    a = leaf(torch, M23)
    values, indices = a.max(0, keepdim=True)
    values.sum().backward()
    return {"values": info(values), "indices": val(indices), "grad": gval(a.grad)}


def case_min_dim(torch):
    a = leaf(torch, [[3.0, 1.0, 1.0], [0.0, 2.0, -1.0]])
    values, indices = a.min(1)
    (values * torch.tensor([2.0, 3.0])).sum().backward()
    return {"values": info(values), "indices": val(indices), "grad": gval(a.grad)}


def case_softmax(torch):
    return run_op(torch, lambda a: a.softmax(0), leaf(torch, A3))


def case_softmax_dim1(torch):
    return run_op(torch, lambda a: torch.softmax(a, dim=1), leaf(torch, M23))


def case_softmax_dim0_2d(torch):
    return run_op(torch, lambda a: torch.nn.functional.softmax(a, dim=0), leaf(torch, M23))


def case_log_softmax(torch):
    return run_op(torch, lambda a: a.log_softmax(dim=-1), leaf(torch, M23))


def case_log_softmax_functional(torch):
    log_softmax = torch.nn.functional.log_softmax
    return run_op(torch, lambda a: log_softmax(a, dim=0), leaf(torch, [1000.0, 0.0, -1000.0]))


# ----- Linear algebra ------------------------------------------------------------------------


def case_matmul_1d_1d(torch):
    return run_op(torch, lambda a, b: a @ b, leaf(torch, A3), leaf(torch, B3))


def case_matmul_2d_2d(torch):
    b = leaf(torch, [[1.0, 0.0], [2.0, -1.0], [0.5, 3.0]])
    return run_op(torch, lambda x, y: x @ y, leaf(torch, M23), b)


def case_matmul_2d_1d(torch):
    return run_op(torch, lambda a, b: torch.matmul(a, b), leaf(torch, M23), leaf(torch, B3))


def case_matmul_1d_2d(torch):
    b = leaf(torch, [[1.0, 0.0], [2.0, -1.0], [0.5, 3.0]])
    return run_op(torch, lambda x, y: x @ y, leaf(torch, B3), b)


def case_matmul_3d_2d(torch):
    a = leaf(torch, [[[1.0, 2.0], [3.0, 4.0]], [[0.5, -1.0], [2.0, 0.0]]])
    b = leaf(torch, [[1.0, -1.0, 0.5], [2.0, 0.0, 1.0]])
    return run_op(torch, lambda x, y: x @ y, a, b)


def case_matmul_3d_3d(torch):
    a = leaf(torch, [[[1.0, 2.0], [3.0, 4.0]], [[0.5, -1.0], [2.0, 0.0]]])
    b = leaf(torch, [[[1.0, 0.0], [0.0, 1.0]], [[2.0, 1.0], [-1.0, 0.5]]])
    return run_op(torch, lambda x, y: x @ y, a, b)


def case_matmul_3d_1d(torch):
    a = leaf(torch, [[[1.0, 2.0], [3.0, 4.0]], [[0.5, -1.0], [2.0, 0.0]]])
    b = leaf(torch, [1.0, -2.0])
    return run_op(torch, lambda x, y: x @ y, a, b)


def case_matmul_constant_left(torch):
    a = torch.ones(2, 2, 3)
    b = leaf(torch, [[1.0], [2.0], [3.0]])
    return run_op(torch, lambda y: a @ y, b)


def case_mm(torch):
    b = leaf(torch, [[1.0, 0.0], [2.0, -1.0], [0.5, 3.0]])
    return run_op(torch, lambda x, y: x.mm(y), leaf(torch, M23), b)


def case_torch_mm(torch):
    b = leaf(torch, [[1.0, 0.0], [2.0, -1.0], [0.5, 3.0]])
    return run_op(torch, lambda x, y: torch.mm(x, y), leaf(torch, M23), b)


def case_mv(torch):
    return run_op(torch, lambda a, b: a.mv(b), leaf(torch, M23), leaf(torch, B3))


def case_dot(torch):
    return run_op(torch, lambda a, b: torch.dot(a, b), leaf(torch, A3), leaf(torch, B3))


def case_t_method(torch):
    return run_op(torch, lambda a: a.t(), leaf(torch, M23))


def case_T_property(torch):
    return run_op(torch, lambda a: a.T, leaf(torch, M23))


def case_transpose(torch):
    a = leaf(torch, [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]])
    return run_op(torch, lambda x: x.transpose(0, 2), a)


def case_permute(torch):
    a = leaf(torch, [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]])
    return run_op(torch, lambda x: x.permute(2, 0, 1), a)


def case_linear_layer_by_hand(torch):
    x = leaf(torch, M23, rg=False)
    w = leaf(torch, [[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]])
    b = leaf(torch, [0.1, -0.2])
    return run_op(torch, lambda w_, b_: x @ w_.t() + b_, w, b)


# ----- Shape ops -----------------------------------------------------------------------------


def case_reshape(torch):
    return run_op(torch, lambda a: a.reshape(3, 2), leaf(torch, M23))


def case_reshape_minus_one(torch):
    return run_op(torch, lambda a: a.reshape(-1), leaf(torch, M23))


def case_reshape_tuple_arg(torch):
    return run_op(torch, lambda a: a.reshape((1, 6)), leaf(torch, M23))


def case_view(torch):
    return run_op(torch, lambda a: a.view(3, 2), leaf(torch, M23))


def case_view_minus_one(torch):
    return run_op(torch, lambda a: a.view(-1, 1), leaf(torch, M23))


def case_flatten(torch):
    a = leaf(torch, [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    return run_op(torch, lambda x: x.flatten(), a)


def case_flatten_start_dim(torch):
    a = leaf(torch, [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    return run_op(torch, lambda x: torch.flatten(x, 1), a)


def case_squeeze_all(torch):
    return run_op(torch, lambda a: a.squeeze(), leaf(torch, [[[1.0], [2.0], [3.0]]]))


def case_squeeze_dim(torch):
    return run_op(torch, lambda a: a.squeeze(2), leaf(torch, [[[1.0], [2.0], [3.0]]]))


def case_squeeze_dim_not_one(torch):
    return run_op(torch, lambda a: a.squeeze(1), leaf(torch, [[[1.0], [2.0], [3.0]]]))


def case_unsqueeze(torch):
    return run_op(torch, lambda a: a.unsqueeze(1), leaf(torch, A3))


def case_unsqueeze_negative(torch):
    return run_op(torch, lambda a: torch.unsqueeze(a, -1), leaf(torch, M23))


def case_expand(torch):
    return run_op(torch, lambda a: a.expand(2, 3), leaf(torch, A3))


def case_expand_minus_one(torch):
    return run_op(torch, lambda a: a.expand(-1, 4), leaf(torch, [[1.0], [2.0]]))


def case_cat_dim0(torch):
    a = leaf(torch, M23)
    b = leaf(torch, [[9.0, 8.0, 7.0]])
    return run_op(torch, lambda x, y: torch.cat([x, y]), a, b)


def case_cat_dim1_with_constant(torch):
    a = leaf(torch, M23)
    c = torch.ones(2, 1)
    return run_op(torch, lambda x: torch.cat((x, c), dim=1), a)


def case_stack_dim0(torch):
    return run_op(torch, lambda a, b: torch.stack([a, b]), leaf(torch, A3), leaf(torch, B3))


def case_stack_dim1(torch):
    return run_op(torch, lambda a, b: torch.stack((a, b), dim=1), leaf(torch, A3), leaf(torch, B3))


def case_clone(torch):
    return run_op(torch, lambda a: a.clone(), leaf(torch, A3))


def case_contiguous(torch):
    a = leaf(torch, M23)
    t = a.t()
    return {"same_object_if_contiguous": a.contiguous() is a, "of_t": info(t.contiguous())}


def case_unbind_iteration_seed(torch):
    # seed: result = ii * result for positive items; y = x[3] * x[4] * x[5].
    x = torch.arange(-2, 4, dtype=torch.float32).requires_grad_()
    result = 1
    items = []
    for ii in x:
        items.append(fn_name(ii.grad_fn))
        if ii.item() > 0:
            result = ii * result
    result.backward()
    return {"items": items, "y": info(result), "grad": gval(x.grad), "x": info(x)}


def case_iteration_2d_rows(torch):
    a = leaf(torch, M23)
    rows = list(a)
    (rows[0] * 2 + rows[1] * 3).sum().backward()
    return {"rows": [info(r) for r in rows], "len": len(rows), "grad": gval(a.grad)}


# ----- Indexing ------------------------------------------------------------------------------


def case_index_int(torch):
    return run_op(torch, lambda a: a[1], leaf(torch, M23))


def case_index_negative_int(torch):
    return run_op(torch, lambda a: a[-1], leaf(torch, A3))


def case_index_slice(torch):
    return run_op(torch, lambda a: a[1:], leaf(torch, [1.0, 2.0, 3.0, 4.0, 5.0]))


def case_index_slice_step(torch):
    return run_op(torch, lambda a: a[::2], leaf(torch, [1.0, 2.0, 3.0, 4.0, 5.0]))


def case_index_tuple(torch):
    return run_op(torch, lambda a: a[1, 2], leaf(torch, M23))


def case_index_tuple_slice(torch):
    return run_op(torch, lambda a: a[:, 1:], leaf(torch, M23))


def case_index_none(torch):
    return run_op(torch, lambda a: a[None], leaf(torch, A3))


def case_index_none_middle(torch):
    return run_op(torch, lambda a: a[:, None, 0], leaf(torch, M23))


def case_index_ellipsis(torch):
    return run_op(torch, lambda a: a[..., 0], leaf(torch, M23))


def case_index_bool_mask(torch):
    a = leaf(torch, M23)
    return run_op(torch, lambda x: x[x > 0.75], a)


def case_index_bool_mask_1d_rows(torch):
    a = leaf(torch, M23)
    mask = torch.tensor([False, True])
    return run_op(torch, lambda x: x[mask], a)


def case_index_int_list(torch):
    return run_op(torch, lambda a: a[[0, 2]], leaf(torch, A3))


def case_index_int_tensor_repeated(torch):
    idx = torch.tensor([0, 0, 2, 0])
    return run_op(torch, lambda a: a[idx], leaf(torch, A3))


def case_index_int_arrays_2d(torch):
    rows = torch.tensor([0, 1, 1])
    cols = torch.tensor([2, 0, 2])
    return run_op(torch, lambda a: a[rows, cols], leaf(torch, M23))


def case_index_mixed_slice_list(torch):
    return run_op(torch, lambda a: a[:, [2, 0]], leaf(torch, M23))


def case_index_0d_item(torch):
    a = leaf(torch, M23)
    e = a[0, 1]
    return {"e": info(e), "item": e.item(), "item_type": type(e.item()).__name__}


# ----- requires_grad / is_leaf rules --------------------------------------------------------


def case_requires_grad_defaults(torch):
    a = torch.tensor([1.0])
    b = torch.ones(2)
    c = torch.ones(2, requires_grad=True)
    return {
        "a": [a.requires_grad, a.is_leaf, a.grad_fn is None, a.grad is None],
        "b": [b.requires_grad, b.is_leaf],
        "c": [c.requires_grad, c.is_leaf, c.grad_fn is None],
        "param": [torch.nn.Parameter(torch.ones(2)).requires_grad],
    }


def case_requires_grad_seed_corrected_rule(torch):
    # seed: a non-leaf requires grad only if some input does (the docs sentence is wrong).
    x1 = leaf(torch, [0.5, 1.5, 2.0])
    x2 = leaf(torch, [1.0, 2.0, 3.0], rg=False)
    y1 = x1.pow(x1)
    y2 = x2.pow(x2)
    z = y1 + y2
    return {"x1": info(x1), "x2": info(x2), "y1": info(y1), "y2": info(y2), "z": info(z)}


def case_requires_grad_three_ways_seed(torch):
    a = torch.ones(3, 4, requires_grad=True)
    b = torch.zeros(3, 4).requires_grad_()
    c = torch.ones(3, 4)
    c.requires_grad = True
    d = a.add(b)
    e = d.sum()
    e.backward()
    return {
        "flags": [(t.requires_grad, t.is_leaf) for t in (a, b, c, d, e)],
        "a_grad": gval(a.grad),
        "b_repr": repr(b),
        "e": info(e),
        "d_grad_is_none": quiet_grad(d) is None,
    }


def case_graph_seed_wx_plus_b(torch):
    # seed: x = ones(1); y = w * x; z = y + b.
    x = torch.ones(1)
    b = leaf(torch, [0.25])
    w = leaf(torch, [0.75])
    y = w * x
    z = y + b
    return {
        "flags": [(t.requires_grad, t.is_leaf) for t in (x, b, w, y, z)],
        "z_graph": graph(z.grad_fn),
        "z_next_is_y_fn": z.grad_fn.next_functions[0][0] is y.grad_fn,
        "y_graph": graph(y.grad_fn),
        "leaf_fns": [w.grad_fn is None, x.grad_fn is None],
    }


def case_accumulate_grad_variable(torch):
    w = leaf(torch, [1.0, 2.0])
    y = w * 3
    acc = y.grad_fn.next_functions[0][0]
    return {
        "type": type(acc).__name__,
        "name": acc.name(),
        "variable_is_leaf": acc.variable is w,
        "next": list(acc.next_functions),
        "same_node_each_time": (w * 2).grad_fn.next_functions[0][0] is acc,
    }


def case_ops_on_no_grad_tensors_are_leaves(torch):
    a = torch.ones(2)
    b = a * 2 + 1
    return {"b": info(b)}


def case_mul_scalar_seed_abc(torch):
    # seed: c = a*b; e = c*d; a.grad = 12, b.grad = 8.
    a = leaf(torch, 2.0)
    b = leaf(torch, 3.0)
    c = a * b
    d = leaf(torch, 4.0)
    e = c * d
    e.backward()
    return {
        "grads": [gval(t.grad) for t in (a, b, d)],
        "c": info(c),
        "e": info(e),
        "c_grad_is_none": quiet_grad(c) is None,
    }


def case_mul_no_grad_operand_seed(torch):
    a = leaf(torch, 2.0)
    b = leaf(torch, 3.0, rg=False)
    c = a * b
    c.backward()
    return {"c": info(c), "a_grad": gval(a.grad), "b_grad": gval(b.grad)}


# ----- Non-leaf .grad, retain_grad --------------------------------------------------------


def _seed_loss(torch):
    inp = torch.ones([2, 2], requires_grad=False)
    w1 = leaf(torch, 2.0)
    w2 = leaf(torch, 3.0)
    w3 = leaf(torch, 3.0)
    l1 = inp * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    return inp, w1, w2, w3, l1, l2, l3, l4, loss


def case_seed_w1_grad_21(torch):
    inp, w1, w2, w3, l1, l2, l3, l4, loss = _seed_loss(torch)
    loss.backward()
    return {
        "w_grads": [gval(w.grad) for w in (w1, w2, w3)],
        "loss": info(loss),
        "l1": info(l1),
        "w1_data": val(w1.data),
    }


def case_grad_of_non_leaf_warns(torch):
    a = leaf(torch, A3)
    b = a * 2
    b.sum().backward()
    grad, warns = caught_warnings(lambda: b.grad)
    leaf_grad, leaf_warns = caught_warnings(lambda: a.grad)
    return {
        "grad": grad,
        "warnings": warns,
        "leaf_grad": gval(leaf_grad),
        "leaf_warnings": leaf_warns,
    }


def case_retain_grad_seed(torch):
    inp, w1, w2, w3, l1, l2, l3, l4, loss = _seed_loss(torch)
    l1.retain_grad()
    l4.retain_grad()
    loss.retain_grad()
    loss.backward()
    return {
        "retains": [t.retains_grad for t in (w1, l1, l2, l4, loss)],
        "grads": [gval(t.grad) for t in (loss, l4, l1)],
        "l2_grad_is_none": quiet_grad(l2) is None,
        "w1_grad": gval(w1.grad),
    }


def case_retain_grad_on_leaf_is_noop(torch):
    a = leaf(torch, A3)
    a.retain_grad()
    (a * 2).sum().backward()
    return {"retains_grad": a.retains_grad, "grad": gval(a.grad)}


def case_retain_grad_accumulates(torch):
    a = leaf(torch, A3)
    b = a * 2
    b.retain_grad()
    (b * b).sum().backward(retain_graph=True)
    first = gval(b.grad)
    (b * b).sum().backward()
    return {"first": first, "second": gval(b.grad), "a": gval(a.grad)}


# ----- backward() ------------------------------------------------------------------------------


def case_backward_twice_without_retain_graph(torch):
    a = leaf(torch, A3)
    y = (a * a).sum()
    y.backward()
    return {"second": outcome(lambda: y.backward()), "grad": gval(a.grad)}


def case_backward_twice_no_saved_tensors(torch):
    # An add saves no tensors, so torch lets a second backward through it run without
    # retain_graph, and the grads accumulate.
    a = leaf(torch, A3)
    y = (a + 1).sum()
    y.backward()
    second = outcome(lambda: y.backward())
    return {"second": second, "grad": gval(a.grad)}


def case_backward_retain_graph_accumulates_seed(torch):
    x = torch.ones(1)
    b = leaf(torch, [0.25])
    w = leaf(torch, [0.75])
    z = w * x + b
    z.backward(retain_graph=True)
    first = gval(w.grad)
    z.backward()
    return {"first": first, "second": gval(w.grad), "b": gval(b.grad)}


def case_backward_non_scalar_without_gradient(torch):
    a = leaf(torch, A3)
    return {"error": outcome(lambda: (a * 2).backward()), "grad": gval(a.grad)}


def case_backward_on_tensor_without_grad(torch):
    return {"error": outcome(lambda: torch.ones(2).sum().backward())}


def case_backward_gradient_shape_mismatch(torch):
    a = leaf(torch, A3)
    return {"error": outcome(lambda: (a * 2).backward(torch.ones(2)))}


def case_backward_with_gradient_seed_x2_expx(torch):
    # seed: y = x**2 * exp(x); dy/dx = 2x e^x + x^2 e^x.
    x = leaf(torch, [[-1.0, 0.5, 2.0], [0.0, 1.0, -2.5]])
    y = x ** 2 * torch.exp(x)
    y.backward(torch.ones(y.size()))
    by_hand = 2 * x * torch.exp(x) + x ** 2 * torch.exp(x)
    return {"y": info(y), "grad": gval(x.grad), "by_hand": info(by_hand)}


def case_backward_0d_gradient_argument(torch):
    a = leaf(torch, A3)
    y = (a * a).sum()
    y.backward(torch.tensor(2.0))
    return {"grad": gval(a.grad)}


def case_backward_inputs_subset(torch):
    a = leaf(torch, A3)
    b = leaf(torch, B3)
    (a * b).sum().backward(inputs=[a])
    return {"a": gval(a.grad), "b": gval(b.grad)}


def case_backward_inputs_non_leaf(torch):
    a = leaf(torch, A3)
    h = a * 2
    (h * h).sum().backward(inputs=[h])
    return {"h": gval(quiet_grad(h)), "a": gval(a.grad), "h_retains": h.retains_grad}


def case_grads_accumulate_across_graphs(torch):
    a = leaf(torch, A3)
    (a * 2).sum().backward()
    (a * a).sum().backward()
    return {"grad": gval(a.grad)}


def case_backward_returns_none(torch):
    a = leaf(torch, A3)
    return {"result": a.sum().backward()}


def case_backward_through_diamond(torch):
    a = leaf(torch, [2.0])
    b = a * 3
    c = b.exp()
    d = b * b
    e = c + d
    e.backward()
    return {"e": info(e), "grad": gval(a.grad)}


def case_grad_assignment_and_none(torch):
    a = leaf(torch, A3)
    a.grad = torch.tensor([1.0, 1.0, 1.0])
    (a * 2).sum().backward()
    after = gval(a.grad)
    a.grad = None
    (a * 3).sum().backward()
    return {"after_accumulate": after, "after_reset": gval(a.grad)}


def case_abs_branch_seed(torch):
    # seed: abs via Python control flow on x.data.
    def my_abs(x):
        if x.data[0] > 0:
            return x
        return -x

    x = torch.ones(1, requires_grad=True)
    y = my_abs(x)
    y.backward()
    g1 = gval(x.grad)
    x2 = -1 * torch.ones(1)
    x2 = x2.requires_grad_()
    y2 = my_abs(x2)
    y2.backward()
    return {"g1": g1, "y_is_x": y is x, "g2": gval(x2.grad), "y2": info(y2),
            "y2_repr": repr(y2), "x2_repr": repr(x2)}


# ----- autograd.grad -----------------------------------------------------------------------


def case_autograd_grad_basic(torch):
    a = leaf(torch, A3)
    b = leaf(torch, B3)
    res = torch.autograd.grad((a * b).sum(), [a, b])
    return {
        "type": type(res).__name__,
        "len": len(res),
        "grads": [info(g) for g in res],
        "leaf_grads_none": [a.grad is None, b.grad is None],
    }


def case_autograd_grad_single_tensor_input(torch):
    a = leaf(torch, A3)
    res = torch.autograd.grad((a ** 2).sum(), a)
    return {"type": type(res).__name__, "grads": [gval(g) for g in res]}


def case_autograd_grad_outputs_argument(torch):
    a = leaf(torch, A3)
    y = a * a
    (g,) = torch.autograd.grad(y, a, grad_outputs=torch.tensor([1.0, 0.5, -1.0]))
    return {"grad": gval(g)}


def case_autograd_grad_non_leaf_input(torch):
    a = leaf(torch, A3)
    h = a.exp()
    (g,) = torch.autograd.grad((h * 2).sum(), h)
    return {"grad": gval(g)}


def case_autograd_grad_unused_error(torch):
    a = leaf(torch, A3)
    b = leaf(torch, B3)
    return {"error": outcome(lambda: torch.autograd.grad((a * 2).sum(), [a, b]))}


def case_autograd_grad_allow_unused(torch):
    a = leaf(torch, A3)
    b = leaf(torch, B3)
    ga, gb = torch.autograd.grad((a * 2).sum(), [a, b], allow_unused=True)
    return {"ga": gval(ga), "gb": gb}


def case_autograd_grad_non_scalar_error(torch):
    a = leaf(torch, A3)
    return {"error": outcome(lambda: torch.autograd.grad(a * 2, a))}


def case_autograd_grad_twice_error(torch):
    a = leaf(torch, A3)
    y = (a * a).sum()
    torch.autograd.grad(y, a)
    return {"error": outcome(lambda: torch.autograd.grad(y, a))}


def case_autograd_grad_retain_graph(torch):
    a = leaf(torch, A3)
    y = (a * a).sum()
    g1 = torch.autograd.grad(y, a, retain_graph=True)
    g2 = torch.autograd.grad(y, a)
    return {"g1": gval(g1[0]), "g2": gval(g2[0]), "no_create_graph_rg": g1[0].requires_grad}


def case_autograd_grad_multiple_outputs(torch):
    a = leaf(torch, A3)
    y1 = (a * 2).sum()
    y2 = (a * a).sum()
    (g,) = torch.autograd.grad([y1, y2], [a])
    return {"grad": gval(g)}


def case_second_derivative_cube(torch):
    return second_order(torch, lambda x: x ** 3, leaf(torch, [0.5, -1.0, 2.0]))


def case_third_derivative_cube(torch):
    x = leaf(torch, [0.5, -1.0, 2.0])
    (g1,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = torch.autograd.grad(g2.sum(), x)
    return {"g1": gval(g1), "g2": gval(g2), "g3": gval(g3)}


def case_second_derivative_tanh(torch):
    return second_order(torch, lambda x: x.tanh(), leaf(torch, B3))


def case_second_derivative_sigmoid(torch):
    return second_order(torch, lambda x: torch.sigmoid(x), leaf(torch, B3))


def case_second_derivative_exp(torch):
    return second_order(torch, lambda x: x.exp(), leaf(torch, B3))


def case_second_derivative_log(torch):
    return second_order(torch, lambda x: x.log(), leaf(torch, [0.5, 1.0, 4.0]))


def case_second_derivative_sin(torch):
    return second_order(torch, lambda x: x.sin(), leaf(torch, B3))


def case_second_derivative_softmax(torch):
    w = torch.tensor([1.0, -2.0, 0.5])
    return second_order(torch, lambda x: x.softmax(0) * w, leaf(torch, [0.1, 0.2, -0.3]))


def case_second_derivative_matmul(torch):
    x = leaf(torch, M23)
    w = leaf(torch, [[1.0, 0.0], [2.0, -1.0], [0.5, 3.0]])
    return second_order(torch, lambda a, b: (a @ b) ** 2, x, w)


def case_second_derivative_x2_expx(torch):
    return second_order(torch, lambda x: x ** 2 * torch.exp(x), leaf(torch, [-1.0, 0.5, 2.0]))


def case_create_graph_backward(torch):
    x = leaf(torch, [1.0, 2.0])
    y = (x ** 3).sum()
    with warnings.catch_warnings():
        # torch warns about the grad <-> parameter reference cycle; not an observable here.
        warnings.simplefilter("ignore")
        y.backward(create_graph=True)
    g = x.grad
    grad_info = {"requires_grad": g.requires_grad, "value": gval(g)}
    x.grad = None
    g.sum().backward()
    return {"first": grad_info, "second": gval(x.grad)}


def case_saved_tensors_on_nodes(torch):
    a = leaf(torch, [1.0, 2.0])
    b = leaf(torch, [3.0, 4.0])
    y = a * b
    e = a.exp()
    p = a ** 2
    k = (a * 1) * 2
    obs = {
        "mul_self": info(y.grad_fn._saved_self),
        "mul_self_is_input": y.grad_fn._saved_self is a,
        "mul_other": val(y.grad_fn._saved_other),
        "exp_result": val(e.grad_fn._saved_result),
        "pow_exponent": p.grad_fn._saved_exponent,
        "pow_self": val(p.grad_fn._saved_self),
        "scalar_mul_self": k.grad_fn._saved_self,
        "scalar_mul_other": val(k.grad_fn._saved_other),
    }
    y.sum().backward()
    obs["after_backward"] = outcome(lambda: y.grad_fn._saved_self)
    return obs


def case_saved_tensors_retained(torch):
    a = leaf(torch, [1.0, 2.0])
    y = a.sigmoid()
    y.sum().backward(retain_graph=True)
    return {"result": val(y.grad_fn._saved_result)}


# ----- Hooks -------------------------------------------------------------------------------


def case_tensor_hook_order_seed(torch):
    # seed: hooks fire loss -> l4 -> l1, and loss2.grad is None afterwards.
    inp, w1, w2, w3, l1, l2, l3, l4, _ = _seed_loss(torch)
    log = []
    loss2 = l4.mean()
    l1.register_hook(lambda grad: log.append(("l1", gval(grad))))
    l4.register_hook(lambda grad: log.append(("l4", gval(grad))))
    loss2.register_hook(lambda grad: log.append(("loss", gval(grad))))
    loss2.backward()
    return {"log": log, "loss2_grad": quiet_grad(loss2), "w1": gval(w1.grad)}


def case_tensor_hook_replaces_grad(torch):
    a = leaf(torch, A3)
    b = a * 2
    b.register_hook(lambda grad: grad * 10)
    b.sum().backward()
    return {"grad": gval(a.grad)}


def case_tensor_hook_returning_none_keeps_grad(torch):
    a = leaf(torch, A3)
    seen = []
    b = a * 2
    b.register_hook(lambda grad: seen.append(gval(grad)))
    b.sum().backward()
    return {"seen": seen, "grad": gval(a.grad)}


def case_tensor_hook_on_leaf(torch):
    a = leaf(torch, A3)
    seen = []

    def hook(grad):
        seen.append(gval(grad))
        return grad + 1

    a.register_hook(hook)
    (a * a).sum().backward()
    return {"seen": seen, "grad": gval(a.grad)}


def case_tensor_hooks_registration_order(torch):
    a = leaf(torch, A3)
    b = a * 2
    log = []

    def first(grad):
        log.append(("first", gval(grad)))
        return grad * 2

    def second(grad):
        log.append(("second", gval(grad)))
        return grad + 1

    b.register_hook(first)
    b.register_hook(second)
    b.sum().backward()
    return {"log": log, "grad": gval(a.grad)}


def case_tensor_hook_handle_remove(torch):
    a = leaf(torch, A3)
    b = a * 2
    log = []
    handle = b.register_hook(lambda grad: log.append("removed"))
    b.register_hook(lambda grad: log.append("kept"))
    handle.remove()
    b.sum().backward()
    return {"log": log, "grad": gval(a.grad)}


def case_tensor_hook_and_retain_grad(torch):
    a = leaf(torch, A3)
    b = a * 2
    b.retain_grad()
    b.register_hook(lambda grad: grad * 3)
    b.sum().backward()
    return {"b_grad": gval(b.grad), "a_grad": gval(a.grad)}


def case_tensor_hook_on_no_grad_tensor_error(torch):
    a = torch.ones(2)
    return {"error": outcome(lambda: a.register_hook(lambda grad: grad))}


def case_tensor_hook_fires_in_autograd_grad(torch):
    a = leaf(torch, A3)
    b = a * a
    log = []
    b.register_hook(lambda grad: log.append(gval(grad)))
    (g,) = torch.autograd.grad(b.sum(), a)
    return {"log": log, "g": gval(g)}


def case_node_hook_arguments(torch):
    a = leaf(torch, A3)
    b = leaf(torch, B3, rg=False)
    y = a * b
    log = []

    def hook(grad_inputs, grad_outputs):
        log.append(("hook", [gval(g) for g in grad_inputs], [gval(g) for g in grad_outputs]))

    def prehook(grad_outputs):
        log.append(("prehook", [gval(g) for g in grad_outputs]))

    y.grad_fn.register_hook(hook)
    y.grad_fn.register_prehook(prehook)
    y.backward(torch.tensor([1.0, 2.0, 3.0]))
    return {"log": log, "grad": gval(a.grad)}


def case_node_prehook_replaces_grad(torch):
    a = leaf(torch, A3)
    y = a * 2
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 5,))
    y.sum().backward()
    return {"grad": gval(a.grad)}


def case_node_hook_replaces_grad_inputs(torch):
    a = leaf(torch, A3)
    y = a.exp()
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 7,))
    y.sum().backward()
    return {"grad": gval(a.grad)}


def case_hooks_mixed_firing_order(torch):
    a = leaf(torch, A3)
    b = a * 2
    c = b.exp()
    d = c.sum()
    log = []
    b.register_hook(lambda g: log.append("tensor b"))
    c.register_hook(lambda g: log.append("tensor c"))
    c.grad_fn.register_prehook(lambda go: log.append("prehook c.grad_fn"))
    c.grad_fn.register_hook(lambda gi, go: log.append("hook c.grad_fn"))
    b.grad_fn.register_prehook(lambda go: log.append("prehook b.grad_fn"))
    b.grad_fn.register_hook(lambda gi, go: log.append("hook b.grad_fn"))
    d.grad_fn.register_hook(lambda gi, go: log.append("hook d.grad_fn"))
    a.register_hook(lambda g: log.append("tensor a"))
    d.backward()
    return {"log": log}


def case_node_hook_handle_remove(torch):
    a = leaf(torch, A3)
    y = a * 2
    log = []
    h1 = y.grad_fn.register_hook(lambda gi, go: log.append("hook"))
    h2 = y.grad_fn.register_prehook(lambda go: log.append("prehook"))
    h1.remove()
    h2.remove()
    y.sum().backward()
    return {"log": log}


# ----- Grad modes -----------------------------------------------------------------------------


def case_no_grad_context(torch):
    x = leaf(torch, [1.0, 1.0])
    before = torch.is_grad_enabled()
    with torch.no_grad():
        inside = torch.is_grad_enabled()
        y = x * 2
        z = (x ** 2).requires_grad
    return {"before": before, "inside": inside, "after": torch.is_grad_enabled(),
            "y": info(y), "z": z, "x_still": x.requires_grad}


def case_no_grad_decorator(torch):
    @torch.no_grad()
    def f(t):
        return t * 2, torch.is_grad_enabled()

    x = leaf(torch, A3)
    y, enabled = f(x)
    return {"y": info(y), "enabled_inside": enabled, "after": torch.is_grad_enabled(),
            "name": f.__name__}


def case_enable_grad_inside_no_grad(torch):
    x = leaf(torch, A3)
    with torch.no_grad():
        with torch.enable_grad():
            inner = torch.is_grad_enabled()
            y = x * 2
        z = x * 2
    return {"inner": inner, "y": info(y), "z": info(z)}


def case_enable_grad_decorator(torch):
    @torch.enable_grad()
    def f(t):
        return t * 2

    x = leaf(torch, A3)
    with torch.no_grad():
        y = f(x)
        still_off = torch.is_grad_enabled()
    return {"y": info(y), "still_off": still_off}


def case_set_grad_enabled_function_seed(torch):
    try:
        torch.set_grad_enabled(False)
        x = torch.ones(1)
        w = leaf(torch, [0.5])
        y = x * w
        off = torch.is_grad_enabled()
        flags = [x.requires_grad, w.requires_grad, y.requires_grad]
    finally:
        torch.set_grad_enabled(True)
    return {"flags": flags, "off": off, "restored": torch.is_grad_enabled(), "y": info(y)}


def case_set_grad_enabled_context(torch):
    x = leaf(torch, A3)
    with torch.set_grad_enabled(False):
        a = x * 2
        inside_false = torch.is_grad_enabled()
    with torch.set_grad_enabled(True):
        b = x * 2
    with torch.no_grad():
        with torch.set_grad_enabled(True):
            c = x * 2
        after_inner = torch.is_grad_enabled()
    return {"a": info(a), "b": info(b), "c": info(c), "inside_false": inside_false,
            "after_inner": after_inner, "end": torch.is_grad_enabled()}


def case_no_grad_restores_after_exception(torch):
    def boom():
        with torch.no_grad():
            raise ValueError("boom. more")

    err = outcome(boom)
    return {"err": err, "enabled": torch.is_grad_enabled()}


def case_no_grad_creation_keeps_requires_grad(torch):
    with torch.no_grad():
        a = torch.ones(2, requires_grad=True)
        b = torch.tensor([1.0], requires_grad=True)
    return {"a": info(a), "b": info(b)}


def case_no_grad_inplace_on_leaf_sgd_style(torch):
    w = leaf(torch, [1.0, 2.0])
    (w * w).sum().backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    return {"w": info(w), "grad": gval(w.grad)}


# ----- detach, requires_grad_, .data --------------------------------------------------------


def case_detach(torch):
    a = leaf(torch, A3)
    b = a * 2
    d = b.detach()
    return {"d": info(d), "b": info(b)}


def case_detach_shares_storage_and_version(torch):
    a = leaf(torch, A3)
    b = a * 2
    d = b.detach()
    d.add_(1)
    return {"b": val(b), "b_version": b._version, "d_version": d._version}


def case_detach_inplace(torch):
    a = leaf(torch, A3)
    b = a * 2
    r = b.detach_()
    return {"returns_self": r is b, "b": info(b)}


def case_requires_grad_method(torch):
    a = torch.ones(2)
    r = a.requires_grad_()
    first = info(a)
    a.requires_grad_(False)
    return {"returns_self": r is a, "first": first, "after_false": info(a)}


def case_requires_grad_on_non_leaf_error(torch):
    a = leaf(torch, A3)
    b = a * 2
    return {
        "set_false": outcome(lambda: setattr(b, "requires_grad", False)),
        "method_false": outcome(lambda: b.requires_grad_(False)),
        "set_true": outcome(lambda: setattr(b, "requires_grad", True)),
    }


def case_data_read(torch):
    a = leaf(torch, A3)
    b = a * 2
    return {"a_data": info(a.data), "b_data": info(b.data)}


def case_data_inplace_no_version_bump(torch):
    a = leaf(torch, A3)
    a.data.add_(1)
    b = a * 2
    b.data.mul_(3)
    return {"a": info(a), "b": info(b)}


def case_data_assign(torch):
    a = leaf(torch, A3)
    a.data = torch.tensor([5.0, 6.0])
    (a * a).sum().backward()
    return {"a": info(a), "grad": gval(a.grad)}


def case_data_modification_not_tracked(torch):
    a = leaf(torch, [2.0])
    y = a * a
    a.data.fill_(10.0)
    y.backward()
    return {"grad": gval(a.grad), "y": val(y)}


# ----- In-place ops and versions ------------------------------------------------------------


def _inplace(torch, op):
    a = leaf(torch, [1.0, -2.0, 3.0])
    b = a.clone()
    r = op(b)
    obs = {"returns_self": r is b, "b": info(b)}
    b.backward(upstream(torch, b))
    obs["grad"] = gval(a.grad)
    return obs


def case_inplace_add(torch):
    return _inplace(torch, lambda b: b.add_(2))


def case_inplace_add_tensor(torch):
    return _inplace(torch, lambda b: b.add_(torch.tensor([1.0, 2.0, 3.0])))


def case_inplace_sub(torch):
    return _inplace(torch, lambda b: b.sub_(1.5))


def case_inplace_mul(torch):
    return _inplace(torch, lambda b: b.mul_(3))


def case_inplace_div(torch):
    return _inplace(torch, lambda b: b.div_(4))


def case_inplace_pow(torch):
    return _inplace(torch, lambda b: b.pow_(2))


def case_inplace_exp(torch):
    return _inplace(torch, lambda b: b.exp_())


def case_inplace_clamp(torch):
    return _inplace(torch, lambda b: b.clamp_(-1.0, 2.0))


def case_inplace_relu(torch):
    return _inplace(torch, lambda b: b.relu_())


def case_inplace_zero(torch):
    return _inplace(torch, lambda b: b.zero_())


def case_inplace_fill(torch):
    return _inplace(torch, lambda b: b.fill_(2.5))


def case_inplace_copy(torch):
    return _inplace(torch, lambda b: b.copy_(torch.tensor([7.0, 8.0, 9.0])))


def case_inplace_copy_from_requires_grad(torch):
    a = leaf(torch, A3)
    b = torch.zeros(3)
    b.copy_(a * 2)
    b.backward(upstream(torch, b))
    return {"b": info(b), "grad": gval(a.grad)}


def case_inplace_operator_forms(torch):
    a = leaf(torch, A3)
    b = a * 1
    ident = id(b)
    b += 1
    b *= 2
    b -= 0.5
    b /= 2
    b.backward(upstream(torch, b))
    return {"b": info(b), "same_object": id(b) == ident, "grad": gval(a.grad)}


def case_inplace_on_no_grad_tensor_with_grad_operand(torch):
    w = leaf(torch, A3)
    a = torch.ones(3)
    a.mul_(w)
    a.backward(upstream(torch, a))
    return {"a": info(a), "w_grad": gval(w.grad)}


def case_version_counts(torch):
    a = torch.ones(3)
    versions = [a._version]
    a.add_(1)
    versions.append(a._version)
    a.mul_(2)
    a.zero_()
    versions.append(a._version)
    a[0] = 5.0
    versions.append(a._version)
    a += 1
    versions.append(a._version)
    b = a + 1
    versions.append(b._version)
    return {"versions": versions, "a": val(a), "a_is_leaf": a.is_leaf}


def case_version_view_shares_counter(torch):
    a = leaf(torch, A3)
    b = a * 2
    v = b[1:]
    v.add_(1)
    r = b.view(3, 1)
    r.mul_(2)
    return {"b_version": b._version, "v_version": v._version, "r_version": r._version,
            "b": val(b)}


def case_setitem_on_non_leaf(torch):
    a = leaf(torch, A3)
    b = a * 2
    b[0] = 10.0
    obs = {"b": info(b), "grad_fn_name": b.grad_fn.name()}
    b.backward(upstream(torch, b))
    obs["grad"] = gval(a.grad)
    return obs


def case_setitem_tensor_value_with_grad(torch):
    a = leaf(torch, A3)
    v = leaf(torch, [5.0, 6.0])
    b = torch.zeros(4)
    b[1:3] = v * 2
    b.backward(upstream(torch, b))
    return {"b": info(b), "v_grad": gval(v.grad), "a_grad": a.grad}


def case_setitem_bool_mask(torch):
    a = leaf(torch, [1.0, -2.0, 3.0, -4.0])
    b = a * 1
    b[b < 0] = 0.0
    b.backward(upstream(torch, b))
    return {"b": info(b), "grad": gval(a.grad)}


def case_inplace_modified_saved_tensor_error_seed(torch):
    # seed: b = a + 2; loss = (b * b).mean(); b[0] = 1000.0; loss.backward() fails.
    a = leaf(torch, [1.0, 3.0])
    b = a + 2
    v0 = b._version
    loss = (b * b).mean()
    b[0] = 1000.0
    v1 = b._version
    return {"versions": [v0, v1], "error": outcome(lambda: loss.backward())}


def case_inplace_modified_error_names_producer(torch):
    # The seed's exact message: edited under no_grad, b keeps its AddBackward0 history.
    a = leaf(torch, [1.0, 3.0])
    b = a + 2
    loss = (b * b).mean()
    with torch.no_grad():
        b[0] = 1000.0
    return {"b": info(b), "error": outcome(lambda: loss.backward())}


def case_inplace_modified_exp_result_error(torch):
    a = leaf(torch, A3)
    b = a.exp()
    b.add_(1)
    return {"b": info(b), "error": outcome(lambda: b.sum().backward())}


def case_inplace_modified_leaf_input_error(torch):
    a = leaf(torch, A3)
    c = torch.ones(3)
    y = a * c
    c.add_(1)
    return {"error": outcome(lambda: y.sum().backward())}


def case_inplace_twice_version_in_error(torch):
    a = leaf(torch, [[1.0, 2.0], [3.0, 4.0]])
    b = a.sigmoid()
    y = b * 3
    b.mul_(2)
    b.mul_(2)
    b.add_(1)
    return {"error": outcome(lambda: y.sum().backward()), "y": info(y)}


def case_inplace_accepted_when_not_saved(torch):
    a = leaf(torch, A3)
    b = a + 2
    c = b + 1
    b.add_(1)
    c.sum().backward()
    return {"b": info(b), "c": info(c), "grad": gval(a.grad)}


def case_inplace_on_leaf_requires_grad_error(torch):
    a = leaf(torch, A3)
    return {
        "add_": outcome(lambda: a.add_(1)),
        "iadd": outcome(lambda: a.__iadd__(1)),
        "zero_": outcome(lambda: a.zero_()),
        "a": info(a),
    }


def case_inplace_on_view_of_leaf_error(torch):
    a = leaf(torch, A3)
    return {
        "slice_add_": outcome(lambda: a[1:].add_(1)),
        "setitem": outcome(lambda: a.__setitem__(0, 1.0)),
        "a": info(a),
    }


def case_seed_leaf_setitem_then_loss(torch):
    # seed (an old torch printed CopySlices here); torch 2.13 refuses the in-place edit.
    a = leaf(torch, [10.0, 5.0, 2.0, 3.0])

    def edit():
        a[:] = 0
        a.add_(10.0)

    err = outcome(edit)
    loss3 = (a * a).mean()
    loss3.backward()
    return {"error": err, "a": info(a), "grad": gval(a.grad), "repr": repr(a)}


def case_inplace_on_view_of_non_leaf(torch):
    a = leaf(torch, A3)
    b = a * 2
    v = b[1:]
    v.mul_(3)
    obs = {"b": info(b), "v": info(v)}
    b.backward(upstream(torch, b))
    obs["grad"] = gval(a.grad)
    return obs


def case_inplace_view_then_use_view(torch):
    a = leaf(torch, [[1.0, 2.0], [3.0, 4.0]])
    b = a + 0
    row = b[0]
    row.add_(torch.tensor([10.0, 20.0]))
    (row * 2).sum().backward()
    return {"row": info(row), "b_fn": fn_name(b.grad_fn), "grad": gval(a.grad)}


def case_inplace_under_no_grad_on_non_leaf(torch):
    a = leaf(torch, A3)
    b = a * 2
    with torch.no_grad():
        b.add_(1)
    b.backward(upstream(torch, b))
    return {"b": info(b), "grad": gval(a.grad)}


# ----- nn, functional, optim ----------------------------------------------------------------


def _linear(torch, in_f, out_f, weight, bias):
    lin = torch.nn.Linear(in_f, out_f)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(weight))
        lin.bias.copy_(torch.tensor(bias))
    return lin


W23 = [[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]]


def case_nn_parameter(torch):
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    q = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    return {
        "p": info(p),
        "isinstance_tensor": isinstance(p, torch.Tensor),
        "isinstance_param": isinstance(p, torch.nn.Parameter),
        "type": type(p).__name__,
        "repr": repr(p),
        "q_requires_grad": q.requires_grad,
        "op_result_type": type(p * 2).__name__,
    }


def case_nn_linear_forward_backward(torch):
    lin = _linear(torch, 3, 2, W23, [0.1, -0.2])
    x = torch.tensor(M23)
    y = lin(x)
    weight = lin.weight
    obs = {
        "y": info(y),
        # value and flags only: the weight's _version counts torch's in-place initialisers.
        "weight": [val(weight), weight.requires_grad, weight.is_leaf, weight.grad_fn],
        "shapes": [_shape(lin.weight), _shape(lin.bias)],
    }
    y.sum().backward()
    obs["grads"] = [gval(lin.weight.grad), gval(lin.bias.grad)]
    return obs


def case_nn_linear_1d_input(torch):
    lin = _linear(torch, 3, 2, W23, [0.1, -0.2])
    y = lin(torch.tensor(A3))
    y.backward(torch.tensor([1.0, 2.0]))
    return {"y": info(y), "grads": [gval(lin.weight.grad), gval(lin.bias.grad)]}


def case_nn_linear_no_bias(torch):
    lin = torch.nn.Linear(3, 2, bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(W23))
    y = lin(torch.tensor(M23))
    return {"y": info(y), "bias": lin.bias, "n_params": len(list(lin.parameters()))}


def case_nn_parameters_is_generator_seed(torch):
    class MyLinear(torch.nn.Module):
        def __init__(self, in_features, out_features):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(in_features, out_features))
            self.bias = torch.nn.Parameter(torch.zeros(out_features))

        def forward(self, inp):
            return (inp @ self.weight) + self.bias

    my = MyLinear(3, 4)
    params = my.parameters()
    return {
        "type": type(params).__name__,
        "len_error": outcome(lambda: len(params)),
        "count": len(list(my.parameters())),
        "names": [n for n, _ in my.named_parameters()],
        "out": info(my(torch.ones(2, 3))),
    }


def case_nn_module_registration_and_children(torch):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(3, 4)
            self.fc2 = torch.nn.Linear(4, 2)
            self.scale = torch.nn.Parameter(torch.tensor(2.0))
            self.not_a_param = torch.ones(2)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x))) * self.scale

    net = Net()
    return {
        "named": [(n, _shape(p)) for n, p in net.named_parameters()],
        "children": [type(c).__name__ for c in net.children()],
        "n_params": sum(p.numel() for p in net.parameters()),
        "all_leaves": all(p.is_leaf and p.requires_grad for p in net.parameters()),
    }


def case_nn_module_call_and_zero_grad(torch):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = _linear(torch, 3, 2, W23, [0.1, -0.2])

        def forward(self, x):
            return torch.tanh(self.fc(x))

    net = Net()
    out = net(torch.tensor(M23))
    out.sum().backward()
    before = [gval(p.grad) for p in net.parameters()]
    net.zero_grad()
    return {"out": info(out), "before": before, "after": [p.grad for p in net.parameters()]}


def case_nn_functional_activations(torch):
    F = torch.nn.functional
    x = leaf(torch, [-1.5, 0.0, 2.0])
    outs = [F.relu(x), F.tanh(x), F.sigmoid(x)]
    sum(o.sum() for o in outs).backward()
    return {"outs": [info(o) for o in outs], "grad": gval(x.grad)}


def case_nn_functional_linear(torch):
    F = torch.nn.functional
    x = leaf(torch, M23)
    w = leaf(torch, W23)
    b = leaf(torch, [0.1, -0.2])
    return run_op(torch, lambda x_, w_, b_: F.linear(x_, w_, b_), x, w, b)


def case_nn_functional_linear_no_bias(torch):
    F = torch.nn.functional
    return run_op(torch, lambda x_, w_: F.linear(x_, w_), leaf(torch, M23), leaf(torch, W23))


def case_nn_mse_loss(torch):
    F = torch.nn.functional
    x = leaf(torch, M23)
    y = torch.tensor(P23)
    return run_op(torch, lambda x_: F.mse_loss(x_, y), x)


def case_nn_mse_loss_reductions(torch):
    F = torch.nn.functional
    x = leaf(torch, A3)
    y = torch.tensor(B3)
    return {"sum": info(F.mse_loss(x, y, reduction="sum")),
            "none": info(F.mse_loss(x, y, reduction="none"))}


def case_nn_cross_entropy(torch):
    F = torch.nn.functional
    logits = leaf(torch, [[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]])
    target = torch.tensor([0, 2])
    return run_op(torch, lambda x: F.cross_entropy(x, target), logits)


def case_sgd_three_steps(torch):
    lin = _linear(torch, 3, 2, W23, [0.1, -0.2])
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    start = [p._version for p in lin.parameters()]
    x = torch.tensor(M23)
    y = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(lin(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {
        "losses": losses,
        "weight": val(lin.weight),
        "bias": val(lin.bias),
        "flags": [(p.requires_grad, p.is_leaf, p.grad_fn) for p in lin.parameters()],
        "versions_bumped_by_steps": [p._version - v for p, v in zip(lin.parameters(), start)],
        "grads": [gval(lin.weight.grad), gval(lin.bias.grad)],
    }


def case_sgd_momentum_three_steps(torch):
    lin = _linear(torch, 3, 2, W23, [0.1, -0.2])
    opt = torch.optim.SGD(lin.parameters(), lr=0.05, momentum=0.9)
    x = torch.tensor(M23)
    y = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(lin(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "weight": val(lin.weight), "bias": val(lin.bias)}


def case_sgd_zero_grad_sets_none(torch):
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = torch.optim.SGD([w], lr=0.5)
    (w * w).sum().backward()
    opt.step()
    stepped = info(w)
    opt.zero_grad()
    return {"w": stepped, "grad_after_zero_grad": w.grad}


# ----- Custom autograd.Function ----------------------------------------------------------------


def case_custom_function_basic(torch):
    class MySquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    a = leaf(torch, A3)
    y = MySquare.apply(a)
    obs = {"y": info(y)}
    y.backward(upstream(torch, y))
    obs["grad"] = gval(a.grad)
    return obs


def case_custom_function_needs_input_grad(torch):
    seen = []

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            seen.append(("forward", tuple(ctx.needs_input_grad), torch.is_grad_enabled()))
            ctx.save_for_backward(x, y)
            ctx.k = k
            return x * y * k

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            seen.append(("backward", tuple(ctx.needs_input_grad)))
            gx = grad * y * ctx.k if ctx.needs_input_grad[0] else None
            gy = grad * x * ctx.k if ctx.needs_input_grad[1] else None
            return gx, gy, None

    a = leaf(torch, A3)
    b = leaf(torch, B3, rg=False)
    out = Scale.apply(a, b, 3.0)
    out.sum().backward()
    return {"seen": seen, "out": info(out), "grads": [gval(a.grad), gval(b.grad)]}


def case_custom_function_two_inputs_graph(torch):
    class MulAdd(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y + x

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * (y + 1), grad * x

    a = leaf(torch, A3)
    b = leaf(torch, B3)
    out = MulAdd.apply(a.exp(), b)
    out.sum().backward()
    return {"out": info(out), "grads": [gval(a.grad), gval(b.grad)]}


def case_custom_function_mark_dirty(torch):
    class AddOneInplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    a = leaf(torch, A3)
    b = a.clone()
    c = AddOneInplace.apply(b)
    obs = {"same_object": c is b, "b": info(b)}
    (c * 2).sum().backward()
    obs["grad"] = gval(a.grad)
    return obs


def case_custom_function_no_grad_inputs(torch):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    y = Double.apply(torch.tensor(A3))
    return {"y": info(y)}


def case_custom_function_wrong_backward_count_error(torch):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad):
            return grad

    a = leaf(torch, A3)
    b = leaf(torch, B3)
    out = Bad.apply(a, b)
    return {"error": outcome(lambda: out.sum().backward())}


# ----- Anomaly mode, gradcheck ----------------------------------------------------------------


def case_anomaly_nan_error(torch):
    x = leaf(torch, [0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            enabled = torch.is_anomaly_enabled()
            y = (x.sqrt() * 0).sum()
            err = outcome(lambda: y.backward())
    return {"enabled_inside": enabled, "enabled_after": torch.is_anomaly_enabled(),
            "error": err}


def case_anomaly_set_detect_anomaly_function(torch):
    x = leaf(torch, [0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.autograd.set_detect_anomaly(True)
            enabled = torch.is_anomaly_enabled()
            y = (x.log() * 0).sum()
            err = outcome(lambda: y.backward())
        finally:
            torch.autograd.set_detect_anomaly(False)
    return {"enabled": enabled, "after": torch.is_anomaly_enabled(), "error": err}


def case_anomaly_check_nan_false(torch):
    x = leaf(torch, [0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly(check_nan=False):
            y = (x.sqrt() * 0).sum()
            y.backward()
    return {"grad": gval(x.grad)}


def case_nan_without_anomaly_mode(torch):
    x = leaf(torch, [0.0, 1.0])
    (x.sqrt() * 0).sum().backward()
    return {"grad": gval(x.grad), "enabled": torch.is_anomaly_enabled()}


def case_gradcheck_true(torch):
    x = leaf(torch, [[0.5, -1.0], [2.0, 0.25]], dtype=torch.float64)
    w = leaf(torch, [1.5, -0.5], dtype=torch.float64)

    def f(a, b):
        return (a.tanh() @ b).exp() + a.sum(1) ** 2

    return {"result": torch.autograd.gradcheck(f, (x, w), eps=1e-6, atol=1e-4)}


def case_gradcheck_wrong_backward_false(torch):
    class WrongSin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.sin()

    x = leaf(torch, [0.5, 1.0], dtype=torch.float64)
    return {"result": torch.autograd.gradcheck(WrongSin.apply, (x,), raise_exception=False)}


# ----- Printed form ------------------------------------------------------------------------------


def case_repr_leaf_requires_grad(torch):
    return {
        "ones_2x2": repr(torch.ones(2, 2, requires_grad=True)),
        "vector": repr(torch.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)),
        "zeros_3x4_seed": repr(torch.zeros(3, 4).requires_grad_()),
    }


def case_repr_grad_fn(torch):
    a = leaf(torch, 2.0)
    b = leaf(torch, [1.0, 2.0])
    return {
        "exp_seed": repr(a.exp()),
        "mul": repr(b * 2),
        "sum": repr((b * 3).sum()),
        "neg": repr(-b),
        "str": str(b + 1),
    }


def case_repr_plain_values(torch):
    return {
        "float_vec": repr(torch.tensor([1.0, 2.5, -3.0])),
        "int_vec": repr(torch.tensor([1, 2, 3])),
        "int_matrix": repr(torch.arange(6).reshape(2, 3)),
        "int_0d": repr(torch.tensor(3)),
        "float_0d": repr(torch.tensor(1.5)),
        "bool": repr(torch.tensor([True, False])),
        "float64": repr(torch.tensor([1.0, 2.0], dtype=torch.float64)),
        "float64_0d": repr(torch.tensor(0.5, dtype=torch.float64)),
        "empty": repr(torch.tensor([])),
        "rounding": repr(torch.tensor([0.1, 0.25, 1.0 / 3.0])),
        "negative_matrix": repr(torch.tensor(M23)),
    }


def case_repr_scientific_and_special(torch):
    return {
        "small": repr(torch.tensor([1e-5, 1.0])),
        "large": repr(torch.tensor([1e8, 1.0])),
        "seed_like": repr(torch.tensor([[0.51295, 0.018462], [1.4914e-05, 3.6454]])),
        "nan_inf": repr(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])),
        "big_ints": repr(torch.tensor([123456789, -2])),
        "float64_sci": repr(torch.tensor([1e-10, 1.0], dtype=torch.float64)),
    }


def case_repr_summarized(torch):
    return {
        "long_vec": repr(torch.arange(2000.0)),
        "long_int_vec": repr(torch.arange(1500)),
        "big_matrix": repr(torch.arange(2000.0).reshape(40, 50)),
    }


def case_repr_3d(torch):
    return {"r": repr(torch.arange(12.0).reshape(2, 2, 3) - 5)}


def case_repr_grad_and_seed_y(torch):
    a = torch.ones(3, 4, requires_grad=True)
    (a * 2).sum().backward()
    return {"grad": repr(a.grad), "data": repr(a.data), "detach": repr((a * 2).detach())}


def case_size_repr_and_api(torch):
    a = torch.ones(3, 4)
    s = a.shape
    return {
        "repr": repr(s),
        "str": str(s),
        "size_repr": repr(a.size()),
        "empty": repr(torch.tensor(2.0).shape),
        "eq_tuple": s == (3, 4),
        "isinstance_tuple": isinstance(s, tuple),
        "index": [s[0], s[-1], a.size(1), a.size(-2)],
        "len": len(s),
        "types": [type(x).__name__ for x in s],
        "type_name": type(s).__name__,
    }


# ----- Tensor basics and creation -------------------------------------------------------------


def case_tensor_basic_api(torch):
    a = torch.tensor(M23)
    s = torch.tensor(2.5)
    return {
        "dim": [a.dim(), s.dim()],
        "numel": [a.numel(), s.numel()],
        "len": len(a),
        "item": [s.item(), type(s.item()).__name__],
        "int_item": [torch.tensor(7).item(), type(torch.tensor(7).item()).__name__],
        "bool_item": type(torch.tensor(True).item()).__name__,
        "tolist": a.tolist(),
        "tolist_0d": s.tolist(),
        "tolist_int": torch.tensor([1, 2]).tolist(),
        "float": float(s),
        "int": int(torch.tensor(3.7)),
        "bool": [bool(torch.tensor(1.0)), bool(torch.tensor(0.0))],
        "numpy_type": type(a.numpy()).__name__,
        "numpy_list": a.numpy().tolist(),
    }


def case_tensor_numpy_shares_memory(torch):
    a = torch.zeros(3)
    n = a.numpy()
    n[0] = 5.0
    a[1] = 2.0
    return {"a": val(a), "n": n.tolist()}


def case_tensor_numpy_requires_grad_error(torch):
    a = leaf(torch, A3)
    return {"error": outcome(lambda: a.numpy()), "detached": a.detach().numpy().tolist()}


def case_bool_of_multi_element_error(torch):
    return {"error": outcome(lambda: bool(torch.tensor([1.0, 2.0])))}


def case_item_of_multi_element_error(torch):
    return {"error": outcome(lambda: torch.tensor([1.0, 2.0]).item())}


def case_len_of_0d_error(torch):
    return {"error": outcome(lambda: len(torch.tensor(1.0)))}


def case_view_size_error(torch):
    return {"error": outcome(lambda: torch.ones(2, 3).view(4, 2))}


def case_matmul_shape_error(torch):
    return {"error": outcome(lambda: torch.ones(2, 3) @ torch.ones(2, 3))}


def case_broadcast_shape_error(torch):
    return {"error": outcome(lambda: torch.ones(2, 3) + torch.ones(2))}


def case_creation_functions(torch):
    return {
        "zeros": val(torch.zeros(2, 3)),
        "zeros_tuple": val(torch.zeros((2, 1))),
        "ones": val(torch.ones(3)),
        "full": val(torch.full((2, 2), 7.0)),
        "full_int": val(torch.full((2,), 3)),
        "arange": [val(torch.arange(5)), val(torch.arange(1, 4)), val(torch.arange(0, 1, 0.25))],
        "linspace": val(torch.linspace(0, 1, 5)),
        "eye": [val(torch.eye(3)), val(torch.eye(2, 3))],
        "empty_shape": [_shape(torch.empty(2, 3)), str(torch.empty(2).dtype)],
    }


def case_creation_like_functions(torch):
    a = torch.tensor([[1, 2], [3, 4]])
    b = torch.tensor([1.0, 2.0], dtype=torch.float64)
    return {
        "ones_like": val(torch.ones_like(a)),
        "zeros_like": val(torch.zeros_like(b)),
        "full_like": val(torch.full_like(b, 2.5)),
        "ones_like_rg": info(torch.ones_like(b, requires_grad=True)),
        "zeros_like_dtype": val(torch.zeros_like(a, dtype=torch.float32)),
    }


def case_creation_requires_grad_kwargs(torch):
    ts = [
        torch.zeros(2, requires_grad=True),
        torch.full((2,), 1.5, requires_grad=True),
        torch.arange(3.0, requires_grad=True),
        torch.linspace(0, 1, 3, requires_grad=True),
        torch.eye(2, requires_grad=True),
        torch.rand(2, requires_grad=True),
    ]
    return {"flags": [(t.requires_grad, t.is_leaf, str(t.dtype)) for t in ts]}


def case_random_creation_shapes_and_dtypes(torch):
    torch.manual_seed(0)
    r = torch.rand(3, 4)
    n = torch.randn(2, 3, dtype=torch.float64)
    i = torch.randint(0, 5, (10,))
    i2 = torch.randint(3, (4,))
    return {
        "shapes": [_shape(r), _shape(n), _shape(i), _shape(i2)],
        "dtypes": [str(r.dtype), str(n.dtype), str(i.dtype), str(i2.dtype)],
        "rand_in_range": all(0.0 <= v < 1.0 for v in r.flatten().tolist()),
        "randint_values": [set(i.tolist()) <= {0, 1, 2, 3, 4},
                           all(0 <= v < 3 for v in i2.tolist())],
    }


def case_manual_seed_reproducible(torch):
    torch.manual_seed(123)
    a = torch.rand(4).tolist()
    torch.manual_seed(123)
    b = torch.rand(4).tolist()
    return {"same": a == b}


# ----- More edges: contiguity, scalars, printing of modules ------------------------------------


def case_pow_tensor_exponent_zero_and_negative_base(torch):
    # d(a**b)/db = a**b * log(a): torch masks base 0 to 0 and gives nan for a negative base.
    return run_op(torch, lambda a, b: a ** b, leaf(torch, [0.0, 2.0, -1.0]),
                  leaf(torch, [2.0, 3.0, 2.0]))


def case_reshape_of_transpose_copies(torch):
    return run_op(torch, lambda a: a.t().reshape(-1), leaf(torch, M23))


def case_view_of_transpose_error(torch):
    a = leaf(torch, M23)
    return {"error": outcome(lambda: a.t().view(-1))}


def case_expand_0d(torch):
    return run_op(torch, lambda a: a.expand(3), leaf(torch, 3.0))


def case_sum_tuple_dims(torch):
    a = leaf(torch, [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    return run_op(torch, lambda x: x.sum((0, 2)), a)


def case_mean_0d(torch):
    return run_op(torch, lambda a: a.mean(), leaf(torch, 4.0))


def case_prod_with_two_zeros(torch):
    return run_op(torch, lambda a: a.prod(), leaf(torch, [0.0, 2.0, 0.0]))


def case_where_python_scalar_branch(torch):
    a = leaf(torch, M23)
    return run_op(torch, lambda x: torch.where(x > 2, x, 0.0), a)


def case_torch_max_min_two_tensors(torch):
    a = leaf(torch, [1.0, 5.0, 3.0])
    b = leaf(torch, [4.0, 2.0, 3.0])
    return run_multi(torch, lambda x, y: [torch.max(x, y), torch.min(x, y)], a, b)


def case_sub_and_div_by_0d_tensor(torch):
    a = leaf(torch, M23)
    s = leaf(torch, 2.0)
    return run_multi(torch, lambda x, y: [x - y, x / y, y / x], a, s)


def case_softmax_large_values_stable(torch):
    return run_op(torch, lambda a: a.softmax(-1), leaf(torch, [[1000.0, 1001.0, 999.0]]))


def case_backward_on_scalar_leaf(torch):
    x = leaf(torch, 2.0)
    x.backward()
    return {"grad": gval(x.grad)}


def case_requires_grad_true_method_on_non_leaf(torch):
    a = leaf(torch, A3)
    b = a * 1
    return {"method_true": outcome(lambda: b.requires_grad_(True) is b), "b": info(b)}


def case_no_grad_bare_decorator(torch):
    @torch.no_grad
    def f(t):
        return t * 2

    return {"y": info(f(leaf(torch, A3)))}


def case_autograd_backward_function(torch):
    a = leaf(torch, A3)
    b = leaf(torch, B3)
    y1 = a * b
    y2 = (a ** 2).sum()
    torch.autograd.backward([y1, y2], [torch.tensor([1.0, 0.5, 2.0]), torch.tensor(1.0)])
    return {"a": gval(a.grad), "b": gval(b.grad)}


def case_manual_grad_zero(torch):
    w = leaf(torch, [1.0, 2.0])
    (w * w).sum().backward()
    w.grad.zero_()
    zeroed = gval(w.grad)
    (w * 3).sum().backward()
    return {"zeroed": zeroed, "after": gval(w.grad)}


def case_zero_grad_set_to_none_false(torch):
    lin = _linear(torch, 3, 2, W23, [0.1, -0.2])
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    lin(torch.tensor(M23)).sum().backward()
    opt.zero_grad(set_to_none=False)
    after_opt = [gval(p.grad) for p in lin.parameters()]
    lin(torch.tensor(M23)).sum().backward()
    lin.zero_grad(set_to_none=False)
    return {"after_opt": after_opt, "after_module": [gval(p.grad) for p in lin.parameters()]}


def case_nn_module_repr(torch):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(3, 4)
            self.fc2 = torch.nn.Linear(4, 2, bias=False)

        def forward(self, x):
            return self.fc2(self.fc1(x))

    return {"linear": repr(torch.nn.Linear(3, 2)), "net": repr(Net())}


def case_custom_function_under_no_grad(torch):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    a = leaf(torch, A3)
    with torch.no_grad():
        y = Double.apply(a)
    return {"y": info(y)}


def case_repr_float64_with_autograd(torch):
    a = leaf(torch, [1.0, 2.0], dtype=torch.float64)
    return {"leaf": repr(a), "result": repr(a * 2), "sum": repr((a * 2).sum())}


def case_repr_number_formats(torch):
    samples = [[1000.0, 1.0], [10000.0, 1.0], [1.5, 100.25], [-0.0, 1.0], [1e-4, 1.0],
               [0.001, 1.0], [123.456, 0.5]]
    return {"reprs": [repr(torch.tensor(s)) for s in samples]}


def case_hook_firing_order_over_whole_graphs(torch):
    """Hooks on every tensor fire in torch's engine order, AccumulateGrad ties included."""
    order = []
    input = torch.ones([2, 2])
    w1 = torch.tensor(2.0, requires_grad=True)
    w2 = torch.tensor(3.0, requires_grad=True)
    w3 = torch.tensor(3.0, requires_grad=True)
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    named = {"w1": w1, "w2": w2, "w3": w3, "l1": l1, "l2": l2, "l3": l3, "l4": l4, "loss": loss}
    for n, t in named.items():
        t.register_hook(lambda g, n=n: order.append(n))
    loss.backward()
    x = torch.ones(3, requires_grad=True)
    y = torch.ones(3, requires_grad=True)
    z = (x * 2 + y * 3 + x * y).sum()
    x.register_hook(lambda g: order.append("x"))
    y.register_hook(lambda g: order.append("y"))
    z.backward()
    return {"order": order}
