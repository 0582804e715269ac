"""The autograd surface against torch 2.13: autograd.functional, is_grads_batched and the
arguments of grad/backward, hook results of the wrong size/type/count, .grad assignment,
multi-grad and post-accumulate hooks, inference mode and its tensors, grad modes as
decorators, and non-tensor saved values after backward.

Each case is a function of the backend module; it returns plain data (values rounded, grad_fn
names, errors as (type, message)) that must be equal on gradviz and on torch.
"""

import numpy as np
import pytest

import gradviz

torch = pytest.importorskip("torch")


def obs(r):
    """Plain data for a result: nested tuples of (values, requires_grad, grad_fn name)."""
    if isinstance(r, (tuple, list)):
        return tuple(obs(x) for x in r)
    if r is None or isinstance(r, (bool, int, float, str)):
        return r
    fn = r.grad_fn
    return (np.round(np.asarray(r.detach().numpy(), dtype=np.float64), 10).tolist(),
            r.requires_grad, None if fn is None else type(fn).__name__)


def outcome(case, m):
    try:
        return ("ok", obs(case(m)))
    except Exception as exc:       # the error is the observable
        return ("error", type(exc).__name__, str(exc))


def same(case):
    ours, theirs = outcome(case, gradviz), outcome(case, torch)
    assert ours == theirs
    return ours


def x3(m, rg=False):
    return m.tensor([0.3, -1.2, 2.0], dtype=m.float64, requires_grad=rg)


def y2(m):
    return m.tensor([1.5, 0.5], dtype=m.float64)


def f1(a):
    return a.tanh() * a


def f2(a, b):
    return (a.sum() * b, a ** 2)


def s1(a):
    return (a.sin() * a).sum()


def s2(a, b):
    return a.exp().sum() * b.prod()


def ones(m, n):
    return m.ones(n, dtype=m.float64)


# ----- autograd.functional -------------------------------------------------------------------

FUNCTIONAL = {
    "jacobian": lambda m, cg: m.autograd.functional.jacobian(f1, x3(m), create_graph=cg),
    "jacobian_tuples": lambda m, cg: m.autograd.functional.jacobian(f2, (x3(m), y2(m)),
                                                                    create_graph=cg),
    "hessian": lambda m, cg: m.autograd.functional.hessian(s1, x3(m), create_graph=cg),
    "hessian_tuple": lambda m, cg: m.autograd.functional.hessian(s2, (x3(m), y2(m)),
                                                                 create_graph=cg),
    "vjp": lambda m, cg: m.autograd.functional.vjp(f1, x3(m), ones(m, 3), create_graph=cg),
    "vjp_tuples": lambda m, cg: m.autograd.functional.vjp(f2, (x3(m), y2(m)),
                                                          (ones(m, 2), ones(m, 3)),
                                                          create_graph=cg),
    "jvp": lambda m, cg: m.autograd.functional.jvp(f1, x3(m), ones(m, 3), create_graph=cg),
    "jvp_tuples": lambda m, cg: m.autograd.functional.jvp(f2, (x3(m), y2(m)),
                                                          (ones(m, 3), ones(m, 2)),
                                                          create_graph=cg),
    "hvp": lambda m, cg: m.autograd.functional.hvp(s1, x3(m), ones(m, 3), create_graph=cg),
    "vhp_tuple": lambda m, cg: m.autograd.functional.vhp(s2, (x3(m), y2(m)),
                                                         (ones(m, 3), ones(m, 2)),
                                                         create_graph=cg),
    "hvp_of_requires_grad_input": lambda m, cg: m.autograd.functional.hvp(
        s1, x3(m, rg=True), ones(m, 3), create_graph=cg),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_matches_torch(name, create_graph):
    assert same(lambda m: FUNCTIONAL[name](m, create_graph))[0] == "ok"


FUNCTIONAL_ERRORS = {
    "strict_independent_input": lambda m: m.autograd.functional.jacobian(
        lambda a, b: a * 2, (x3(m), y2(m)), strict=True),
    "v_none": lambda m: m.autograd.functional.vjp(f1, x3(m)),
    "v_size": lambda m: m.autograd.functional.vjp(f1, x3(m), ones(m, 2)),
    "hessian_not_scalar": lambda m: m.autograd.functional.hessian(f1, x3(m)),
    "strict_linear_hessian": lambda m: m.autograd.functional.hvp(
        lambda a: (a * 2).sum(), x3(m), ones(m, 3), strict=True),
    "list_inputs": lambda m: m.autograd.functional.jacobian(f1, [x3(m)]),
    "int_inputs": lambda m: m.autograd.functional.jacobian(f1, 3),
    "vhp_tuple_output": lambda m: m.autograd.functional.vhp(f2, (x3(m), y2(m)),
                                                             (ones(m, 3), ones(m, 2))),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL_ERRORS))
