"""More differential checks against torch 2.13, grouped by what they pin down: how matmul
composes (fold, squeeze, expand), how indexing and assignment record views, custom Functions,
dtype promotion, and the first sentence of the errors of shape and dtype mistakes.

Each case runs on both backends; the observables (values, dtypes, grads, graph shapes, versions,
whether the result is a view, error types and first sentences) must be equal.
"""

import itertools
import warnings

import pytest

try:
    from . import diffcases as D
    from .test_torch_diff import compare
except ImportError:
    import diffcases as D
    from test_torch_diff import compare

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def observe(t):
    """The autograd-visible state of a tensor, or of each item of a list/tuple."""
    if isinstance(t, (list, tuple)):
        return [observe(x) for x in t]
    if not hasattr(t, "grad_fn"):
        return t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = t.grad
    return {"value": D.val(t), "requires_grad": t.requires_grad, "is_leaf": t.is_leaf,
            "graph": D.graph(t.grad_fn), "version": t._version, "is_view": t._base is not None,
            "grad": D.gval(g)}


def run(fn, backend):
    try:
        return observe(fn(backend))
    except Exception as exc:  # noqa: BLE001 - the error is the observable
        return D.Err(exc)


def check(fn):
    problems = compare(run(fn, torch), run(fn, gradviz))
    assert not problems, "\n".join(problems)


def _upstream(t, out):
    n = out.numel()
    return (t.arange(1, n + 1, dtype=out.dtype) * 0.5).reshape(out.shape)


# ----- matmul: which of dot / mv / mm / bmm, folded or expanded, as torch composes it -------

def _mat(t, shape, rg):
    n = 1
    for s in shape:
        n *= s
    x = (t.arange(n, dtype=t.float32) * 0.5 - 1).reshape(shape)
    return x.detach().requires_grad_(rg)


LEFT = {1: (3,), 2: (2, 3), 3: (2, 2, 3), 4: (2, 1, 2, 3)}
RIGHT = {1: (3,), 2: (3, 2), 3: (2, 3, 2), 4: (1, 2, 3, 2)}
RG = [(True, True), (True, False), (False, True), (False, False)]


@pytest.mark.parametrize("da,db,rg", [(a, b, r) for a, b in itertools.product(LEFT, RIGHT)
                                      for r in RG])
def test_matmul_composition(da, db, rg):
    def case(t):
        a, b = _mat(t, LEFT[da], rg[0]), _mat(t, RIGHT[db], rg[1])
        out = a @ b
        if out.requires_grad:
            out.backward(_upstream(t, out))
        return [out, a, b]
    check(case)


@pytest.mark.parametrize("sa,sb", [((3, 2, 4), (1, 4, 5)), ((1, 2, 4), (3, 4, 5)),
                                   ((3, 2, 4), (1, 1, 4, 5)), ((2, 1, 2, 4), (1, 4, 5)),
                                   ((1, 3, 2, 4), (3, 1, 4, 5)), ((4,), (1, 4, 5)),
                                   ((2, 4), (1, 4, 5)), ((1, 1, 2, 4), (4, 5))])
@pytest.mark.parametrize("rg", RG[:3])
def test_matmul_batch_of_one_and_broadcast(sa, sb, rg):
    def case(t):
        a, b = _mat(t, sa, rg[0]), _mat(t, sb, rg[1])
        out = a @ b
        out.backward(_upstream(t, out))
        return [out, a, b]
    check(case)


def test_matmul_non_contiguous_folds_only_when_free():
    def case(t):
        a = t.arange(12, dtype=t.float32).reshape(3, 2, 2).transpose(0, 1)
        return [a @ t.ones(2, 3), a @ t.ones(2), a.requires_grad_() @ t.ones(2, 3)]
    check(case)


@pytest.mark.parametrize("shapes", [((3, 2, 4), (2, 3, 5)), ((3, 2, 4), (3, 3, 5)),
                                    ((2, 4), (3, 5)), ((4,), (3, 5)), ((4,), (3,)),
                                    ((2, 4), (3,))])
def test_matmul_shape_errors(shapes):
    check(lambda t: t.ones(*shapes[0]) @ t.ones(*shapes[1]))


@pytest.mark.parametrize("call", [
    lambda t: t.bmm(t.ones(2, 3), t.ones(2, 3, 3)),
    lambda t: t.bmm(t.ones(2, 2, 3), t.ones(3, 3, 3)),
    lambda t: t.mm(t.ones(2, 3), t.ones(2, 3, 3)),
    lambda t: t.mm(t.ones(2, 2, dtype=t.int64), t.ones(2, 2)),
    lambda t: t.mv(t.ones(2, 2, dtype=t.int64), t.ones(2)),
    lambda t: t.bmm(t.ones(1, 2, 2, dtype=t.int64), t.ones(1, 2, 2)),
    lambda t: t.ones(2, dtype=t.float64) @ t.ones(2),
    lambda t: t.addmm(t.ones(2, 2), t.ones(2, 2, dtype=t.float64), t.ones(2, 2)),
])
def test_matrix_product_errors(call):
    check(call)


