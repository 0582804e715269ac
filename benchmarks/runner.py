"""Runs the workers, alternating between backends, and gathers Measurements.

For each workload and each round, every backend runs once in a fresh
``python -m benchmarks.worker`` process; the order flips every round (gradviz, torch, floor;
then floor, torch, gradviz; ...) so slow drift on a shared machine (another job starting, the
CPU clocking down) falls on both sides alike.

The workers run without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE: some machines here set them
for old OpenBLAS builds, and they slow a current NumPy (and so gradviz and the floor) but not
torch, which uses MKL. They also run without PYTHONDONTWRITEBYTECODE (bytecode is cached in a
directory of the temp dir), as a user's Python does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from benchmarks import processes
from benchmarks.machine import OPENBLAS_OVERRIDES, OtherLoad, machine_facts
from benchmarks.measurement import CANDIDATE, FLOOR, REFERENCE, Measurement, Row, to_row
from benchmarks.workloads import WORKLOADS, Workload

WORKER_TIMEOUT_S = 300.0
BUSY_CORES = 0.25  # other processes' CPU use above which a row is flagged as noisy


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
BYTECODE_CACHE = os.path.join(tempfile.gettempdir(), "gradviz-benchmarks-pycache")


def worker_env(threads: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    for key in OPENBLAS_OVERRIDES:
        env.pop(key, None)
    # A user's Python caches bytecode: with PYTHONDONTWRITEBYTECODE (set on some machines
    # here) every process would compile gradviz's modules again, and the import and command
    # rows would time the compiler. The cache goes to a directory of its own, not the checkout.
    if env.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        env.setdefault("PYTHONPYCACHEPREFIX", BYTECODE_CACHE)
    if threads is not None:
        # torch reads OMP_NUM_THREADS (and MKL's), NumPy's OpenBLAS reads OPENBLAS_NUM_THREADS
        for key in THREAD_VARIABLES:
            env[key] = str(threads)
    # the worker must import this checkout's benchmarks/ and gradviz/ even if not installed
    root = str(processes.REPO)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def module_importable(module: str, env: dict[str, str]) -> tuple[bool, str]:
    """Whether ``import module`` works in a fresh interpreter (never in this one) and gives a
    module with ``tensor`` (a half-written package can import as an empty namespace)."""
    code = f"import {module}; {module}.tensor"
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=processes.REPO,
                          capture_output=True, timeout=120)
    if proc.returncode == 0:
        return True, ""
    tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:]
    return False, tail[0] if tail else f"exit {proc.returncode}"


@dataclass
class RunConfig:
    quick: bool = False
    only: list[str] | None = None  # workload names; None: all
    scaling_rows: list[str] | None = None  # the scaling rows to run; None: all
    candidate_module: str = "gradviz"  # hidden --backend: which module plays "gradviz"
    rounds: int | None = None  # override every plan's rounds
    threads: int | None = 1  # BLAS/OpenMP threads in the workers; None: library defaults
    log: Callable[[str], None] = lambda msg: None


@dataclass
class RunResult:
    machine: dict[str, Any]
    config: dict[str, Any]
    rows: list[Row]
    backend_info: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def _run_worker(backend: str, module: str, w: Workload, size: int, warmup: int, repeat: int,
                env: dict[str, str]) -> dict[str, Any]:
    # the worker's --backend is the module it imports: "gradviz", "torch" or "numpy"
    cmd = [sys.executable, "-m", "benchmarks.worker", "--backend", module, "--workload", w.name,
           "--repeat", str(repeat), "--size", str(size), "--warmup-size", str(warmup)]
    try:
        proc = subprocess.run(cmd, env=env, cwd=processes.REPO, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=WORKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {WORKER_TIMEOUT_S:.0f} s"}
    lines = proc.stdout.decode(errors="replace").strip().splitlines()
    for line in reversed(lines):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                break
    err = proc.stderr.decode(errors="replace").strip().splitlines()[-2:]
    # a crash (segfault, C stack overflow in a recursive teardown) leaves no JSON behind
    return {"error": f"worker exit {proc.returncode}: {' | '.join(err) or 'no output'}"}


def run_workload(w: Workload, cfg: RunConfig, backends: dict[str, str],
                 env: dict[str, str], info: dict[str, Any]) -> list[Measurement]:
    """backends: column name -> module to import. Returns the time row (and memory row)."""
    plan = w.quick if cfg.quick else w.full
    rounds = cfg.rounds or plan.rounds
    warmup = plan.warmup_size or plan.size
    time_m = Measurement(w.name, "time", w.unit, w.description)
    mem_m = Measurement(w.name, "memory", "B/op", "peak ru_maxrss growth per op, first run")
    columns = [b for b in (CANDIDATE, REFERENCE, FLOOR) if b in backends]
    if not w.floor:
        columns = [b for b in columns if b != FLOOR]
    for r in range(rounds):
        order = columns if r % 2 == 0 else list(reversed(columns))
        for backend in order:
            if backend in time_m.errors:
                continue  # failed once: don't spend the time budget failing again
            cfg.log(f"  {w.name}: round {r + 1}/{rounds}, {backend}")
            res = _run_worker(backend, backends[backend], w, plan.size, warmup, plan.repeat, env)
            if "error" in res:
                time_m.errors[backend] = res["error"]
                continue
            info.setdefault(backend, res.get("info"))
            unfair = ("torch was imported in the gradviz worker process: every allocation is "
                      "slower there, the numbers are unfair")
            if backend == CANDIDATE and res.get("info", {}).get("torch_imported") \
                    and backends[CANDIDATE] != "torch" and unfair not in time_m.notes:
                time_m.notes.append(unfair)
            ops = w.ops(plan.size) if w.ops else 1
            scale = 1e6 / ops if w.unit == "us/op" else 1e3
            time_m.add(backend, [t * scale for t in res["times"]])
            time_m.checksums.setdefault(backend, []).append(res["checksum"])
            if w.memory:
                if "bytes_per_op" in res:
                    mem_m.add(backend, [res["bytes_per_op"]])
                elif res.get("memory_note") and not mem_m.notes:
                    mem_m.notes.append(f"{backend}: {res['memory_note']}")
    if plan.size != w.full.size:
        time_m.notes.append(f"size {plan.size:,} (full run: {w.full.size:,})")
    if w.memory:
        mem_m.errors = dict(time_m.errors)
        return [time_m, mem_m]
    return [time_m]


def run_all(cfg: RunConfig) -> RunResult:
    start = time.perf_counter()
    env = worker_env(cfg.threads)
    groups = ("import", "cli", "scaling", "real_models")
    names = cfg.only or list(WORKLOADS) + list(groups)
    unknown = [n for n in names if n not in WORKLOADS and n not in groups]
    if unknown:
        raise ValueError(f"unknown workload(s): {', '.join(unknown)}")

    machine = machine_facts()
    machine["loadavg_start"] = _loadavg()
    whole_run = OtherLoad()
    backends: dict[str, str] = {}
    notes: list[str] = []
    ok, why = module_importable(cfg.candidate_module, env)
    if ok:
        backends[CANDIDATE] = cfg.candidate_module
    else:
        notes.append(f"{cfg.candidate_module} is not importable yet: {why}")
    ok, why = module_importable("torch", env)
    if ok:
        backends[REFERENCE] = "torch"
    else:
        notes.append(f"torch is not importable: {why}; no torch column, no agreement check")
    backends[FLOOR] = "numpy"
    cfg.log(f"backends: {backends}")

    info: dict[str, Any] = {}
    measurements: list[Measurement] = []
    for name in names:
        load = OtherLoad()
        first_new = len(measurements)
        if name in WORKLOADS:
            w = WORKLOADS[name]
            cfg.log(f"{name}: {w.description}")
            ms = run_workload(w, cfg, backends, env, info)
            if CANDIDATE not in backends:
                for m in ms:
                    m.skipped = f"{cfg.candidate_module} is not importable"
            measurements.extend(ms)
        elif name == "import":
            cfg.log("import: whole-process import time")
            plan = processes.QUICK if cfg.quick else processes.FULL
            cols = [b for b in (CANDIDATE, REFERENCE) if b in backends]
            m = processes.measure_import(plan, env, cols, backends)
            if CANDIDATE not in backends:
                m.skipped = f"{cfg.candidate_module} is not importable"
            measurements.append(m)
        elif name == "cli":
            cfg.log("cli: whole-process wall times of the gradviz command")
            plan = processes.QUICK if cfg.quick else processes.FULL
            measurements.extend(processes.measure_cli(plan, env, cfg.candidate_module, cfg.log))
        elif name == "scaling":
            cfg.log("scaling: the gradviz command against plain Python on the same file")
            from benchmarks.scaling import measure_scaling
            ms = measure_scaling(cfg.quick, env, cfg.log, only=cfg.scaling_rows)
            if cfg.candidate_module != "gradviz":
                for m in ms:
                    m.skipped = "gradviz only (the gradviz column is played by another backend)"
            measurements.extend(ms)
        elif name == "real_models":
            cfg.log("real_models: gradviz graph --backend torch against torchviz")
            from benchmarks.real_models import measure_real_models
            ms = measure_real_models(cfg.quick, env, cfg.log)
            for m in ms:
                if REFERENCE not in backends:
                    m.skipped = "torch is not importable: the model examples need it"
                elif cfg.candidate_module != "gradviz":
                    m.skipped = "gradviz only (the gradviz column is played by another backend)"
            measurements.extend(ms)
        others = load.cores()
        if others is not None and others > BUSY_CORES:
            for m in measurements[first_new:]:
                m.notes.append(f"noisy: other processes used {others:.1f} cores meanwhile")

    by_key = {(m.workload, m.metric): m for m in measurements}
    rows = [to_row(m, by_key) for m in measurements]
    machine["loadavg_end"] = _loadavg()
    machine["other_processes_cores"] = whole_run.cores()
    config = {"quick": cfg.quick, "only": cfg.only, "candidate_module": cfg.candidate_module,
              "backends": backends, "notes": notes, "threads": cfg.threads,
              "openblas_env_removed_in_workers": list(OPENBLAS_OVERRIDES),
              "memory_method": "ru_maxrss (peak RSS) after the first timed run minus VmRSS "
                               "just before it, per op; the same for both backends"}
    return RunResult(machine, config, rows, info, time.perf_counter() - start)


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None
