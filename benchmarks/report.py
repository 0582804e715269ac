"""Prints a RunResult: a rich table when rich is installed (plain text otherwise), or JSON."""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

from benchmarks.machine import describe_blas
from benchmarks.measurement import CANDIDATE, FLOOR, REFERENCE, Row
from benchmarks.runner import RunResult

HEADERS = ["workload", "unit", "gradviz", "torch", "gv/torch", "NumPy floor", "gv/floor",
           "target", "result"]
UNIT_TEXT = {"us/op": "µs/op", "ms": "ms/run", "s": "s", "B/op": "B/node"}


def _num(v: float | None, unit: str) -> str:
    if v is None:
        return "-"
    if unit == "B/op":
        return f"{v:,.0f}"
    if unit == "s":
        return f"{v:.3f}"
    return f"{v:.3g}" if v < 100 else f"{v:,.0f}"


def _ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _target_text(row: Row) -> str:
    if row.target is None:
        return "-"
    if row.target.kind == "vs_row" and row.target_value is not None:
        return f"{row.target.text} (is {row.target_value:.2f}x)"
    return row.target.text


def row_cells(row: Row) -> list[str]:
    name = row.workload if row.metric == "time" else f"{row.workload} memory"
    return [name, UNIT_TEXT.get(row.unit, row.unit), _num(row.medians.get(CANDIDATE), row.unit),
            _num(row.medians.get(REFERENCE), row.unit), _ratio(row.ratio_torch),
            _num(row.medians.get(FLOOR), row.unit), _ratio(row.ratio_floor), _target_text(row),
            row.status]


def _cores(v: float | None) -> str:
    return "?" if v is None else f"{v:.1f}"


def machine_lines(result: RunResult) -> list[str]:
    m = result.machine
    lines = [f"date: {_dt.datetime.now().isoformat(timespec='minutes')}",
             f"cpu: {m['cpu']} ({m['cores']} cores, {m['simd']}); python {m['python']}",
             f"load average at start {m.get('loadavg_start')}, at end {m.get('loadavg_end')}; "
             f"other processes used {_cores(m.get('other_processes_cores'))} cores on average"]
    for backend in (CANDIDATE, FLOOR):
        info = result.backend_info.get(backend)
        if info and "numpy" in info:
            lines.append(f"{backend} process: numpy {info['numpy']}, BLAS {describe_blas(info)}")
            break
    t = result.backend_info.get(REFERENCE)
    if t:
        lines.append(f"torch process: torch {t.get('torch')}, BLAS {describe_blas(t)}")
    threads = result.config.get("threads")
    lines.append("BLAS/OpenMP threads per worker: "
                 + (f"{threads} (--threads)" if threads else "each library's default"))
    removed = ", ".join(result.config["openblas_env_removed_in_workers"])
    lines.append(f"workers run without {removed}; memory: {result.config['memory_method']}")
    others = m.get("other_processes_cores")
    if others is not None and others > 0.25 and not threads:
        lines.append(f"WARNING: other processes used {others:.1f} cores during this run. "
                     "Multi-threaded BLAS (mlp_step, matmul_1024) then waits on descheduled "
                     "threads and its times scatter 10x; rerun on an idle machine or without "
                     "--threads default.")
    if result.config.get("quick"):
        lines.append("--quick: smaller sizes and fewer repeats; targets are indicative only")
    lines.extend(result.config.get("notes", []))
    return lines


def notes_lines(result: RunResult) -> list[str]:
    out = []
    for row in result.rows:
        name = row.workload if row.metric == "time" else f"{row.workload} memory"
        for note in row.notes:
            out.append(f"{name}: {note}")
    return out


def mismatches(result: RunResult) -> list[Row]:
    return [r for r in result.rows if r.status == "MISMATCH"]


def print_table(result: RunResult, plain: bool = False) -> None:
    try:
        if plain:
            raise ImportError
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        _print_plain(result)
        return
    console = Console()
    if not console.is_terminal:
        console = Console(width=150)  # piped: don't squeeze the table into 80 columns
    for line in machine_lines(result):
        console.print(line, highlight=False, markup=False)
    table = Table(title="gradviz benchmarks (medians; ratios are medians of per-round ratios)")
    for h in HEADERS:
        table.add_column(h, justify="left" if h in ("workload", "unit", "target") else "right")
    styles = {"PASS": "green", "FAIL": "red", "MISMATCH": "bold white on red", "ERROR": "red",
              "SKIP": "yellow"}
    for row in result.rows:
        cells = row_cells(row)
        style = styles.get(row.status)
        cells[-1] = f"[{style}]{cells[-1]}[/]" if style else cells[-1]
        table.add_row(*cells)
    console.print(table)
    for line in notes_lines(result):
        console.print(line, highlight=False, markup=False)
    for row in mismatches(result):
        console.print(f"[bold white on red]FAIL: {row.workload}: gradviz's answer disagrees "
                      "with torch's; its time means nothing[/]")
    console.print(f"total {result.seconds:.0f} s", highlight=False)


def _print_plain(result: RunResult) -> None:
    for line in machine_lines(result):
        print(line)
    rows = [HEADERS] + [row_cells(r) for r in result.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    for j, r in enumerate(rows):
        print("  ".join(c.ljust(w) if i in (0, 1, 7) else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths))))
        if j == 0:
            print("  ".join("-" * w for w in widths))
    for line in notes_lines(result):
        print(line)
    for row in mismatches(result):
        print(f"!!! FAIL: {row.workload}: gradviz's answer disagrees with torch's !!!")
    print(f"total {result.seconds:.0f} s")


def as_json(result: RunResult) -> dict[str, Any]:
    return {
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "machine": result.machine,
        "config": result.config,
        "backend_info": result.backend_info,
        "seconds": result.seconds,
        "results": [r.as_json() for r in result.rows],
    }


def print_json(result: RunResult) -> None:
    print(json.dumps(as_json(result), indent=2))