def test_functional_errors_match_torch(name):
    assert same(FUNCTIONAL_ERRORS[name])[0] == "error"


@pytest.mark.parametrize("call", [
    lambda: gradviz.autograd.functional.jacobian(f1, x3(gradviz), create_graph=True,
                                                 vectorize=True),
    lambda: gradviz.autograd.functional.jacobian(f1, x3(gradviz), strategy="forward-mode"),
    lambda: gradviz.autograd.functional.hessian(s1, x3(gradviz), vectorize=True),
])
def test_functional_refuses_what_it_does_not_implement(call):
    with pytest.raises(NotImplementedError, match="run with --backend torch to use PyTorch"):
        call()


# ----- grad / backward arguments -------------------------------------------------------------

def _batched(m, n=3):
    x = x3(m, rg=True)
    return m.autograd.grad(x ** 2, x, m.eye(n, dtype=m.float64), is_grads_batched=True)


def _batched_sum(m):
    x = x3(m, rg=True)
    return m.autograd.grad((x * x).sum(), x, m.tensor([1.0, 2.0], dtype=m.float64),
                           is_grads_batched=True)


def _batched_unused(m, **kw):
    x, u = x3(m, rg=True), m.ones(2, dtype=m.float64, requires_grad=True)
    return m.autograd.grad(x * 3, [x, u], m.eye(3, dtype=m.float64), is_grads_batched=True,
                           **kw)


