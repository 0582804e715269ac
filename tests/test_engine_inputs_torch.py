"""Backward with `inputs` as torch 2.13's engine runs it: a node neither needed nor captured
never runs (none of its hooks), a captured node that is not needed runs its tensor hooks and
retain_grad only, and an edge to a node that does not run gets None, not a zero gradient
(post-hooks see None). Each case records the calls on gradviz and on torch and compares."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _v(t):
    return None if t is None else t.tolist()


def _values(gs):
    return tuple(_v(g) for g in gs)


def _two_branches(t):
    """c = a*2 and d = b*3, node pre-hooks on both, a tensor hook and retain_grad on d."""
    calls = []
    a = t.tensor([1.0, 2.0], requires_grad=True)
    b = t.tensor([3.0, 4.0], requires_grad=True)
    c = a * 2
    d = b * 3
    c.grad_fn.register_prehook(lambda go: calls.append(("c pre", _values(go))))
    d.grad_fn.register_prehook(lambda go: calls.append(("d pre", _values(go))))
    d.register_hook(lambda g: calls.append(("d hook", _v(g))))
    d.retain_grad()
    b.register_hook(lambda g: calls.append(("b hook", _v(g))))
    e = (c * d).sum()
    calls.append(("grad c", _values(t.autograd.grad(e, c, retain_graph=True)), _v(d.grad)))
    calls.append(("grad a", _values(t.autograd.grad(e, a, retain_graph=True)), _v(d.grad)))
    calls.append(("grad c.sum", _values(t.autograd.grad(c.sum(), a)), _v(d.grad)))
    return calls


def test_grad_runs_no_hook_of_a_node_it_does_not_need():
    assert _two_branches(gradviz) == _two_branches(torch)


def _captured_and_needed(t, inputs):
    """b = a*2 is both an input and on the way to a: torch captures b's gradient before b's
    tensor hook (which scales it by 10) when b's node runs, after it when it does not."""
    calls = []
    a = t.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: calls.append(("b hook", _v(g))) or g * 10)
    b.retain_grad()
    b.grad_fn.register_prehook(lambda go: calls.append(("b pre", _values(go))))
    out = (b * 3).sum()
    chosen = [{"a": a, "b": b}[k] for k in inputs]
    calls.append(("grad", _values(t.autograd.grad(out, chosen)), _v(b.grad)))
    return calls


@pytest.mark.parametrize("inputs", ["ba", "b", "a", "ab"])
def test_grad_captures_as_torch_before_or_after_tensor_hooks(inputs):
    assert _captured_and_needed(gradviz, inputs) == _captured_and_needed(torch, inputs)


def _post_hook_edges(t, how):
    """What a MulBackward0 post-hook receives for an edge whose gradient nobody needs."""
    calls = []
    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = t.tensor([3.0, 4.0], requires_grad=how != "constant")
    q = y * 1 if how == "nonleaf" else y
    r = x * q
    r.grad_fn.register_hook(lambda gi, go: calls.append(("post", _values(gi), _values(go))))
    if how == "backward_inputs":
        r.sum().backward(inputs=[x])
        calls.append(("grads", _v(x.grad), _v(y.grad)))
    elif how == "constant":
        r.sum().backward()
        calls.append(("grads", _v(x.grad)))
    else:
        calls.append(("grad", _values(t.autograd.grad(r.sum(), x))))
    return calls


@pytest.mark.parametrize("how", ["constant", "leaf", "nonleaf", "backward_inputs"])
def test_post_hook_sees_none_for_an_edge_not_needed(how):
    assert _post_hook_edges(gradviz, how) == _post_hook_edges(torch, how)


def _backward_to_a_nonleaf(t):
    """backward(inputs=[b]) with b = x*2: torch runs b's node (pre- and post-hooks, nothing
    sent on) and x gets no gradient."""
    calls = []
    x = t.tensor([1.0, 2.0], requires_grad=True)
    b = x * 2
    b.grad_fn.register_prehook(lambda go: calls.append(("pre", _values(go))))
    b.grad_fn.register_hook(lambda gi, go: calls.append(("post", _values(gi), _values(go))))
    b.register_hook(lambda g: calls.append(("hook", _v(g))))
    (b * 3).sum().backward(inputs=[b])
    calls.append(("grads", _v(b.grad), _v(x.grad)))
    return calls


