"""Naming tensors: a file's module-level variables, and the tensors inside its containers.

The namespace is the user's: any value in it may raise from attribute access, claim every
attribute (unittest.mock.Mock answers hasattr with yes), or break len() and iteration. So no
value is asked what it is through its own attributes: the checks look at its type, and a value
that raises while it is searched is skipped, keeping the names found before it.
"""

__all__ = ["named_tensors", "frame_prefixes"]

_MAX_ITEMS = 64      # elements of one list / dict looked at
_MAX_DEPTH = 3


def frame_prefixes(frames):
    """The name prefix of each function frame: `main`, `Net.forward`, and `step[3]` (the third
    call, counting from 1) when the same function made tensors in several calls. Each entry
    of `frames` is a frame, or (frame, call number, calls of its function) when the caller
    kept only some calls' frames.

    >>> import sys
    >>> def step():
    ...     return sys._getframe()
    >>> frame_prefixes([step(), step()])
    ['step[1]', 'step[2]']
    >>> frame_prefixes([(step(), 7, 9)])
    ['step[7]']
    """
    entries = [e if isinstance(e, tuple) else (e, None, None) for e in frames]
    calls, seen = {}, {}
    for f, _, _ in entries:
        calls[f.f_code] = calls.get(f.f_code, 0) + 1
    out = []
    for f, number, total in entries:
        code = f.f_code
        name = getattr(code, "co_qualname", code.co_name).replace(".<locals>", "")
        if number is None:
            seen[code] = number = seen.get(code, 0) + 1
            total = calls[code]
        if total > 1:
            name = f"{name}[{number}]"
        out.append(name)
    return out


def named_tensors(namespace, tensor_type, prefix="", seen=None):
    """[(name, tensor)] in order of first assignment: `x`, `model.weight`, `xs[2]`,
    `params['w']`. A tensor reachable under two names keeps the first. Each name starts with
    `prefix`; `seen` (ids of tensors already named elsewhere) is updated.

    >>> from unittest import mock
    >>> named_tensors({"m": mock.Mock(), "n": 3}, int)
    [('n', 3)]
    """
    out = []
    seen = set() if seen is None else seen
    for name, value in list(namespace.items()):
        if not isinstance(name, str) or name.startswith("__") or _skip(value):
            continue
        try:
            _collect(prefix + name, value, tensor_type, out, seen, 0)
        except Exception:  # noqa: BLE001 - a user's object may raise anything when searched
            continue
    return out


def _skip(value):
    import types
    return _is_a(value, (types.ModuleType, types.FunctionType, type, types.BuiltinFunctionType))


def _is_a(value, cls):
    """isinstance by the value's real type: isinstance() also asks value.__class__, which a
    user's object (a Mock, a proxy) can fake or make raise."""
    return issubclass(type(value), cls)


def _collect(name, value, tensor_type, out, seen, depth):
    if _is_a(value, tensor_type):
        if id(value) not in seen:
            seen.add(id(value))
            out.append((name, value))
        return
    if depth >= _MAX_DEPTH:
        return
    if _is_module(value):
        for pname, p in value.named_parameters():
            _collect(f"{name}.{pname}", p, tensor_type, out, seen, depth + 1)
        for attr, v in list(vars(value).items()):
            if isinstance(attr, str) and not attr.startswith("_") and _is_a(v, tensor_type):
                _collect(f"{name}.{attr}", v, tensor_type, out, seen, depth + 1)
        return
    if _is_a(value, (list, tuple)):
        for i, v in enumerate(value[:_MAX_ITEMS]):
            _collect(f"{name}[{i}]", v, tensor_type, out, seen, depth + 1)
    elif _is_a(value, dict):
        for i, (k, v) in enumerate(value.items()):
            if i >= _MAX_ITEMS:
                break
            if _is_a(k, (str, int)):
                _collect(f"{name}[{k!r}]", v, tensor_type, out, seen, depth + 1)


def _is_module(value):
    """An nn.Module of either backend: its class defines named_parameters and the instance
    holds _parameters (looked up on the type and in __dict__, never through the value)."""
    if _is_a(value, type):
        return False
    if not callable(getattr(type(value), "named_parameters", None)):
        return False
    attrs = _instance_dict(value)
    return attrs is not None and "_parameters" in attrs


def _instance_dict(value):
    try:
        attrs = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None
    return attrs if isinstance(attrs, dict) else None