# ----- indexing: views for the basic parts, IndexBackward0 for the rest --------------------

KEYS = {
    "int": 0, "neg": -1, "slice": slice(1, None), "full": slice(None), "ellipsis": Ellipsis,
    "none": None, "int_slice": (0, slice(None)), "slice_int": (slice(None), 1),
    "full_full": (slice(None), slice(None)), "ellipsis_int": (Ellipsis, 0), "list": [0, 1],
    "int_list": (0, [0, 2]), "mask": "mask", "none_int": (None, 0), "step": slice(None, None, 2),
    "true": True, "false": False, "list_list": ([0, 1], [1, 2]),
    "slice_list": (slice(None), [0, 2]),
    "int_tensor": "int_tensor", "zero_d_tensor": "zero_d_tensor", "neg_full": slice(-2, None),
    "empty": slice(2, 1), "out_of_range": 5, "ellipsis_none": (Ellipsis, None),
    "list_out_of_range": [0, 5], "float": 1.5, "mask_wrong_shape": "mask_wrong_shape",
    "neg_full_full": (slice(-2, None), slice(None)), "zero_to_big": (slice(0, 5), 1),
}


def _key(t, key, x):
    if not isinstance(key, str):
        return key
    return {"mask": x.detach() < 0, "int_tensor": t.tensor([1, 0]), "zero_d_tensor": t.tensor(1),
            "mask_wrong_shape": t.tensor([True, False, True])}[key]


@pytest.mark.parametrize("name", sorted(KEYS))
def test_getitem_records_like_torch(name):
    def case(t):
        a = t.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True)
        out = a[_key(t, KEYS[name], a)]
        if out.numel():
            out.backward(_upstream(t, out))
        return [out, a]
    check(case)


VALUES = ["scalar", "zero_d", "vector", "vector_requiring_grad"]


def _value(t, kind):
    return {"scalar": 5.0, "zero_d": t.tensor(7.0), "vector": t.tensor([7.0, 8.0, 9.0]),
            "vector_requiring_grad": t.tensor([7.0, 8.0, 9.0], requires_grad=True)}[kind]


@pytest.mark.parametrize("name,value", [(k, v) for k in sorted(KEYS) for v in VALUES
                                        if k not in ("float", "out_of_range")])
def test_setitem_records_like_torch(name, value):
    def case(t):
        a = t.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True)
        b = a * 1
        w = _value(t, value)
        v = w * 1 if value == "vector_requiring_grad" else w
        b[_key(t, KEYS[name], b)] = v
        b.backward(_upstream(t, b))
        return [b, a] + ([w] if value == "vector_requiring_grad" else [])
    check(case)


@pytest.mark.parametrize("name", sorted(KEYS))
def test_setitem_on_a_leaf_names_leaf_or_view(name):
    def case(t):
        a = t.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], requires_grad=True)
        a[_key(t, KEYS[name], a)] = 1.0
        return [a]
    check(case)


# ----- custom Functions -------------------------------------------------------------------

