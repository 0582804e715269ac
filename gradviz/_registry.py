"""The export registry: every op is defined once and marked public once.

`export` marks a forward function as `torch.X` and/or `Tensor.X` (under one or more names);
`gradviz/__init__.py` imports exactly the registry's torch names (a test checks the two lists
are equal) and `install_methods` puts the Tensor names on the class. `records` binds a forward
to the derivative rows it records, so that the row's tensor parameters are checked against the
forward's signature at import (see gradviz.autograd.formula.check_bindings).

`ops` is a namespace holding every registered forward by its Python name: the derivative
helpers call ops through it on Tensors (create_graph=True) instead of importing gradviz._ops,
so that the table and the ops never import each other.

>>> import gradviz as torch
>>> from gradviz import _registry
>>> _registry.TORCH["clip"] is torch.clip
True
"""

import functools
import types

__all__ = ["TORCH", "TENSOR", "BINDINGS", "ops", "export", "records", "method",
           "install_methods", "refusing"]

TORCH = {}          # name -> function exported as torch.<name>
TENSOR = {}         # name -> function installed as Tensor.<name>
BINDINGS = []       # (row name, forward function) for every @records
ops = types.SimpleNamespace()


def _add(table, name, fn, where):
    old = table.get(name)
    if old is not None and old is not fn:
        raise ValueError(f"{where}.{name} is exported twice ({old.__qualname__} and "
                         f"{fn.__qualname__})")
    table[name] = fn


def export(*names, torch=True, tensor=True):
    """Mark a forward public: `torch.<name>` and/or `Tensor.<name>` for each name given (the
    function's own name when none is given)."""
    def mark(fn):
        if not names and not hasattr(fn, "__name__"):
            raise ValueError("export() of an object without a name needs the names")
        if hasattr(fn, "__name__"):
            setattr(ops, fn.__name__, fn)
        for name in names or (fn.__name__,):
            if torch:
                _add(TORCH, name, fn, "torch")
            if tensor:
                _add(TENSOR, name, fn, "Tensor")
        return fn
    return mark


def method(*names):
    """A Tensor-only method (dunder methods, `view_as`, ...)."""
    return export(*names, torch=False, tensor=True)


def records(*rows):
    """Bind a forward to the derivative rows it records (checked at import)."""
    def mark(fn):
        setattr(ops, fn.__name__, fn)
        for row in rows:
            BINDINGS.append((row, fn))
        return fn
    return mark


def install_methods(tensor_cls):
    """Put the Tensor methods on the class; both tables then hold the forwards as torch's
    argument parser takes them (`input=`, `axis=`, `keepdims=`, `out=`: gradviz._keywords)."""
    from ._keywords import with_keywords
    operators = {id(fn) for name, fn in TENSOR.items() if name in _OPERATORS}
    for name, fn in TORCH.items():
        TORCH[name] = with_keywords(refusing(fn, name) if id(fn) in operators else fn, name)
    for name, fn in TENSOR.items():
        if not name.startswith("__"):
            fn = refusing(fn, name, method=True) if id(fn) in operators else fn
            TENSOR[name] = fn = with_keywords(fn, name, method=True)
        setattr(tensor_cls, name, fn)


# Python's binary operators: a forward that is one of them returns NotImplemented for an operand
# it does not take (a NumPy array, a str), as torch's operators do, so that Python and NumPy
# take over (`t + ndarray` is NumPy's sum).
_OPERATORS = frozenset(f"__{kind}{op}__" for kind in ("", "r", "i") for op in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift"))
# torch's functions with one signature taking `other`: their parser names the argument.
_ONE_SIGNATURE = frozenset(("add", "sub", "mul", "div", "matmul", "add_", "sub_", "mul_",
                            "div_"))


def refusing(fn, name, method=False):
    """An operator's forward as torch.<name> / Tensor.<name>: where the operator returns
    NotImplemented (an operand that is neither a Tensor nor a number), torch's TypeError."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        out = fn(*args, **kwargs)
        if out is NotImplemented:
            raise _refused(name, args, kwargs, method)
        return out
    return call


def _refused(name, args, kwargs, method):
    from ._ops._common import _invalid_combination, _type_name
    if name in _ONE_SIGNATURE:
        other = args[1] if len(args) > 1 else kwargs.get("other")
        return TypeError(f"{name}(): argument 'other' (position {1 if method else 2}) must be "
                         f"Tensor, not {_type_name(other)}")
    return _invalid_combination(name, args[int(method):], kwargs)
