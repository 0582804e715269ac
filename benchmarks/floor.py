"""The NumPy floor: the MLP step and the matmul in plain NumPy with hand-written backward.

This is what an autograd core on NumPy cannot beat by much: the same float32 arithmetic with no
graph, no nodes and no bookkeeping. gradviz's time divided by this one is the core's own
overhead. The floor computes exactly what autograd computes (it does not skip work autograd
must do, such as materializing the gradient of ``sum``) and nothing more (no gradient for the
input batch, which does not require grad).

The functions mirror workloads.py: ``setup(np, size)``, ``run(np, state)`` timed,
``checksum(np, state)`` in the same ``{name: (value, scale)}`` form, so the runner checks the
floor against torch as it checks gradviz.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from benchmarks.workloads import MLP_LR, matmul_data, mlp_data


def _sum_entry(a: np.ndarray) -> tuple[float, float]:
    a64 = a.astype(np.float64)
    return (float(a64.sum()), float(np.abs(a64).sum()))


# ----- MLP step -----


def mlp_setup(np_: Any, batch: int) -> dict:
    data = mlp_data(batch)
    return {"x": data["x"], "target": data["target"],
            "params": [data["w1"], data["b1"], data["w2"], data["b2"]]}


def mlp_run(np_: Any, state: dict) -> None:
    x, target = state["x"], state["target"]
    w1, b1, w2, b2 = state["params"]
    # forward, as nn.Linear: x @ W.T + b (W.T is a view)
    h = np.tanh(x @ w1.T + b1)
    out = h @ w2.T + b2
    diff = out - target
    loss = np.mean(diff * diff)
    # backward of mean((out - target) ** 2); float32 throughout (NumPy 2 keeps float32 when a
    # Python scalar meets a float32 array)
    d_out = diff * (2.0 / diff.size)
    g_w2 = d_out.T @ h
    g_b2 = d_out.sum(axis=0)
    d_h = d_out @ w2
    d_z1 = d_h * (1.0 - h * h)  # tanh' = 1 - tanh^2
    g_w1 = d_z1.T @ x  # no gradient for x: it does not require grad
    g_b1 = d_z1.sum(axis=0)
    grads = [g_w1, g_b1, g_w2, g_b2]
    # SGD update, in place
    for p, g in zip(state["params"], grads):
        p -= MLP_LR * g
    state["loss"] = loss
    state["grads"] = grads


def mlp_checksum(np_: Any, state: dict) -> dict:
    loss = float(state["loss"])
    out = {"loss": (loss, abs(loss))}
    for name, g in zip(("w1", "b1", "w2", "b2"), state["grads"]):
        out[name + ".grad"] = _sum_entry(g)
    return out


# ----- matmul -----


def matmul_setup(np_: Any, n: int) -> dict:
    a, b = matmul_data(n)
    return {"a": a, "b": b}


def matmul_run(np_: Any, state: dict) -> None:
    a, b = state["a"], state["b"]
    out = (a @ b).sum()
    # the gradient of sum() is a tensor of ones of the output's shape, as autograd builds it
    g = np.ones((a.shape[0], b.shape[1]), dtype=np.float32)
    state["a_grad"] = g @ b.T
    state["b_grad"] = a.T @ g
    state["out"] = out


def matmul_checksum(np_: Any, state: dict) -> dict:
    v = float(state["out"])
    return {"out": (v, abs(v)), "a.grad": _sum_entry(state["a_grad"]),
            "b.grad": _sum_entry(state["b_grad"])}


@dataclass(frozen=True)
class Floor:
    setup: Callable[[Any, int], dict]
    run: Callable[[Any, dict], None]
    checksum: Callable[[Any, dict], dict]


FLOORS: dict[str, Floor] = {
    "mlp_step": Floor(mlp_setup, mlp_run, mlp_checksum),
    "matmul_1024": Floor(matmul_setup, matmul_run, matmul_checksum),
}
