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

import contextlib
import hashlib
import io
import math
import weakref

import numpy as np

from .report import _array, to_json_value
from .runner import (UsageError, backend_module, compile_file, describe, execute,
                     shown_path)
from .session import Run
from .tracer import Tracer

__all__ = ["gradcheck_file", "VERDICTS"]


def _fingerprint(tensor):
    """A digest of a leaf's values: the unmoved run keeps one per leaf, as it was made, to
    tell whether the file changed it later where autograd does not see (.data)."""
    values = np.ascontiguousarray(_array(tensor))
    return hashlib.blake2b(values.data, digest_size=16).digest()


class _Float64Tracer(Tracer):
    """Upcasts each new leaf to float64, and moves one element of one leaf by `delta`; the
    unmoved run keeps each leaf's fingerprint as made (`first_values`, by leaf number)."""

    def __init__(self, perturb=None):
        super().__init__(keep_grads=False)
        self.retain_all = True
        self.perturb = perturb
        self.first_values = {}

    def leaf(self, tensor):
        k = len(self.leaves)
        super().leaf(tensor)
        if tensor._data.dtype != np.float64:
            tensor._data = np.array(tensor._data, dtype=np.float64)
        if self.perturb is not None and self.perturb[0] == k:
            flat = tensor._array().reshape(-1)
            flat[self.perturb[1]] += self.perturb[2]
        elif self.perturb is None:
            self.first_values[k] = _fingerprint(tensor)


def _torch_float64_tracer(perturb=None):
    """The torch tracer (torch_tracer.py) doing what _Float64Tracer does, on PyTorch."""
    global _TorchFloat64Tracer
    if _TorchFloat64Tracer is None:
        from .torch_tracer import TorchTracer

        class _TorchFloat64(TorchTracer):
            """Upcasts each new leaf to float64 and moves one element of one leaf, through
            .data (whose edits autograd does not count: the leaf stays at version 0, as on
            the core). The file's own backward calls keep the graph (retain_graph=True), so
            the analytic gradient can be taken after it ran, as the core's retain_all does."""

            def __init__(self, perturb=None):
                super().__init__(keep_grads=False)
                self.perturb = perturb
                self.first_values = {}
                self.reached = None     # the last node backward reached
                self._seen = {}         # id(leaf) -> weak reference to it

            def leaf(self, tensor):
                self._seen[id(tensor)] = weakref.ref(tensor)
                self._leaf(tensor)

            def _unseen_leaves(self, args):
                """Leaves that no call made (nn.Parameter is made without one): each is
                counted, upcast and moved when an op first uses it, before the op runs."""
                tensor = self.torch.Tensor
                for a in args:
                    for t in a if isinstance(a, (list, tuple)) else (a,):
                        if isinstance(t, tensor) and t.requires_grad and t.grad_fn is None:
                            ref = self._seen.get(id(t))
                            if ref is None or ref() is not t:
                                self.leaf(t)

            def grad(self, node, grads):
                self.reached = node
                super().grad(node, grads)

            def _leaf(self, tensor):
                k = len(self.leaves)
                super().leaf(tensor)
                torch = self.torch
                if tensor.is_floating_point() and tensor.dtype != torch.float64:
                    tensor.data = tensor.data.to(torch.float64)
                if self.perturb is not None and self.perturb[0] == k:
                    index = tuple(int(j) for j in np.unravel_index(self.perturb[1],
                                                                   tuple(tensor.shape)))
                    tensor.data[index] += self.perturb[2]
                elif self.perturb is None:
                    self.first_values[k] = _fingerprint(tensor)

            def call(self, func, types, args, kwargs):
                place = _RETAIN_GRAPH_PLACE.get(self._backward_funcs.get(func))
                if place is not None:
                    if len(args) > place:
                        args = args[:place] + (True,) + args[place + 1:]
                    else:
                        kwargs = dict(kwargs or {}, retain_graph=True)
                self._unseen_leaves(args)
                return super().call(func, types, args, kwargs)

        _TorchFloat64Tracer = _TorchFloat64
    return _TorchFloat64Tracer(perturb)


