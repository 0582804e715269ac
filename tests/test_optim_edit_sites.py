"""An optimizer's in-place edits are recorded at the user's line that made them: the built-in
step finds its caller's line once (callsite.mark) instead of a walk per edit, and every edit
gets the line a walk gives, whoever calls the step and whatever user code runs inside it."""

import textwrap

import pytest

from gradviz.inspect import run_file
from gradviz.optim.optimizer import Optimizer

HEAD = """
import gc, threading
import gradviz as torch

w = torch.nn.Parameter(torch.ones(3))
v = torch.nn.Parameter(torch.full((2,), 2.0))
"""

FILES = {
    "every optimizer": """
        for make in (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
                     lambda p: torch.optim.Adam(p, lr=0.01),
                     lambda p: torch.optim.AdamW(p, lr=0.01),
                     lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.9),
                     lambda p: torch.optim.Adagrad(p, lr=0.01),
                     lambda p: torch.optim.Adadelta(p)):
            opt = make([w, v])
            for i in range(2):
                opt.zero_grad()
                ((w * w).sum() + (v * 3).sum()).backward()
                opt.step()
        """,
    "a function of the user's calls step": """
        opt = torch.optim.SGD([w, v], lr=0.1, momentum=0.9)

        def train(k):
            opt.zero_grad()
            (w * k).sum().backward()
            opt.step()

        train(1)
        train(2)
        opt.step()
        """,
    "a subclass's _update": """
        class Mine(torch.optim.SGD):
            def _update(self, group, p, grad, state):
                super()._update(group, p, grad, state)
                p.data.mul_(0.5)

        opt = Mine([w, v], lr=0.1, momentum=0.9)
        for i in range(2):
            (w * v.sum()).sum().backward()
            opt.step()
        """,
    "a subclass's step": """
        class Mine(torch.optim.SGD):
            def step(self, closure=None):
                out = super().step(closure)
                with torch.no_grad():
                    for p in self.param_groups[0]["params"]:
                        p.add_(1)
                return out

        class Own(torch.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {})

            @torch.no_grad()
            def step(self, closure=None):
                for p in self.param_groups[0]["params"]:
                    p.sub_(p.grad)

        for opt in (Mine([w, v], lr=0.1), Own([w, v])):
            (w * v.sum()).sum().backward()
            opt.step()
        """,
    "an _update set on the optimizer": """
        opt = torch.optim.SGD([w, v], lr=0.1, momentum=0.9)
        plain = opt._update

        def update(group, p, grad, state):
            plain(group, p, grad, state)

        opt._update = update
        (w * v.sum()).sum().backward()
        opt.step()
        """,
    "a closure, hooks and the collector's callback edit inside the step": """
        opt = torch.optim.Adam([w, v], lr=0.01)
        t = torch.zeros(1)

        def closure():
            t.add_(1)
            loss = (w * v.sum()).sum()
            loss.backward()
            return loss

        def pre(o, args, kwargs):
            t.mul_(2)

        def post(o, args, kwargs):
            t.sub_(1)

        def collected(phase, info):
            if phase == "start":
                t.div_(1)

        opt.register_step_pre_hook(pre)
        opt.register_step_post_hook(post)
        gc.callbacks.append(collected)
        gc.set_threshold(1)
        try:
            for i in range(3):
                opt.step(closure)
        finally:
            gc.set_threshold(700)
            gc.callbacks.remove(collected)
        """,
    "threads step their own optimizers": """
        import sys
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)     # threads take turns inside each other's steps

        def train(p, n, here):
            # each thread steps from its own line
            opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
            for i in range(n):
                (p * 2).sum().backward()
                if here:
                    opt.step()
                else:
                    opt.step()

        threads = [threading.Thread(target=train, args=(p, 100, h)) for p, h in ((w, 1), (v, 0))]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        sys.setswitchinterval(interval)
        """,
}


def _edits(tmp_path, name, body):
    path = tmp_path / "edits.py"
    path.write_text(HEAD + textwrap.dedent(body))
    run = run_file(str(path))
    assert run.error is None, run.error
    edits = [(e.op, e.site, e.version, e.grad_enabled) for e in run.tracer.inplace_events]
    if "collector" in name:     # collections come when allocations say: which edit where
        return {(op, site) for op, site, _, _ in edits}, path
    # threads edit in the scheduler's order: compare what was edited where, not the order
    return sorted(edits, key=repr) if "threads" in name else edits, path


@pytest.mark.parametrize("name", FILES)
def test_edit_sites_are_the_walks(tmp_path, monkeypatch, name):
    marked, path = _edits(tmp_path, name, FILES[name])
    monkeypatch.setattr(Optimizer, "_edits_site", lambda self: (None, None))
    walked, _ = _edits(tmp_path, name, FILES[name])
    assert marked == walked
    assert marked and all(e[1][0] == str(path) for e in marked)


def test_user_code_inside_the_step_keeps_its_own_lines(tmp_path):
    name = "a closure, hooks and the collector's callback edit inside the step"
    body = FILES[name]
    edits, path = _edits(tmp_path, name, body)
    lines = (HEAD + textwrap.dedent(body)).splitlines()
    by_op = {}
    for op, site in edits:
        by_op.setdefault(lines[site[1] - 1].strip(), set()).add(op)
    assert by_op["t.add_(1)"] == {"add_"}
    assert by_op["t.mul_(2)"] == {"mul_"}
    assert by_op["t.sub_(1)"] == {"sub_"}
    assert by_op["t.div_(1)"] == {"div_"}      # run by the collector inside the step too
    assert {"mul_", "add_", "addcmul_", "lerp_", "addcdiv_"} == by_op["opt.step(closure)"]
