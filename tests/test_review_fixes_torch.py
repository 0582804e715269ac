"""Answers that were quietly different from torch 2.13, each compared with torch: augmented
assignment in place (`//=`, `%=`, `**=`, `&=`, `|=`, `^=`, `<<=`, `>>=`) through views, with
torch's versions, nodes and refusals."""

import pytest

try:
    from .test_core_torch_extra import check
except ImportError:
    from test_core_torch_extra import check

torch = pytest.importorskip("torch")


# ----- augmented assignment writes into self --------------------------------------------

FLOAT_OPS = ["//=", "%=", "**="]
INT_OPS = ["//=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>="]


def _augment(x, op, other):
    scope = {"x": x, "other": other}
    exec(f"x {op} other", scope)
    return scope["x"]


@pytest.mark.parametrize("op", INT_OPS)
@pytest.mark.parametrize("other", ["number", "tensor"])
def test_augmented_assignment_through_a_view_writes_the_base(op, other):
    def case(t):
        x = t.tensor([3, 5, -7])
        y = _augment(x[:2], op, 2 if other == "number" else t.tensor([1, 2]))
        return [x, y]
    check(case)


@pytest.mark.parametrize("op", FLOAT_OPS)
@pytest.mark.parametrize("other", ["number", "tensor"])
def test_augmented_assignment_records_torchs_node(op, other):
    def case(t):
        a = t.tensor([3.0, 5.0, 6.5], requires_grad=True)
        b = t.tensor([2.0, 1.5], requires_grad=True)
        x = a * 1
        y = _augment(x[:2], op, 2.0 if other == "number" else b)
        if op != "//=":
            x.backward(t.tensor([1.0, 2.0, 3.0]))
        return [x, y, a, b]
    check(case)


@pytest.mark.parametrize("op", FLOAT_OPS)
def test_augmented_assignment_on_a_leaf_requiring_grad_refuses(op):
    check(lambda t: _augment(t.tensor([3.0, 5.0], requires_grad=True), op, 2.0))


@pytest.mark.parametrize("op", INT_OPS)
@pytest.mark.parametrize("dtype", ["float32", "bool", "int32"])
@pytest.mark.parametrize("other", ["int", "float", "bool"])
def test_augmented_assignment_dtype_refusals(op, dtype, other):
    value = {"int": 2, "float": 2.5, "bool": True}[other]
    check(lambda t: _augment(t.tensor([3, 0, 1], dtype=getattr(t, dtype)), op, value))


@pytest.mark.parametrize("op", ["<<", ">>", "&", "|", "^"])
def test_bitwise_operators_match_torch(op):
    def case(t):
        x = t.tensor([3, -5, 6])
        return [eval(f"x {op} 1"), eval(f"x {op} t.tensor([1, 2, 70])"),
                eval(f"x.float() {op} 1")]
    check(case)


@pytest.mark.parametrize("op", ["//", "%", "**"])
@pytest.mark.parametrize("other", ["x", "True", "False", "2"])
def test_bool_division_and_power_match_torch(op, other):
    def case(t):
        x = t.tensor([True, False, True])
        return eval(f"x {op} {other}")
    check(case)


# ----- NumPy scalars read as Python numbers: clamp's bounds, lerp's weight -----------------

NUMPY_SCALARS = ["np.float64(0.5)", "np.float32(1.5)", "np.int64(1)", "np.bool_(True)"]


@pytest.mark.parametrize("bound", NUMPY_SCALARS)
@pytest.mark.parametrize("call", ["x.clamp(min={})", "x.clamp(max={})",
                                  "x.clamp({}, 1.75)", "x.clamp_(min={})"])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_clamp_reads_numpy_scalar_bounds_as_numbers(bound, call, dtype):
    import numpy as np

    def case(t):
        x = t.tensor([1, 2], dtype=getattr(t, dtype))
        out = eval(call.format(bound), {"x": x, "np": np})
        return [out, type(out.grad_fn._saved_min).__name__] if out.requires_grad else out
    check(case)


@pytest.mark.parametrize("weight", NUMPY_SCALARS)
def test_lerp_reads_a_numpy_scalar_weight_as_a_number(weight):
    import numpy as np

    def case(t):
        a = t.tensor([1.0, 2.0], requires_grad=True)
        out = t.lerp(a, t.tensor([3.0, 6.0]), eval(weight, {"np": np}))
        out.sum().backward()
        return [out, a, type(out.grad_fn._saved_weight).__name__]
    check(case)


# ----- reductions honour dtype= ------------------------------------------------------------