_TorchFloat64Tracer = None
# where retain_graph is among the positional arguments of Tensor.backward (self, gradient,
# retain_graph) and torch.autograd.backward (tensors, grad_tensors, retain_graph), and of
# torch.autograd.grad (outputs, inputs, grad_outputs, retain_graph)
_RETAIN_GRAPH_PLACE = {"backward": 2, "grad": 3}


def _new_tracer(backend, perturb=None):
    return _torch_float64_tracer(perturb) if backend == "torch" else _Float64Tracer(perturb)


def _run(path, argv, backend, perturb, rng_state, code=None):
    """One run of the file in float64, with the random draws of the first (and its code: see
    _code_of)."""
    module = backend_module(backend)
    tracer = _new_tracer(backend, perturb)
    module.set_rng_state(rng_state)
    prev = module.get_default_dtype()
    module.set_default_dtype(module.float64)
    try:
        ns, out, error = execute(path, argv, backend, False, tracer, code=code)
    finally:
        module.set_default_dtype(prev)
    return Run(path, backend, ns, out, error, tracer, module)


def _code_of(path):
    """The file's code, compiled once for all the runs gradcheck makes of it: a file that
    deletes or rewrites itself as it runs (`os.remove(__file__)`) was read again for each
    run, and gradcheck said "no such file", or compared two different programs. None when it
    does not compile: the first run says why."""
    try:
        return compile_file(path)
    except (SyntaxError, MemoryError, RecursionError):
        return None


def _is_complex(tensor):
    try:
        return bool(tensor.is_complex())
    except Exception:  # noqa: BLE001 - a backend or subclass without it
        return False


def _pick(n, k):
    if n <= k:
        return list(range(n))
    return sorted({int(round(x)) for x in np.linspace(0, n - 1, k)})


def _reached_leaves(run, root):
    from .report import _next_functions
    seen, leaves, stack = set(), [], [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in _next_functions(node))
    order = {id(t): i for i, (_, t) in enumerate(run.named)}
    return sorted((t for t in leaves if id(t) in order), key=lambda t: order[id(t)])


# ----- What a check can conclude --------------------------------------------------------------
# The most serious outcome present names the verdict; the final line lists every one present.
# Only "match" passes: a value that could not be compared is never reported as matching.
VERDICTS = ("file_raised", "backward_failed", "mismatch", "nonfinite", "raised_when_perturbed",
            "step_too_small", "not_differentiable", "nothing_checked", "match")

# A leaf's status, most serious first.
_LEAF_ORDER = ("mismatch", "nonfinite", "raised", "step_too_small", "not_differentiable",
               "pass")


def _validate(max_elements, eps, atol, rtol):
    if max_elements < 1:
        raise UsageError("--max-elements must be at least 1")
    if not (math.isfinite(eps) and eps > 0):
        raise UsageError(f"--eps must be a finite number greater than 0, got {eps!r}")
    for option, value in (("--atol", atol), ("--rtol", rtol)):
        if not (math.isfinite(value) and value >= 0):
            raise UsageError(f"{option} must be a finite number >= 0, got {value!r}")


