"""A function called in a loop: only its last calls' frames name tensors, so a long loop does
not keep every step's locals (and graph) alive until the end of the run."""

import textwrap
import weakref

from gradviz.inspect import run_file

LOOP = """
    import gradviz as torch

    def step(w, i):
        y = w * i
        loss = y.sum()
        loss.backward()
        return loss

    def main():
        w = torch.ones(3, requires_grad=True)
        for i in range(1, 41):
            step(w, i)

    main()
"""


def test_a_loop_keeps_the_last_calls_frames_with_their_true_numbers(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(textwrap.dedent(LOOP))
    run = run_file(str(path))
    names = run.names()
    assert "main.w" in names
    assert [n for n in names if n.endswith(".y")] == ["step[38].y", "step[39].y", "step[40].y"]
    assert not any(n.startswith(("step[1].", "step[37].")) for n in names)
    frames = run.tracer.frames
    assert [(f.f_code.co_name, n, total) for f, n, total in frames] == \
        [("main", 1, 1), ("step", 38, 40), ("step", 39, 40), ("step", 40, 40)]
    assert float(run.tensor("step[40].loss")) == 120.0


def test_dropped_frames_free_their_tensors(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(textwrap.dedent("""
        import gradviz as torch
        made = []

        def step(i):
            y = torch.full((4,), float(i), requires_grad=True) * 2
            loss = y.sum()
            loss.backward()
            return loss

        for i in range(10):
            step(i)
    """))
    import gradviz
    refs = []
    original = gradviz.full

    def full(*a, **k):
        t = original(*a, **k)
        refs.append(weakref.ref(t))
        return t

    gradviz.full = full
    try:
        run = run_file(str(path))
    finally:
        gradviz.full = original
    alive = [r() is not None for r in refs]
    assert len(alive) == 10
    assert alive == [False] * 7 + [True] * 3
    assert [n for n in run.names() if n.endswith(".y")] == ["step[8].y", "step[9].y", "step[10].y"]
