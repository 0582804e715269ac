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

from benchmarks.workloads import MAKEMORE_LR, MLP_LR, makemore_data, matmul_data, mlp_data


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


# ----- makemore step -----
#
# The same arithmetic as the autograd step, op by op and in the same order (torch's kernels as
# gradviz computes them on arrays): the batch norm's statistics per channel in float32, tanh's
# derivative 1 - t*t rounded once (float64 square, one rounding to float32), the embedding's
# gradient summed by a one-hot product. Only the graph, the nodes and the dispatch are missing.


def makemore_setup(np_: Any, batch: int) -> dict:
    data = makemore_data(batch)
    names = ("C", "w1", "gain", "bias", "w2", "b2")
    return {"params": [data[k] for k in names], "x": data["x"], "y": data["y"],
            "running_mean": np.zeros(200, np.float32), "running_var": np.ones(200, np.float32),
            "rows": np.arange(batch), "eye": np.eye(27, dtype=np.float32)}


def makemore_run(np_: Any, state: dict) -> None:
    C, w1, gain, bias, w2, b2 = state["params"]
    x, y, rows = state["x"], state["y"], state["rows"]
    f32 = np.float32
    # forward
    emb = C.take(x, axis=0)
    e2 = emb.reshape(emb.shape[0], -1)
    h = e2 @ w1
    n = f32(h.shape[0])
    mean = np.add.reduce(h, axis=0, dtype=f32) / n
    xc = h - mean
    var = np.add.reduce(xc * xc, axis=0, dtype=f32) / n
    invstd = np.divide(f32(1), np.sqrt(var + f32(1e-5)))
    rm, rv = state["running_mean"], state["running_var"]
    np.add(f32(0.1) * mean, f32(0.9) * rm, out=rm)
    np.add(f32(0.1) * (var * f32(n / (n - 1))), f32(0.9) * rv, out=rv)
    hn = np.multiply(xc, invstd * gain, out=xc)
    np.add(hn, bias, out=hn)
    t = np.tanh(hn)
    logits = t @ w2 + b2
    shifted = logits - np.maximum.reduce(logits, axis=1, keepdims=True)
    total = np.add.reduce(np.exp(shifted), axis=1, keepdims=True)
    logp = np.subtract(shifted, np.log(total), out=shifted)
    loss = -np.add.reduce(logp[rows, y], dtype=f32) / n
    # backward: nll_loss, log_softmax, add, mm, tanh, batch_norm, mm, view, embedding
    d_logp = np.zeros(logp.shape, f32)
    d_logp[rows, y] = -(f32(1) / n)
    d_logits = d_logp - np.exp(logp) * np.add.reduce(d_logp, axis=1, keepdims=True)
    g_b2 = np.add.reduce(d_logits, axis=0, dtype=f32)
    g_w2 = t.T @ d_logits
    d_t = d_logits @ w2.T
    t64 = t.astype(np.float64)
    np.multiply(t64, t64, out=t64)
    np.subtract(1.0, t64, out=t64)
    factor = t64.astype(f32)
    d_hn = np.multiply(d_t, factor, out=factor)
    xc = h - mean
    dot_p = np.add.reduce(d_hn * xc, axis=0, dtype=f32)
    g_bias = np.add.reduce(d_hn, axis=0, dtype=f32)
    g_gain = dot_p * invstd
    d_h = d_hn - g_bias / n
    d_h -= np.multiply(xc, g_gain * invstd / n, out=xc)
    d_h *= invstd * gain
    g_w1 = e2.T @ d_h
    d_emb = d_h @ w1.T
    g_C = state["eye"].take(x.reshape(-1), axis=0).T.copy() @ d_emb.reshape(-1, C.shape[1])
    grads = [g_C, g_w1, g_gain, g_bias, g_w2, g_b2]
    # SGD update, in place
    for p, g in zip(state["params"], grads):
        p -= MAKEMORE_LR * g
    state["loss"] = loss
    state["grads"] = grads


def makemore_checksum(np_: Any, state: dict) -> dict:
    loss = float(state["loss"])
    out = {"loss": (loss, abs(loss)), "running_var": _sum_entry(state["running_var"])}
    for name, g in zip(("C", "w1", "gain", "bias", "w2", "b2"), state["grads"]):
        out[name + ".grad"] = _sum_entry(g)
    return out


@dataclass(frozen=True)
class Floor:
    setup: Callable[[Any, int], dict]
    run: Callable[[Any, dict], None]
    checksum: Callable[[Any, dict], dict]


FLOORS: dict[str, Floor] = {
    "mlp_step": Floor(mlp_setup, mlp_run, mlp_checksum),
    "matmul_1024": Floor(matmul_setup, matmul_run, matmul_checksum),
    "makemore_step": Floor(makemore_setup, makemore_run, makemore_checksum),
}