def gradcheck_file(path, argv=(), root=None, max_elements=64, eps=1e-6, atol=1e-5,
                   rtol=1e-3, backend="gradviz"):
    """Check the file's gradients numerically; returns plain data (see `gradviz gradcheck`).

    `verdict` is one of VERDICTS, `message` the sentence that says it, `passed` is true only
    for "match". Floats that are NaN or infinite are the strings "nan", "inf", "-inf". On
    backend "torch" every run of the file, and the analytic gradient, is PyTorch's.
    """
    _validate(max_elements, eps, atol, rtol)
    module = backend_module(backend)        # without torch: the exit-2 error of every command
    rng_state = module.get_rng_state()
    code = _code_of(path)
    base = _run(path, argv, backend, None, rng_state, code)
    result = {"file": path, "eps": eps, "atol": atol, "rtol": rtol,
              "max_elements": max_elements, "roots": [], "passed": False, "error": None,
              "verdict": None, "message": None}
    error = base.error
    if error is None and base.tracer.backward_calls:
        # The runs above keep every graph (retain_graph), so a file that backwards twice
        # through one graph ran to its end there; run it once as Python would, to tell.
        module.set_rng_state(rng_state)
        error = execute(path, argv, backend, code=code)[2]
    if error is not None:
        result["error"] = error.to_dict()
        return _conclude(result)
    report = base.report()
    names = [root] if root is not None else report["roots"]
    if root is not None:
        base.tensor(root)
    if not names:
        raise UsageError(f"{path} has no root to check (no tensor with a grad_fn that nothing "
                         "else consumes); name one with --root")
    name_of = {id(t): n for n, t in base.named}
    checker = _Checker(path, argv, backend, rng_state, eps, atol, rtol, code)
    for rname in names:
        r = base.tensor(rname)
        if r.grad_fn is None:
            raise UsageError(f"'{rname}' has no grad_fn: there is no graph to check")
        leaves = _reached_leaves(base, r)
        target = r if r.numel() == 1 else r.sum()
        entry = {"root": rname, "leaves": [], "error": None, "file": None, "line": None,
                 "dtype": str(r.dtype).replace("torch.", "")}
        # A root the file computes in float32 (`x.float()`) rounds every value it takes to
        # float32: a difference below that rounding is noise, not a mismatch or a kink. So does
        # a float64 root computed through a float32 value (`x.float().double()`).
        checker.precision, entry["through"] = _lowest_precision(report, rname, entry["dtype"])
        result["roots"].append(entry)
        try:
            # Hooks in the file may print as backward runs: not onto gradcheck's own output.
            with contextlib.redirect_stdout(io.StringIO()):
                analytic = module.autograd.grad(target, leaves, allow_unused=True,
                                                retain_graph=True) if leaves else ()
        except Exception as exc:  # noqa: BLE001 - any failure of backward is reported
            info = describe(exc, path)
            reached = getattr(base.tracer, "reached", None)
            # torch's error does not name the node that failed: it is the last one reached
            entry["file"], entry["line"] = info.forward or \
                (reached is not None and base.tracer.site_of(reached)) or (info.file, info.line)
            entry["error"] = (f"backward of '{rname}' fails, so there is no analytic gradient "
                              f"to check: {str(exc).split('. ')[0].rstrip('.')}.")
            continue
        f0 = _value(base, rname)
        for leaf, g in zip(leaves, analytic):
            k = next(i for i, t in enumerate(base.tracer.leaves) if t is leaf)
            changed = base.tracer.first_values.get(k, b"") != _fingerprint(leaf)
            entry["leaves"].append(checker.leaf(rname, f0, k, leaf, name_of[id(leaf)], g,
                                                max_elements, changed))
    return _conclude(result)


def _lowest_precision(report, rname, dtype):
    """(dtype, None) for a root whose graph holds no value of lower precision than its own,
    else (that lower dtype, {"tensor", "file", "line"} of the first such value): the precision
    the root's value was computed to. Follows the report's nodes from the root's node."""
    rank = {d: i for i, d in enumerate(("bfloat16", "float16", "float32", "complex64"))}
    by_node = {}
    for i, t in enumerate(report["tensors"]):     # in the order the run made them
        if t.get("node") is not None:
            by_node.setdefault(t["node"], []).append((i, t))
    edges = {n["id"]: [e[0] for e in n["next_functions"] or () if e and e[0]]
             for n in report["nodes"]}
    start = next((t["node"] for t in report["tensors"] if t["name"] == rname), None)
    found = []          # (rank, order made, tensor) of every value in the root's graph
    seen, stack = set(), [start] if start is not None else []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        found += [(rank.get(t["dtype"], len(rank)), i, t) for i, t in by_node.get(node, ())]
        stack.extend(edges.get(node, ()))
    low = min(found, key=lambda f: f[:2], default=None)
    if low is None or low[0] >= rank.get(dtype, len(rank)):
        return dtype, None
    t = low[2]
    return t["dtype"], {"tensor": t["name"], "file": t.get("file"), "line": t.get("line")}


def _value(run, name):
    """The root's value, summed, in float64 (None when the run has no such tensor)."""
    for n, t in run.named:
        if n == name:
            return float(np.sum(np.asarray(_array(t), dtype=np.float64)))
    return None


def _index(shape, i):
    return [int(j) for j in np.unravel_index(i, shape)] if len(shape) else []


def _at(name, index):
    """`x[1, 2]` for an element, `x` for a 0-d leaf."""
    return f"{name}[{', '.join(map(str, index))}]" if index else name


