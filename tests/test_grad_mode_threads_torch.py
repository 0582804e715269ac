"""Grad mode, inference mode and saved-tensor hooks are per thread, as torch's are: one thread's
no_grad never stops recording in another, and a new thread starts with grad mode on. Anomaly
mode is one for the process, as torch's. Each case runs the same code on gradviz and torch."""

import threading

import pytest

import gradviz
from gradviz.autograd import grad_mode

torch = pytest.importorskip("torch")


def _in_thread(fn):
    """fn() run in a new thread, which the caller waits for; its result (or exception)."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except Exception as exc:       # handed back to the test
            out["error"] = exc
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def _assert_back_to_defaults():
    # every thread in the default modes again: the plain slots are read, not each thread's
    assert type(grad_mode._state) is grad_mode._State
    assert [getattr(grad_mode._outside, f) for f in grad_mode._FIELDS] == [0, 0, 0, 0]


def _modes(tc):
    """What a thread sees: grad mode, inference mode, and whether an op records."""
    x = tc.ones(2, requires_grad=True)
    return tc.is_grad_enabled(), tc.is_inference_mode_enabled(), (x * 2).requires_grad


def _inside(tc, make):
    """The modes a new thread sees while this one is inside `make(tc)`, then this thread's."""
    with make(tc):
        other = _in_thread(lambda: _modes(tc))
        mine = _modes(tc)
    return other, mine, _modes(tc)


@pytest.mark.parametrize("make", [lambda tc: tc.no_grad(), lambda tc: tc.inference_mode(),
                                  lambda tc: tc.set_grad_enabled(False),
                                  lambda tc: tc.inference_mode(False),
                                  lambda tc: tc.enable_grad()],
                         ids=["no_grad", "inference_mode", "set_grad_enabled",
                              "inference_mode_false", "enable_grad"])
def test_a_new_thread_starts_in_the_default_modes(make):
    assert _inside(gradviz, make) == _inside(torch, make)
    assert _inside(gradviz, make)[0] == (True, False, True)
    _assert_back_to_defaults()


def _other_thread_no_grad(tc):
    """Another thread enters no_grad and waits there while this one records an op."""
    entered, done = threading.Event(), threading.Event()

    def other():
        with tc.no_grad():
            entered.set()
            done.wait(10)
            return tc.is_grad_enabled()
    t = threading.Thread(target=other)
    t.start()
    entered.wait(10)
    x = tc.ones(2, requires_grad=True)
    y = x * 2
    seen = (tc.is_grad_enabled(), y.requires_grad, type(y.grad_fn).__name__)
    done.set()
    t.join()
    return seen


def test_one_threads_no_grad_does_not_stop_recording_in_another():
    assert _other_thread_no_grad(gradviz) == _other_thread_no_grad(torch) == \
        (True, True, "MulBackward0")


def _set_in_thread(tc):
    """set_grad_enabled(False) as a call in a thread: that thread's mode only."""
    def run():
        tc.set_grad_enabled(False)
        try:
            return tc.is_grad_enabled(), (tc.ones(1, requires_grad=True) * 2).requires_grad
        finally:
            tc.set_grad_enabled(True)
    return _in_thread(run), tc.is_grad_enabled()


def test_set_grad_enabled_in_a_thread_is_that_threads():
    assert _set_in_thread(gradviz) == _set_in_thread(torch) == ((False, False), True)


def _hooks_in_thread(tc):
    """saved_tensors_hooks entered in this thread do not pack what another thread saves."""
    packed = []
    with tc.autograd.graph.saved_tensors_hooks(lambda t: packed.append("pack") or t,
                                               lambda t: t):
        _in_thread(lambda: tc.ones(2, requires_grad=True).exp())
        n_other = len(packed)
        tc.ones(2, requires_grad=True).exp()
    return n_other, len(packed)


def test_saved_tensors_hooks_are_per_thread():
    assert _hooks_in_thread(gradviz) == _hooks_in_thread(torch) == (0, 1)


def _anomaly_in_thread(tc):
    with tc.autograd.set_detect_anomaly(True):
        return _in_thread(tc.is_anomaly_enabled)


def test_anomaly_mode_is_the_processs():
    assert _anomaly_in_thread(gradviz) is _anomaly_in_thread(torch) is True


def test_backward_in_a_thread_while_another_is_in_no_grad():
    # the engine turns grad mode off for its own thread during backward: the other thread's
    # ops keep recording, and the modes are the defaults again afterwards
    x = gradviz.ones(3, requires_grad=True)
    entered, done = threading.Event(), threading.Event()

    def other():
        with gradviz.no_grad():
            entered.set()
            done.wait(10)
    t = threading.Thread(target=other)
    t.start()
    entered.wait(10)
    (x * x).sum().backward()
    recorded = (x * 2).requires_grad
    done.set()
    t.join()
    assert x.grad.tolist() == [2.0, 2.0, 2.0] and recorded
    _assert_back_to_defaults()


def _modes_seen_in_backward(tc, create_graph):
    """Grad mode as a hook, a custom Function's backward and a post-accumulate hook see it."""
    seen = []

    class Double(tc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(("function", tc.is_grad_enabled()))
            return g * 2

    x = tc.ones(2, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: seen.append(("post", tc.is_grad_enabled())))
    y = Double.apply(x.exp()).tanh()
    y.register_hook(lambda g: seen.append(("hook", tc.is_grad_enabled())))
    y.sum().backward(create_graph=create_graph)
    return seen, tc.is_grad_enabled()


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("create_graph", [False, True])
def test_user_code_in_backward_sees_torchs_grad_mode(create_graph):
    # a backward of gradviz's own nodes only does not switch the thread's mode; anything that
    # runs user code sees create_graph's, as in torch
    assert _modes_seen_in_backward(gradviz, create_graph) == \
        _modes_seen_in_backward(torch, create_graph)


def test_a_backward_of_built_in_nodes_leaves_the_modes_alone():
    x = gradviz.ones(3, requires_grad=True)
    switched = []
    set_mode, set_enabled = grad_mode._set, grad_mode._set_enabled

    def counting(name, value):
        switched.append((name, value))
        return set_mode(name, value)

    def counting_enabled(value):        # grad mode's own writer (_GradMode's)
        switched.append(("enabled", value))
        return set_enabled(value)
    try:
        grad_mode._set, grad_mode._set_enabled = counting, counting_enabled
        (x.exp() * x).sum().backward()
        assert switched == []
        (x.exp() * x).sum().backward(create_graph=True)
        assert switched == [("enabled", True), ("enabled", True)]
    finally:
        grad_mode._set, grad_mode._set_enabled = set_mode, set_enabled
    _assert_back_to_defaults()
