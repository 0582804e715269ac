"""The file's objects die under `gradviz run` when they die under plain Python: the tracer holds
the tensors it saw made, edited in place or returned by a module, the modules themselves and the
frames of functions that returned no longer than the file does (a `__del__` that prints, a
`weakref.finalize`, a WeakValueDictionary cache print the same lines at the same places).

Each file runs twice, with `python FILE` and with gradviz's runner, and prints the same."""

import os
import subprocess
import sys
import textwrap

import pytest

from gradviz.inspect import run_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FILES = {
    "outputs_and_edits": """
        import gc
        import weakref
        import gradviz as torch

        x = torch.ones(3, requires_grad=True)
        y = (x * 2).sin()
        weakref.finalize(y, print, "y finalized")
        del y
        gc.collect()
        print("after del y")

        z = torch.ones(4)
        rz = weakref.ref(z)
        z.add_(1)
        z[0] = 5.0
        del z
        gc.collect()
        print("z alive:", rz() is not None)

        cache = weakref.WeakValueDictionary()
        for i in range(3):
            cache[i] = torch.full((2,), float(i)).exp()
        gc.collect()
        print("cached:", sorted(cache.keys()))

        w = torch.ones(2, requires_grad=True)
        loss = (w * 3).exp().sum()
        node = weakref.ref(loss.grad_fn)
        del loss
        gc.collect()
        print("graph alive after del loss:", node() is not None)
    """,
    "module_del": """
        import gc
        import gradviz as torch

        class Tracked(torch.nn.Module):
            def __init__(self, name):
                super().__init__()
                self.name = name
                self.lin = torch.nn.Linear(2, 2)

            def forward(self, x):
                return self.lin(x).relu()

            def __del__(self):
                print("del", self.name)

        m = Tracked("first")
        y = m(torch.ones(3, 2))
        y.sum().backward()
        del m
        print("output kept:", list(y.shape))
        m = Tracked("second")
        for _ in range(3):
            m(torch.ones(1, 2)).sum().backward()
        m = None
        print("end")
    """,
    "optimizer_state": """
        import gc
        import weakref
        import gradviz as torch

        w = torch.nn.Parameter(torch.ones(3))
        opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        for _ in range(2):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        buffers = [weakref.ref(s["momentum_buffer"]) for s in opt.state.values()]
        del opt
        gc.collect()
        print("momentum buffers alive:", [r() is not None for r in buffers])
    """,
    "returned_function": """
        import gradviz as torch

        class Noisy:
            def __del__(self):
                print("a local of build() is gone")

        def build():
            keep = Noisy()
            t = torch.ones(2) * 2
            return t.sum()

        s = build()
        x = torch.ones(1)
        print("after build:", float(s))
    """,
}


def _plain(path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_file_prints_what_it_prints_under_python(tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(FILES[name]))
    run = run_file(str(path))
    assert run.error is None
    assert run.stdout == _plain(path)


def test_what_python_prints_is_what_these_files_test(tmp_path):
    # the files above test lifetimes only if plain Python frees each object where they say
    path = tmp_path / "outputs_and_edits.py"
    path.write_text(textwrap.dedent(FILES["outputs_and_edits"]))
    assert _plain(path) == ("y finalized\nafter del y\nz alive: False\ncached: []\n"
                            "graph alive after del loss: False\n")
    path = tmp_path / "module_del.py"
    path.write_text(textwrap.dedent(FILES["module_del"]))
    assert _plain(path) == "del first\noutput kept: [3, 2]\ndel second\nend\n"


def test_a_returned_functions_tensors_still_name_after_the_run(tmp_path):
    # what the report reads of a returned frame stays: its tensors and modules, by name
    path = tmp_path / "main.py"
    path.write_text(textwrap.dedent("""
        import gradviz as torch

        def main():
            net = torch.nn.Linear(2, 1)
            x = torch.ones(4, 2)
            loss = net(x).sum()
            loss.backward()

        main()
        done = torch.zeros(1)
    """))
    run = run_file(str(path))
    names = run.names()
    assert {"main.net.weight", "main.net.bias", "main.x", "main.loss"} <= set(names)
    assert float(run.tensor("main.loss")) == float(run.tensor("main.loss").detach())


def test_an_edit_through_a_freed_view_or_data_alias_is_still_found(tmp_path):
    path = tmp_path / "edits.py"
    path.write_text(textwrap.dedent("""
        import gradviz as torch

        a = torch.ones(3, requires_grad=True)
        b = a.exp()
        c = b * 2
        b.data.mul_(2)
        d = torch.ones(3)
        d[1:][0] = 7.0
    """))
    run = run_file(str(path))
    edits = run.tracer.inplace_events
    assert [e.op for e in edits] == ["mul_", "setitem"]
    # the .data alias is gone, its storage (b's) is not; the view d[1:] is gone, d is not
    assert edits[0].tensor is None and edits[0].data is run.tensor("b")._data
    assert edits[1].tensor is run.tensor("d")
    report = run.report()
    assert report is not None
