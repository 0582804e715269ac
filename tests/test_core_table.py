"""The derivative table drives these tests: every row has an example, which must record that
row's node, pass gradcheck (central differences in float64), once and, where the formula is
meant to be differentiable, twice, and give torch 2.13's values, gradients, grad_fn names,
next_functions and saved names. A new row without an example fails
`test_every_entry_has_an_example`.

The core rows' examples are below; each family of ops added later keeps its examples in its
own `tests/rows_<family>.py` (an `EXAMPLES` dict in the same format, and optionally
`NO_DERIVATIVE`), merged here.
"""

import importlib.util
import pathlib
import types

import numpy as np
import pytest

import gradviz as torch
from gradviz._derivatives import DERIVATIVES
from gradviz.autograd.gradcheck import GradcheckError     # torch.autograd.gradcheck.GradcheckError
from gradviz.autograd.graph import CopySlices

F64 = torch.float64


def t(data, dtype=F64):
    return torch.tensor(data, dtype=dtype, requires_grad=True)


A3 = [0.3, -1.2, 2.1]
B3 = [1.4, 0.7, -0.9]
P3 = [0.3, 1.2, 2.1]            # positive
M23 = [[0.3, -1.2, 2.1], [1.1, 0.4, -0.6]]
M32 = [[0.5, -0.2], [1.3, 0.8], [-0.7, 0.9]]


def _setitem_list(x, y):
    b = x.clone()
    b[[0, 2]] = y
    return b


def _inplace_on_view(x):
    b = x.clone()
    v = b[1:]
    v.mul_(2)
    return v


def _index_double_backward(x, y):
    (g,) = torch.autograd.grad((x[[0, 0, 2]] * y).sum(), x, create_graph=True)
    return g


def _unbind_second(x):
    return x.unbind(1)[1]