def test_backward_inputs_runs_a_nonleaf_inputs_node_as_torch():
    assert _backward_to_a_nonleaf(gradviz) == _backward_to_a_nonleaf(torch)


def _copy_slices(t, wrt):
    calls = []
    base = t.zeros(3, requires_grad=True).clone()
    w = t.tensor([1.0, 2.0], requires_grad=True)
    v = t.tensor([5.0, 6.0], requires_grad=True)
    base[:2].mul_(w * v)
    base.grad_fn.register_hook(lambda gi, go: calls.append(("post", _values(gi))))
    calls.append(("grad", _values(t.autograd.grad((base * 2).sum(), {"w": w, "v": v}[wrt],
                                                  create_graph=True))))
    return calls


@pytest.mark.parametrize("wrt", ["w", "v"])
def test_copy_slices_sends_nothing_to_a_base_that_does_not_run(wrt):
    assert _copy_slices(gradviz, wrt) == _copy_slices(torch, wrt)


def _layer_norm(t):
    """A variadic row (native_layer_norm): only the needed input's gradient is computed."""
    calls = []
    x = t.tensor([[1.0, 2.0, 4.0]], requires_grad=True)
    w = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = t.tensor([0.5, 0.0, 0.0], requires_grad=True)
    y = t.nn.functional.layer_norm(x, (3,), w, b)
    y.grad_fn.register_hook(lambda gi, go: calls.append([g is None for g in gi]))
    (g,) = t.autograd.grad((y * y).sum(), w)
    calls.append([round(v, 4) for v in g.tolist()])
    return calls


def test_variadic_row_computes_only_the_needed_gradients():
    assert _layer_norm(gradviz) == _layer_norm(torch)


def _multi_grad_hook(t, mode, leaves):
    seen = []
    a = t.tensor([1.0, 2.0], requires_grad=True)
    b = t.tensor([3.0, 4.0], requires_grad=True)
    m, n = (a, b) if leaves else (a * 2, b * 2)
    t.autograd.graph.register_multi_grad_hook(
        (m, n), lambda gs: seen.append(_values(gs) if mode == "all" else _v(gs)), mode=mode)
    for out, inputs in [((m * n).sum(), [m]), ((m * n).sum(), [m, n]), ((m * n).sum(), [a]),
                        ((m * n * 2).sum(), [n])]:
        try:
            seen.append(_values(t.autograd.grad(out, inputs, retain_graph=True)))
        except RuntimeError as exc:     # torch refuses a captured leaf in mode "all"
            seen.append(str(exc))
    (m * n).sum().backward(inputs=[a], retain_graph=True)
    (m * n).sum().backward()
    return seen


@pytest.mark.parametrize("leaves", [True, False])
@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hook_counts_what_runs_as_torch(mode, leaves):
    assert _multi_grad_hook(gradviz, mode, leaves) == _multi_grad_hook(torch, mode, leaves)


def test_inspector_records_no_gradient_sent_on_an_edge_not_needed(tmp_path):
    """`run --step`: the MulBackward0 of x * y sends nothing to y when grad() asks for x only,
    on the core as on torch."""
    from gradviz.inspect import run_file
    path = tmp_path / "f.py"
    path.write_text("import gradviz as torch\n"
                    "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                    "y = torch.tensor([3.0, 4.0], requires_grad=True)\n"
                    "(g,) = torch.autograd.grad((x * y).sum(), x)\n")
    steps = {}
    for backend in ("gradviz", "torch"):
        (call,) = run_file(str(path), backend=backend).report()["backward_calls"]
        steps[backend] = [(s["name"], [(o["name"], o["grad"]) for o in s["grad_out"]])
                          for s in call["steps"]]
    assert steps["gradviz"] == steps["torch"]
    assert steps["gradviz"][-1] == ("MulBackward0", [("AccumulateGrad", [3.0, 4.0]),
                                                     ("AccumulateGrad", None)])