def _functions(t):
    F = t.autograd.Function

    class Dirty(F):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Two(F):
        @staticmethod
        def forward(ctx, x, y):
            return x + y, x * y

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + g2, g1 - g2

    class Ident(F):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Sq(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class Wrong(F):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    class Shape(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return t.ones(1, 2, dtype=t.float64)

    return {"Dirty": Dirty, "Two": Two, "Ident": Ident, "Sq": Sq, "Wrong": Wrong,
            "Shape": Shape}


def test_custom_function_mark_dirty_on_a_view():
    def case(t):
        a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.clone()
        v = b[1:]
        r = _functions(t)["Dirty"].apply(v)
        b.backward(_upstream(t, b))
        return [r, v, b, a, r is v]
    check(case)


def test_custom_function_mark_dirty_without_grad_still_counts():
    def case(t):
        b = t.ones(2)
        c = _functions(t)["Dirty"].apply(b)
        return [c, b, c is b]
    check(case)


def test_custom_function_mark_dirty_on_a_leaf_is_refused():
    check(lambda t: _functions(t)["Dirty"].apply(t.ones(2, requires_grad=True)))


def test_custom_function_two_outputs_and_identity():
    def case(t):
        fs = _functions(t)
        a = t.tensor([1.0, 2.0], requires_grad=True)
        b = t.tensor([3.0, 4.0], requires_grad=True)
        s, p = fs["Two"].apply(a, b)
        i = fs["Ident"].apply(a)
        (s * 2 + p + i).sum().backward()
        return [s, p, i, a, b, i is a]
    check(case)


def test_custom_function_errors_and_fitting():
    def case(t):
        fs = _functions(t)
        out = {}
        x = t.ones(2, requires_grad=True)
        out["non_tensor_grad"] = D.outcome(lambda: fs["Wrong"].apply(x, 2.0).sum().backward())
        y = t.ones(2, requires_grad=True)
        fs["Shape"].apply(y).sum().backward()
        out["fitted"] = observe(y)
        z = t.ones(3, requires_grad=True) * 2
        sq = fs["Sq"].apply(z)
        z.add_(1)
        out["modified"] = D.outcome(lambda: sq.sum().backward())
        return out
    assert not compare(case(torch), case(gradviz))


# ----- ops, dtypes and their errors --------------------------------------------------------

def _t(t, data, rg=True, dtype=None):
    return t.tensor(data, requires_grad=rg, dtype=dtype)


M = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]
I = [[1, -2, 3], [0, 4, -1]]

OPS = {
    "sign": lambda t: _t(t, M).sign(),
    "floor": lambda t: _t(t, M).floor(),
    "round": lambda t: _t(t, M).round(),
    "round_decimals": lambda t: _t(t, M).round(decimals=1),
    "ceil": lambda t: _t(t, M).ceil(),
    "trunc": lambda t: _t(t, M).trunc(),
    "outer": lambda t: t.outer(_t(t, M)[0], _t(t, M)[1]),
    "addmm_alpha_beta": lambda t: t.addmm(t.ones(2, 2), _t(t, M), _t(t, M).t(), beta=0.5,
                                          alpha=2),
    "add_alpha_same_tensor": lambda t: (lambda x: x.add(x, alpha=2))(_t(t, M)),
    "sub_alpha": lambda t: _t(t, M).sub(t.ones(3), alpha=3),
    "div_floor": lambda t: _t(t, M).div(2, rounding_mode="floor"),
    "floordiv": lambda t: _t(t, M) // 2,
    "remainder": lambda t: _t(t, M) % 2,
    "remainder_tensor": lambda t: (lambda x: x % x.detach().abs())(_t(t, M)),
    "rremainder": lambda t: 5 % _t(t, M),
    "softmax_dtype": lambda t: _t(t, M).softmax(1, dtype=t.float64),
    "reshape_expanded": lambda t: _t(t, M)[:1].expand(2, 3).reshape(3, 2),
    "reshape_transposed_same": lambda t: _t(t, M).t().reshape(3, 2),
    "reshape_transposed_copy": lambda t: _t(t, M).t().reshape(6),
    "squeeze_dims": lambda t: _t(t, [[[1.0], [2.0]]]).squeeze((0, 2)),
    "sum_0d_dim": lambda t: _t(t, 1.0).sum(0),
    "mean_0d_dim": lambda t: _t(t, 1.0).mean(-1),
    "max_0d_dim": lambda t: _t(t, 1.0).max(0)[0],
    "pow_zero_base": lambda t: _t(t, [0.0, 0.0, 2.0]) ** _t(t, [2.0, 0.0, -1.0]),
    "rpow_zero_base": lambda t: 0.0 ** _t(t, [2.0, 0.0, -1.0]),
    "int_div": lambda t: t.tensor(I) / t.tensor([2, 2, 2]),
    "int_div_0d": lambda t: t.tensor(3) / t.tensor(2),
    "int_plus_float_tensor": lambda t: t.tensor(I) + _t(t, [0.5, 1.5, 2.5]),
    "int_plus_half": lambda t: t.tensor(I) + t.ones(3, dtype=t.float16),
    "uint8_plus_int8": lambda t: t.tensor([1], dtype=t.uint8) + t.tensor([1], dtype=t.int8),
    "bool_plus_int8": lambda t: t.tensor([True]) + t.tensor([1], dtype=t.int8),
    "int_clamp_float": lambda t: t.tensor(I).clamp(0.5, 2),
    "int_rpow_negative": lambda t: 2 ** t.tensor([-2, -1, 0, 3]),
    "int_pow_tensor_negative": lambda t: t.tensor([2, 1, -1, 0]) ** t.tensor([-1, -2, -3, -1]),
    "int_floordiv": lambda t: t.tensor(I) // 2,
    "int_mod": lambda t: t.tensor(I) % 2,
    "int_rfloordiv": lambda t: 7 // t.tensor([2, -2]),
    "where_two_numbers": lambda t: t.where(t.tensor([True, False]), 1.0, 0.0),
    "where_two_ints": lambda t: t.where(t.tensor([True, False]), 1, 0),
    "cat_mixed_dtypes": lambda t: t.cat([_t(t, [1.0, 2.0]), _t(t, [3.0], dtype=t.float64)]),
    "stack_mixed_dtypes": lambda t: t.stack([_t(t, [1.0]), _t(t, [3.0], dtype=t.float64)]),
}

ERRORS = {
    "broadcast": lambda t: t.ones(4, 2, 3) * t.ones(5, 3),
    "broadcast_where": lambda t: t.where(t.ones(2, 2) > 0, t.ones(2, 3), t.ones(2, 3)),
    "broadcast_inplace": lambda t: t.ones(2, 3).add_(t.ones(4, 2, 3)),
    "broadcast_copy": lambda t: t.ones(2, 3).copy_(t.ones(2)),
    "cat_sizes": lambda t: t.cat([t.ones(2, 2), t.ones(1, 3)]),
    "cat_ndim": lambda t: t.cat([t.ones(2, 2), t.ones(3)]),
    "cat_0d": lambda t: t.cat([t.ones(2), t.tensor(1.0)]),
    "cat_empty": lambda t: t.cat([]),
    "stack_sizes": lambda t: t.stack([t.ones(2), t.ones(2, 1)]),
    "stack_empty": lambda t: t.stack([]),
    "permute_count": lambda t: t.ones(2, 2).permute(0),
    "permute_duplicate": lambda t: t.ones(2, 2).permute(0, 0),
    "select_range": lambda t: t.ones(2).select(0, -3),
    "narrow_start": lambda t: t.ones(2).narrow(0, 3, 0),
    "narrow_length": lambda t: t.ones(2).narrow(0, 1, 5),
    "index_0d": lambda t: t.tensor(1.0)[0],
    "mT_1d": lambda t: t.ones(2).mT,
    "neg_bool": lambda t: -t.tensor([True]),
    "sub_bools": lambda t: t.tensor([True]) - t.tensor([False]),
    "sub_bool_int": lambda t: t.tensor([True]) - 1,
    "rsub_bool": lambda t: 1 - t.tensor([True]),
    "int_alpha_float": lambda t: t.tensor([1, 2]).add(t.tensor([1, 2]), alpha=0.5),
    "int_softmax": lambda t: t.tensor([1, 2]).softmax(0),
    "int_log_softmax_dim0": lambda t: t.tensor([[1, 2]]).log_softmax(0),
    "int_floordiv_zero": lambda t: t.tensor([1, 2]) // 0,
    "int_negative_power": lambda t: t.tensor([1, 2]) ** -1,
    "randint_high_size": lambda t: list(t.randint(3, (4,)).shape),
    "inplace_on_leaf_row": lambda t: [r.add_(1) for r in t.ones(2, 2, requires_grad=True)],
    "inplace_on_row": lambda t: list(t.ones(2, 2, requires_grad=True) * 2)[1].mul_(2),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_matches_torch(name):
    def case(t):
        out = OPS[name](t)
        if out.requires_grad:
            out.backward(_upstream(t, out))
        return out
    check(case)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_matches_torch(name):
    check(ERRORS[name])


def test_transpose_property_warns_once_per_process():
    def case(t):
        outs = []
        for shape in [(2, 2), (2,), (), (1, 2, 2), (3,)]:
            _, got = D.caught_warnings(lambda: t.ones(shape).T)
            outs.append(got)
        return outs
    # Either backend may have warned already in this process (torch warns once): compare
    # only the warnings both still give, and that none repeats.
    ref, got = case(torch), case(gradviz)
    assert got[0] == [] and got[3] == [] and got[4] == []
    for r, g in zip(ref, got):
        if r and g:
            assert not compare(r, g)


def test_saved_python_numbers_read_back_as_tensors():
    def case(t):
        a = t.tensor([1.0, 2.0], requires_grad=True)
        y = (a * 1) * 2.5
        z = (a * 1) / 2
        w = (a * 1) * True
        return [y.grad_fn._saved_other, z.grad_fn._saved_other, w.grad_fn._saved_other,
                (a ** 2).grad_fn._saved_exponent, (2 ** a).grad_fn._saved_self]
    check(case)


def test_no_grad_and_inference_mode_as_bare_decorators():
    def case(t):
        @t.no_grad
        def f(x):
            return x * 2

        @t.inference_mode
        def g(x):
            return x * 2

        @t.enable_grad
        def h(x):
            return x * 2

        x = t.ones(2, requires_grad=True)
        with t.no_grad():
            inner = h(x)
        # (torch's inference tensors have no version counter: compare the flags only)
        return [f(x), g(x).requires_grad, inner]
    check(case)