# op name -> (function of tensors, input data, options)
EXAMPLES = {
    "add": (lambda x, y: x.add(y, alpha=2), (A3, B3), {}),
    "sub": (lambda x, y: x.sub(y, alpha=3), (A3, B3), {}),
    "rsub": (lambda x: 2 - x, (A3,), {}),
    "mul": (lambda x, y: x * y, (A3, B3), {}),
    "mul_scalar": (lambda x: torch.autograd.grad((x ** 3).sum(), x, create_graph=True)[0],
                   (A3,), {}),
    "sub_scalar": (lambda x, y: torch.autograd.grad((x ** y).sum(), x, create_graph=True)[0],
                   (P3, B3), {}),
    "div": (lambda x, y: x / y, (A3, B3), {}),
    "div_mode": (lambda x, y: x.div(y, rounding_mode="floor"), (A3, B3), {"second": False}),
    "neg": (lambda x: -x, (A3,), {}),
    "abs": (lambda x: x.abs(), (A3,), {}),
    "reciprocal": (lambda x: 1 / x, (A3,), {}),
    "pow": (lambda x: x ** 3, (A3,), {}),
    "pow_tensor": (lambda x, y: x ** y, (P3, B3), {}),
    "pow_scalar": (lambda x: 2.5 ** x, (A3,), {}),
    "remainder_scalar": (lambda x: x % 0.65, (A3,), {"second": False}),
    "remainder": (lambda x, y: x % y, (A3, B3), {"second": False}),
    "exp": (lambda x: x.exp(), (A3,), {}),
    "log": (lambda x: x.log(), (P3,), {}),
    "sqrt": (lambda x: x.sqrt(), (P3,), {}),
    "sin": (lambda x: x.sin(), (A3,), {}),
    "cos": (lambda x: x.cos(), (A3,), {}),
    "tanh": (lambda x: x.tanh(), (A3,), {}),
    "sigmoid": (lambda x: x.sigmoid(), (A3,), {}),
    "relu": (lambda x: x.relu(), (A3,), {}),
    "sign": (lambda x: x.sign(), (A3,), {}),
    "floor": (lambda x: x.floor(), (A3,), {}),
    "ceil": (lambda x: x.ceil(), (A3,), {}),
    "trunc": (lambda x: x.trunc(), (A3,), {}),
    "round": (lambda x: x.round(), (A3,), {}),
    "round_decimals": (lambda x: x.round(decimals=1), ([0.33, -1.21, 2.14],), {}),
    "clamp": (lambda x: x.clamp(-1, 1), (A3,), {}),
    "clamp_tensor": (lambda x, lo: x.clamp(min=lo), (A3, B3), {}),
    "maximum": (lambda x, y: torch.maximum(x, y), (A3, B3), {}),
    "minimum": (lambda x, y: torch.minimum(x, y), (A3, B3), {}),
    "where": (lambda x, y: torch.where(x > 0, x, y), (A3, B3), {}),
    "clone": (lambda x: x.clone(), (A3,), {}),
    "sum": (lambda x: x.sum(), (M23,), {}),
    "sum_dim": (lambda x: x.sum(1), (M23,), {}),
    "mean": (lambda x: x.mean(), (M23,), {}),
    "mean_dim": (lambda x: x.mean(0, keepdim=True), (M23,), {}),
    "prod": (lambda x: x.prod(), (A3,), {}),
    "prod_dim": (lambda x: x.prod(1), (M23,), {}),
    "max": (lambda x: x.max(), (A3,), {}),
    "min": (lambda x: x.min(), (A3,), {}),
    "max_dim": (lambda x: x.max(1)[0], (M23,), {}),
    "min_dim": (lambda x: x.min(0, keepdim=True).values, (M23,), {}),
    "softmax": (lambda x: x.softmax(1), (M23,), {}),
    "log_softmax": (lambda x: x.log_softmax(0), (M23,), {}),
    "mm": (lambda x, y: x @ y, (M23, M32), {}),
    "bmm": (lambda x, y: torch.bmm(x, y), ([M23], [M32]), {}),
    "mv": (lambda x, y: x @ y, (M23, A3), {}),
    "dot": (lambda x, y: x @ y, (A3, B3), {}),
    "addmm": (lambda b, x, y: torch.addmm(b, x, y, beta=0.5, alpha=2), ([1.0, -2.0], M23, M32),
              {}),
    "t": (lambda x: x.t(), (M23,), {}),
    "transpose": (lambda x: x.transpose(0, 1), (M23,), {}),
    "permute": (lambda x: x.permute(1, 0), (M23,), {}),
    "view": (lambda x: x.view(3, 2), (M23,), {}),
    "reshape_alias": (lambda x: x.unsqueeze(0).expand(2, 2, 3).reshape(2, 6), (M23,), {}),
    "unsafe_view": (lambda x: x.t().reshape(6), (M23,), {}),
    "squeeze": (lambda x: x.unsqueeze(0).squeeze(), (A3,), {}),
    "squeeze_dim": (lambda x: x.unsqueeze(1).squeeze(1), (A3,), {}),
    "squeeze_dims": (lambda x: x.unsqueeze(1).squeeze((1,)), (A3,), {}),
    "squeeze_dim_": (lambda x, y: x @ y, (B3, M32), {}),
    "unsqueeze": (lambda x: x.unsqueeze(0), (A3,), {}),
    "expand": (lambda x: x.expand(2, 3), (A3,), {}),
    "select": (lambda x: x[1], (M23,), {}),
    "slice": (lambda x: x[:, 1:], (M23,), {}),
    "index": (lambda x: x[[0, 0, 2]], (A3,), {}),
    "alias": (lambda x: x[...], (A3,), {}),
    "as_strided": (_inplace_on_view, (A3,), {"second": False}),
    "to_copy": (lambda x: x.float() * 1, (A3,), {"eps": 1e-3, "second": False}),
    "index_put_impl": (_index_double_backward, (A3, B3), {}),
    "cat": (lambda x, y: torch.cat([x, y]), (A3, B3), {}),
    "stack": (lambda x, y: torch.stack([x, y], 1), (A3, B3), {}),
    "unbind": (_unbind_second, (M23,), {}),
    "zero_": (lambda x: x.clone().zero_(), (A3,), {}),
    "fill_": (lambda x: x.clone().fill_(2.0), (A3,), {}),
    "fill_tensor_": (lambda x, v: x.clone().fill_(v), (A3, 0.5), {}),
    "copy_": (lambda x, y: x.clone().copy_(y), (A3, B3), {}),
    "index_put": (_setitem_list, (A3, [B3[0], B3[1]]), {}),
    "mse_loss": (lambda x, y: torch.nn.functional.mse_loss(x, y), (A3, B3), {}),
}