GRAD_CASES = {
    "batched": _batched,
    "batched_sum": _batched_sum,
    "batched_allow_unused": lambda m: _batched_unused(m, allow_unused=True),
    "batched_materialize": lambda m: _batched_unused(m, materialize_grads=True),
    "batched_wrong_shape": lambda m: m.autograd.grad(x3(m, True) ** 2, x3(m, True),
                                                     m.ones(3), is_grads_batched=True),
    "materialize_without_allow_unused": lambda m: _batched_unused(m, allow_unused=False,
                                                                  materialize_grads=True),
    "grad_empty_inputs": lambda m: m.autograd.grad([x3(m, True) * 2], [], ones(m, 3)),
    "backward_empty_inputs": lambda m: (x3(m, True) * 2).backward(ones(m, 3), inputs=[]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_arguments_match_torch(name):
    same(GRAD_CASES[name])


def test_batched_grad_with_create_graph_is_refused():
    x = x3(gradviz, True)
    with pytest.raises(NotImplementedError, match="is_grads_batched=True, create_graph=True"):
        gradviz.autograd.grad(x ** 2, x, gradviz.eye(3, dtype=gradviz.float64),
                              is_grads_batched=True, create_graph=True)


# ----- hooks ----------------------------------------------------------------------------------

def _hooked(m, register):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    register(y)
    y.sum().backward()
    return x.grad


HOOK_CASES = {
    "tensor_hook_size": lambda y: y.register_hook(lambda g: g[:2]),
    "tensor_hook_type": lambda y: y.register_hook(lambda g: g.double()),
    "node_hook_count": lambda y: y.grad_fn.register_hook(lambda gi, go: (gi[0],)),
    "node_hook_size": lambda y: y.grad_fn.register_hook(lambda gi, go: (gi[0][:2], gi[1])),
    "node_hook_replaces": lambda y: y.grad_fn.register_hook(lambda gi, go: (gi[0] * 3,
                                                                            gi[1])),
    "prehook_count": lambda y: y.grad_fn.register_prehook(lambda go: (go[0], go[0])),
    "prehook_type": lambda y: y.grad_fn.register_prehook(lambda go: (go[0].double(),)),
    "prehook_replaces": lambda y: y.grad_fn.register_prehook(lambda go: (go[0] * 2,)),
}


@pytest.mark.parametrize("name", sorted(HOOK_CASES))
def test_hook_results_match_torch(name):
    same(lambda m: _hooked(m, HOOK_CASES[name]))


def test_leaf_hook_of_the_wrong_size_matches_torch():
    def case(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x.register_hook(lambda g: g[:2])
        (x * 2).sum().backward()
    assert same(case)[0] == "error"


@pytest.mark.parametrize("value", [lambda m: m.zeros(2), lambda m: m.zeros(3, dtype=m.float64),
                                   lambda m: m.zeros(3, dtype=m.int64),
                                   lambda m: m.zeros(2, dtype=m.float16)])
def test_assigning_a_wrong_grad_matches_torch(value):
    def case(m):
        x = m.zeros(3, requires_grad=True)
        x.grad = value(m)
    assert same(case)[0] == "error"


def _multi(m, mode, inputs=None):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([3.0, 4.0], requires_grad=True)
    c, d = a * b, a * b
    calls = []
    if mode == "all":
        m.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda gs: calls.append([g is not None for g in gs]))
    else:
        m.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda g: calls.append(g.tolist()), mode="any")
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    (c + d).sum().backward()
    return calls


@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hook_matches_torch(mode):
    assert same(lambda m: _multi(m, mode))[0] == "ok"


def test_post_accumulate_grad_hook_matches_torch():
    def case(m):
        x = m.ones(2, requires_grad=True)
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        (x * 3).sum().backward()
        (x * 3).sum().backward()
        m.autograd.grad((x * 2).sum(), x)
        return seen
    assert same(case) == ("ok", ((3.0, 3.0), (6.0, 6.0)))


def test_post_accumulate_grad_hook_on_a_non_leaf_matches_torch():
    assert same(lambda m: (m.ones(2, requires_grad=True) * 2)
                .register_post_accumulate_grad_hook(lambda t: None))[0] == "error"


# ----- grad modes and inference mode ----------------------------------------------------------

def _decorated(m):
    @m.set_grad_enabled(False)
    def off():
        return m.is_grad_enabled()

    @m.inference_mode()
    def inf():
        return m.is_grad_enabled(), m.is_inference_mode_enabled()

    @m.inference_mode
    def inf_bare():
        return m.is_grad_enabled(), m.is_inference_mode_enabled()

    @m.no_grad
    def ng():
        return m.is_grad_enabled()
    before = m.is_grad_enabled()
    out = (before, off(), m.is_grad_enabled(), inf(), inf_bare(), ng(),
           m.is_inference_mode_enabled())
    with m.no_grad():
        with m.inference_mode(False):
            out += (m.is_grad_enabled(), m.is_inference_mode_enabled())
        out += (m.is_grad_enabled(),)
    return out


def test_grad_modes_as_decorators_match_torch():
    assert same(_decorated) == ("ok", (True, False, True, (False, True), (False, True), False,
                                       False, True, False, False))


def _inference(m, use):
    with m.inference_mode():
        a = m.ones(3)
    x = m.ones(3, requires_grad=True)
    return use(m, a, x)


INFERENCE_CASES = {
    "flags": lambda m, a, x: (a.is_inference(), (a * 2).is_inference(), a[0].is_inference(),
                              a.detach().is_inference(), m.ones(1).is_inference()),
    "saved_for_backward": lambda m, a, x: x * a,
    "not_saved": lambda m, a, x: x + a,
    "inplace_outside": lambda m, a, x: a.add_(1),
    "inplace_outside_no_grad": lambda m, a, x: m.no_grad()(lambda: a.mul_(2))(),
    "requires_grad_outside": lambda m, a, x: a.requires_grad_(),
    "version": lambda m, a, x: a._version,
    "clone_is_normal": lambda m, a, x: (a.clone().is_inference(), (x * a.clone()).sum()),
}


@pytest.mark.parametrize("name", sorted(INFERENCE_CASES))
def test_inference_tensors_match_torch(name):
    same(lambda m: _inference(m, INFERENCE_CASES[name]))


def test_inplace_inside_inference_mode_matches_torch():
    def case(m):
        with m.inference_mode():
            a = m.ones(3)
            a.add_(1)
            x = m.ones(3, requires_grad=True)
            y = x * 2
        return a, y, x.is_inference(), y.is_inference()
    same(case)


# ----- saved values after backward -------------------------------------------------------------

SAVED = {
    "sum_dim": (lambda m, a: a.sum(0), "_saved_dim"),
    "softmax_dim": (lambda m, a: m.softmax(a, 0), "_saved_dim"),
    "clamp_min": (lambda m, a: a.clamp(min=0.1), "_saved_min"),
    "clamp_self": (lambda m, a: a.clamp(min=0.1), "_saved_self"),
    "wrapped_number": (lambda m, a: a * 2.5, "_saved_other"),
    "result": (lambda m, a: m.softmax(a, 0), "_saved_result"),
    "sizes": (lambda m, a: a.sum(), "_saved_self_sym_sizes"),
}


@pytest.mark.parametrize("name", sorted(SAVED))
def test_saved_values_after_backward_match_torch(name):
    make, attr = SAVED[name]

    def case(m):
        a = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        out = make(m, a)
        out.sum().backward()
        return getattr(out.grad_fn, attr)
    same(case)


# ----- names the core lacks --------------------------------------------------------------------

@pytest.mark.parametrize("owner, name", [
    (lambda: gradviz.autograd, "forward_ad"),
    (lambda: gradviz.autograd.functional, "fwAD"),
    (lambda: gradviz.autograd.graph, "allow_mutation_on_saved_tensors"),
])
def test_autograd_namespaces_name_what_the_core_lacks(owner, name):
    with pytest.raises(AttributeError, match="run with --backend torch"):
        getattr(owner(), name)


# ----- saved_tensors_hooks ----------------------------------------------------------------------

def _saved_hooks_log(m, f, *vals):
    log = []

    def pack(t):
        log.append(("pack", round(float(t.detach().reshape(-1)[0]), 5), t.requires_grad))
        return ("packed", t)

    def unpack(p):
        log.append(("unpack", round(float(p[1].detach().reshape(-1)[0]), 5)))
        return p[1]
    xs = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in vals]
    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = f(m, *xs)
    log.append("backward")
    y.sum().backward()
    return log, [x.grad for x in xs]


