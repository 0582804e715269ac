"""Fix hints for autograd's classic errors: one line saying what to change, and the gradviz
command that shows why.

Each rule matches the start of the message torch 2.13 gives (gradviz raises the same words), so
the hint is only added when the error is the one it explains.

    >>> hint_for("RuntimeError", "grad can be implicitly created only for scalar outputs",
    ...          "f.py")["command"]
    'gradviz run f.py --backward NAME --gradient ones'
"""

import re
import shlex

__all__ = ["hint_for"]

# (exception type, start of the message, fix, command with {file})
_RULES = (
    ("RuntimeError", "a leaf Variable that requires grad is being used in an in-place operation",
     "update a leaf under `with torch.no_grad():` (as optimizers do), or edit a clone of it",
     "gradviz check-inplace {file}"),
    ("RuntimeError", "one of the variables needed for gradient computation has been modified "
     "by an inplace operation",
     "use the out-of-place form (x = x * 2, not x *= 2) or edit a .clone(), so backward reads "
     "the value it saved", "gradviz check-inplace {file}"),
    ("RuntimeError", "grad can be implicitly created only for scalar outputs",
     "reduce the output first (y.sum().backward()) or pass a gradient of its shape "
     "(y.backward(torch.ones_like(y)))", "gradviz run {file} --backward NAME --gradient ones"),
    ("RuntimeError", "Trying to backward through the graph a second time",
     "pass retain_graph=True to the first backward, or compute the forward again before the "
     "second", "gradviz graph {file} --show-saved --svg graph.svg"),
    ("RuntimeError", "element 0 of tensors does not require grad and does not have a grad_fn",
     "make an input require grad (torch.tensor(..., requires_grad=True)) before computing the "
     "output, outside torch.no_grad()", "gradviz run {file}"),
    ("RuntimeError", "Only Tensors of floating point and complex dtype can require gradients",
     "give the tensor a float dtype: torch.tensor([1.0, 2.0], requires_grad=True) or "
     "dtype=torch.float32", "gradviz run {file}"),
    ("AttributeError", "'NoneType' object has no attribute",
     "a .grad is None: it is kept only for leaves (call .retain_grad() on a non-leaf before "
     "backward) and only after a backward reached the tensor", "gradviz explain {file} NAME"),
    ("AttributeError", "gradviz's core does not implement",
     "run the file on PyTorch, which has this name", "gradviz run {file} --backend torch"),
)


# The tensor a failing line names: `y.backward()` for run --backward, `y.grad` for explain.
_NAME_ON_LINE = {"run": r"([A-Za-z_][\w]*)\.backward\(", "explain": r"([A-Za-z_][\w]*)\.grad\b"}


def hint_for(error_type, message, file, code=None, function=None, names=()):
    """{"fix": one line, "command": the gradviz command that explains it} for one of autograd's
    classic errors, or None. `code` is the failing line: a None without `.grad` on that line
    is not a missing gradient. `function` is the function the line is in and `names` the
    tensor names the tables print: a local `y` of step() is `step.y` (or `step[3].y`) there,
    and the command says NAME when the name it would need is not one of them.

    >>> hint_for("RuntimeError", "grad can be implicitly created only for scalar outputs",
    ...          "f.py", "y.backward()", "step", ["step[1].y", "step[2].y"])["command"]
    "gradviz run f.py --backward 'step[2].y' --gradient ones"
    """
    for kind, start, fix, command in _RULES:
        if error_type != kind or not (message or "").startswith(start):
            continue
        if start.startswith("'NoneType'") and ".grad" not in (code or ""):
            continue
        command = command.format(file=shlex.quote(file or "FILE"))
        name = _NAME_ON_LINE.get(command.split()[1])
        found = name and re.search(name, code or "")
        if found:  # the tensor the failing line names, in place of NAME
            command = command.replace("NAME", shlex.quote(_table_name(found.group(1), function,
                                                                      names)))
        return {"fix": fix, "command": command}
    return None


def _table_name(local, function, names):
    """The name the tables give the variable `local` of `function` (NAME when none does)."""
    if function in (None, "<module>"):
        return local
    pattern = re.compile(rf"(?:[\w.]+\.)?{re.escape(function)}(?:\[\d+\])?\.{re.escape(local)}")
    found = [n for n in names if pattern.fullmatch(n)]
    return found[-1] if found else "NAME"