REDUCTIONS = ["torch.sum(X, dtype=D)", "X.sum(0, dtype=D)", "X.sum(0, keepdim=True, dtype=D)",
              "torch.prod(X, dtype=D)", "X.prod(0, dtype=D)", "torch.mean(X, dtype=D)",
              "X.mean(0, dtype=D)", "torch.cumsum(X, 0, dtype=D)", "X.cumprod(0, dtype=D)",
              "torch.softmax(X, 0, dtype=D)", "torch.log_softmax(X, 0, dtype=D)",
              "torch.nn.functional.softmax(X, 0, dtype=D)", "torch.norm(X, dtype=D)",
              "X.norm(dtype=D)", "torch.linalg.vector_norm(X, dtype=D)",
              "X.clone().cumsum_(0, dtype=D)", "X.clone().cumprod_(0)"]


@pytest.mark.parametrize("call", REDUCTIONS)
@pytest.mark.parametrize("source", ["float32", "int64", "int32", "bool"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float64", "float16", "float32"])
def test_reduction_dtype_argument_matches_torch(call, source, dtype):
    def case(t):
        x = t.tensor([1.5, 2.5, -0.5, 3.0]).to(getattr(t, source))
        return eval(call.replace("X", "x").replace("D", f"t.{dtype}"), {"t": t, "torch": t,
                                                                        "x": x})
    check(case)


@pytest.mark.parametrize("call", ["torch.sum(X, dtype=D)", "X.prod(0, dtype=D)",
                                  "torch.mean(X, dtype=D)", "torch.cumsum(X, 0, dtype=D)",
                                  "torch.softmax(X, 0, dtype=D)", "X.norm(dtype=D)"])
def test_reduction_in_another_dtype_differentiates_as_torch(call):
    def case(t):
        x = t.tensor([1.5, 2.5, -0.5, 3.0], requires_grad=True)
        out = eval(call.replace("X", "x").replace("D", "t.float64"), {"t": t, "torch": t,
                                                                      "x": x})
        out.backward(t.ones_like(out))
        return [out, x]
    check(case)


# ----- tensor hooks on the unused outputs of a multi-output node ---------------------------

def _hook_calls(t, how, returns=False):
    calls = []

    def hook(name):
        def fire(g):
            calls.append((name, None if g is None else g.tolist()))
            return t.ones(2) if returns else None
        return fire

    a = t.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = t.tensor([2.0, 3.0])
    p, q = a.split(2)
    q.register_hook(hook("q"))
    p.register_hook(hook("p"))
    q.register_hook(hook("q2"))
    loss = (p * b).sum() if how != "both" else p.sum() + q.sum()
    if how == "grad_q":
        got = t.autograd.grad(loss, [q], allow_unused=True)
    elif how == "grad_a":
        got = t.autograd.grad(loss, [a])
    elif how == "inputs_q":
        loss.backward(inputs=[q])
        got = q.grad
    else:
        loss.backward()
        got = a.grad
    return [calls, got]


@pytest.mark.parametrize("how", ["backward", "both", "grad_q", "grad_a", "inputs_q"])
def test_hooks_of_an_unused_output_are_called_with_none_as_torch(how):
    check(lambda t: _hook_calls(t, how))


def test_a_hook_may_not_replace_a_none_gradient():
    check(lambda t: _hook_calls(t, "backward", returns=True))


# ----- Python ints on small integer dtypes: torch's wrap, or its overflow error -----------

WRAP_CASES = [
    "u + (-3)", "u - 3", "u * 300", "u * (-1)", "i32 + 2**40", "i32 * 2**31", "i8 + 200",
    "u + 256", "-3 + u", "300 * u", "u + (2**64 - 1)", "i64 + 2**63", "u + 2**64",
    "u.fill_(-1)", "u.fill_(-255)", "u.fill_(-256)", "u.fill_(300)", "i8.fill_(200)",
    "i32.fill_(2**40)", "i64.fill_(2**63)", "i16.fill_(2**20)", "u.add_(-3)", "u.mul_(-1)",
    "i8.add_(200)", "u.add(3, alpha=-1)", "u.sub_(3)",
    "u < -3", "u > -3", "u == 256", "u == -1", "i8 < 200", "u != 300", "u <= -3", "u >= 256",
    "u.lt(256)", "u // -1", "u % -3", "u.remainder(-3)", "u.fmod(-3)", "u & -1", "u | 300",
    "u ** -1", "u.clamp(min=-3)", "u.clamp(max=300)", "u.clamp(-3, 300)", "u.clamp_(min=-3)",
    "set(u, 0, -3)", "set(u, 0, 300)", "set(i8, slice(1, None), 200)",
]


@pytest.mark.parametrize("expr", WRAP_CASES)
def test_python_ints_on_integer_dtypes_wrap_or_refuse_as_torch(expr):
    def setter(x, key, value):
        x[key] = value
        return x

    def case(t):
        scope = {"set": setter}
        for name, dt in (("u", t.uint8), ("i8", t.int8), ("i16", t.int16), ("i32", t.int32),
                         ("i64", t.int64)):
            scope[name] = t.tensor([1, 0, 2], dtype=dt)
        return eval(expr, scope)
    check(case)
