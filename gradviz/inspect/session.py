"""run_file: run a user's file, optionally call backward, and keep everything inspectable.

    >>> from gradviz.inspect import run_file
    >>> run = run_file("examples/mul_chain_backward.py", backward="e")   # doctest: +SKIP
    >>> run.tensor("a").grad                                            # doctest: +SKIP
    tensor(12.)
    >>> run.report()["tensors"][0]["name"]                              # doctest: +SKIP
    'a'
"""

import difflib

from .names import frame_prefixes, named_tensors
from .sourcefacts import source_facts
from .runner import (UsageError, backend_module, describe, execute_file, new_tracer,
                     quiet_anomaly_warnings, tracing_for)

__all__ = ["Run", "run_file"]


class Run:
    """The live result of running a file: its namespace, tensors, tracer, output and error."""

    def __init__(self, path, backend, namespace, stdout, error, tracer, module, warnings=(),
                 exit_code=None):
        self.path, self.backend, self.module = path, backend, module
        self.namespace, self.stdout, self.error = namespace, stdout, error
        self.tracer = tracer
        self.warnings = list(warnings)     # the file's warnings: category, message, file, line
        self.stdout_cut = None             # why the output may be incomplete (runner._cut_note)
        self.exit_code = (1 if error else 0) if exit_code is None else exit_code
        self.backward_root = None
        self.backward_error = None
        self.backward_call = None   # index of the --backward call among the tracer's calls
        self._named = None
        self._module_names = None
        self._generated = None
        self._lines = None

    @property
    def named(self):
        """[(name, tensor)]: the file's module-level names in order of first assignment
        (containers give dotted names), then the locals of the functions that made tensors,
        outer calls first (`main.x`, `step[2].out`)."""
        if self._named is None:
            seen = set()
            named = named_tensors(self.namespace, self.module.Tensor, seen=seen)
            frames = self.tracer.frames
            self._module_named = len(named)
            for (frame, _, _), prefix in zip(frames, frame_prefixes(frames)):
                named += named_tensors(frame.f_locals, self.module.Tensor, prefix + ".", seen)
            self._named = named
        return self._named

    def names(self):
        return [n for n, _ in self.named]

    def generated(self):
        """([(name, tensor)], aliases): the names the tables give unnamed tensors (`relu(h)`),
        and `%3` -> that name for each."""
        if self._generated is None:
            from .report import _Builder
            b = _Builder(self, False)
            b.traverse()
            b.output_names()
            self._generated = ([(n, t) for n, t, _, _ in b.generated if t is not None],
                               b.aliases)
        return self._generated

    def canonical(self, name):
        """The name the tables print for NAME (NAME itself, or the name `%3` stands for)."""
        if any(n == name for n, _ in self.named):
            return name
        return self.generated()[1].get(name, name)

    def tensor(self, name):
        """The tensor a name in the tables stands for (a name the file assigned, a function's
        local like `main.x`, a generated name like `relu(h)` or `%3`); UsageError with close
        matches when there is no such name."""
        for n, t in self.named:
            if n == name:
                return t
        generated, aliases = self.generated()
        name = aliases.get(name, name)
        for n, t in generated:
            if n == name:
                return t
        names = self.names() + [n for n, _ in generated]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        known = ", ".join(names) or "none"
        raise UsageError(f"no tensor named {name!r} in {self.path}.{hint} (tensors: {known})")

    def made_in_function(self, name):
        """Whether NAME is a function's local (`main.x`) rather than a module-level name."""
        if self._module_names is None:  # once: a report asks for each named leaf
            self._module_names = {n for n, _ in self.named[:self._module_named]}
        return name not in self._module_names

    def assignment_lines(self):
        """name -> line of its last top-level assignment in the file (for leaves)."""
        if self._lines is None:
            self._lines = _assignment_lines(self.path)
        return self._lines

    def backward(self, name, gradient=None, retain_graph=False, anomaly=False, debug=False):
        """Call NAME.backward() after the file ran, traced like the file was."""
        root = self.tensor(name)
        name = self.canonical(name)
        self.backward_root = name
        self.backward_call = len(self.tracer.backward_calls)   # the index of the call below
        mod = self.module
        grad = None
        if gradient == "ones":
            grad = mod.ones_like(root)
        elif gradient is not None:
            raise UsageError(f"unknown --gradient {gradient!r} (use: ones)")
        ctx = tracing_for(self.tracer, self.backend)
        anomaly_ctx = mod.autograd.set_detect_anomaly(True) if anomaly else _null()
        try:
            with ctx, anomaly_ctx, quiet_anomaly_warnings():
                root.backward(grad, retain_graph=retain_graph)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            info = describe(exc, self.path, debug)
            if info.forward is not None:
                info.file, info.line = info.forward
            if "implicitly created only for scalar outputs" in info.message:
                info.message += (f" ('{name}' has shape {list(root.shape)}: "
                                 "pass --gradient ones)")
            self.backward_error = info
        if anomaly and self.backend == "gradviz":
            mod.autograd.set_detect_anomaly(False)

    @property
    def failed(self):
        return self.error is not None or self.backward_error is not None

    def report(self, full=False, **parts):
        from .report import build_report
        return build_report(self, full=full, **parts)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def run_file(path, argv=(), backend="gradviz", anomaly=False, retain_grad=False,
             backward=None, gradient=None, retain_graph=False, debug=False, on_output=None,
             full=False):
    """Run an expression file and return a Run (call .report() for the plain data).

    on_output(stream, text), when given, receives what the file writes as it runs ("stdout"
    text, or a "warning" line); --backward's hooks print into the same output. full: the
    gradients are kept whole for report(full=True) (on torch, large ones are otherwise kept
    as the summaries report() prints).
    """
    module = backend_module(backend)
    tracer = new_tracer(backend, retain_grad=retain_grad, whole_grads=full)
    runs = []

    def after(execution):
        run = Run(path, backend, execution.namespace, "", execution.error, tracer, module,
                  exit_code=execution.exit_code)
        runs.append(run)
        if retain_grad and backend == "torch":
            for _, t in run.named:
                if t.requires_grad and t.grad_fn is not None:
                    t.retain_grad()
        if backward is not None:
            run.tensor(backward)   # a usage error for an unknown name, even after a failed run
            if execution.error is None:
                run.backward(backward, gradient, retain_graph, anomaly, debug)

    execution = execute_file(path, argv, backend, anomaly, tracer, debug, sink=on_output,
                             after=after)
    if not runs:        # the file did not compile
        return Run(path, backend, execution.namespace, execution.stdout, execution.error,
                   tracer, module, execution.warnings, execution.exit_code)
    run = runs[0]
    run.stdout, run.warnings = execution.stdout, list(execution.warnings)
    run.stdout_cut = execution.stdout_cut
    return run


def _assignment_lines(path):
    return source_facts(path).assigned
