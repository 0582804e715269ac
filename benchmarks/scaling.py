"""The inspector against plain Python: `gradviz run FILE` / `gradviz graph FILE --dot` versus
`python FILE` on the same generated file (which says `import gradviz as torch`), whole process.

Each round times `python FILE` and then the gradviz command (the order alternates between
rounds), in CPU time (user + system, of the process and every child it waited for), not wall
clock: the machine is shared, and another job's load stretches wall time on one side only. The
row's sample is their ratio: the median of the per-round ratios is the row's
value, judged against the targets of issue 12. The absolute medians are in the notes. The
memory row compares peak resident sets (ru_maxrss of the child, read in a fresh wrapper
process so that each measurement sees one child only).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.measurement import CANDIDATE, Measurement
from benchmarks.processes import REPO, find_gradviz_command

# A tutorial's dynamic net: five scalar parameters, a polynomial of random degree 3 to 5 on
# 2,000 points, MSELoss(sum) and SGD with momentum (PyTorch's "dynamic_net" example).
TRAINING_LOOP = '''\
import math
import random
import gradviz as torch

random.seed(0)
torch.manual_seed(0)


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y


x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
model = DynamicNet()
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range({steps}):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 2000 == 1999:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''

CHAIN = '''\
import gradviz as torch
x = torch.tensor(1.0, requires_grad=True)
y = x
for i in range({n}):
    y = y * 1.000001
'''

LEAVES = '''\
import gradviz as torch
xs = [torch.tensor(float(i % 7), requires_grad=True) for i in range({n})]
total = sum(xs)
'''

NAMED = '''\
import gradviz as torch
x = torch.tensor(1.0, requires_grad=True)
names = globals()
for i in range({n}):
    names[f"t{{i}}"] = x * i
'''

PRINTS = '''\
for i in range({n}):
    print("x" * 99)
'''

BIG = '''\
import gradviz as torch
x = torch.ones({n})
print(x.shape)
'''


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    source: str
    full: int
    quick: int
    command: tuple[str, ...]       # after `gradviz`; FILE stands for the generated file
    metric: str = "time"
    ok_codes: tuple[int, ...] = (0,)


CASES = [
    Case("run_training_loop", "gradviz run vs python: {n:,}-step loop, 5-parameter dynamic net",
         TRAINING_LOOP, 30_000, 2_000, ("run", "FILE")),
    Case("run_training_loop_memory", "gradviz run vs python, peak memory: {n:,}-step loop "
         "(the tracer keeps per-step summaries, not every step's graph)", TRAINING_LOOP,
         30_000, 2_000, ("run", "FILE"), metric="memory"),
    Case("run_chain_100k", "gradviz run vs python: a chain of {n:,} ops",
         CHAIN, 100_000, 20_000, ("run", "FILE")),
    Case("graph_chain_100k", "gradviz graph --dot vs python: a chain of {n:,} ops",
         CHAIN, 100_000, 20_000, ("graph", "FILE", "--dot", "OUT")),
    Case("run_json_leaves_100k", "gradviz run --json vs python: {n:,} leaves summed",
         LEAVES, 100_000, 20_000, ("run", "FILE", "--json")),
    Case("graph_leaves_100k", "gradviz graph --dot vs python: {n:,} leaves summed",
         LEAVES, 100_000, 20_000, ("graph", "FILE", "--dot", "OUT")),
    Case("run_named_100k", "gradviz run vs python: {n:,} named tensors",
         NAMED, 100_000, 20_000, ("run", "FILE")),
    Case("run_prints_50mb", "gradviz run vs python: a file printing {n:,} lines of 100 bytes",
         PRINTS, 500_000, 50_000, ("run", "FILE")),
    Case("run_json_tensor_2e8", "gradviz run --json vs python, peak memory: one {n:,}-element "
         "tensor", BIG, 200_000_000, 20_000_000, ("run", "FILE", "--json"), metric="memory"),
]

ROUNDS = {"full": 2, "quick": 1}
TIMEOUT_S = 900.0

# Report the peak resident set of one child command, in KiB (Linux: ru_maxrss is KiB).
_PEAK = ("import resource, subprocess, sys\n"
         "p = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,"
         " stderr=subprocess.DEVNULL)\n"
         "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu(cmd: list[str], env: dict[str, str], ok_codes: tuple[int, ...]) -> float:
    """CPU seconds (user + system) of cmd and the children it waited for."""
    before = _children_cpu()
    proc = subprocess.run(cmd, env=env, cwd=REPO, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    elapsed = _children_cpu() - before
    if proc.returncode not in ok_codes:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise RuntimeError(f"exit {proc.returncode}: {tail[0]}")
    return elapsed


def _peak_kib(cmd: list[str], env: dict[str, str], ok_codes: tuple[int, ...]) -> float:
    proc = subprocess.run([sys.executable, "-c", _PEAK, *cmd], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    code, peak = proc.stdout.split()
    if int(code) not in ok_codes:
        raise RuntimeError(f"exit {code}")
    return float(peak)


def measure_scaling(quick: bool, env: dict[str, str], log, only=None,
                    cases=None) -> list[Measurement]:
    """One row per case (of CASES, or `cases`): the median ratio gradviz / plain Python (time,
    or peak memory)."""
    rows = []
    gradviz = find_gradviz_command()
    rounds = ROUNDS["quick" if quick else "full"]
    with tempfile.TemporaryDirectory(prefix="gradviz-scaling-") as tmp:
        for case in CASES if cases is None else cases:
            if only and case.name not in only:
                continue
            n = case.quick if quick else case.full
            unit = "x python" if case.metric == "time" else "x python (peak RSS)"
            m = Measurement(case.name, "time", unit, case.description.format(n=n))
            rows.append(m)
            if gradviz is None:
                m.skipped = "no gradviz command yet (pip install -e . in the venv)"
                continue
            path = Path(tmp) / f"{case.name}.py"
            path.write_text(case.source.format(n=n, steps=n), encoding="utf-8")
            out = str(Path(tmp) / f"{case.name}.dot")
            cmd = [gradviz] + [str(path) if a == "FILE" else out if a == "OUT" else a
                               for a in case.command]
            plain = [sys.executable, str(path)]
            measure = _cpu if case.metric == "time" else _peak_kib
            log(f"  {case.name}: {' '.join(case.command)} (n = {n:,})")
            ratios, mine, theirs = [], [], []
            try:
                for r in range(rounds):
                    pair = [(plain, "python"), (cmd, "gradviz")]
                    got = {}
                    for c, who in (pair if r % 2 == 0 else pair[::-1]):
                        got[who] = measure(c, env, case.ok_codes)
                    ratios.append(got["gradviz"] / got["python"])
                    mine.append(got["gradviz"])
                    theirs.append(got["python"])
            except (RuntimeError, subprocess.TimeoutExpired, ValueError) as exc:
                m.errors[CANDIDATE] = str(exc)
                continue
            m.add(CANDIDATE, ratios)
            what = "s CPU" if case.metric == "time" else "MiB peak"
            scale = 1.0 if case.metric == "time" else 1 / 1024
            m.notes.append(f"gradviz {statistics.median(mine) * scale:,.2f} {what}, "
                           f"python {statistics.median(theirs) * scale:,.2f} {what} "
                           f"(n = {n:,}; {rounds} round(s))")
            if os.path.exists(out):
                os.remove(out)
    return rows
