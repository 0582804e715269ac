"""Saved values torch 2.13 has that the core lacked, compared value for value with torch:
LogSigmoidBackward0's (and LogSigmoidBackwardBackward0's) `_saved_buffer`; the `_saved_LU` and
`_saved_pivots` of LinalgDetBackward0 (torch factors A.mT() when A is contiguous) and of
LinalgSolveExBackward0 (made by det's create_graph=True backward); AddmmBackward0's sizes and
strides (both sizes always, each strides only for an input needing a gradient); SgnBackward0's
self and result. And the nodes of a backward op (TanhBackwardBackward0, ...) keep every
value torch's keep, whichever input needs a gradient (torch guards none of them)."""

import numpy as np
import pytest

import gradviz

try:
    from .graphwalk import graph_nodes
except ImportError:
    from graphwalk import graph_nodes

torch = pytest.importorskip("torch")


def _value(v):
    if hasattr(v, "shape"):
        return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape),
                np.asarray(v.detach().tolist(), dtype=float).reshape(-1))
    return (type(v).__name__, v)


def _same(a, b):
    if a[0] == "tensor":
        rtol = 1e-4 if a[1] == "float32" else 1e-9     # LAPACK's rounding is not NumPy's
        return a[:3] == b[:3] and np.allclose(a[3], b[3], rtol=rtol, atol=1e-6 * rtol)
    return a == b


def _saved(node):
    out = {}
    for name in dir(node):
        if name.startswith("_saved_"):
            try:
                out[name] = _value(getattr(node, name))
            except RuntimeError as exc:
                out[name] = ("error", str(exc).split("\n")[0])
    return out


def _compare(case):
    ours, theirs = case(gradviz), case(torch)
    assert [n.name() for n in ours] == [n.name() for n in theirs]
    for a, b in zip(ours, theirs):
        sa, sb = _saved(a), _saved(b)
        assert sorted(sa) == sorted(sb), a.name()
        for k in sb:
            assert _same(sa[k], sb[k]), (a.name(), k, sa[k], sb[k])


_MATRICES = {
    "2x2": [[2.0, 1.0], [1.0, 3.0]],
    "swap": [[0.0, 1.0], [1.0, 0.0]],
    "3x3": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]],
    "singular": [[1.0, 2.0], [2.0, 4.0]],
    "zeros": [[0.0, 0.0], [0.0, 0.0]],
    "1x1": [[3.0]],
    "batch": (np.arange(18.0).reshape(2, 3, 3) ** 1.5 - 4).tolist(),
}


def _det_case(a, dtype, transposed):
    def case(m):
        x = m.tensor(a, dtype=getattr(m, dtype))
        if transposed:
            x = x.mT.contiguous().mT
        return [m.linalg.det(x.requires_grad_()).grad_fn]
    return case


CASES = {f"det_{k}_{dt}_{'t' if t else 'c'}": _det_case(a, dt, t)
         for k, a in _MATRICES.items() for dt in ("float32", "float64") for t in (0, 1)
         if (k, dt) != ("batch", "float32")}   # det's own float32 value differs there


def _det_second(m):
    x = m.tensor([[2.0, 1.0, 0.5], [1.0, 3.0, 0.0], [0.2, 0.1, 4.0]], requires_grad=True)
    g, = m.autograd.grad(m.linalg.det(x), x, create_graph=True)
    return [n for n in _walk(g) if "Solve" in n.name()]


def _walk(t):
    return graph_nodes(t.grad_fn)


CASES["det_create_graph_solve"] = _det_second
CASES["det_empty_batch"] = lambda m: [m.linalg.det(m.zeros(0, 2, 2, requires_grad=True)).grad_fn]

for _dt in ("float32", "float64"):
    for _lo in (-30.0, -1.0, 0.0):
        CASES[f"logsigmoid_{_dt}_{_lo}"] = (
            lambda m, dt=_dt, lo=_lo: [m.nn.functional.logsigmoid(
                m.linspace(lo, 30.0, 7, dtype=getattr(m, dt), requires_grad=True)).grad_fn])


def _logsigmoid_second(m):
    x = m.linspace(-3.0, 3.0, 5, dtype=m.float64, requires_grad=True)
    g, = m.autograd.grad(m.nn.functional.logsigmoid(x).sum(), x, create_graph=True)
    return [g.grad_fn]


CASES["logsigmoid_create_graph"] = _logsigmoid_second


def _linear_case(x_kind, w_rg, b_rg):
    def case(m):
        xs = {"plain": lambda: m.ones(2, 3, requires_grad=True),
              "const": lambda: m.ones(5, 3),
              "empty": lambda: m.ones(0, 3, requires_grad=True),
              "transposed": lambda: m.arange(6.0).reshape(3, 2).t().requires_grad_()}
        w = m.arange(12.0).reshape(4, 3).requires_grad_(w_rg)
        b = m.ones(4, requires_grad=b_rg)
        y = m.nn.functional.linear(xs[x_kind](), w, b)
        return [y.grad_fn] if y.grad_fn is not None else []
    return case