# Entries torch records without a derivative: backward must fail, naming the op.
NO_DERIVATIVE = {
    "floor_divide": (lambda x: x // (x.detach() + 1).requires_grad_(),
                     "derivative for aten::floor_divide is not implemented"),
    "floor_divide_scalar": (lambda x: x // 2,
                            "derivative for aten::floor_divide is not implemented"),
    "rremainder": (lambda x: 2 % x, "derivative for aten::remainder is not implemented"),
    "floor_divide_inplace": (lambda x: x.clone().floor_divide_((x.detach() + 1).requires_grad_()),
                             "derivative for aten::floor_divide_ is not implemented"),
    "floor_divide_inplace_scalar": (lambda x: x.clone().floor_divide_(2),
                                    "derivative for aten::floor_divide_ is not implemented"),
}


def _family_examples():
    """EXAMPLES and NO_DERIVATIVE of every tests/rows_<family>.py, merged (a row may have
    one example only)."""
    for path in sorted(pathlib.Path(__file__).parent.glob("rows_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for table, extra in ((EXAMPLES, getattr(module, "EXAMPLES", {})),
                             (NO_DERIVATIVE, getattr(module, "NO_DERIVATIVE", {}))):
            clash = set(table) & set(extra)
            assert not clash, f"{path.name}: examples already defined for {sorted(clash)}"
            table.update(extra)


_family_examples()


def _nodes(fn):
    """Every node reachable from fn, including the ops inside CopySlices."""
    seen, stack, out = set(), [fn], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        if isinstance(node, CopySlices):
            stack.append(node._fn)
        stack.extend(n for n, _ in node.next_functions)
    return out


def test_every_entry_has_an_example():
    assert set(EXAMPLES) | set(NO_DERIVATIVE) == set(DERIVATIVES)


@pytest.mark.parametrize("op", sorted(EXAMPLES))
def test_example_records_its_entry(op):
    fn, data, opts = EXAMPLES[op]
    out = fn(*[t(d, opts.get("dtype", F64)) for d in data])
    names = [type(n).__name__ for n in _nodes(out.grad_fn)]
    assert DERIVATIVES[op].node in names, names


@pytest.mark.parametrize("op", sorted(EXAMPLES))
def test_first_derivative_matches_finite_differences(op):
    fn, data, opts = EXAMPLES[op]
    # a float32-only op (torch's oneDNN LSTM layer) is checked in float32, with its tolerances
    assert torch.autograd.gradcheck(fn, [t(d, opts.get("dtype", F64)) for d in data],
                                    eps=opts.get("eps", 1e-6), atol=opts.get("atol", 1e-5),
                                    rtol=opts.get("rtol", 1e-3))


@pytest.mark.parametrize("op", sorted(op for op, e in EXAMPLES.items()
                                      if e[2].get("second", True)))
def test_second_derivative_matches_finite_differences(op):
    fn, data, _ = EXAMPLES[op]
    xs = [t(d) for d in data]

    def first(*inputs):
        out = fn(*inputs)
        weight = torch.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
        grads = torch.autograd.grad((out * weight).sum(), inputs, create_graph=True,
                                    allow_unused=True)
        return tuple(g if g is not None else torch.zeros_like(x) for g, x in zip(grads, inputs))

    assert torch.autograd.gradcheck(first, xs)


@pytest.mark.parametrize("op", sorted(NO_DERIVATIVE))
def test_entries_without_derivative_fail_in_backward(op):
    fn, message = NO_DERIVATIVE[op]
    y = fn(t(P3))
    assert y.grad_fn.name() == DERIVATIVES[op].display
    with pytest.raises(RuntimeError, match=message):
        y.sum().backward()


def test_the_checker_catches_a_wrong_derivative():
    class WrongExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y * 1.01

    x = t(A3)
    assert not torch.autograd.gradcheck(WrongExp.apply, (x,), raise_exception=False)
    with pytest.raises(GradcheckError):
        torch.autograd.gradcheck(WrongExp.apply, (x,))


def test_a_wrong_table_formula_is_caught(monkeypatch):
    entry = DERIVATIVES["sin"]
    _, idx = entry.formulas[0]
    wrong = list(entry.formulas)
    wrong[0] = (lambda grad, self: grad * np.cos(self) * 2, idx)
    monkeypatch.setattr(entry, "formulas", wrong)
    monkeypatch.setattr(entry, "_plans", {})     # plans are derived from the formulas
    assert not torch.autograd.gradcheck(lambda x: x.sin(), (t(A3),), raise_exception=False)


# ----- The same examples against torch 2.13 ----------------------------------------------------

def _on(module, fn):
    """fn with its `torch` global bound to `module` (gradviz or the real torch)."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "torch": module}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def _walk_names(module, root):
    """grad_fn names in a fixed breadth-first order, with next_functions' input numbers."""
    out, seen, queue = [], set(), [root]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = node.name()
        nexts = tuple((None if n is None else n.name(), k) for n, k in node.next_functions)
        saved = sorted(a for a in dir(node) if a.startswith("_saved_") and (
            module is not torch or isinstance(getattr(type(node), a, None), property)))
        out.append((name, nexts, saved))
        queue.extend(n for n, _ in node.next_functions)
    return out


def example_dtype(module, op):
    """The dtype op's example runs in on module: float64, or its `dtype` option (an op torch
    has in float32 only: the oneDNN LSTM layer)."""
    return getattr(module, str(EXAMPLES[op][2].get("dtype", F64)).split(".")[-1])


def _run_example(module, op):
    fn, data, opts = EXAMPLES[op]
    xs = [module.tensor(d, dtype=example_dtype(module, op), requires_grad=True) for d in data]
    out = _on(module, fn)(*xs)
    weight = module.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
    grads = module.autograd.grad((out * weight).sum(), xs, allow_unused=True)
    return out, grads


@pytest.mark.parametrize("op", sorted(EXAMPLES))
def test_example_matches_torch(op):
    real = pytest.importorskip("torch")
    out, grads = _run_example(torch, op)
    t_out, t_grads = _run_example(real, op)
    # float32 examples: torch's kernel (oneDNN's) rounds otherwise
    tol = 1e-5 if "dtype" in EXAMPLES[op][2] else None
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=tol or 1e-12,
                               atol=tol or 1e-12)
    for g, tg in zip(grads, t_grads):
        assert (g is None) == (tg is None)
        if g is not None:
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=tol or 1e-10,
                                       atol=tol or 1e-12)
    ours, theirs = _walk_names(torch, out.grad_fn), _walk_names(real, t_out.grad_fn)
    assert [n[:2] for n in ours] == [n[:2] for n in theirs]
    for (name, _, saved), (_, _, t_saved) in zip(ours, theirs):
        # Every _saved_ attribute gradviz shows, torch has under the same name.
        assert set(saved) <= set(t_saved), (name, sorted(set(saved) - set(t_saved)))


def _setitem_inf_grad(module):
    x = module.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    y[module.tensor([1])] = module.tensor([5.0])
    y.backward(module.tensor([float("inf"), float("inf"), 1.0]))
    return x.grad.tolist()


def test_index_put_gradient_zeroes_the_written_places_even_under_inf():
    # torch writes zeros there (grad.index_put(indices, zeros)); grad - grad would give nan
    real = pytest.importorskip("torch")
    assert _setitem_inf_grad(torch) == _setitem_inf_grad(real) == [float("inf"), 0.0, 1.0]
