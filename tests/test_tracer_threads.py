"""The tracer's records stay right when the file's threads run ops at once: module calls stay
in the thread that made them, a backward call's number names the same call in every list,
each thread's steps and hook firings go to its own call, and nothing a callback iterates is
changed under it by another thread. Each test runs threads that take turns every few
bytecodes (a tiny switch interval) and fails on the races it was written for."""

import sys
import threading

import pytest

import gradviz as torch
from gradviz.inspect.tracer import Tracer, tracing

THREADS = 3


@pytest.fixture
def switching():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def _run_threads(target, count=THREADS):
    """Run target(k) in `count` threads at once; re-raise the first error one of them hit."""
    errors = []

    def guarded(k):
        try:
            target(k)
        except BaseException as exc:        # noqa: BLE001 - reported in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(count)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


def test_module_calls_stay_in_the_thread_that_made_them(switching):
    tracer = Tracer()
    models = [torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh()) for _ in range(THREADS)]
    outs = [None] * THREADS

    def train(k):
        x = torch.ones(2, 3)
        for _ in range(60):
            out = models[k](x)
            out.sum().backward()
        outs[k] = out

    with tracing(tracer):
        _run_threads(train)
    calls = tracer.modules
    roots = {id(m): i for i, m in calls.root_modules()}
    assert sorted(roots) == sorted(id(m) for m in models)
    numbers = {}
    for call in calls.recent:
        if call.name == "":
            assert call.parent is None, "a thread's model call ran inside another thread's"
        else:
            assert call.parent is not None and call.parent.name == ""
            assert call.parent.root == call.root
        numbers.setdefault((call.root, call.name), []).append(call.number)
    for seen in numbers.values():       # no number given twice, none lost
        assert seen == list(range(seen[0], seen[0] + len(seen)))
    for k, out in enumerate(outs):      # the last output's node: its own thread's call
        call = calls.call_of(out.grad_fn)
        assert (call.name, call.root) == ("1", roots[id(models[k])])
    assert not any(calls._stacks.values())      # every call closed


def _graph(root):
    """The nodes reachable from root (itself included)."""
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack.extend(n for n, _ in node.next_functions)
    return seen


def test_backward_calls_marks_and_steps_stay_in_step(switching):
    tracer = Tracer(keep_history=True)      # every call's steps kept, not the last two
    leaves = [torch.ones(4, requires_grad=True) for _ in range(THREADS)]
    losses = [[] for _ in range(THREADS)]

    def train(k):
        for i in range(80):
            h = leaves[k] * (i + 1)
            for _ in range(6):      # a backward long enough for the threads to take turns
                h = (h * 0.5).tanh()
            loss = h.sum()
            losses[k].append(loss)      # kept: every call's root stays alive
            loss.backward()

    with tracing(tracer):
        _run_threads(train)
    calls = tracer.backward_calls
    assert len(calls) == len(tracer.call_marks) == 80 * THREADS
    for (roots, _, _), mark in zip(calls, tracer.call_marks):
        # its root was made before the call began: the mark counts it
        assert tracer.order(roots[0]) < mark
    assert tracer.steps
    for step in tracer.steps:
        assert step.node in _graph(calls[step.call][0][0]), "a step went to another's call"


def test_each_hook_firing_is_found_at_its_own_index(switching):
    tracer = Tracer()
    leaves = [torch.ones(2, requires_grad=True) for _ in range(THREADS)]

    def bump(p):
        p.grad.add_(1.0)        # changes .grad: each firing is listed in changed_grads

    for p in leaves:
        p.register_post_accumulate_grad_hook(bump)

    def train(k):
        for i in range(60):
            leaves[k].grad = None
            (leaves[k] * 2).sum().backward()

    with tracing(tracer):
        _run_threads(train)
    # (each firing twice: as the hook's change of .grad, and as the change reaching .grad)
    assert len(tracer.changed_grads) == 2 * 60 * THREADS
    for variable, call, hooks in tracer.changed_grads:
        (k,) = hooks
        event = tracer.hook_events[k]
        assert event.kind == "post_accumulate" and event.node.variable is variable
        assert event.call == call


def test_module_outputs_of_threads_running_at_once(switching):
    # every thread's model call makes tensors inside Module.__call__ (Linear, MSELoss): the
    # tracer's table of open calls is read by one thread while another adds to it
    tracer = Tracer()
    models = [torch.nn.Linear(3, 1) for _ in range(THREADS)]
    losses = [torch.nn.MSELoss() for _ in range(THREADS)]
    outs = [None] * THREADS

    def run(k):
        for _ in range(100):
            outs[k] = losses[k](models[k](torch.ones(5, 3)), torch.zeros(5, 1))

    with tracing(tracer):
        _run_threads(run)
    for k, out in enumerate(outs):
        module, _ = tracer.module_output[id(out)]
        assert module() is losses[k]


def test_no_thread_follows_another_threads_stack(switching, monkeypatch):
    # Following a running thread's frames (f_back) from another thread races with that
    # thread's returns in CPython: such a walk once read a code object where a frame was
    # (AttributeError: 'code' object has no attribute 'f_back'). Every frame the tracer walks
    # from must be on the walking thread's own stack.
    from gradviz.autograd import callsite
    foreign = []
    for name in ("user_functions", "running_around"):
        real = getattr(callsite, name)

        def checked(frame, *args, _real=real, **kwargs):
            f, own = sys._getframe(1), set()
            while f is not None:
                own.add(id(f))
                f = f.f_back
            if id(frame) not in own:
                foreign.append(frame)
            return _real(frame, *args, **kwargs)
        monkeypatch.setattr(callsite, name, checked)
    tracer = Tracer()
    models = [torch.nn.Linear(3, 1) for _ in range(THREADS)]

    def step(k):
        y = models[k](torch.ones(5, 3))
        return (y * 2).sum()

    def run(k):
        for _ in range(40):
            step(k).backward()

    with tracing(tracer):
        _run_threads(run)
    assert foreign == []
    assert tracer.frames      # the threads' function frames were kept and looked at
