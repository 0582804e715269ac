"""The autograd workloads, written once against the torch API.

Every function takes the backend module as its first parameter, named ``torch``, so the same
code runs on PyTorch (``import torch``) and on gradviz (``import gradviz as torch``). Input data
comes from NumPy with a fixed seed and enters both backends through ``torch.tensor(array)``, so
both see identical float32 numbers and their checksums can be compared.

Each workload has three parts:

- ``setup(torch, size)`` builds the inputs (not timed);
- ``run(torch, state)`` is the timed region: forward, backward and (for the deep chain) the
  graph's teardown;
- ``checksum(torch, state)`` reads the loss and the gradients back (not timed) as
  ``{name: (value, scale)}``: for a sum, ``scale`` is the sum of absolute values, so a sum that
  cancels to nearly zero is still compared at the precision of its terms.

The registry at the bottom (``WORKLOADS``) also holds each workload's sizes and repeat counts
for the full and the ``--quick`` runs, chosen so the full run stays under ~5 minutes on a
2-core machine.

This module imports NumPy only: the worker imports the backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

# ----- helpers -----


def _to_numpy(t: Any) -> np.ndarray:
    """A float64 NumPy copy of a tensor, for checksums only (never in a timed region)."""
    try:
        return np.asarray(t.detach().numpy(), dtype=np.float64)
    except (AttributeError, TypeError, RuntimeError):
        # A core without .numpy() yet still has .tolist() (both are torch API).
        return np.asarray(t.detach().tolist(), dtype=np.float64)


def _sum_entry(t: Any) -> tuple[float, float]:
    """(sum, sum of |x|) of a tensor, or (nan, nan) when it is None (a missing gradient)."""
    if t is None:
        return (float("nan"), float("nan"))
    a = _to_numpy(t)
    return (float(a.sum()), float(np.abs(a).sum()))


def _scalar_entry(t: Any) -> tuple[float, float]:
    """(value, |value|) of a one-element tensor."""
    v = float(_to_numpy(t).sum())
    return (v, abs(v))


def _rng() -> np.random.Generator:
    return np.random.default_rng(20240607)


# ----- scalar chain and 8x8 chain -----
#
# Per step: h = y * a; h = h + b; h = tanh(h); y = h * c, with a, b, c leaves that require grad.
# a * c * tanh' < 1, so the recurrence is contractive: values stay finite, the gradients of a, b
# and c are well-conditioned sums over all steps, and float32 rounding differences between
# backends do not grow.


def chain_setup(torch: Any, steps: int, shape: tuple[int, ...] = ()) -> dict:
    rng = _rng()

    def leaf(low: float, high: float) -> Any:
        arr = rng.uniform(low, high, size=shape).astype(np.float32)
        return torch.tensor(arr, requires_grad=True)

    return {"steps": steps, "x": leaf(0.4, 0.6), "a": leaf(0.85, 0.95),
            "b": leaf(0.05, 0.15), "c": leaf(1.0, 1.05)}


def chain_run(torch: Any, state: dict) -> None:
    x, a, b, c = state["x"], state["a"], state["b"], state["c"]
    for leaf in (x, a, b, c):
        leaf.grad = None
    y = x
    for _ in range(state["steps"]):
        h = y * a
        h = h + b
        h = torch.tanh(h)
        y = h * c
    loss = y.sum()
    loss.backward()
    state["loss"] = loss


def chain_checksum(torch: Any, state: dict) -> dict:
    out = {"loss": _scalar_entry(state["loss"])}
    for name in ("x", "a", "b", "c"):
        out[name + ".grad"] = _sum_entry(state[name].grad)
    return out


def scalar_chain_setup(torch: Any, steps: int) -> dict:
    return chain_setup(torch, steps, shape=())


def tensor8_chain_setup(torch: Any, steps: int) -> dict:
    return chain_setup(torch, steps, shape=(8, 8))


def chain_ops(steps: int) -> int:
    """Forward ops per run: four per step and the final sum."""
    return 4 * steps + 1


# ----- MLP training step -----
#
# batch 256, 784 -> 512 -> 10, tanh, MSE, forward + backward + SGD update, float32. Written with
# the core's ops (matmul, transpose, add, tanh, sub, pow, mean) as nn.Linear computes it
# (x @ W.t() + b), so it measures the core and not nn/optim. benchmarks/floor.py has the same
# step in NumPy with a hand-written backward.

MLP_LR = 0.01


def mlp_data(batch: int) -> dict[str, np.ndarray]:
    """The MLP's inputs and initial parameters, shared with the NumPy floor."""
    rng = _rng()
    f32 = np.float32
    bound1, bound2 = 1.0 / np.sqrt(784), 1.0 / np.sqrt(512)
    return {
        "x": rng.standard_normal((batch, 784)).astype(f32),
        "target": rng.standard_normal((batch, 10)).astype(f32),
        "w1": rng.uniform(-bound1, bound1, (512, 784)).astype(f32),
        "b1": rng.uniform(-bound1, bound1, (512,)).astype(f32),
        "w2": rng.uniform(-bound2, bound2, (10, 512)).astype(f32),
        "b2": rng.uniform(-bound2, bound2, (10,)).astype(f32),
    }


