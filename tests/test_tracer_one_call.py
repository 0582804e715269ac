"""The core's one-call reports (`recorded` for an op's node and output, `applied` for a node
the engine ran without hooks) keep what the two calls they stand for keep: the inspector's
fast paths are compared with the base's defaults, which call node+made and grad+sent."""

import math

import numpy as np

import gradviz as torch
from gradviz.autograd import tracing
from gradviz.inspect.tracer import Tracer


class _TwoCalls(Tracer):
    """The tracer through the base's defaults: node then made, grad then sent."""

    recorded = tracing.Tracer.recorded
    applied = tracing.Tracer.applied


class _Counting(Tracer):
    def __init__(self):
        super().__init__()
        self.fast = 0

    def applied(self, node, grads, outs):
        self.fast += 1
        super().applied(node, grads, outs)


def _loop(steps, blow_up_at=None):
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.randn(()))
    v = torch.nn.Parameter(torch.randn(3))
    x = torch.linspace(-1, 1, 100)
    opt = torch.optim.SGD([w, v], lr=1e-3, momentum=0.9)
    for t in range(steps):
        y = w * x + (v[0] + v[1] * x ** 2).exp() * v[2]
        if t == blow_up_at:
            y = y * float("inf")
        loss = ((y - x.sin()) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w, v


def _records(cls, **kw):
    tracer = cls()
    with tracing.installed(tracer):
        kept = _loop(**kw)
    steps = [(s.call, type(s.node).__name__, [None if g is None else g.tolist() for g in s.grads],
              [None if g is None else g.tolist() for g in s.outs], s.hooks)
             for s in tracer.steps]
    events = [(type(n).__name__, [None if g is None else np.asarray(g).tolist() for g in gs])
              for n, gs in tracer.events]
    nodes = [(tracer.order(n), type(n).__name__, tracer.output_of(n) is not None)
             for n in tracer.nodes]
    bad = [(type(n).__name__, i) for n, i in tracer.nonfinite]
    return tracer, kept, (steps, events, nodes, bad, tracer._count, len(tracer.call_marks))


def _same(a, b):
    assert repr(a) == repr(b)       # (nan and inf compare as text)


def test_the_one_call_reports_keep_what_two_calls_keep():
    fast, _, got = _records(Tracer, steps=6)
    _, _, want = _records(_TwoCalls, steps=6)
    _same(got, want)
    assert len(got[0]) > 10 and len(got[1]) > 20 and got[2]


def test_a_nonfinite_gradient_is_found_by_the_one_call_report():
    _, _, got = _records(Tracer, steps=4, blow_up_at=2)
    _, _, want = _records(_TwoCalls, steps=4, blow_up_at=2)
    _same(got, want)
    assert got[3] and got[3][0] == ("PowBackward0", 0)     # 2 * inf * grad


def test_a_training_loop_backward_goes_through_the_one_call():
    tracer = _Counting()
    with tracing.installed(tracer):
        _loop(3)
    # every node of each pass but none: the loop registers no hook
    assert tracer.fast == 3 * len([s for s in tracer.steps if s.call == 2])
    assert math.isfinite(float(tracer.steps[-1].grads[0].sum()))


def test_one_threads_steps_are_let_go_from_the_front_as_the_filter_would():
    tracer = Tracer()
    w = torch.ones(3, requires_grad=True)

    def inner(g):
        with torch.enable_grad():       # a backward inside a backward, on the same thread
            (torch.ones(2, requires_grad=True) * 3).sum().backward()

    with tracing.installed(tracer):
        for t in range(5):
            y = (w * 2).exp()
            if t == 3:
                y.register_hook(inner)
            y.sum().backward()
            kept = [s.call for s in tracer.steps]
            assert kept == sorted(kept) and kept
            calls = len(tracer.backward_calls)
            assert set(kept) == {c for c in (calls - 2, calls - 1) if c >= 0}, t
    assert tracer.steps_from_call == len(tracer.backward_calls) - 2


def test_a_subclass_overriding_a_half_gets_both_halves_called():
    class Nodes(Tracer):
        def node(self, node):
            self.seen.append(("node", type(node).__name__))
            super().node(node)

    class Grads(Tracer):
        def grad(self, node, grads):
            self.seen.append(("grad", type(node).__name__))
            super().grad(node, grads)

    for cls, kind in ((Nodes, "node"), (Grads, "grad")):
        t = cls()
        t.seen = []
        with tracing.installed(t):
            x = torch.tensor(2.0, requires_grad=True)
            (x * 3).exp().backward()
        assert [n for k, n in t.seen if k == kind] == (
            ["AccumulateGrad", "MulBackward0", "ExpBackward0"] if kind == "node" else
            ["ExpBackward0", "MulBackward0", "AccumulateGrad"]), cls
        assert len(t.steps) == 3 and len(t.events) == 3


def test_a_grad_that_reads_the_leaf_is_called_before_the_node_runs():
    # explain reads a leaf's .grad in grad, before its AccumulateGrad writes it
    class Reads(Tracer):
        def grad(self, node, grads):
            if type(node).__name__ == "AccumulateGrad":
                g = node.variable.grad
                self.seen.append(None if g is None else g.item())
            super().grad(node, grads)

    t = Reads()
    t.seen = []
    assert Tracer.applies and not Reads.applies
    with tracing.installed(t):
        x = torch.tensor(2.0, requires_grad=True)
        (x * 3).backward()
        (x * 3).backward()
    assert t.seen == [None, 3.0]


def test_the_core_makes_one_call_per_plain_node_only_when_asked():
    class Calls(tracing.Tracer):
        def __init__(self):
            self.calls = []

        def grad(self, node, grads):
            self.calls.append(("grad", type(node).__name__))

        def sent(self, node, outs):
            self.calls.append(("sent", type(node).__name__))

    class OneCall(Calls):
        applies = True

        def applied(self, node, grads, outs):
            self.calls.append(("applied", type(node).__name__))

    for cls in (Calls, OneCall):
        t = cls()
        with tracing.installed(t):
            x = torch.tensor(2.0, requires_grad=True)
            (x * 3).backward()
        names = ["MulBackward0", "AccumulateGrad"]
        want = [("applied", n) for n in names] if cls is OneCall else \
            [(k, n) for n in names for k in ("grad", "sent")]
        assert t.calls == want, cls


def test_a_gradient_passed_on_is_kept_as_it_was_sent():
    # AddBackward0 sends the gradient it received on to both inputs: the step keeps one copy
    # for what it got and sent, which edits of the leaves' .grad after do not change; a 0-d
    # gradient's finiteness is read from its value (an inf is found, a finite one is not).
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    c = torch.tensor(2.0, requires_grad=True)
    tracer = Tracer()
    with tracing.installed(tracer):
        ((a + b) * c).backward(torch.tensor([1.0, 2.0, 3.0]))
        with torch.no_grad():
            a.grad.mul_(0)
            b.grad.add_(5)
    add = [s for s in tracer.steps if type(s.node).__name__ == "AddBackward0"][0]
    assert [g.tolist() for g in add.grads] == [[2.0, 4.0, 6.0]]
    assert [g.tolist() for g in add.outs] == [[2.0, 4.0, 6.0], [2.0, 4.0, 6.0]]
    mul = [s for s in tracer.steps if type(s.node).__name__ == "MulBackward0"][0]
    assert mul.outs[1].tolist() == 12.0 and tracer.nonfinite == []
    with tracing.installed(tracer := Tracer()):
        (c * float("inf")).backward()
    assert [(type(n).__name__, i) for n, i in tracer.nonfinite] == [("MulBackward0", 0)]
