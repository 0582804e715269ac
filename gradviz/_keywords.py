"""The keyword forms torch's Python argument parser accepts on top of a function's own names.

torch takes `input=` for the first tensor of any `torch.X`, the NumPy names `axis=` and
`keepdims=` for `dim` and `keepdim`, and `out=` on `torch.X`; on `torch.X` it also takes NumPy's
`x=`, `a=`, `x1=` for `input` and `x2=` for `other` (python_arg_parser.cpp's
numpy_compatibility_arg_names). A forward here is written with
torch's parameter names only; `with_keywords` wraps it so that these spellings reach it. The
wrapper costs nothing more than a call on the ordinary path: the names are translated only when
the call fails to bind (a TypeError before the forward runs, so nothing has happened yet).

>>> import gradviz as torch
>>> torch.sum(input=torch.ones(2, 3), axis=1, keepdims=True)
tensor([[3.],
        [3.]])
"""

import functools
import inspect

import numpy as np

__all__ = ["with_keywords"]

_ALIASES = {"axis": "dim", "keepdims": "keepdim"}
# NumPy's names torch's parser also takes on torch.X. Not on methods: there the input is the
# tensor itself, and wrapping every method taking `other` would cost a call on a hot path.
_NUMPY_ALIASES = {"x": "input", "a": "input", "x1": "input", "x2": "other"}


def with_keywords(fn, name, method=False):
    """fn accepting torch's aliases (and, as `torch.X` rather than a method, `input=` and
    `out=`); fn itself when it takes **kwargs or has no parameter an alias could name."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return fn
    names = {p.name for p in params}
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    first = params[0].name if params and params[0].kind in positional else None
    takes_input = not method and first == "self"
    known = dict(_ALIASES) if method else {**_ALIASES, **_NUMPY_ALIASES}
    named = names | {"input"} if takes_input else names
    aliases = {a: d for a, d in known.items() if d in named and a not in names}
    takes_out = not method and "out" not in names
    if not (aliases or takes_input or takes_out):
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError:
            if not kwargs or kwargs.keys() <= names:
                raise           # not a keyword torch spells differently
            translated = _translate(args, dict(kwargs), aliases, takes_input, takes_out)
            if translated is None:
                raise           # both spellings given: torch names the alias, as Python did
        args, kwargs, dest = translated
        result = fn(*args, **kwargs)
        return result if dest is None else write_out(name, dest, result, args, kwargs)

    return call


def _translate(args, kwargs, aliases, takes_input, takes_out):
    for alias, dim in aliases.items():
        if alias in kwargs:
            if dim in kwargs:
                return None
            kwargs[dim] = kwargs.pop(alias)
    if takes_input and "input" in kwargs:
        args = (kwargs.pop("input"),) + tuple(args)
    dest = kwargs.pop("out", None) if takes_out else None
    return args, kwargs, dest


def write_out(name, dest, result, args, kwargs):
    """torch's out=: the result written into dest (resized if its shape differs), dest
    returned. Not differentiable, as in torch."""
    from ._tensor import Tensor
    from .autograd.grad_mode import is_grad_enabled
    inputs = [a for a in tuple(args) + tuple(kwargs.values()) if isinstance(a, Tensor)]
    if is_grad_enabled() and any(t.requires_grad for t in inputs):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires grad.")
    if isinstance(dest, (tuple, list)):
        return type(dest)(_write_one(d, r) for d, r in zip(dest, result))
    return _write_one(dest, result)


def _write_one(dest, result):
    from ._ops._common import _TORCH_SCALAR
    from ._ops.inplace import bump_version
    src = np.asarray(result._data)
    want = dest._data.dtype
    if src.dtype.kind == "f" and want.kind in "iub":
        raise RuntimeError(f"result type {_TORCH_SCALAR[src.dtype.name]} can't be cast to the "
                           f"desired output type {_TORCH_SCALAR[want.name]}")
    if dest.shape == result.shape:
        np.copyto(dest._array(), src, casting="unsafe")
    else:
        dest._data = src.astype(want, copy=True)
    bump_version(dest, "out")
    return dest

