"""Naming tensors: a file's module-level variables, and the tensors inside its containers."""

__all__ = ["named_tensors"]

_MAX_ITEMS = 64      # elements of one list / dict looked at
_MAX_DEPTH = 3


def named_tensors(namespace, tensor_type):
    """[(name, tensor)] in order of first assignment: `x`, `model.weight`, `xs[2]`,
    `params['w']`. A tensor reachable under two names keeps the first."""
    out = []
    seen = set()
    for name, value in list(namespace.items()):
        if name.startswith("__") or _skip(value):
            continue
        _collect(name, value, tensor_type, out, seen, 0)
    return out


def _skip(value):
    import types
    return isinstance(value, (types.ModuleType, types.FunctionType, type, types.BuiltinFunctionType))


def _collect(name, value, tensor_type, out, seen, depth):
    if isinstance(value, tensor_type):
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
            if not attr.startswith("_") and isinstance(v, tensor_type):
                _collect(f"{name}.{attr}", v, tensor_type, out, seen, depth + 1)
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value[:_MAX_ITEMS]):
            _collect(f"{name}[{i}]", v, tensor_type, out, seen, depth + 1)
    elif isinstance(value, dict):
        for i, (k, v) in enumerate(value.items()):
            if i >= _MAX_ITEMS:
                break
            if isinstance(k, (str, int)):
                _collect(f"{name}[{k!r}]", v, tensor_type, out, seen, depth + 1)


def _is_module(value):
    return hasattr(value, "named_parameters") and hasattr(value, "_parameters") \
        and not isinstance(value, type)