def mlp_setup(torch: Any, batch: int) -> dict:
    data = mlp_data(batch)
    state = {"x": torch.tensor(data["x"]), "target": torch.tensor(data["target"])}
    state["params"] = [torch.tensor(data[k], requires_grad=True) for k in ("w1", "b1", "w2", "b2")]
    return state


def mlp_run(torch: Any, state: dict) -> None:
    w1, b1, w2, b2 = params = state["params"]
    for p in params:
        p.grad = None
    h = torch.tanh(state["x"] @ w1.t() + b1)
    out = h @ w2.t() + b2
    loss = ((out - state["target"]) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= MLP_LR * p.grad
    state["loss"] = loss


def mlp_checksum(torch: Any, state: dict) -> dict:
    out = {"loss": _scalar_entry(state["loss"])}
    for name, p in zip(("w1", "b1", "w2", "b2"), state["params"]):
        out[name + ".grad"] = _sum_entry(p.grad)
    return out


# ----- makemore-style MLP step -----
#
# A character-level MLP as in the makemore lectures: an embedding table of 27 characters x 10,
# a 3-character context, a 200-wide tanh layer with batch norm, cross entropy over 27 classes,
# batch 32, SGD. Every op of the step is one of nn.functional's own nodes
# (EmbeddingBackward0, NativeBatchNormBackward0, NllLossBackward0, ...).

MAKEMORE_LR = 0.1


def makemore_data(batch: int) -> dict:
    rng = _rng()
    return {
        "C": rng.standard_normal((27, 10)).astype(np.float32),
        "w1": (rng.standard_normal((30, 200)) * 0.2).astype(np.float32),
        "gain": np.ones(200, dtype=np.float32),
        "bias": np.zeros(200, dtype=np.float32),
        "w2": (rng.standard_normal((200, 27)) * 0.01).astype(np.float32),
        "b2": np.zeros(27, dtype=np.float32),
        "x": rng.integers(0, 27, (batch, 3)),
        "y": rng.integers(0, 27, batch),
    }


def makemore_setup(torch: Any, batch: int) -> dict:
    data = makemore_data(batch)
    names = ("C", "w1", "gain", "bias", "w2", "b2")
    state = {"params": [torch.tensor(data[k], requires_grad=True) for k in names],
             "x": torch.tensor(data["x"]), "y": torch.tensor(data["y"]),
             "running_mean": torch.zeros(200), "running_var": torch.ones(200)}
    return state


def makemore_run(torch: Any, state: dict) -> None:
    C, w1, gain, bias, w2, b2 = params = state["params"]
    F = torch.nn.functional
    for p in params:
        p.grad = None
    emb = F.embedding(state["x"], C)
    h = emb.view(emb.shape[0], -1) @ w1      # no bias before batch norm (as the lecture)
    h = F.batch_norm(h, state["running_mean"], state["running_var"], gain, bias,
                     training=True)
    logits = torch.tanh(h) @ w2 + b2
    loss = F.cross_entropy(logits, state["y"])
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= MAKEMORE_LR * p.grad
    state["loss"] = loss


def makemore_checksum(torch: Any, state: dict) -> dict:
    out = {"loss": _scalar_entry(state["loss"]),
           "running_var": _sum_entry(state["running_var"])}
    for name, p in zip(("C", "w1", "gain", "bias", "w2", "b2"), state["params"]):
        out[name + ".grad"] = _sum_entry(p.grad)
    return out


# ----- MLP training step with Adam -----
#
# The same MLP step, updated by torch.optim.Adam (lr 1e-3, torch's defaults) instead of the
# hand-written SGD: measures the optimizer's per-step cost (4 parameters, 407k elements: the
# float32 update as torch's single-tensor Adam computes it) on top of the core.


def mlp_adam_setup(torch: Any, batch: int) -> dict:
    state = mlp_setup(torch, batch)
    state["opt"] = torch.optim.Adam(state["params"], lr=1e-3)
    return state


def mlp_adam_run(torch: Any, state: dict) -> None:
    w1, b1, w2, b2 = state["params"]
    opt = state["opt"]
    opt.zero_grad()
    h = torch.tanh(state["x"] @ w1.t() + b1)
    out = h @ w2.t() + b2
    loss = ((out - state["target"]) ** 2).mean()
    loss.backward()
    opt.step()
    state["loss"] = loss


# ----- 1024x1024 matmul -----
#
# Inputs are uniform in [0, 1), so the output's sum and every gradient entry are positive sums
# with no cancellation: a relative tolerance means something.


def matmul_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = _rng()
    a = rng.uniform(0.0, 1.0, (n, n)).astype(np.float32)
    b = rng.uniform(0.0, 1.0, (n, n)).astype(np.float32)
    return a, b


def matmul_setup(torch: Any, n: int) -> dict:
    a, b = matmul_data(n)
    return {"a": torch.tensor(a, requires_grad=True), "b": torch.tensor(b, requires_grad=True)}


def matmul_run(torch: Any, state: dict) -> None:
    a, b = state["a"], state["b"]
    a.grad = None
    b.grad = None
    out = (a @ b).sum()
    out.backward()
    state["out"] = out


def matmul_checksum(torch: Any, state: dict) -> dict:
    return {"out": _scalar_entry(state["out"]), "a.grad": _sum_entry(state["a"].grad),
            "b.grad": _sum_entry(state["b"].grad)}


# ----- deep chain -----
#
# n cheap ops on a 0-d float32 tensor: y = y * 1.000001, then y = y - 0.000001, alternating.
# The timed region is forward + backward + teardown (dropping the last reference frees the
# whole graph), so a recursive backward or a recursive deallocation shows up here as a
# RecursionError or a crash, not as a fast time.


def deep_chain_setup(torch: Any, n: int) -> dict:
    return {"n": n, "x": torch.tensor(np.array(1.0, dtype=np.float32), requires_grad=True)}


def deep_chain_run(torch: Any, state: dict) -> None:
    x = state["x"]
    x.grad = None
    y = x
    for _ in range(state["n"] // 2):
        y = y * 1.000001
        y = y - 0.000001
    y.backward()
    state["y_value"] = float(_to_numpy(y))
    del y  # teardown of the whole chain, inside the timed region


def deep_chain_checksum(torch: Any, state: dict) -> dict:
    v = state["y_value"]
    return {"y": (v, abs(v)), "x.grad": _sum_entry(state["x"].grad)}


def deep_chain_ops(n: int) -> int:
    return 2 * (n // 2)


# ----- wide graph -----
#
# n small ops that all read one leaf, stacked and summed into one output: one node with n
# inputs, and a leaf whose AccumulateGrad receives n gradients.


def wide_setup(torch: Any, n: int) -> dict:
    x = _rng().uniform(0.5, 1.5, (4,)).astype(np.float32)
    return {"n": n, "x": torch.tensor(x, requires_grad=True)}


def wide_run(torch: Any, state: dict) -> None:
    x = state["x"]
    x.grad = None
    parts = [x * (1.0 + 0.1 * (i % 10)) for i in range(state["n"])]
    out = torch.stack(parts).sum()
    out.backward()
    state["out"] = out


def wide_checksum(torch: Any, state: dict) -> dict:
    return {"out": _scalar_entry(state["out"]), "x.grad": _sum_entry(state["x"].grad)}


def wide_ops(n: int) -> int:
    """The n multiplications, the stack and the sum."""
    return n + 2


# ----- small CNN step -----
#
# Two conv2d + relu + max_pool2d blocks, a linear layer and cross entropy on a batch of 32 RGB
# 32x32 images, then an SGD update: the functional forms with explicit parameters, so that it
# measures the core's convolution and pooling and not nn/optim.

CNN_LR = 0.01


def cnn_data(batch: int) -> dict[str, np.ndarray]:
    rng = _rng()
    f32 = np.float32

    def uniform(fan_in: int, shape: tuple[int, ...]) -> np.ndarray:
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(f32)

    return {
        "x": rng.standard_normal((batch, 3, 32, 32)).astype(f32),
        "target": rng.integers(0, 10, batch).astype(np.int64),
        "w1": uniform(27, (16, 3, 3, 3)), "b1": uniform(27, (16,)),
        "w2": uniform(144, (32, 16, 3, 3)), "b2": uniform(144, (32,)),
        "w3": uniform(2048, (10, 2048)), "b3": uniform(2048, (10,)),
    }


def cnn_setup(torch: Any, batch: int) -> dict:
    data = cnn_data(batch)
    state = {"x": torch.tensor(data["x"]), "target": torch.tensor(data["target"])}
    state["params"] = [torch.tensor(data[k], requires_grad=True)
                       for k in ("w1", "b1", "w2", "b2", "w3", "b3")]
    return state


def cnn_run(torch: Any, state: dict) -> None:
    F = torch.nn.functional
    w1, b1, w2, b2, w3, b3 = params = state["params"]
    for p in params:
        p.grad = None
    h = F.max_pool2d(F.relu(F.conv2d(state["x"], w1, b1, padding=1)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding=1)), 2)
    loss = F.cross_entropy(F.linear(h.flatten(1), w3, b3), state["target"])
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= CNN_LR * p.grad
    state["loss"] = loss


def cnn_checksum(torch: Any, state: dict) -> dict:
    out = {"loss": _scalar_entry(state["loss"])}
    for name, p in zip(("w1", "b1", "w2", "b2", "w3", "b3"), state["params"]):
        out[name + ".grad"] = _sum_entry(p.grad)
    return out


# ----- attention block step -----
#
# One pre-norm multi-head self-attention block (layer_norm, qkv projection,
# scaled_dot_product_attention over 4 heads, output projection, residual) on a batch of 8
# sequences of 64 tokens of width 128, MSE against a target, then an SGD update.

ATTN_LR = 0.01
ATTENTION_PARAMS = ("w_qkv", "b_qkv", "w_out", "b_out", "ln_w", "ln_b")


def attention_data(batch: int) -> dict[str, np.ndarray]:
    rng = _rng()
    f32 = np.float32
    bound = 1.0 / np.sqrt(128)
    return {
        "x": rng.standard_normal((batch, 64, 128)).astype(f32),
        "target": rng.standard_normal((batch, 64, 128)).astype(f32),
        "w_qkv": rng.uniform(-bound, bound, (384, 128)).astype(f32),
        "b_qkv": rng.uniform(-bound, bound, (384,)).astype(f32),
        "w_out": rng.uniform(-bound, bound, (128, 128)).astype(f32),
        "b_out": rng.uniform(-bound, bound, (128,)).astype(f32),
        "ln_w": rng.uniform(0.5, 1.5, (128,)).astype(f32),
        "ln_b": rng.uniform(-0.1, 0.1, (128,)).astype(f32),
    }


def attention_setup(torch: Any, batch: int) -> dict:
    data = attention_data(batch)
    state = {"x": torch.tensor(data["x"]), "target": torch.tensor(data["target"])}
    state["params"] = [torch.tensor(data[k], requires_grad=True)
                       for k in ATTENTION_PARAMS]
    return state


def attention_run(torch: Any, state: dict) -> None:
    F = torch.nn.functional
    w_qkv, b_qkv, w_out, b_out, ln_w, ln_b = params = state["params"]
    for p in params:
        p.grad = None
    x = state["x"]
    b, n, d = x.shape
    qkv = F.linear(F.layer_norm(x, (d,), ln_w, ln_b), w_qkv, b_qkv).view(b, n, 3, 4, d // 4).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    h = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    y = x + F.linear(h.transpose(1, 2).reshape(b, n, d), w_out, b_out)
    loss = ((y - state["target"]) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= ATTN_LR * p.grad
    state["loss"] = loss


def attention_checksum(torch: Any, state: dict) -> dict:
    out = {"loss": _scalar_entry(state["loss"])}
    for name, p in zip(ATTENTION_PARAMS, state["params"]):
        out[name + ".grad"] = _sum_entry(p.grad)
    return out


# ----- registry -----


@dataclass(frozen=True)
class Plan:
    """How one workload is run: its size, how many worker processes per backend (rounds,
    alternating between backends), and how many timed repeats inside each process."""

    size: int
    rounds: int
    repeat: int
    warmup_size: int | None = None  # size of the untimed warm-up run; default: size


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    setup: Callable[[Any, int], dict]
    run: Callable[[Any, dict], None]
    checksum: Callable[[Any, dict], dict]
    unit: str  # "us/op": time / ops(size); "ms": time per run
    full: Plan
    quick: Plan
    ops: Callable[[int], int] | None = None
    memory: bool = False  # also report peak memory per op (ru_maxrss) from the first run
    floor: bool = False  # benchmarks/floor.py has a NumPy version of it


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload(
            "scalar_chain", "10,000 steps of y = tanh(y*a + b) * c on 0-d tensors, fwd+bwd",
            scalar_chain_setup, chain_run, chain_checksum, "us/op",
            full=Plan(10_000, rounds=3, repeat=5, warmup_size=1_000),
            quick=Plan(2_000, rounds=1, repeat=3, warmup_size=200), ops=chain_ops),
        Workload(
            "tensor8_chain", "the same chain on 8x8 tensors, fwd+bwd",
            tensor8_chain_setup, chain_run, chain_checksum, "us/op",
            full=Plan(10_000, rounds=3, repeat=5, warmup_size=1_000),
            quick=Plan(2_000, rounds=1, repeat=3, warmup_size=200), ops=chain_ops),
        Workload(
            "mlp_step", "MLP step: batch 256, 784->512->10, tanh, MSE, fwd+bwd+SGD",
            mlp_setup, mlp_run, mlp_checksum, "ms",
            full=Plan(256, rounds=3, repeat=20), quick=Plan(256, rounds=1, repeat=8),
            floor=True),
        Workload(
            "makemore_step", "makemore MLP step: batch 32, embedding 27x10, 3-char context, "
            "tanh 200 with batch_norm, cross_entropy, fwd+bwd+SGD",
            makemore_setup, makemore_run, makemore_checksum, "ms",
            full=Plan(32, rounds=3, repeat=200), quick=Plan(32, rounds=1, repeat=50),
            floor=True),
        Workload(
            "mlp_adam_step", "the MLP step updated by optim.Adam instead of SGD",
            mlp_adam_setup, mlp_adam_run, mlp_checksum, "ms",
            full=Plan(256, rounds=3, repeat=20), quick=Plan(256, rounds=1, repeat=8)),
        Workload(
            "cnn_step", "CNN step: batch 32, 3x32x32, 2x (conv3x3+relu+maxpool), linear, "
            "cross entropy, fwd+bwd+SGD",
            cnn_setup, cnn_run, cnn_checksum, "ms",
            full=Plan(32, rounds=3, repeat=10), quick=Plan(32, rounds=1, repeat=4)),
        Workload(
            "attention_step", "attention block step: batch 8, 64 tokens, width 128, "
            "layer_norm, 4 heads, causal sdpa, fwd+bwd+SGD",
            attention_setup, attention_run, attention_checksum, "ms",
            full=Plan(8, rounds=3, repeat=10), quick=Plan(8, rounds=1, repeat=4)),
        Workload(
            "matmul_1024", "(a @ b).sum().backward(), a and b 1024x1024",
            matmul_setup, matmul_run, matmul_checksum, "ms",
            full=Plan(1024, rounds=3, repeat=8), quick=Plan(1024, rounds=1, repeat=3),
            floor=True),
        Workload(
            "chain_200k", "deep chain of 200,000 scalar ops: fwd+bwd+teardown",
            deep_chain_setup, deep_chain_run, deep_chain_checksum, "us/op",
            full=Plan(200_000, rounds=3, repeat=2, warmup_size=2_000),
            quick=Plan(20_000, rounds=1, repeat=1, warmup_size=2_000),
            ops=deep_chain_ops, memory=True),
        Workload(
            "chain_1m", "deep chain of 1,000,000 scalar ops: fwd+bwd+teardown",
            deep_chain_setup, deep_chain_run, deep_chain_checksum, "us/op",
            full=Plan(1_000_000, rounds=2, repeat=1, warmup_size=2_000),
            quick=Plan(50_000, rounds=1, repeat=1, warmup_size=2_000),
            ops=deep_chain_ops, memory=True),
        Workload(
            "wide_100k", "100,000 x*c on one leaf, stacked and summed: fwd+bwd",
            wide_setup, wide_run, wide_checksum, "us/op",
            full=Plan(100_000, rounds=3, repeat=2, warmup_size=1_000),
            quick=Plan(10_000, rounds=1, repeat=1, warmup_size=1_000), ops=wide_ops),
    ]
}
