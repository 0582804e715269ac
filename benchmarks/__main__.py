"""gradviz benchmarks: ``python -m benchmarks`` (see benchmarks/README.md).

Examples:
    python -m benchmarks                    # everything, ~4 minutes on 2 cores
    python -m benchmarks --quick            # a smoke run, under a minute
    python -m benchmarks --only mlp_step --only matmul_1024
    python -m benchmarks --json > results.json
    python -m benchmarks --threads default  # BLAS on all cores (on an idle machine)

Exit status: 0 when the run completed, 1 when gradviz's answer disagreed with torch's on any
workload (a fast wrong answer), 2 on a usage error. A missed speed target is reported in the
table, not in the exit status: this is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks import report
from benchmarks.runner import RunConfig, run_all
from benchmarks.workloads import WORKLOADS

CLI_ROWS = ("cli_help", "cli_run", "graph_example", "graph_5000", "graph_5000_shared",
            "graph_modules_folded", "graph_modules_expanded", "report_5000",
            "report_5000_shared")
SCALING_ROWS = ("run_training_loop", "run_training_loop_memory", "run_chain_100k",
                "graph_chain_100k", "run_json_leaves_100k", "graph_leaves_100k", "run_named_100k",
                "run_prints_50mb", "run_json_tensor_2e8")
REAL_MODEL_ROWS = ("transformer_folded", "transformer_expanded", "resnet_folded",
                   "resnet_expanded")
GROUPS = ("import", "cli", "scaling", "real_models")


def _names(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    names: list[str] = []
    for value in values:
        for name in filter(None, (v.strip() for v in value.split(","))):
            name = "cli" if name in CLI_ROWS else "scaling" if name in SCALING_ROWS else \
                "real_models" if name in REAL_MODEL_ROWS else name
            if name not in names:
                names.append(name)
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a short smoke run (< 1 minute)")
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run only these workloads (repeat or comma-separate); "
                             "see --list")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument("--plain", action="store_true", help="plain-text table, even with rich")
    parser.add_argument("--rounds", type=int, default=None,
                        help="processes per backend per workload (default: per workload)")
    parser.add_argument("--threads", default="1", metavar="N",
                        help="BLAS/OpenMP threads in every worker (OMP_NUM_THREADS, "
                             "MKL_NUM_THREADS, OPENBLAS_NUM_THREADS); default 1, since "
                             "multi-threaded BLAS on a shared machine scatters 10x; 'default' "
                             "leaves each library its own (all cores)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    # Hidden: which module plays the gradviz column. `--backend torch` runs torch on both
    # sides, which validates the harness (ratios ~1.0x, checksums agree) before gradviz exists.
    parser.add_argument("--backend", default="gradviz", choices=("gradviz", "torch"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.list:
        for w in WORKLOADS.values():
            print(f"{w.name:14} {w.description}")
        print(f"{'import':14} python -c 'import gradviz' (and 'import torch'), whole process")
        print(f"{'cli':14} {', '.join(CLI_ROWS)}: the gradviz command, whole process")
        print(f"{'scaling':14} {', '.join(SCALING_ROWS)}: the gradviz command against "
              "python FILE, as ratios")
        print(f"{'real_models':14} {', '.join(REAL_MODEL_ROWS)}: gradviz graph --backend "
              "torch on the model examples against torchviz (needs torch; torchviz optional)")
        return 0
    if args.threads == "default":
        threads = None
    elif args.threads.isdigit() and int(args.threads) > 0:
        threads = int(args.threads)
    else:
        parser.error(f"--threads takes a positive number or 'default', not {args.threads!r}")
    only = _names(args.only)
    bad = [n for n in (only or []) if n not in WORKLOADS and n not in GROUPS]
    if bad:
        parser.error(f"unknown workload {', '.join(bad)} (see --list)")

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    # scaling rows named one by one run alone; `scaling` (or no --only) runs them all
    named = [n.strip() for v in args.only or [] for n in v.split(",")]
    rows = None if "scaling" in named else [n for n in named if n in SCALING_ROWS] or None
    cfg = RunConfig(quick=args.quick, only=only, scaling_rows=rows, candidate_module=args.backend,
                    rounds=args.rounds, threads=threads, log=log)
    result = run_all(cfg)
    if args.json:
        report.print_json(result)
    else:
        report.print_table(result, plain=args.plain)
    return 1 if report.mismatches(result) else 0


if __name__ == "__main__":
    sys.exit(main())
