"""Real models: `gradviz graph --backend torch` on the two model examples against torchviz.

Each row draws one example (examples/transformer_encoder.py, a 6-layer nn.TransformerEncoder;
examples/resnet_cnn.py, a ResNet-style CNN of 18 3x3 convolutions) as SVG, folded by module at
depth 2 or fully expanded, in one whole process: `gradviz graph FILE --backend torch
[--depth-modules 2] --svg OUT`. The torch column is torchviz on the same file in the same
round: a process that runs the file on PyTorch, then `make_dot(loss, params=...)
.render(format="svg")` (torchviz draws the whole graph; it cannot fold). Both render with the
renderer gradviz finds (gradviz.render.renderer.find_renderer: graphviz-pure beside the
interpreter, else Graphviz's dot): torchviz's graphviz package runs `dot` from PATH, so its
process gets a PATH whose `dot` is that renderer. Times are CPU seconds (user + system, with
the renderer), as in benchmarks/scaling.py; the rounds alternate which side runs first.

Targets (issue 14): folded < 5 s, expanded < 30 s, and faster than torchviz (the gv/torch
column; the note says which side won). torchviz is a benchmark-only dependency (`pip install
torchviz`): without it the torch column is skipped with a note.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.measurement import CANDIDATE, REFERENCE, Measurement
from benchmarks.processes import EXAMPLES, find_gradviz_command
from benchmarks.scaling import TIMEOUT_S, _cpu

# name -> (example, gradviz graph options)
CASES = {
    "transformer_folded": ("transformer_encoder.py", ("--depth-modules", "2")),
    "transformer_expanded": ("transformer_encoder.py", ()),
    "resnet_folded": ("resnet_cnn.py", ("--depth-modules", "2")),
    "resnet_expanded": ("resnet_cnn.py", ()),
}
ROWS = tuple(CASES)
ROUNDS = {"full": 2, "quick": 1}

# The torchviz side: the example on PyTorch (`import gradviz as torch` made to import torch,
# as tests/test_examples_torch.py does), then make_dot on its loss with the model's
# parameters named, rendered to SVG.
_TORCHVIZ = r"""
import runpy, sys
import torch, torch.nn, torch.nn.functional, torch.optim
for name in list(sys.modules):
    if name == "torch" or name.startswith("torch."):
        sys.modules["gradviz" + name[5:]] = sys.modules[name]
from torchviz import make_dot
path, out = sys.argv[1], sys.argv[2]
sys.argv = [path]
namespace = runpy.run_path(path, run_name="__main__")
dot = make_dot(namespace["loss"], params=dict(namespace["model"].named_parameters()))
dot.render(out, format="svg", cleanup=True)
"""


def _torchviz_missing(env: dict[str, str]) -> str | None:
    proc = subprocess.run([sys.executable, "-c", "import torchviz, torch"], env=env,
                          capture_output=True, timeout=120)
    if proc.returncode == 0:
        return None
    return "torchviz not installed (pip install torchviz): no torch column"


def _dot_dir(tmp: str) -> str | None:
    """A directory whose `dot` is the renderer gradviz uses, for torchviz's PATH."""
    from gradviz.render.renderer import find_renderer
    found = find_renderer(fmt="svg")
    if found is None:
        return None
    folder = Path(tmp) / "bin"
    folder.mkdir(exist_ok=True)
    link = folder / "dot"
    if not link.exists():
        link.symlink_to(found)
    return str(folder)


def measure_real_models(quick: bool, env: dict[str, str], log) -> list[Measurement]:
    """One row per case: CPU seconds of gradviz graph, and of torchviz on the same file."""
    rows = []
    gradviz = find_gradviz_command()
    rounds = ROUNDS["quick" if quick else "full"]
    missing = _torchviz_missing(env)
    with tempfile.TemporaryDirectory(prefix="gradviz-real-models-") as tmp:
        dot_dir = _dot_dir(tmp)
        tv_env = dict(env)
        if dot_dir is not None:
            tv_env["PATH"] = dot_dir + os.pathsep + env.get("PATH", "")
        for name, (example, options) in CASES.items():
            path = str(EXAMPLES / example)
            how = "folded at depth 2" if options else "fully expanded"
            m = Measurement(name, "time", "s", f"gradviz graph --backend torch --svg, {how}: "
                            f"examples/{example} (torch column: torchviz make_dot + render)")
            rows.append(m)
            if gradviz is None:
                m.skipped = "no gradviz command yet (pip install -e . in the venv)"
                continue
            out = str(Path(tmp) / f"{name}.svg")
            commands = {CANDIDATE: ([gradviz, "graph", path, "--backend", "torch", *options,
                                     "--svg", out], env)}
            if missing:
                m.notes.append(missing)
            elif dot_dir is None:
                m.notes.append("no Graphviz renderer found: no torch column")
            else:
                commands[REFERENCE] = ([sys.executable, "-c", _TORCHVIZ, path,
                                        str(Path(tmp) / f"{name}-torchviz")], tv_env)
            log(f"  {name}: gradviz graph {example} {' '.join(options)}")
            order = list(commands)
            try:
                for r in range(rounds):
                    for backend in (order if r % 2 == 0 else order[::-1]):
                        cmd, cmd_env = commands[backend]
                        m.add(backend, [_cpu(cmd, cmd_env, (0,))])
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                m.errors[CANDIDATE] = str(exc)
                continue
            mine = statistics.median(s for r in m.rounds[CANDIDATE] for s in r)
            if REFERENCE in m.rounds:
                theirs = statistics.median(s for r in m.rounds[REFERENCE] for s in r)
                verdict = "faster than" if mine < theirs else "slower than"
                m.notes.append(f"gradviz {mine:.2f} s CPU, {verdict} torchviz {theirs:.2f} s "
                               f"({rounds} round(s); timeout {TIMEOUT_S:.0f} s)")
    return rows
