"""The torch backend's tracer against plain Python on a real training loop (issue 14):
`gradviz run --backend torch FILE` versus `python FILE`, where FILE trains a 6-layer
nn.TransformerEncoder (d_model 256, 8 heads, batch 8, sequence 64) with Adam for 100 steps.

Measured as the scaling rows are (benchmarks/scaling.py): CPU time of each whole process, in
alternating rounds, the row's value the median of the per-round ratios; and the peak resident
sets, whose ratio shows whether the tracer's record stays bounded (a tracer that kept every
step's graph would grow with the steps, the file does not).

    python -m benchmarks.torch_loop            # 100 steps, 2 rounds (several minutes)
    python -m benchmarks.torch_loop --quick    # 10 steps, 1 round

torch is needed (`pip install torch`); without it the rows are skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from benchmarks import report
from benchmarks.measurement import Measurement, to_row
from benchmarks.runner import worker_env
from benchmarks.scaling import Case, measure_scaling

TRANSFORMER_LOOP = '''\
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, batch_first=True)
model = nn.TransformerEncoder(layer, num_layers=6)
head = nn.Linear(256, 10)
optimizer = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-4)
x = torch.randn(8, 64, 256)
target = torch.randint(0, 10, (8,))
for step in range({steps}):
    logits = head(model(x).mean(dim=1))
    loss = nn.functional.cross_entropy(logits, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
'''

CASES = [
    Case("torch_run_transformer_loop", "gradviz run --backend torch vs python: {n:,}-step "
         "TransformerEncoder training loop", TRANSFORMER_LOOP, 100, 10,
         ("run", "FILE", "--backend", "torch")),
    Case("torch_run_transformer_loop_memory", "gradviz run --backend torch vs python, peak "
         "memory: {n:,}-step TransformerEncoder training loop", TRANSFORMER_LOOP, 100, 10,
         ("run", "FILE", "--backend", "torch"), metric="memory"),
]


def measure(quick: bool, env: dict[str, str], log) -> list[Measurement]:
    """The rows of CASES (skipped without torch)."""
    if importlib.util.find_spec("torch") is None:
        rows = [Measurement(c.name, "time", "x python", c.description.format(n=c.full))
                for c in CASES]
        for m in rows:
            m.skipped = "torch is not installed (pip install torch)"
        return rows
    return measure_scaling(quick, env, log, cases=CASES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.torch_loop",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10 steps, one round")
    args = parser.parse_args(argv)
    rows = measure(args.quick, worker_env(1), lambda msg: print(msg, file=sys.stderr))
    by_key = {(m.workload, m.metric): m for m in rows}
    for m in rows:
        print("  ".join(report.row_cells(to_row(m, by_key))))
        for note in m.notes + [f"{b}: {e}" for b, e in m.errors.items()]:
            print("    " + note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
