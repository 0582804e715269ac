"""Facts about the machine and the numeric libraries, reported beside every result.

``blas_info()`` runs inside a worker (so it sees the worker's environment, where
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset) and reports which OpenBLAS kernel NumPy
actually runs: through threadpoolctl when it is installed, otherwise by asking NumPy's bundled
OpenBLAS directly (the same call threadpoolctl makes), with numpy.show_config()'s build line as
the last resort.
"""

from __future__ import annotations

import ctypes
import glob
import os
import platform
import re
import resource
import sys
import time
from typing import Any

# Set on some machines here because old OpenBLAS builds crash on their processors; they slow a
# current NumPy, so the workers run without them (see benchmarks/README.md).
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_flags_summary() -> str:
    """The widest SIMD level the CPU reports (BLAS kernels are chosen by it)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    for level in ("avx512f", "avx2", "avx", "sse4_2"):
                        if level in flags:
                            return level
    except OSError:
        pass
    return "unknown"


def machine_facts() -> dict[str, Any]:
    """Machine facts gathered in the runner process (no numeric library imported)."""
    return {
        "cpu": cpu_model(),
        "simd": cpu_flags_summary(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "openblas_env_in_runner": {k: os.environ.get(k) for k in OPENBLAS_OVERRIDES},
    }


class OtherLoad:
    """How much CPU other processes used while a block ran, in cores (0.0 to os.cpu_count()).

    Machine-wide busy time from /proc/stat minus this process's and its children's CPU time.
    On a shared 2-core machine a row measured while another job ran is noisy; this says so.
    """

    def __init__(self) -> None:
        self._start = self._snapshot()

    @staticmethod
    def _snapshot() -> tuple[float, float, float] | None:
        try:
            with open("/proc/stat", encoding="utf-8") as f:
                fields = [int(x) for x in f.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        hz = os.sysconf("SC_CLK_TCK")
        # user nice system idle iowait irq softirq steal
        busy = sum(fields[i] for i in (0, 1, 2, 5, 6, 7) if i < len(fields)) / hz
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        ours = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        return (time.monotonic(), busy, ours)

    def cores(self) -> float | None:
        end = self._snapshot()
        if self._start is None or end is None or end[0] - self._start[0] < 0.5:
            return None
        wall = end[0] - self._start[0]
        others = (end[1] - self._start[1]) - (end[2] - self._start[2])
        return max(0.0, others / wall)


def _openblas_from_ctypes(np: Any) -> dict[str, Any] | None:
    """Ask the OpenBLAS that NumPy bundles for its kernel (as threadpoolctl does)."""
    libs_dir = os.path.join(os.path.dirname(np.__path__[0]), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs_dir, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", ""):
                corename = getattr(lib, f"{prefix}_get_corename{suffix}", None)
                threads = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                if corename is None:
                    continue
                corename.restype = ctypes.c_char_p
                return {"api": "openblas", "library": os.path.basename(path),
                        "kernel": corename().decode(),
                        "threads": threads() if threads is not None else None,
                        "source": "ctypes"}
    return None


def blas_info() -> dict[str, Any]:
    """Which BLAS NumPy uses in this process, and with which kernel."""
    import numpy as np

    info: dict[str, Any] = {"numpy": np.__version__}
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            if pool.get("user_api") == "blas":
                info["blas"] = {"api": pool.get("internal_api"), "library": pool.get("filepath"),
                                "kernel": pool.get("architecture"),
                                "threads": pool.get("num_threads"), "version": pool.get("version"),
                                "source": "threadpoolctl"}
                break
    except ImportError:
        pass
    if "blas" not in info:
        found = _openblas_from_ctypes(np)
        if found is not None:
            info["blas"] = found
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        info["blas_build"] = f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # show_config's layout differs between NumPy versions
        pass
    info["openblas_env"] = {k: os.environ.get(k) for k in OPENBLAS_OVERRIDES}
    return info


def torch_info(torch: Any) -> dict[str, Any]:
    """PyTorch's version, BLAS and thread count, read in a torch worker."""
    info: dict[str, Any] = {"torch": getattr(torch, "__version__", "?")}
    try:
        info["threads"] = torch.get_num_threads()
        show = torch.__config__.show()
        blas = re.search(r"BLAS_INFO=(\w+)", show)
        cap = re.search(r"CPU capability usage: (\w+)", show)
        info["blas"] = {"api": blas.group(1) if blas else "?", "threads": info["threads"],
                        "kernel": cap.group(1) if cap else "?", "source": "torch.__config__"}
    except Exception:  # a reporting nicety: never fail a benchmark over it
        pass
    return info


def describe_blas(info: dict[str, Any] | None) -> str:
    if not info or "blas" not in info:
        return "unknown"
    b = info["blas"]
    threads = b.get("threads")
    plural = "" if threads == 1 else "s"
    return f"{b.get('api')} kernel {b.get('kernel')}, {threads} thread{plural} ({b.get('source')})"


if __name__ == "__main__":  # python -m benchmarks.machine: print the facts
    import json

    print(json.dumps({"machine": machine_facts(), "numpy": blas_info()}, indent=2))
    sys.exit(0)
