"""The tracer's per-op shortcuts give the answers its plain forms gave: the finite check, a
long-lived node's earlier gradients, the steps, and `site_of` on the core's tracer."""

import gc
import sys
import textwrap

import numpy as np
import pytest

import gradviz
from gradviz.inspect import run_file
from gradviz.inspect.report import _Builder, report_json
from gradviz.inspect.tracer import Tracer, _all_finite, tracing

LOOP = """
    import gradviz as torch

    w = torch.ones(100, requires_grad=True)
    b = torch.zeros((), requires_grad=True)
    for i in range(4):
        loss = (w * (i + 1)).sum() + b * 2
        loss.backward()
"""


@pytest.mark.parametrize("value, finite", [
    (np.float32(1.0), True), (np.array(np.nan, dtype=np.float32), False),
    (np.array([np.inf], dtype=np.float64), False), (np.array(-np.inf, dtype=np.float16), False),
    (np.full(3000, 1e30, dtype=np.float32), True), (np.full((40, 50), 3e200), True),
    (np.array([1.0, 2.0, np.nan, 4.0], dtype=np.float32), False),
    (np.array([1.0, -np.inf] * 50), False), (np.ones(70, dtype=np.float16), True),
    (np.array([1, 2, 3]), True), (np.array([1 + 2j, np.nan]), False), (np.array([]), True),
    (np.ones((3, 4), dtype=np.float32)[:, ::2], True), (float("nan"), False), (2.5, True),
])
def test_finite_check_agrees_with_numpy(value, finite, recwarn):
    assert _all_finite(value) is finite
    # the quick look (a sum of squares: 1e30 squared overflows), as the engine runs it
    with np.errstate(over="ignore", invalid="ignore"):
        assert _all_finite(value, quick=True) is finite
    assert bool(np.isfinite(value).all()) is finite
    assert not recwarn.list         # nothing reaches the file's warnings


