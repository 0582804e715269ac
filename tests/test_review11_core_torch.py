"""Answers that differed from torch 2.13, each compared with torch: nansum's gradient at NaN
elements under an inf or nan upstream gradient (first and second order)."""

import pytest

try:
    from .test_core_torch_extra import check
except ImportError:
    from test_core_torch_extra import check

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


# ----- nansum / nanmean: torch multiplies by the not-NaN mask (inf * 0 = nan) -------------

def _all_nan_row(t):
    return t.tensor([[1.0, NAN], [NAN, NAN]], requires_grad=True)


NAN_GRADS = {
    "nanmean_all_nan_row": lambda t, x: t.nanmean(x, 1).sum(),
    "nanmean_all_nan": lambda t, x: t.nanmean(x[1]),
    "nanmean_keepdim": lambda t, x: x.nanmean(1, keepdim=True).sum(),
    "nansum_inf_upstream": lambda t, x: (t.nansum(x, 1) * t.tensor([1.0, INF])).sum(),
    "nansum_nan_upstream": lambda t, x: (x.nansum(0) * t.tensor([NAN, 2.0])).sum(),
    "nansum_all_inf_upstream": lambda t, x: x.nansum() * INF,
}


@pytest.mark.parametrize("name", NAN_GRADS)
def test_nansum_gradient_multiplies_by_the_mask(name):
    def case(t):
        x = _all_nan_row(t)
        out = NAN_GRADS[name](t, x)
        out.backward()
        return [out, x]
    check(case)


@pytest.mark.parametrize("name", NAN_GRADS)
def test_nansum_second_order(name):
    def case(t):
        x = _all_nan_row(t)
        out = NAN_GRADS[name](t, x)
        (g,) = t.autograd.grad(out, x, create_graph=True)
        y = t.tensor([[2.0, 3.0], [4.0, 5.0]], requires_grad=True)
        h = (g * y).sum()
        h.backward()
        return [g, h, x, y]
    check(case)


# ----- grad-mode decorators on generator functions: the mode holds at each resume ---------

DECORATORS = {
    "no_grad": lambda t: t.no_grad(),
    "no_grad_bare": lambda t: t.no_grad,
    "enable_grad": lambda t: t.enable_grad(),
    "set_grad_enabled_false": lambda t: t.set_grad_enabled(False),
    "set_grad_enabled_true": lambda t: t.set_grad_enabled(True),
    "inference_mode": lambda t: t.inference_mode(),
    "inference_mode_false": lambda t: t.inference_mode(False),
}


def _modes(t):
    return (t.is_grad_enabled(), t.is_inference_mode_enabled())


def _generator(t, decorator, log):
    """A generator decorated with the mode: it logs the modes at each resume and what it was
    sent or thrown, and returns a value."""
    x = t.ones(2, requires_grad=True)

    @DECORATORS[decorator](t)
    def gen(n):
        """gen's docstring."""
        try:
            for i in range(n):
                try:
                    got = yield ((x * i).requires_grad, _modes(t))
                    log.append(("sent", got, _modes(t)))
                except ValueError as e:
                    log.append(("thrown", str(e), _modes(t)))
        finally:
            log.append(("finally", _modes(t)))
        return "done"

    return gen


def _drive(t, decorator, use, outer_grad):
    log = []
    gen = _generator(t, decorator, log)
    with t.set_grad_enabled(outer_grad):
        g = gen(3)
        log.append(("outside", _modes(t)))
        if use == "list":
            log.append(("list", list(g), _modes(t)))
        elif use == "next":
            log.append(("next", next(g), next(g), _modes(t)))
        elif use == "send":
            log.append(("send", next(g), g.send("a"), g.send("b"), _modes(t)))
            try:
                g.send("c")
            except StopIteration as e:
                log.append(("stop", e.value, _modes(t)))
        elif use == "throw":
            log.append(("throw", next(g), g.throw(ValueError("v")), _modes(t)))
            try:
                g.throw(KeyError("k"))
            except KeyError as e:
                log.append(("raised", str(e), _modes(t)))
        elif use == "close":
            next(g)
            g.close()
            log.append(("closed", _modes(t)))
        elif use == "break":
            for item in g:
                log.append(("item", item, _modes(t)))
                break
            del g
        log.append(("end", _modes(t)))
    log.append(("after", _modes(t), gen.__name__, gen.__doc__))
    return log


@pytest.mark.parametrize("decorator", DECORATORS)
@pytest.mark.parametrize("use", ["list", "next", "send", "throw", "close", "break"])
@pytest.mark.parametrize("outer_grad", [True, False])
def test_grad_mode_decorator_on_a_generator(decorator, use, outer_grad):
    import gradviz
    assert _drive(gradviz, decorator, use, outer_grad) == _drive(torch, decorator, use,
                                                                 outer_grad)


# ----- kthvalue with ties on 0-d and 1-D inputs -------------------------------------------

KTH_ROWS = {
    "1d_pair": ([3.0, 1.0, 2.0, 1.0], 2),
    "1d_pair_first": ([3.0, 1.0, 2.0, 1.0], 1),
    "1d_all_equal": ([5.0] * 5, 3),
    "1d_all_equal_last": ([5.0] * 5, 5),
    "1d_nan_ties": ([NAN, 1.0, NAN, 0.0], 4),
    "1d_long_ties": ([2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 0.0, 2.0], 6),
    "1d_unique": ([3.0, 1.0, 2.0], 2),
    "0d": (4.0, 1),
}


@pytest.mark.parametrize("name", KTH_ROWS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue_ties_on_0d_and_1d(name, keepdim):
    data, k = KTH_ROWS[name]

    def case(t):
        x = t.tensor(data, requires_grad=True)
        values, indices = t.kthvalue(x, k, 0, keepdim)
        values.sum().backward()
        return [values, indices, x]
    check(case)


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_kthvalue_ties_on_1d_integers(dtype):
    check(lambda t: list(t.tensor([5, 5, 5, 1], dtype=getattr(t, dtype)).kthvalue(3)))


# ----- layer_norm over an empty normalized shape ------------------------------------------

@pytest.mark.parametrize("normalized_shape", [(), []])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_refuses_a_0_dim_normalized_shape(normalized_shape, affine):
    def case(t):
        w = t.ones(()) if affine else None
        return t.nn.functional.layer_norm(t.ones(2, 3, requires_grad=True), normalized_shape, w)
    check(case)


LN_EMPTY = {"no_columns": ((2, 0), (0,)), "no_columns_3d": ((2, 3, 0), (3, 0)),
            "no_rows": ((0, 3), (3,))}


@pytest.mark.parametrize("name", LN_EMPTY)
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_double_backward_on_empty_shapes(name, affine):
    shape, normalized_shape = LN_EMPTY[name]

    def case(t):
        x = t.zeros(shape, requires_grad=True)
        w = t.ones(normalized_shape, requires_grad=True) if affine else None
        b = t.zeros(normalized_shape, requires_grad=True) if affine else None
        y = t.nn.functional.layer_norm(x, normalized_shape, w, b)
        mean, rstd = y.grad_fn._saved_result1, y.grad_fn._saved_result2
        inputs = [x] + ([w] if affine else [])
        grads = t.autograd.grad((y * 2).sum(), inputs, create_graph=True)
        sum(g.sum() for g in grads).backward()
        return [y, mean, rstd, *grads, x] + ([w, b] if affine else [])
    check(case)