for _x in ("plain", "const", "empty", "transposed"):
    for _w in (True, False):
        for _b in (True, False):
            CASES[f"linear_{_x}_w{int(_w)}_b{int(_b)}"] = _linear_case(_x, _w, _b)


def _addmm_scaled(m):
    y = m.addmm(m.ones(4), m.ones(2, 3, requires_grad=True), m.ones(3, 4), alpha=2, beta=0.5)
    y.sum().backward()          # sizes and strides stay readable after backward
    return [y.grad_fn]


CASES["addmm_scaled_after_backward"] = _addmm_scaled
CASES["sgn"] = lambda m: [m.sgn(m.tensor([1.0, -2.0, 0.0], requires_grad=True)).grad_fn]
CASES["abs_create_graph"] = lambda m: _walk(_abs_second(m))


def _abs_second(m):
    x = m.tensor([1.0, -2.0, 0.5], requires_grad=True)
    g, = m.autograd.grad(x.abs().sum(), x, create_graph=True)
    return g


def _double(op, pos=False):
    def case(m):
        x = m.linspace(-2.0, 2.0, 5, dtype=m.float64, requires_grad=True)
        if pos:
            x = x.detach().abs().add(0.1).requires_grad_()
        y = op(m, x)
        g, = m.autograd.grad((y * m.linspace(1.0, 2.0, 5, dtype=m.float64)).sum(), x,
                             create_graph=True)
        return [n for n in _walk(g) if "BackwardBackward" in n.name()]
    return case


_DOUBLES = {
    "tanh": lambda m, x: x.tanh(), "sigmoid": lambda m, x: x.sigmoid(),
    "relu": lambda m, x: m.relu(x), "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 0.1),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x), "relu6": lambda m, x: m.nn.functional.relu6(x),
    "elu": lambda m, x: m.nn.functional.elu(x), "gelu": lambda m, x: m.nn.functional.gelu(x),
    "softplus": lambda m, x: m.nn.functional.softplus(x),
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
    "mse": lambda m, x: m.nn.functional.mse_loss(x, m.zeros(5, dtype=m.float64)),
    "smooth_l1": lambda m, x: m.nn.functional.smooth_l1_loss(x, m.zeros(5, dtype=m.float64)),
    "huber": lambda m, x: m.nn.functional.huber_loss(x, m.zeros(5, dtype=m.float64)),
    "nll": lambda m, x: m.nn.functional.nll_loss(x.reshape(1, 5), m.tensor([2])),
    "nll_weight": lambda m, x: m.nn.functional.nll_loss(
        x.reshape(1, 5), m.tensor([2]), weight=m.ones(5, dtype=m.float64), ignore_index=1),
    "max_pool": lambda m, x: m.nn.functional.max_pool2d(x.reshape(1, 1, 1, 5), (1, 2)).sum() * x,
    "avg_pool": lambda m, x: m.nn.functional.avg_pool2d(x.reshape(1, 1, 1, 5), (1, 2)).sum() * x,
}
for _k, _op in _DOUBLES.items():
    CASES[f"double_{_k}"] = _double(_op)


def _pow_second(exponent):
    # pow's gradient multiplies by exponent.toDouble(): MulBackward1 saves 2.0 and the
    # PowBackward0 of self ** (exponent - 1) saves 1.0 for `x ** 2` (they saved 2 and 1)
    def case(m):
        x = m.tensor([1.5, 2.0, 0.5], requires_grad=True)
        g, = m.autograd.grad((x ** exponent).sum(), x, create_graph=True)
        return _walk(g)
    return case


for _e in (2, 3, -1, 1, True, 0.5, 2.0):
    CASES[f"pow_create_graph_{_e!r}"] = _pow_second(_e)


@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_values_as_torch(name):
    _compare(CASES[name])


def test_buffer_after_edit_is_refused():
    x = gradviz.linspace(-1.0, 1.0, 3, requires_grad=True)
    a = x * 1.0
    y = gradviz.nn.functional.logsigmoid(a)
    with gradviz.no_grad():
        a.mul_(2)
    with pytest.raises(NotImplementedError, match="--backend torch"):
        y.grad_fn._saved_buffer


def test_buffer_freed_after_backward_as_torch():
    msgs = []
    for m in (gradviz, torch):
        y = m.nn.functional.logsigmoid(m.ones(2, requires_grad=True))
        y.sum().backward()
        with pytest.raises(RuntimeError) as exc:
            y.grad_fn._saved_buffer
        msgs.append(str(exc.value).split("\n")[0])
    assert msgs[0] == msgs[1]


def _shrink_double(name):
    def case(m):
        x = m.linspace(-1.0, 1.0, 5, dtype=m.float64, requires_grad=True)
        g = m.linspace(1.0, 2.0, 5, dtype=m.float64, requires_grad=True)
        y, = m.autograd.grad(getattr(m.nn.functional, name)(x, 0.3), x, g, create_graph=True)
        return [y.grad_fn]
    return case


@pytest.mark.parametrize("name", ["hardshrink", "softshrink"])
def test_shrink_backward_saves_self_not_grad_output(name):
    """The saved self of Hardshrink/SoftshrinkBackwardBackward0 is the forward's input (it was
    the incoming gradient when that gradient required grad)."""
    _compare(_shrink_double(name))