def test_a_long_lived_nodes_earlier_large_gradients_become_summaries(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(textwrap.dedent(LOOP))
    run = run_file(str(path))
    w, b = run.tensor("w"), run.tensor("b")
    w_acc = [g for node, g in run.tracer.events if getattr(node, "variable", None) is w]
    b_acc = [g for node, g in run.tracer.events if getattr(node, "variable", None) is b]
    # w's gradient has 100 elements: the three earlier ones are kept as summaries
    assert [isinstance(g[0], str) for g in w_acc] == [True, True, True, False]
    assert w_acc[0][0].startswith("<100 elements, shape [100]: min 1, max 1, mean 1;")
    np.testing.assert_array_equal(w_acc[-1][0], np.full(100, 4.0, dtype=np.float32))
    # b's is small: every one is kept whole
    assert [float(g[0]) for g in b_acc] == [2.0, 2.0, 2.0, 2.0]


def test_steps_are_kept_for_the_last_two_calls_with_what_each_node_got(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(textwrap.dedent(LOOP))
    run = run_file(str(path))
    steps = run.tracer.steps
    assert {st.call for st in steps} == {2, 3}
    last = [st for st in steps if st.call == 3]
    assert [type(st.node).__name__ for st in last][0] == "AddBackward0"
    for st in last:
        assert st.grads == run.tracer.last_grad.get(st.node) and st.hooks == []


def test_the_core_tracer_answers_site_of(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(textwrap.dedent(LOOP))
    run = run_file(str(path))
    assert isinstance(run.tracer, Tracer)
    assert run.tracer.site_of(run.tensor("loss").grad_fn) == (str(path), 7)
    assert run.tracer.site_of(object()) is None


def test_a_dead_nodes_large_gradient_is_let_go_before_its_event_is_pruned(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(textwrap.dedent(LOOP))
    run = run_file(str(path))
    tracer = run.tracer
    # (a one-gradient event keeps the copy alone, a large one in a list)
    dead = [snap if type(snap) is list else [snap]
            for ref, snap in zip(tracer._event_log[::2], tracer._event_log[1::2]) if ref() is None]
    assert dead and all(snap == [] or all(g.size <= 64 for g in snap) for snap in dead)
    assert any(snap == [] for snap in dead)     # each step's MulBackward0 got 100 elements


def test_callsite_caches_are_keyed_by_id_and_hold_their_code_objects(tmp_path):
    # A code object's hash is not cached and covers all its constants (a module's hashes every
    # function and class body in it), so the per-frame caches are keyed by id(code); each code
    # object is held while its id is a key, so a freed code object's id cannot be reused for
    # another file's code that the cache would then misclassify.
    from gradviz.autograd import callsite
    path = tmp_path / "mine.py"
    path.write_text("import sys\n\ndef where():\n    return sys._getframe().f_code\n")
    ns = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    code = ns["where"]()
    assert callsite.user_site(1) is not None and callsite.called_by_user(1)
    assert callsite.user_functions(sys._getframe())
    assert not callsite._inside(code)
    for cache in (callsite._internal, callsite._hosted, callsite._public):
        assert all(type(k) is int and callsite._held[k] is not None for k in cache)
    assert callsite._held[id(code)] is code
    assert callsite.site_at(code, 0) is callsite.site_at(code, 0) == (str(path), 3)
    assert callsite._sites[id(code)][0] is code
    del ns, code
    gc.collect()
    # the code object is still held, so no other code object can take its id
    assert any(c.co_filename == str(path) for c in callsite._held.values())


def test_output_of_a_node_with_one_output_and_with_several(tmp_path):
    path = tmp_path / "outs.py"
    path.write_text(textwrap.dedent("""
        import gradviz as torch

        x = torch.ones(2, 3, requires_grad=True)
        y = x * 2
        a, b = y.unbind(0)
    """))
    run = run_file(str(path))
    y, a, b = run.tensor("y"), run.tensor("a"), run.tensor("b")
    out = run.tracer.output_of
    assert out(y.grad_fn) is y and out(y.grad_fn, 1) is None
    assert a.grad_fn is b.grad_fn
    assert out(a.grad_fn, 0) is a and out(a.grad_fn, 1) is b and out(a.grad_fn, 2) is None


def test_tensors_made_by_the_same_call_share_what_made_them(tmp_path):
    path = tmp_path / "made.py"
    path.write_text(textwrap.dedent("""
        import gradviz as torch

        x = torch.ones(3, requires_grad=True)
        ys = [x * i for i in range(3)]
        with torch.no_grad():
            z = x * 2
        w = x + 1
    """))
    run = run_file(str(path))
    made = run.tracer.made_of
    ys = run.namespace["ys"]
    assert made(ys[0]) == ("mul", (str(path), 5), True)
    # one record per distinct maker, shared; its line is read when asked
    assert ys[0]._gv_made is ys[1]._gv_made is ys[2]._gv_made
    assert made(ys[2]) == made(ys[0])
    assert made(run.tensor("z")) == ("mul", (str(path), 7), False)
    assert made(run.tensor("w")) == ("add", (str(path), 8), True)


def test_in_place_edits_at_one_line_share_their_site(tmp_path):
    path = tmp_path / "edits.py"
    path.write_text(textwrap.dedent("""
        import gradviz as torch

        w = torch.ones(3, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        for i in range(3):
            (w * 2).sum().backward()
            opt.step()
        w.grad.zero_()
    """))
    run = run_file(str(path))
    edits = run.tracer.inplace_events
    steps = [e for e in edits if e.site == (str(path), 8)]
    assert len(steps) >= 3 and all(e.site is steps[0].site for e in steps)
    # each edit keeps the user's instruction offset, one int per offset (past 256 Python makes
    # a new int for each f_lasti read)
    assert all(e.offset is steps[0].offset for e in steps)
    assert edits[-1].op == "zero_" and edits[-1].site == (str(path), 9)


def test_what_made_a_tensor_is_kept_in_a_slot_not_a_dict_per_tensor():
    tracer = Tracer()
    with tracing(tracer):
        y = gradviz.ones(2) * 3
    assert tracer.made_of(y)[0] == "mul"
    assert "_gv_made" not in vars(y)


def test_the_kept_steps_keep_a_long_lived_nodes_large_gradient_whole(tmp_path):
    # a parameter's AccumulateGrad gets a large gradient at every step: its earlier events
    # become summaries, while the steps of the last two calls keep what it received, whole
    path = tmp_path / "big.py"
    path.write_text(textwrap.dedent("""
        import gradviz as torch
        w = torch.ones(100, requires_grad=True)
        for i in range(3):
            (w * (i + 1)).sum().backward()
    """))
    run = run_file(str(path))
    tracer = run.tracer
    acc = [st for st in tracer.steps if type(st.node).__name__ == "AccumulateGrad"]
    assert [st.call for st in acc] == [1, 2]
    for st in acc:
        assert isinstance(st.grads[0], np.ndarray)
        assert (st.grads[0] == st.call + 1).all()
    received = [grads[0] for node, grads in tracer.events if node is acc[0].node]
    assert [type(g).__name__ for g in received] == ["str", "str", "ndarray"]


OPTIMIZERS = """
    import gradviz as torch

    w = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.{opt}([w], {args})
    for i in range(3):
        opt.zero_grad()
        (w * w * (i + 1)).sum().backward()
        opt.step()
"""


@pytest.mark.parametrize("opt, args, doubles", [
    ("SGD", "lr=0.1, momentum=0.9", {("mul_", "add_")}),
    ("RMSprop", "lr=0.01, momentum=0.9", {("mul_", "addcmul_"), ("mul_", "addcdiv_")}),
    ("Adam", "lr=0.01", {("mul_", "addcmul_")}),
])
def test_an_optimizers_double_edit_is_two_events_named_as_torchs(tmp_path, monkeypatch, opt,
                                                                 args, doubles):
    # buf.mul_(m).add_(g): two events, each under its own call's name (as torch's tracer
    # records them) with the version it made, at the user's opt.step() line; no walk to that
    # line for any of them (the step finds it once: callsite.mark)
    from gradviz.autograd import callsite
    walks = []
    real = callsite.user_frame

    def counted(depth):
        if sys._getframe(1).f_code is callsite.edit_frame.__code__:
            walks.append(depth)     # an edit's walk (begin's user_site walks too)
        return real(depth + 1)
    monkeypatch.setattr(callsite, "user_frame", counted)
    path = tmp_path / "opt.py"
    path.write_text(textwrap.dedent(OPTIMIZERS.format(opt=opt, args=args)))
    line = path.read_text().splitlines().index("    opt.step()") + 1
    run = run_file(str(path))
    assert run.error is None
    edits = [e for e in run.tracer.inplace_events if e.site == (str(path), line)]
    pairs = [(a, b) for a, b in zip(edits, edits[1:])
             if (a.op, b.op) in doubles and a.tensor is b.tensor and a.version + 1 == b.version]
    assert {(a.op, b.op) for a, b in pairs} == doubles
    for a, b in pairs:
        assert a.seq == b.seq and a.grad_enabled == b.grad_enabled is False
    # every edit's version is the counter's value right after it: each tensor's versions
    # count up by one from edit to edit, and the last is the tensor's _version now
    by_tensor = {}
    for e in run.tracer.inplace_events:
        by_tensor.setdefault(id(e.tensor), []).append(e)
    for evs in by_tensor.values():
        assert [e.version for e in evs] == list(range(evs[-1].version - len(evs) + 1,
                                                      evs[-1].version + 1))
        assert evs[-1].version == evs[-1].tensor._version
    assert edits and len(walks) == len(run.tracer.inplace_events) - len(edits) == 0


def test_in_place_edits_are_kept_by_column_not_one_object_each():
    # an optimizer's edits of a parameter at every step: the tracer keeps each as four ints,
    # with the tensor's weak references and the site shared by record, and makes the _Edit
    # tuples only when they are read
    w = gradviz.nn.Parameter(gradviz.ones(3))
    opt = gradviz.optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = gradviz.ones(3)
    tracer = Tracer()
    with tracing(tracer):
        opt.step()
        gc.collect()
        before = len(gc.get_objects())
        for _ in range(500):
            opt.step()
        gc.collect()
        grown = len(gc.get_objects()) - before
    assert grown < 50                       # one tracked tuple per edit was 1,500
    assert len(tracer._edit_who) == 2 and len(tracer._edit_sites) == 3
    edits = tracer.inplace_events
    assert len(edits) == 1 + 3 * 500        # the first step makes the momentum buffer
    assert tracer.inplace_events is edits   # made once, then extended
    assert [e.op for e in edits[-3:]] == ["mul_", "add_", "add_"]
    buf = opt.state[w]["momentum_buffer"]
    assert edits[-1].tensor is w and edits[-2].tensor is buf
    assert edits[-1].version == w._version and edits[-2].version == buf._version
    assert edits[-1].data is w._data and edits[-1].vc is w._vc
    assert edits[-1].site == (__file__, edits[-1].site[1]) and edits[-1].grad_enabled is False


def write_file(tmp_path, source):
    path = tmp_path / "f.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_the_report_reads_edits_by_tensor_without_a_tuple_per_edit(tmp_path):
    # The report groups the edits by the tensor they edited: an _EditRows per tensor, each
    # edit's _Edit made when read and not kept (a 30,000-step loop made 450,000 of them), in
    # the same order as inplace_events, an edit through a view in its base's group
    path = write_file(tmp_path, """
        import gradviz as torch
        w = torch.nn.Parameter(torch.ones(3))
        opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        b = torch.zeros(4)
        v = b[1:3]
        for step in range(40):
            w.grad = torch.ones(3)
            opt.step()
            b.add_(1)
            v.mul_(2)
            b[0] = step
    """)
    run = run_file(path)
    tracer = run.tracer
    groups = tracer.edit_groups()
    assert not tracer._edit_list            # no _Edit kept
    b, w = run.tensor("b"), run.tensor("w")
    builder = _Builder(run, False, False)
    by_base = builder._edits()
    assert not tracer._edit_list
    events = tracer.inplace_events          # every _Edit, the plain way
    for t in (b, w):
        mine = list(by_base[id(t)])
        theirs = [e for e in events if (e.tensor if e.tensor._base is None else e.tensor._base) is t]
        assert mine == theirs and len(by_base[id(t)]) == len(theirs)
    assert len(by_base[id(b)]) == 120 and len(by_base[id(w)]) == 40
    assert sum(len(rows) for _, rows in groups) == len(events)
    report = run.report()
    history = next(t["history"] for t in report["tensors"] if t["name"] == "b")
    # (the last 20 edits, as before, now made alone)
    assert builder.history(b, 20) == builder.history(b)[-20:] and len(builder.history(b)) == 120
    assert [h["op"] for h in history[-3:]] == ["add_", "mul_", "setitem"]
    assert [h["version"] for h in history] == list(range(101, 121))


def test_run_without_hooks_builds_no_gradient_list(tmp_path):
    # "hooks" (every gradient a live node received) is printed by `run --hooks` only: a
    # report asked without it has none, the rest unchanged
    path = write_file(tmp_path, LOOP)
    run = run_file(path)
    whole, without = run.report(), run.report(hooks=False)
    assert len(whole["hooks"]) == 12 and without["hooks"] == []
    whole["hooks"] = []
    assert report_json(whole) == report_json(without)


def test_an_edit_after_a_new_storage_or_a_reused_id_gets_its_own_record():
    tracer = Tracer()
    with tracing(tracer):
        a = gradviz.ones(3)
        a.add_(1)
        old = a.data
        a.data = gradviz.zeros(3)           # a new storage: edits of it are matched with it
        a.add_(1)
        old.mul_(2)                         # through the .data alias of the old storage
        del a
        b = gradviz.ones(2)
        b.sub_(1)
    edits = tracer.inplace_events
    assert [e.op for e in edits] == ["add_", "add_", "mul_", "sub_"]
    assert edits[0].data is not edits[1].data and edits[2].data is old._data
    assert edits[3].tensor is b and edits[3].version == 1


def test_returned_frames_are_not_looked_for_in_the_runners_threads(tmp_path, monkeypatch):
    # the runner reads the file's output in a thread of its own: only a thread that had
    # frames kept can be running one of them
    import threading
    path = tmp_path / "steps.py"
    path.write_text(textwrap.dedent("""
        import gradviz as torch

        def step(i):
            y = torch.ones(2) * i
            return y + 1

        outs = [step(i) for i in range(5)]
    """))
    run = run_file(str(path))
    assert run.error is None and list(run.tracer._open) in ([], [threading.main_thread()])
    assert [n for f, n, _ in run.tracer.frames] == [3, 4, 5]


def test_a_frame_kept_in_another_thread_is_let_go_only_once_it_returned(tmp_path):
    path = tmp_path / "threads.py"
    path.write_text(textwrap.dedent("""
        import threading
        import gradviz as torch

        started, go = threading.Event(), threading.Event()

        def worker():
            tag = "worker's"
            big = torch.ones(3) * 2
            started.set()
            go.wait()
            return big

        t = threading.Thread(target=worker)
        t.start()
        started.wait()
        def main():
            return torch.ones(2) + 1
        z = main()
        go.set()
        t.join()
    """))
    run = run_file(str(path))
    assert run.error is None
    kept = {f.f_code.co_name: f for f, _, _ in run.tracer.frames}
    # worker was running while main made its tensor: its frame was not let go then (a frame
    # let go keeps only its tensors, modules and containers, not `tag`)
    assert set(kept) == {"worker", "main"}
    assert {"tag", "big"} <= set(kept["worker"].f_locals)


def test_a_modules_parameter_count_is_not_an_earlier_modules_with_its_id():
    # the count is kept by id(module): a module the file dropped leaves its id to the next
    # object (a Linear(20, 256) of d2l's builders was given 2,570 parameters)
    from gradviz.inspect.modules import ModuleCalls
    calls = ModuleCalls()
    small, big = gradviz.nn.Linear(2, 1), gradviz.nn.Linear(20, 256)
    assert calls._parameter_count(small) == 3
    calls._params[id(big)] = calls._params[id(small)]     # as if big reused small's id
    assert calls._parameter_count(big) == 20 * 256 + 256
    assert calls._parameter_count(small) == 3