def _num(x):
    """A float for JSON: NaN and infinities become "nan", "inf", "-inf" (JSON has no NaN)."""
    return to_json_value(float(x))


class _Checker:
    """Runs the file with one element moved, and judges that element."""

    def __init__(self, path, argv, backend, rng_state, eps, atol, rtol, code=None):
        self.path, self.argv, self.rng_state, self.code = path, argv, rng_state, code
        self.backend = backend
        self.eps, self.atol, self.rtol = eps, atol, rtol
        self.precision = "float64"      # the dtype the root is computed in

    def _moved(self, rname, k, i, delta):
        """(value of the root, None) with element i of leaf k moved by delta, or (None,
        error dict) when that run raised or has no tensor named rname."""
        run = _run(self.path, self.argv, self.backend, (k, i, delta), self.rng_state, self.code)
        if run.error is not None:
            e = run.error
            return None, {"type": e.type, "message": e.message, "file": e.file,
                          "line": e.line}
        value = _value(run, rname)
        if value is None:
            return None, {"type": "NameError", "message": f"no tensor named {rname!r} after "
                          "the run", "file": self.path, "line": None}
        return value, None

    def _close(self, a, b):
        return abs(a - b) <= self.atol + self.rtol * max(abs(a), abs(b))

    def _kink(self, rname, k, i, x, f0, fp, fm):
        """The one-sided slopes (left, right) when the point is not differentiable, else None.

        At a smooth point the two one-sided differences differ by about f''(x) * eps, so with
        a step ten times smaller their gap shrinks tenfold; at a kink (abs or relu at 0, a
        data-dependent branch) it stays, and across a jump it grows."""
        down, up = _steps(x, self.eps)
        left, right = (f0 - fm) / down, (fp - f0) / up
        # slopes apart by no more than the root's rounding are not a kink
        noise = _rounding(f0, fp, fm, dtype=self.precision) / min(down, up)
        if self._close(left, right) or abs(right - left) <= noise:
            return None
        down2, up2 = _steps(x, self.eps / 10)
        if not (down2 and up2):
            return None     # no smaller step at this value: judged as a smooth point
        fp2, err_p = self._moved(rname, k, i, self.eps / 10)
        fm2, err_m = self._moved(rname, k, i, -self.eps / 10)
        if err_p is None and err_m is None:
            gap2 = abs((fp2 - f0) / up2 - (f0 - fm2) / down2)
            if gap2 <= 0.5 * abs(right - left):
                return None
        return left, right

    def leaf(self, rname, f0, k, leaf, name, g, max_elements, changed=False):
        """The check of one leaf: element by element, at most max_elements of them. changed:
        the file changed the leaf's values where autograd does not see (.data)."""
        info = {"name": name, "shape": list(leaf.shape), "total": int(leaf.numel()),
                "checked": 0, "max_abs_error": None, "max_rel_error": None, "passed": False,
                "status": "skipped", "skipped": None, "worst": None, "mismatched": 0,
                "nonfinite": [], "kinks": [], "step_too_small": [], "raised": 0,
                "error": None}
        if leaf._version:
            info["skipped"] = (f"'{name}' was edited in place after it was made (version "
                               f"{leaf._version}): finite differences would move a different "
                               "value than the one the graph used")
            return info
        if changed:
            # `w.data -= lr * w.grad` in a training loop: moving w as it was made moves the
            # whole run, and the difference measured is not the gradient backward computed
            info["skipped"] = (f"'{name}' was changed through .data after it was made "
                               "(autograd does not see such edits): finite differences would "
                               "move a different value than the one the graph used")
            return info
        if leaf.numel() == 0:
            info["skipped"] = f"'{name}' has no elements to move"
            return info
        if _is_complex(leaf):
            # its values were read as float64, which drops the imaginary part (NumPy's
            # ComplexWarning on stderr), and "all gradients match" followed
            info["skipped"] = (f"'{name}' is complex ({leaf.dtype}): this check moves real "
                               "values only; torch.autograd.gradcheck checks complex inputs "
                               "(Wirtinger derivatives)")
            return info
        analytic = np.zeros(tuple(leaf.shape)) if g is None else \
            np.asarray(_array(g), dtype=np.float64)
        flat_a = analytic.reshape(-1)
        values = np.asarray(_array(leaf), dtype=np.float64).reshape(-1)
        worst_abs = worst_rel = None
        compared = 0
        for i in _pick(leaf.numel(), max_elements):
            index = _index(leaf.shape, i)
            a, x = float(flat_a[i]), float(values[i])
            down, up = _steps(x, self.eps)
            if not (down and up):
                info["step_too_small"].append({"index": index, "value": _num(x),
                                               "dtype": "float64"})
                continue
            fp, err = self._moved(rname, k, i, self.eps)
            if err is None:
                fm, err = self._moved(rname, k, i, -self.eps)
            if err is not None:
                info["raised"] += 1
                if info["error"] is None:
                    info["error"] = dict(err, index=index)
                continue
            info["checked"] += 1
            numeric = (fp - fm) / (up + down)
            if not all(math.isfinite(v) for v in (a, numeric, f0)):
                info["nonfinite"].append({"index": index, "analytic": _num(a),
                                          "numeric": _num(numeric), "value": _num(f0)})
                continue
            kink = self._kink(rname, k, i, x, f0, fp, fm)
            if kink is not None:
                info["kinks"].append({"index": index, "analytic": a, "left": _num(kink[0]),
                                      "right": _num(kink[1])})
                continue
            abs_err = abs(a - numeric)
            rel_err = abs_err / max(abs(numeric), 1e-12)
            if abs_err > self.atol + self.rtol * abs(numeric):
                # the root's rounding alone moves the difference by this much: a root of 6e11
                # cannot show a change of 4e-6, and the numeric gradient reads 0. (With both
                # tolerances 0 the user asked for exact equality: a mismatch it stays.)
                noise = _rounding(f0, fp, fm, dtype=self.precision) / (up + down)
                if abs_err <= noise and (self.atol or self.rtol):
                    info["step_too_small"].append({"index": index, "value": _num(x),
                                                   "dtype": self.precision})
                    info["checked"] -= 1        # counted above, but not checked after all
                    continue
                info["mismatched"] += 1
            compared += 1
            if worst_abs is None or abs_err >= worst_abs:
                worst_abs = abs_err
                info["worst"] = {"index": index, "analytic": a, "numeric": numeric}
            worst_rel = rel_err if worst_rel is None else max(worst_rel, rel_err)
        info["max_abs_error"], info["max_rel_error"] = worst_abs, worst_rel
        present = {"mismatch": info["mismatched"], "nonfinite": info["nonfinite"],
                   "raised": info["raised"], "step_too_small": info["step_too_small"],
                   "not_differentiable": info["kinks"],
                   "pass": compared}
        info["status"] = next((s for s in _LEAF_ORDER if present[s]), "raised")
        info["passed"] = info["status"] == "pass"
        return info


