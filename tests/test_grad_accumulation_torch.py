"""A leaf's .grad accumulates as torch 2.13's AccumulateGrad does: a later gradient is added
in place (`variable_grad += new_grad`) when grad mode is off for the accumulation, so .grad
stays the same tensor and its _version counts the additions (and a graph that saved the old
.grad refuses to run backward); under create_graph the sum is a new tensor."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _twice(t):
    w = t.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    first, first_id = w.grad, id(w.grad)
    seen = [w.grad._version]
    (w * 3).sum().backward()
    seen += [w.grad._version, id(w.grad) == first_id, first.tolist()]
    (w * 4).sum().backward()
    return seen + [w.grad._version, w.grad.tolist()]


def _create_graph(t):
    v = t.ones(2, requires_grad=True)
    (v ** 2).sum().backward(create_graph=True)
    first = v.grad
    (v ** 2).sum().backward(create_graph=True)
    return [v.grad._version, v.grad is first, v.grad.requires_grad, first.tolist(),
            v.grad.tolist()]


def _retained(t):
    x = t.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    first = y.grad
    y.sum().backward()
    return [y.grad._version, y.grad is first, x.grad._version]


def _after_zero_grad(t):
    p = t.nn.Parameter(t.ones(2))
    opt = t.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    grad = p.grad
    (p * 2).sum().backward()
    return [p.grad._version, p.grad is grad, p.grad.tolist()]


def _saved_then_accumulated(t):
    a = t.ones(2, requires_grad=True)
    (a * 2).sum().backward()
    b = t.ones(2, requires_grad=True)
    z = (b * a.grad).sum()              # MulBackward0 saves a.grad (version 0)
    (a * 2).sum().backward()            # adds into a.grad in place: version 1
    try:
        z.backward()
    except RuntimeError as exc:
        return str(exc).split(";")[0]
    return "ran"


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("program", [_twice, _create_graph, _retained, _after_zero_grad,
                                     _saved_then_accumulated])
def test_grad_accumulates_as_torch(program):
    assert program(gradviz) == program(torch)
