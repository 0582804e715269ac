"""gradcheck_file: every gradient reaching a named leaf of a root, against central finite
differences in float64, for any expression file.

The file runs once in float64 (leaves are upcast as they are made, and the default dtype is
float64) for the analytic gradients, then twice per checked element with that element of that
leaf moved by +eps and -eps as the leaf is made. Random draws repeat exactly across the runs.
Each element costs two runs of the file, so at most `max_elements` elements of each leaf are
checked (evenly spaced).

>>> from gradviz.inspect.gradcheck import gradcheck_file                  # doctest: +SKIP
>>> gradcheck_file("examples/mul_chain_backward.py", root="e")["passed"]
True
"""

import numpy as np

from .. import _dtype, _random
from .runner import UsageError, backend_module, execute
from .session import Run
from .tracer import Tracer

__all__ = ["gradcheck_file"]


class _Float64Tracer(Tracer):
    """Upcasts each new leaf to float64, and moves one element of one leaf by `delta`."""

    def __init__(self, perturb=None):
        super().__init__(keep_grads=False)
        self.retain_all = True
        self.perturb = perturb

    def leaf(self, tensor):
        k = len(self.leaves)
        super().leaf(tensor)
        if tensor._data.dtype != np.float64:
            tensor._data = np.array(tensor._data, dtype=np.float64)
        if self.perturb is not None and self.perturb[0] == k:
            flat = tensor._array().reshape(-1)
            flat[self.perturb[1]] += self.perturb[2]


def _run(path, argv, tracer, rng_state):
    _random.default_generator.set_state(rng_state)
    prev = _dtype.get_default_dtype()
    _dtype.set_default_dtype(_dtype.float64)
    try:
        ns, out, error = execute(path, argv, "gradviz", False, tracer)
    finally:
        _dtype.set_default_dtype(prev)
    return Run(path, "gradviz", ns, out, error, tracer, backend_module("gradviz"))


def _pick(n, k):
    if n <= k:
        return list(range(n))
    return sorted({int(round(x)) for x in np.linspace(0, n - 1, k)})


def _reached_leaves(run, root):
    from ..autograd.graph import AccumulateGrad
    from .report import _next_functions
    seen, leaves, stack = set(), [], [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in _next_functions(node))
    order = {id(t): i for i, (_, t) in enumerate(run.named)}
    return sorted((t for t in leaves if id(t) in order), key=lambda t: order[id(t)])


def gradcheck_file(path, argv=(), root=None, max_elements=64, eps=1e-6, atol=1e-5,
                   rtol=1e-3):
    """Check the file's gradients numerically; returns plain data (see `gradviz gradcheck`)."""
    from ..autograd.engine import grad as autograd_grad
    if max_elements < 1:
        raise UsageError("--max-elements must be at least 1")
    rng_state = _random.default_generator.get_state()
    base = _run(path, argv, _Float64Tracer(), rng_state)
    result = {"file": path, "eps": eps, "atol": atol, "rtol": rtol,
              "max_elements": max_elements, "roots": [], "passed": True, "error": None}
    if base.error is not None:
        result["error"] = base.error.to_dict()
        result["passed"] = False
        return result
    report = base.report()
    names = [root] if root is not None else report["roots"]
    if root is not None:
        base.tensor(root)
    if not names:
        raise UsageError(f"{path} has no root to check (no tensor with a grad_fn that nothing "
                         "else consumes); name one with --root")
    name_of = {id(t): n for n, t in base.named}
    for rname in names:
        r = base.tensor(rname)
        if r.grad_fn is None:
            raise UsageError(f"'{rname}' has no grad_fn: there is no graph to check")
        leaves = _reached_leaves(base, r)
        target = r if r.numel() == 1 else r.sum()
        entry = {"root": rname, "leaves": [], "error": None}
        try:
            analytic = autograd_grad(target, leaves, allow_unused=True, retain_graph=True) \
                if leaves else ()
        except RuntimeError as exc:
            entry["error"] = (f"backward of '{rname}' fails, so there is no analytic gradient "
                              f"to check: {str(exc).split('. ')[0]}.")
            result["roots"].append(entry)
            result["passed"] = False
            continue
        for leaf, g in zip(leaves, analytic):
            entry["leaves"].append(_check_leaf(path, argv, base, rname, leaf, g, name_of,
                                               rng_state, max_elements, eps, atol, rtol))
        result["roots"].append(entry)
        if any(not lf["passed"] for lf in entry["leaves"]):
            result["passed"] = False
    return result


def _value(run, name):
    t = run.tensor(name)
    return float(np.sum(np.asarray(t._data, dtype=np.float64)))


def _check_leaf(path, argv, base, rname, leaf, g, name_of, rng_state, max_elements, eps, atol,
                rtol):
    name = name_of[id(leaf)]
    info = {"name": name, "shape": list(leaf.shape), "total": int(leaf.numel()), "checked": 0,
            "max_abs_error": None, "max_rel_error": None, "passed": True, "skipped": None,
            "worst": None}
    if leaf._version:
        info["skipped"] = (f"'{name}' was edited in place after it was made (version "
                           f"{leaf._version}): finite differences would move a different value "
                           "than the one the graph used")
        return info
    k = next(i for i, t in enumerate(base.tracer.leaves) if t is leaf)
    analytic = np.zeros(leaf.shape) if g is None else np.asarray(g._data, dtype=np.float64)
    flat_a = analytic.reshape(-1)
    worst_abs = worst_rel = 0.0
    worst = None
    for i in _pick(leaf.numel(), max_elements):
        plus = _run(path, argv, _Float64Tracer((k, i, eps)), rng_state)
        minus = _run(path, argv, _Float64Tracer((k, i, -eps)), rng_state)
        if plus.error is not None or minus.error is not None:
            info["skipped"] = "the file raised when this leaf was perturbed"
            info["passed"] = False
            return info
        numeric = (_value(plus, rname) - _value(minus, rname)) / (2 * eps)
        a = flat_a[i]
        abs_err = abs(a - numeric)
        rel_err = abs_err / max(abs(numeric), 1e-12)
        if not np.isfinite(a) or not np.isfinite(numeric):
            abs_err = rel_err = float("inf")
        info["checked"] += 1
        if abs_err > atol + rtol * abs(numeric):
            info["passed"] = False
        if abs_err >= worst_abs:
            worst_abs = abs_err
            worst = {"index": [int(k) for k in np.unravel_index(i, leaf.shape)] if leaf.dim() else [],
                     "analytic": float(a), "numeric": float(numeric)}
        worst_rel = max(worst_rel, rel_err)
    info["max_abs_error"] = float(worst_abs)
    info["max_rel_error"] = float(worst_rel)
    info["worst"] = worst
    return info
