"""What a benchmark produces (Measurement) and how it becomes a table row (Row).

A Measurement holds raw samples, per backend and per round (one round = one fresh process per
backend, the backends alternating). ``to_row`` turns it into medians, ratios, an agreement
verdict and a target verdict. Keeping the samples per round lets the ratios be medians of
per-round ratios, as issue 7 asks ("medians of ratios measured in one run").
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from benchmarks.targets import AGREEMENT_RTOL, Target, target_for

CANDIDATE = "gradviz"  # the column under test; --backend torch makes torch play it
REFERENCE = "torch"
FLOOR = "numpy"


@dataclass
class Measurement:
    workload: str
    metric: str  # "time" or "memory"
    unit: str  # "us/op", "ms", "s", "B/op"
    description: str
    rounds: dict[str, list[list[float]]] = field(default_factory=dict)  # backend -> rounds
    checksums: dict[str, list[dict]] = field(default_factory=dict)  # backend -> per process
    errors: dict[str, str] = field(default_factory=dict)  # backend -> first error
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None  # why the row could not run at all

    def add(self, backend: str, samples: list[float]) -> None:
        self.rounds.setdefault(backend, []).append(list(samples))

    def median(self, backend: str) -> float | None:
        flat = [s for r in self.rounds.get(backend, []) for s in r]
        return statistics.median(flat) if flat else None


@dataclass
class Row:
    workload: str
    metric: str
    unit: str
    description: str
    medians: dict[str, float | None]
    ratio_torch: float | None
    ratio_floor: float | None
    target: Target | None
    target_value: float | None  # the number the target judges
    status: str  # PASS, FAIL, MISMATCH, ERROR, SKIP, "-" (no target), "n/a"
    agreement: str  # "ok", "MISMATCH", "unchecked", "-" (nothing to check)
    notes: list[str]
    samples: dict[str, list[list[float]]]

    def as_json(self) -> dict[str, Any]:
        t = self.target
        return {
            "workload": self.workload, "metric": self.metric, "unit": self.unit,
            "description": self.description, "median": self.medians,
            "ratio_vs_torch": self.ratio_torch, "ratio_vs_floor": self.ratio_floor,
            "target": None if t is None else {"kind": t.kind, "limit": t.limit, "text": t.text,
                                              "relative_to": t.relative_to},
            "target_value": self.target_value, "status": self.status,
            "agreement": self.agreement, "notes": self.notes, "samples": self.samples,
        }


def paired_ratio(m: Measurement, num: str, den: str) -> float | None:
    """The median over rounds of median(num) / median(den) within the round."""
    a, b = m.rounds.get(num, []), m.rounds.get(den, [])
    ratios = [statistics.median(x) / statistics.median(y)
              for x, y in zip(a, b) if x and y and statistics.median(y) > 0]
    return statistics.median(ratios) if ratios else None


def compare_checksums(got: dict, ref: dict, rtol: float = AGREEMENT_RTOL) -> list[str]:
    """The entries where two checksums disagree, as readable lines (empty when they agree)."""
    problems = []
    for key in sorted(set(got) | set(ref)):
        if key not in got or key not in ref:
            problems.append(f"{key}: missing on one side")
            continue
        (a, sa), (b, sb) = got[key], ref[key]
        if math.isnan(a) or math.isnan(b):
            if not (math.isnan(a) and math.isnan(b)):
                problems.append(f"{key}: {a:.6g} vs torch {b:.6g} (None/NaN on one side)")
            continue
        if abs(a - b) > rtol * max(sa, sb, 0.0) and a != b:
            problems.append(f"{key}: {a:.7g} vs torch {b:.7g}")
    return problems


def agreement(m: Measurement) -> tuple[str, list[str]]:
    """Check the candidate and the floor against torch's first checksum."""
    ref = (m.checksums.get(REFERENCE) or [None])[0]
    if not any(m.checksums.values()):
        return "-", []
    if ref is None:
        return "unchecked", ["no torch checksum to compare with"]
    notes = []
    for backend in (CANDIDATE, FLOOR):
        for i, got in enumerate(m.checksums.get(backend, [])):
            for line in compare_checksums(got, ref):
                notes.append(f"{backend} (process {i + 1}) disagrees with torch: {line}")
    return ("MISMATCH" if notes else "ok"), notes


def to_row(m: Measurement, all_measurements: dict[tuple[str, str], Measurement]) -> Row:
    medians = {b: m.median(b) for b in (CANDIDATE, REFERENCE, FLOOR)}
    r_torch = paired_ratio(m, CANDIDATE, REFERENCE)
    r_floor = paired_ratio(m, CANDIDATE, FLOOR)
    agree, agree_notes = agreement(m) if m.metric == "time" else ("-", [])
    notes = list(m.notes) + agree_notes
    for backend, err in m.errors.items():
        notes.append(f"{backend} failed: {err}")
    target = target_for(m.workload, m.metric)
    value, status = _judge(m, target, medians, r_torch, r_floor, all_measurements)
    if m.skipped:
        status = "SKIP"
        notes.insert(0, m.skipped)
    elif m.errors.get(CANDIDATE):
        status = "ERROR"
    if agree == "MISMATCH":
        status = "MISMATCH"
    return Row(m.workload, m.metric, m.unit, m.description, medians, r_torch, r_floor, target,
               value, status, agree, notes, m.rounds)


def _judge(m: Measurement, target: Target | None, medians: dict, r_torch: float | None,
           r_floor: float | None, others: dict) -> tuple[float | None, str]:
    if target is None:
        return None, "-"
    if target.kind == "vs_torch":
        value = r_torch
    elif target.kind == "vs_floor":
        value = r_floor
    elif target.kind == "absolute":
        value = medians[CANDIDATE]
    elif target.kind == "vs_row":
        other = others.get((target.relative_to, m.metric))
        base = other.median(CANDIDATE) if other is not None else None
        mine = medians[CANDIDATE]
        value = mine / base if (mine is not None and base) else None
    else:
        raise ValueError(f"unknown target kind {target.kind!r}")
    if value is None:
        return None, "n/a"
    return value, ("PASS" if value <= target.limit else "FAIL")
