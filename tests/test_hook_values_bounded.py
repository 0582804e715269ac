"""What a hook got and returned is kept whole up to the size the report prints whole
(VALUE_LIMIT elements), as a summary beyond: a hook on a large tensor in a training loop keeps
bounded memory on both backends, `changed` is still decided on the whole values, and --full
keeps whole values."""

import numpy as np
import pytest

from gradviz.inspect import run_file
from gradviz.inspect.report import VALUE_LIMIT, GradSummary

BACKENDS = ["gradviz", "torch"]

LOOP = """import torch

w = torch.ones(200, 100, requires_grad=True)
seen = []
w.register_hook(lambda g: seen.append(1))
w.register_hook(lambda g: g * 2)
for step in range({steps}):
    (w * 3).sum().backward()
    w.grad = None
"""


def _backend(name):
    if name == "torch":
        pytest.importorskip("torch").set_num_threads(1)
    return name


def _kept_bytes(tracer):
    """Bytes of the arrays the tracer keeps of hook firings."""
    total = 0
    for e in tracer.hook_events:
        for v in (e.given, e.returned):
            for a in v if isinstance(v, list) else [v]:
                if isinstance(a, np.ndarray):
                    total += a.nbytes
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_hook_on_a_large_tensor_in_a_loop_keeps_bounded_memory(tmp_path, backend):
    kept = {}
    for steps in (5, 10):
        path = tmp_path / f"loop{steps}.py"
        path.write_text(LOOP.format(steps=steps))
        run = run_file(str(path), backend=_backend(backend))
        assert len(run.tracer.hook_events) == 2 * steps
        kept[steps] = _kept_bytes(run.tracer)
        hooks = run.report()["user_hooks"]
        assert hooks[1]["grad_in"] == ("<20000 elements, shape [200, 100]: min 3, max 3, "
                                       "mean 3; --full for all values>")
        assert hooks[1]["grad_out"].startswith("<20000 elements, shape [200, 100]: min 6")
        assert [h["changed"] for h in hooks[:2]] == [False, True]
    assert kept[5] == kept[10] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_full_keeps_whole_hook_values(tmp_path, backend):
    path = tmp_path / "loop.py"
    path.write_text(LOOP.format(steps=2))
    run = run_file(str(path), backend=_backend(backend), full=True)
    # per step: what both hooks got and what the second returned, 20,000 float32 each
    assert _kept_bytes(run.tracer) == 2 * 3 * 20000 * 4
    hooks = run.report(full=True)["user_hooks"]
    assert hooks[1]["grad_out"] == [[6.0] * 100] * 200


CHANGE = """import torch

x = torch.ones(VALUE, requires_grad=True)


def one_more(g):
    out = g.clone()
    out[7] += 1
    return out


x.register_hook(lambda g: g.clone())
x.register_hook(one_more)
(x * 2).sum().backward()
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_changed_is_decided_on_whole_values(tmp_path, backend):
    # one element of 10,001 differs: the summaries' min, max and mean could not tell
    path = tmp_path / "change.py"
    path.write_text(CHANGE.replace("VALUE", str(VALUE_LIMIT + 1)))
    run = run_file(str(path), backend=_backend(backend))
    assert [e.changed for e in run.tracer.hook_events] == [False, True]
    assert all(isinstance(e.given, GradSummary) for e in run.tracer.hook_events)
