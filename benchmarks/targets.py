"""The speed targets of issue 7, in one place.

Each target names a row of the results table (workload, metric) and how it is judged:

- ``vs_torch``: gradviz / torch, the median of the per-round ratios (rounds alternate between
  the backends, so each ratio compares two processes that ran back to back);
- ``vs_floor``: gradviz / the NumPy floor, the same way;
- ``absolute``: gradviz's median, in the row's unit;
- ``vs_row``: gradviz's median divided by gradviz's median on another row (``relative_to``).

Rows without a target are reported, not judged. Agreement (checksums against torch) is checked
for every row regardless of its target: a fast wrong answer fails.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    workload: str
    metric: str  # "time" or "memory"
    kind: str  # "vs_torch", "vs_floor", "absolute", "vs_row"
    limit: float
    text: str  # how the table shows it
    relative_to: str | None = None  # for vs_row: the other workload (same metric)


TARGETS: list[Target] = [
    Target("scalar_chain", "time", "vs_torch", 0.8, "<= 0.8x torch"),
    Target("tensor8_chain", "time", "vs_torch", 0.8, "<= 0.8x torch"),
    # "that needs: no gradient for inputs that don't require it, broadcast reductions done once,
    # float32 kept, transposes as views, no needless copies" (issue 7)
    Target("mlp_step", "time", "vs_floor", 1.15, "<= 1.15x floor"),
    # issue 11: "a makemore-style step ... target <= 1.0x torch"
    Target("makemore_step", "time", "vs_torch", 1.0, "<= 1.0x torch"),
    Target("cnn_step", "time", "vs_torch", 2.0, "<= 2.0x torch"),
    # issue 11: "a layer-norm + attention block (sdpa) -- <= 1.5x torch"
    Target("attention_step", "time", "vs_torch", 1.5, "<= 1.5x torch"),
    Target("chain_1m", "time", "vs_row", 1.3, "<= 1.3x chain_200k", relative_to="chain_200k"),
    Target("chain_1m", "memory", "absolute", 600.0, "<= 600 B/node"),
    Target("cli_run", "time", "absolute", 0.5, "< 0.5 s"),
    Target("cli_help", "time", "absolute", 0.25, "< 0.25 s"),
    Target("import", "time", "absolute", 0.150, "< 0.150 s"),
    Target("graph_5000", "time", "absolute", 10.0, "< 10 s"),
    # issue 15: "gradviz report ... within 1.3x of gradviz graph --svg on the same files"
    Target("report_5000", "time", "vs_row", 1.3, "<= 1.3x graph_5000", relative_to="graph_5000"),
    Target("report_5000_shared", "time", "vs_row", 1.3, "<= 1.3x graph_5000_shared",
           relative_to="graph_5000_shared"),
    # issue 12: the inspector costs little per op, and stays linear in the size of the run
    Target("run_training_loop", "time", "absolute", 1.5, "<= 1.5x python"),
    Target("run_chain_100k", "time", "absolute", 5.0, "<= 5x python"),
    Target("graph_chain_100k", "time", "absolute", 5.0, "<= 5x python"),
    Target("run_json_tensor_2e8", "time", "absolute", 1.5, "<= 1.5x python"),
    # issue 14: `gradviz run --backend torch` on a 100-step transformer training loop
    Target("torch_run_transformer_loop", "time", "absolute", 1.5, "<= 1.5x python"),
    # issue 14: module folding at depth 2 in < 5 s, full expansion in < 30 s (CPU seconds of
    # the whole command); the gv/torch column is the ratio against torchviz (target < 1.0x)
    Target("transformer_folded", "time", "absolute", 5.0, "< 5 s"),
    Target("transformer_expanded", "time", "absolute", 30.0, "< 30 s"),
    Target("resnet_folded", "time", "absolute", 5.0, "< 5 s"),
    Target("resnet_expanded", "time", "absolute", 30.0, "< 30 s"),
]

# Relative tolerance of the agreement check (float32; the backends differ in summation order
# and in their BLAS). Each checksum entry is (value, scale): two values agree when
# |a - b| <= RTOL * max(scale_a, scale_b), scale being the sum of absolute values of the terms.
AGREEMENT_RTOL = 1e-3


def target_for(workload: str, metric: str) -> Target | None:
    for t in TARGETS:
        if t.workload == workload and t.metric == metric:
            return t
    return None
