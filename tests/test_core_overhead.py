"""What each recorded op leaves behind for the cyclic garbage collector, and the shortcuts that
keep it small: nodes of two inputs keep their edges without a tuple, an output gets its version
counter only when something edits or views it, add's default alpha is one shared tuple."""

import gc

import pytest

import gradviz as torch


def _tracked_per_step(shape):
    """GC-tracked objects that one step of the benchmark chain (h = y * a; h = h + b;
    h = tanh(h); y = h * c) leaves alive."""
    x, a, b, c = (torch.full(shape, v, requires_grad=True) for v in (0.5, 0.9, 0.1, 1.02))

    def steps(y, n):
        for _ in range(n):
            h = y * a
            h = h + b
            h = torch.tanh(h)
            y = h * c
        return y

    y = steps(x, 5)
    gc.collect()
    before = len(gc.get_objects())
    y = steps(y, 200)
    gc.collect()
    return (len(gc.get_objects()) - before) / 200


@pytest.mark.parametrize("shape", [(), (8, 8)])
def test_a_chain_step_leaves_eight_tracked_objects(shape):
    # 4 nodes, the 2 tensors the muls save, and the muls' saved (self, other) tuples: no edge
    # tuples, no version counter for tanh's saved result, no (alpha,) tuple.
    assert round(_tracked_per_step(shape)) == 8


def _edges(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    n = lib.tensor([5.0, 6.0])
    out = []
    for y in (x * w, x * 2, n * x, x + n, x.exp(), lib.addcmul(x, w, n), lib.addcmul(n, x, w),
              lib.lerp(x, w, 0.5)):
        out.append([(None if f is None else type(f).__name__, nr)
                    for f, nr in y.grad_fn.next_functions])
    y = (x * w).exp() * 3 + lib.addcmul(x, w, x)
    y.sum().backward()
    return out, x.grad.tolist(), w.grad.tolist()


def test_edges_of_one_two_and_three_inputs_as_torch():
    t = pytest.importorskip("torch")
    assert _edges(torch) == _edges(t)


def _edit_after_save(lib, edit):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    y = x.tanh()                    # saves its result
    edit(y)
    try:
        y.sum().backward()
    except RuntimeError as exc:
        return str(exc).split("Hint")[0]
    return [round(v, 5) for v in x.grad.tolist()]


@pytest.mark.parametrize("edit", [
    lambda y: y.add_(1),
    lambda y: y[0].mul_(2),                     # through a view
    lambda y: y.detach().zero_(),               # through a detached alias
    lambda y: (y.grad_fn._saved_result, y.add_(1)),     # the read-back is not the output
    lambda y: None,
])
def test_an_output_edited_after_its_node_saved_it_as_torch(edit):
    t = pytest.importorskip("torch")
    assert _edit_after_save(torch, edit) == _edit_after_save(t, edit)


def _edit_after_detach_(lib, op, edit):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    y = getattr(x, op)()            # saves its result
    z = y * 3
    y.detach_()                     # truncated backprop's idiom, then an in-place update
    getattr(y, edit)(2)
    try:
        z.sum().backward()
    except RuntimeError as exc:
        return str(exc).split("Hint")[0]
    return [round(v, 5) for v in x.grad.tolist()]


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid"])
@pytest.mark.parametrize("edit", ["mul_", "add_", "fill_"])
def test_an_output_detached_in_place_then_edited_as_torch(op, edit):
    t = pytest.importorskip("torch")
    assert _edit_after_detach_(torch, op, edit) == _edit_after_detach_(t, op, edit)


def test_saved_alpha_as_torch():
    t = pytest.importorskip("torch")

    def saved(lib):
        x = lib.ones(2, requires_grad=True)
        return [repr(f(x).grad_fn._saved_alpha) for f in (
            lambda x: x + x, lambda x: x - x, lambda x: lib.add(x, x, alpha=1.0),
            lambda x: lib.sub(x, x, alpha=2), lambda x: lib.add(x, x, alpha=1))]
    assert saved(torch) == saved(t)