def _steps(x, eps):
    """The steps moving x by -eps and +eps really take in float64, (down, up): what the file
    sees. Far from 0 they differ from eps (x = 1e10 moves by 1.9e-6 for eps = 1e-6, and
    dividing by eps made a correct gradient of 2 look like 3.8); 0 when x +- eps == x."""
    return x - (x - eps), (x + eps) - x


def _rounding(*values, dtype="float64"):
    """How far rounding can move a difference of these root values, computed in dtype: a few
    units in the last place of the largest.

    >>> _rounding(1.0), _rounding(1.0, dtype="float32"), _rounding(1.0, dtype="bfloat16")
    (8.881784197001252e-16, 4.76837158203125e-07, 0.03125)
    """
    largest = max(abs(v) for v in values)
    if dtype in _LOW_PRECISION:
        # the spacing of that dtype at this magnitude (numpy has no bfloat16: 8 bits)
        bits = _LOW_PRECISION[dtype]
        exponent = math.frexp(largest)[1] - 1 if largest and math.isfinite(largest) else 0
        return 4 * math.ldexp(1.0, exponent - bits)
    return 4 * float(np.spacing(largest))


# Mantissa bits of the dtypes a root may have below float64 (a complex64's parts are float32).
_LOW_PRECISION = {"float32": 23, "complex64": 23, "float16": 10, "bfloat16": 7}


def _shown(value):
    return value if isinstance(value, str) else f"{value:.6g}"