SAVED_HOOKS = {
    "mul": (lambda m, a, b: a * b, [1.0], [2.0]),
    "div": (lambda m, a, b: a / b, [1.0], [2.0]),
    "pow": (lambda m, a, b: a ** b, [3.0], [2.0]),
    "mm": (lambda m, a, b: a @ b, [[1.0]], [[2.0]]),
    "addmm": (lambda m, c, a, b: m.addmm(c, a, b), [3.0], [[1.0]], [[2.0]]),
    "exp_result": (lambda m, a: a.exp(), [1.0]),
    "chain": (lambda m, a: (a.softmax(0) * a).tanh() * 2.5, [3.0]),
    "maximum": (lambda m, a, b: m.maximum(a, b), [1.0], [2.0]),
}


@pytest.mark.parametrize("name", sorted(SAVED_HOOKS))
def test_saved_tensors_hooks_order_matches_torch(name):
    f, *vals = SAVED_HOOKS[name]
    assert same(lambda m: _saved_hooks_log(m, f, *vals))[0] == "ok"


def test_saved_tensors_hooks_nest_and_check_what_unpack_returns():
    def case(m):
        log = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        outer = m.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t,
                                                     lambda p: p)
        with outer:
            with m.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t,
                                                      lambda p: 5):
                y = x * x
            x.sin()
        try:
            y.sum().backward()
        except TypeError as exc:
            log.append(str(exc))
        return log
    same(case)


def test_saved_values_read_through_unpack_and_disabling_matches_torch():
    def case(m):
        calls = []
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t * 1,
                                                  lambda p: calls.append(1) or p * 2):
            y = x.exp()
        first = y.grad_fn._saved_result
        with m.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            try:
                with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: p):
                    pass
            except RuntimeError as exc:
                err = str(exc)
        with m.autograd.graph.save_on_cpu():
            z = x * x
        return first, len(calls), err, z.grad_fn._saved_self
    same(case)


def test_saved_tensors_hooks_see_custom_function_saves_as_torch():
    def case(m):
        log = []

        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(x, y)
                return x * y

            @staticmethod
            def backward(ctx, g):
                log.append("backward")
                x, y = ctx.saved_tensors
                return g * y, g * x
        x = m.tensor([1.0], requires_grad=True)
        y = m.tensor([2.0], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(
                lambda t: log.append(("pack", t.item())) or t,
                lambda p: log.append(("unpack", p.item())) or p):
            z = F.apply(x, y)
        z.backward()
        return log, x.grad, y.grad
    assert same(case)[0] == "ok"


# ----- higher-order nodes beyond the row examples ------------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_double_backward_matches_torch(reduction):
    def case(m):
        x = m.tensor([[0.3, -1.2, 2.0], [0.1, 0.4, -0.6]], dtype=m.float64, requires_grad=True)
        y = m.tensor([1.4, 0.7, -0.9], dtype=m.float64, requires_grad=True)
        loss = m.nn.functional.mse_loss(x, y.expand(2, 3), reduction=reduction)
        g = m.ones_like(loss).requires_grad_()
        gx, gy = m.autograd.grad(loss, (x, y), g, create_graph=True)
        names = [type(gx.grad_fn).__name__, type(gy.grad_fn).__name__]
        second = m.autograd.grad((gx * gx).sum() + (gy ** 3).sum(), (x, y, g))
        return names, gx, gy, second
    assert same(case)[0] == "ok"


@pytest.mark.parametrize("make", [lambda x: x.tanh(), lambda x: x.sigmoid(),
                                  lambda x: x.relu(), lambda x: x.softmax(-1),
                                  lambda x: x.log_softmax(0), lambda x: x[1],
                                  lambda x: x[:, ::2]])
def test_third_derivatives_match_torch(make):
    def case(m):
        x = m.tensor([[0.3, -1.2, 2.0], [0.1, 0.4, -0.6]], dtype=m.float64, requires_grad=True)
        y = make(x)
        (g1,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        (g2,) = m.autograd.grad((g1 * g1).sum(), x, create_graph=True)
        (g3,) = m.autograd.grad(g2.sum(), x)
        return g1, g2, g3
    same(case)
