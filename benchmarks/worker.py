"""One backend, one workload, one fresh process: ``python -m benchmarks.worker``.

    python -m benchmarks.worker --backend gradviz --workload mlp_step --repeat 10

imports only the named backend (torch, gradviz, or NumPy for the floor), runs one untimed
warm-up, then ``--repeat`` timed runs, and prints one JSON object on its last line of stdout:
the per-run wall times in seconds, the checksum of the first timed run, peak memory per op for
workloads that measure it, and what the process knows about its backend (versions, BLAS kernel,
threads, whether torch got imported where it should not have been).

The cyclic garbage collector stays on, as a user has it: its cost per op is part of what is
measured.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import resource
import sys
import time
import traceback
from typing import Any

from benchmarks.machine import blas_info, torch_info
from benchmarks.workloads import WORKLOADS

BACKENDS = ("gradviz", "torch", "numpy")


def _rss_bytes() -> int:
    """The current resident set size, from /proc (0 where it is missing)."""
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _maxrss_bytes() -> int:
    # ru_maxrss is in KiB on Linux (bytes on macOS; this benchmark targets Linux)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _load(backend: str, workload: str) -> tuple[Any, Any, dict[str, Any]]:
    """(module, implementation, info). The implementation has setup/run/checksum."""
    if backend == "numpy":
        import numpy

        from benchmarks.floor import FLOORS

        if workload not in FLOORS:
            raise SystemExit(f"no NumPy floor for workload {workload!r}")
        return numpy, FLOORS[workload], blas_info()
    module = importlib.import_module(backend)
    info: dict[str, Any]
    if backend == "torch":
        info = torch_info(module)
    else:
        info = {"gradviz": getattr(module, "__version__", "?"), **blas_info()}
    return module, WORKLOADS[workload], info


def run_worker(backend: str, workload: str, repeat: int, size: int | None,
               warmup_size: int | None) -> dict[str, Any]:
    spec = WORKLOADS[workload]
    plan = spec.full
    size = plan.size if size is None else size
    warmup_size = (plan.warmup_size or size) if warmup_size is None else warmup_size

    t0 = time.perf_counter()
    module, impl, info = _load(backend, workload)
    import_s = time.perf_counter() - t0
    info["import_seconds"] = import_s

    # warm-up: first-call costs (lazy imports, kernel selection, thread pools) are not measured
    state = impl.setup(module, warmup_size)
    impl.run(module, state)
    del state
    gc.collect()

    result: dict[str, Any] = {"backend": backend, "workload": workload, "size": size,
                              "repeat": repeat, "info": info}
    state = impl.setup(module, size)
    # One collection before the first timed run, none between runs: the collector's work on
    # the garbage of earlier runs is part of a real loop's per-op cost (issue 7 calls it a
    # large hidden one), and an untimed gc.collect() also lets BLAS threads fall asleep, which
    # would charge their wake-up to the next run.
    gc.collect()
    times: list[float] = []
    for i in range(repeat):
        if i == 0 and spec.memory:
            rss_before, peak_before = _rss_bytes(), _maxrss_bytes()
        t = time.perf_counter()
        impl.run(module, state)
        times.append(time.perf_counter() - t)
        if i == 0:
            if spec.memory:
                peak_after = _maxrss_bytes()
                ops = spec.ops(size) if spec.ops else size
                # The peak of this run over the memory in use just before it. Only valid when
                # the run set a new high-water mark, which a run of this size does.
                if peak_after > peak_before:
                    result["peak_bytes"] = peak_after - rss_before
                    result["bytes_per_op"] = (peak_after - rss_before) / ops
                else:
                    result["memory_note"] = "the run did not raise ru_maxrss; no measurement"
            result["checksum"] = impl.checksum(module, state)
    result["times"] = times
    # checked at the end: a backend that imports torch lazily, mid-run, counts too
    info["torch_imported"] = "torch" in sys.modules
    return result


def _deepest_backend_frame(exc: BaseException, backend: str) -> str | None:
    """Where inside the backend's own package the exception was raised, as "pkg/file.py:N"."""
    marker = os.sep + backend + os.sep
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if marker in frame.filename:
            rel = frame.filename[frame.filename.rindex(marker) + 1:]
            found = f"{rel}:{frame.lineno} in {frame.name}"
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.worker", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=BACKENDS, required=True)
    parser.add_argument("--workload", choices=sorted(WORKLOADS), required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=None, help="default: the full plan's size")
    parser.add_argument("--warmup-size", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        result = run_worker(args.backend, args.workload, args.repeat, args.size, args.warmup_size)
    except BaseException as exc:  # report anything, RecursionError and MemoryError included
        if isinstance(exc, KeyboardInterrupt):
            raise
        tb = traceback.format_exc()
        message = f"{type(exc).__name__}: {exc}"[:400]
        where = _deepest_backend_frame(exc, args.backend)
        result = {"backend": args.backend, "workload": args.workload,
                  "error": message + (f" (at {where})" if where else ""),
                  "traceback": tb[-4000:]}
        print(json.dumps(result))
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