def _plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _conclude(result):
    """Set verdict, message and passed from what was checked (never more than that)."""
    phrases = {}
    if result["error"] is not None:
        e = result["error"]
        at = f" ({shown_path(e['file'])}:{e['line']})" if e["file"] and e["line"] else ""
        phrases["file_raised"] = (f"nothing was checked: the file raised {e['type']}: "
                                  f"{e['message']}{at}")
    leaves = [lf for r in result["roots"] for lf in r["leaves"]]
    failed = [r["root"] for r in result["roots"] if r["error"]]
    if failed:
        phrases["backward_failed"] = (f"nothing was checked for {', '.join(failed)}: backward "
                                      "failed")

    def where(count):
        """(how many elements, which leaves) for one kind of outcome."""
        hit = [lf for lf in leaves if count(lf)]
        return sum(count(lf) for lf in hit), ", ".join(dict.fromkeys(lf["name"] for lf in hit))

    n, names = where(lambda lf: lf["mismatched"])
    if n:
        phrases["mismatch"] = f"gradient mismatch at {_plural(n, 'element')} of {names}"
    n, names = where(lambda lf: len(lf["nonfinite"]))
    if n:
        phrases["nonfinite"] = (f"non-finite values (nan or inf) at {_plural(n, 'element')} "
                                f"of {names}: they cannot be compared")
    n, names = where(lambda lf: lf["raised"])
    if n:
        phrases["raised_when_perturbed"] = (f"the file raised when {_plural(n, 'element')} of "
                                            f"{names} moved by eps: not checked")
    lost = [(lf["name"], e) for lf in leaves for e in lf["step_too_small"]]
    if lost:
        shown = ", ".join(f"{_at(name, e['index'])} = {_shown(e['value'])}"
                          for name, e in lost[:3])
        more = f" and {len(lost) - 3} more" if len(lost) > 3 else ""
        low = sorted({e.get("dtype") for _, e in lost} - {"float64", None})
        through = [r["through"] for r in result["roots"] if r.get("through")]
        if low and through:
            t = through[0]
            at = f" at {t['file']}:{t['line']}" if t.get("file") and t.get("line") else ""
            why = (f"the root is computed through {', '.join(low)} ({t['tensor']}{at}), whose "
                   "rounding hides a step of eps there (finite differences need float64 all "
                   "the way to check a gradient); pass a larger --eps, or compute in float64")
        elif low:
            why = (f"the root is computed in {', '.join(low)}, whose rounding hides a step of "
                   "eps there (finite differences need float64 to check a gradient); pass a "
                   "larger --eps, or compute in float64")
        else:
            why = ("a step of eps is below float64's resolution there (of the value, or of "
                   "the root's value); pass a larger --eps")
        phrases["step_too_small"] = f"not checked at {shown}{more}: {why}"
    kinks = [(lf["name"], kk) for lf in leaves for kk in lf["kinks"]]
    if kinks:
        shown = ", ".join(_at(name, kk["index"]) for name, kk in kinks[:3])
        more = f" and {len(kinks) - 3} more" if len(kinks) > 3 else ""
        phrases["not_differentiable"] = (f"not differentiable at {shown}{more} (the one-sided "
                                         "differences disagree): there is no single gradient "
                                         "to check there")
    compared = sum(1 for lf in leaves if lf["passed"])
    skipped = [lf["name"] for lf in leaves if lf["status"] == "skipped"]
    if not phrases:
        if compared:
            n = sum(lf["checked"] for lf in leaves if lf["passed"])
            phrases["match"] = f"all gradients match ({_plural(n, 'element')} checked)"
            if skipped:
                phrases["match"] += f"; not checked: {', '.join(skipped)} (see above)"
        elif skipped:
            phrases["nothing_checked"] = (f"nothing was checked: {', '.join(skipped)} "
                                          f"{'was' if len(skipped) == 1 else 'were'} skipped")
        else:
            roots = ", ".join(r["root"] for r in result["roots"])
            phrases["nothing_checked"] = (f"nothing was checked: no named leaf that requires "
                                          f"grad reaches {roots}")
    result["verdict"] = next(v for v in VERDICTS if v in phrases)
    result["message"] = "; ".join(phrases[v] for v in VERDICTS if v in phrases)
    result["passed"] = result["verdict"] == "match"
    return result
