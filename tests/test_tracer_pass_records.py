"""What the tracer keeps of a backward pass without walking or holding per step: the .grad an
AccumulateGrad writes takes the pass's user frame found by `begin` (Tracer._pass_mark), a 0-d
gradient is kept as its NumPy scalar, and a finished call's dead root is one shared reference.
Each is compared with what the walk, the copy or the call's own reference gives."""

import numpy as np

import gradviz as torch
from gradviz.autograd import callsite, tracing
from gradviz.inspect import tracer as tracer_mod
from gradviz.inspect.tracer import Tracer


class _Walking(Tracer):
    """The tracer as it was: created walks for every tensor."""

    def _pass_mark(self):
        return None


def _grads_in_function(model, x):
    loss = model(x).sum()
    loss.backward()
    return loss


def _backward_inside(g):
    with torch.enable_grad():       # (backward runs its hooks without grad mode)
        (torch.ones(1, requires_grad=True) * 2).sum().backward()


def _passes(tracer):
    """Run the passes: (the tensors the engine made, the tracer's answers for them)."""
    lin = torch.nn.Linear(3, 2)
    x = torch.ones(4, 3, requires_grad=True)
    seen = []

    def backward_in_hook(module, args, out):
        # a backward run from a forward hook (inside Module.__call__)
        y = torch.ones(2, requires_grad=True)
        (y * 2).sum().backward()
        seen.append(y.grad)

    with tracing.installed(tracer):
        _grads_in_function(lin, x)          # a pass from a function's frame
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        (w * 3).sum().backward()            # from this frame
        h = lin.register_forward_hook(backward_in_hook)
        lin(x)
        h.remove()
        v = torch.ones(3, requires_grad=True)
        v.register_hook(_backward_inside)
        (v * 2).sum().backward()            # a pass inside a pass's hook
    grads = [lin.weight.grad, lin.bias.grad, x.grad, w.grad, seen[0], v.grad]
    return grads, [g._gv_made for g in grads]


def test_the_grad_of_a_pass_takes_the_frame_its_walk_finds(monkeypatch):
    walks = []
    real = tracer_mod._maker_frame

    def counted(depth, *args):
        walks.append(depth)
        return real(depth + 1, *args)

    monkeypatch.setattr(tracer_mod, "_maker_frame", counted)
    t = Tracer()
    grads, made = _passes(t)
    marked = len(walks)
    _, walked = _passes(_Walking())
    assert made == walked
    walking = len(walks) - marked
    assert walking - marked >= 6        # every .grad above took the mark, not a walk
    assert t._passes == {}              # every pass let go of its frames
    assert [m[0] for m in made] == ["accumulate"] * 6
    assert made[0][1] is _grads_in_function.__code__
    assert made[3][1] is _passes.__code__ and made[5][1] is _passes.__code__
    assert made[4][1].co_name == "backward_in_hook"


def test_a_failed_pass_lets_go_of_its_frames():
    t = Tracer()
    with tracing.installed(t):
        a = torch.ones(2, requires_grad=True)
        b = a * 2
        b.sum().backward()
        try:
            b.sum().backward()              # the saved values were freed: raises
        except RuntimeError:
            pass
    assert t._passes == {}


def test_zero_dim_gradients_read_back_as_the_copies_were():
    t = Tracer()
    outs = []           # (kept: the events of a live node are listed)
    with tracing.installed(t):
        for dtype in (torch.float32, torch.float64, torch.float16):
            p = torch.tensor(2.0, dtype=dtype, requires_grad=True)
            x = torch.ones(3, dtype=dtype)
            for _ in range(3):
                outs.append((p * x).sum())      # p's gradient: a 0-d array, [3.]
                outs[-1].backward()
    received = [(type(node).__name__, g) for node, gs in t.events for g in gs]
    zero_dim = [g for name, g in received if name == "AccumulateGrad"]
    assert len(zero_dim) == 9
    for g, dtype in zip(zero_dim, [np.float32] * 3 + [np.float64] * 3 + [np.float16] * 3):
        assert type(g) is np.ndarray and g.shape == () and g.dtype == dtype and g == 3
    acc = t.steps[-1].node
    assert type(acc).__name__ == "AccumulateGrad"
    last = t.last_grad[acc]
    assert type(last[0]) is np.ndarray and last[0].shape == () and last[0].dtype == np.float16
    assert [type(g) for g in t.steps[-1].grads] == [np.ndarray]
    # kept as scalars, not 0-d arrays (a third of the memory per step)
    assert [type(g) for g in t._event_log[-5::2]] == [np.float16, np.ndarray, np.float16]


def test_dead_roots_of_old_calls_share_one_reference():
    t = Tracer()
    with tracing.installed(t):
        p = torch.tensor(1.0, requires_grad=True)
        keep = None
        for i in range(6):
            loss = p * 2
            if i == 1:
                keep = loss                 # a root the file keeps stays listed
            loss.backward()
    assert [len(roots) for roots, _, _ in t.backward_calls] == [0, 1, 0, 0, 1, 1]
    assert t.backward_calls[1][0] == [keep.grad_fn]
    assert sum(r is tracer_mod._DEAD_REF for r in t._call_roots) == 3
    assert len({id(c) for c in t._calls}) == 1      # one (site, capture) pair, shared
