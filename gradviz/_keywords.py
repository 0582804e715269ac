"""The keyword forms torch's Python argument parser accepts on top of a function's own names.

torch takes `input=` for the first tensor of any `torch.X`, the NumPy names `axis=` and
`keepdims=` for `dim` and `keepdim`, and `out=` on the `torch.X` that have an out variant; on
`torch.X` it also takes NumPy's `x=`, `a=`, `x1=` for `input` and `x2=` for `other`
(python_arg_parser.cpp's numpy_compatibility_arg_names). A forward here is written with
torch's parameter names where it can; `with_keywords` wraps it so that these spellings reach
it, and compares it with torch's own signatures (gradviz/_torch_api.json, from torch's type
stubs): a positional parameter torch names differently (`Tensor.view(size=...)` for our
`*shape`) is taken under torch's name, a keyword torch takes and the forward lacks raises
NotImplementedError naming the op and the argument, and a keyword of the forward that torch
refuses (`torch.det(out=...)`, a method's `out=`; not the `self` naming a torch.X's input) is
refused with Python's TypeError, as torch refuses it. tests/test_signatures_torch.py audits
every export this way.

The wrapper is one Python call on the ordinary path: the names are translated only when the
call fails to bind (a TypeError before the forward runs, so nothing has happened yet). That
call costs about 0.1-0.4 µs per `torch.X` (a frame, and the arguments packed into a tuple and
a dict: more with keywords); it cannot go without losing the spellings above, because a
binding error is raised in the caller's frame, where nothing of gradviz runs. Tensor methods
and operators are wrapped only when one of these spellings applies to them, so `a + b` and
`a.exp()` call the forward directly.

>>> import gradviz as torch
>>> torch.sum(input=torch.ones(2, 3), axis=1, keepdims=True)
tensor([[3.],
        [3.]])
"""

import functools
import inspect

import numpy as np

from ._registry import _ONE_SIGNATURE
from ._torch_api import SIGNATURES, TENSORS

__all__ = ["with_keywords", "torch_parameters"]

_ALIASES = {"axis": "dim", "keepdims": "keepdim"}
# NumPy's names torch's parser also takes on torch.X. Not on methods: there the input is the
# tensor itself, and wrapping every method taking `other` would cost a call on a hot path.
_NUMPY_ALIASES = {"x": "input", "a": "input", "x1": "input", "x2": "other"}
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def torch_parameters(name, method=False, deprecated=False):
    """torch's overloads of `torch.<name>` (or `Tensor.<name>`), each a list of
    (parameter, kind) with kind "positional", "keyword" (keyword-only) or "varargs"; the
    deprecated overloads (those naming `self`, such as `add(input, alpha, other)`) only when
    asked for."""
    overloads = [_parse(sig) for sig in SIGNATURES["Tensor" if method else "torch"].get(name, ())]
    return overloads if deprecated else _current(overloads, method)


def _current(overloads, method):
    return [o for o in overloads if method or all(p != "self" for p, _ in o)]


def _parse(sig):
    params, kind = [], "positional"
    for part in _split(sig[1:-1]):
        if part == "*":
            kind = "keyword"
        elif part.startswith("*"):
            params.append((part.lstrip("*"), "varargs"))
            kind = "keyword"
        elif part:
            params.append((part.split("=")[0], kind))
    return params


def _split(text):
    """text split at its top-level commas (a default may be a tuple or a string)."""
    if "(" not in text and "[" not in text:
        return [part.strip() for part in text.split(",")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{" and 1 or ch in ")]}" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return parts + [text[start:].strip()]


def _renames(overloads, params, method):
    """torch's name -> ours for each position where torch spells a positional parameter
    differently (torch.split's `tensor`, Tensor.copy_'s `other`, Tensor.view's `size` for our
    `*shape`, torch.zeros's `size` for our `*size`), when every overload agrees on the name
    there; and the names of those taking a tuple where other overloads name the position
    otherwise (Tensor.view's `size` beside `dtype`)."""
    renames, mixed = {}, set()
    ours = [p for p in params if p.kind in _POSITIONAL or p.kind is p.VAR_POSITIONAL]
    for i, mine in enumerate(ours):
        at = [o[i] for o in overloads if len(o) > i and o[i][1] != "keyword"]
        varargs = mine.kind is mine.VAR_POSITIONAL      # Tensor.reshape(shape=...) -> *shape
        # Tensor.view has (dtype), (size) and (*size): our *shape is the varargs one
        theirs = {n for n, kind in at if kind == "varargs"} if varargs else set()
        theirs = theirs or {n for n, _ in at}
        # torch.X's first parameter is its input, except a size taken as ints or one tuple
        # (torch.zeros(size=...), whose overloads name it both ways)
        sized = varargs and theirs <= {n for n, kind in at if kind == "positional"}
        if len(theirs) == 1 and (varargs or mine.name not in theirs) and (i or method or sized):
            name = theirs.pop()
            renames[name] = mine
            if len({n for n, _ in at}) > 1:
                mixed.add(name)
    return renames, mixed


def with_keywords(fn, name, method=False):
    """fn accepting torch's spellings: the NumPy aliases, `input=` and `out=` (as `torch.X`,
    where torch takes them), torch's names for positional parameters spelled differently here;
    an argument torch takes that fn lacks raises NotImplementedError. fn itself when it takes
    **kwargs or no such spelling applies."""
    params = _parameters(fn)
    if params is None or any(p.kind is p.VAR_KEYWORD for p in params):
        return fn
    if method:
        params = params[1:]
    names = {p.name for p in params if p.kind is not p.VAR_POSITIONAL}
    first = params[0].name if params and params[0].kind in _POSITIONAL else None
    with_deprecated = torch_parameters(name, method, deprecated=True)
    overloads = _current(with_deprecated, method)
    theirs = {p for o in overloads for p, _ in o}
    # torch.X's first parameter is `input` (torch.split's `tensor`, torch.tensordot's `a`)
    inputs = {o[0][0] for o in overloads if o and o[0][1] == "positional"} or {"input"}
    takes_input = not method and first == "self" and len(inputs) == 1
    input_name = inputs.pop() if takes_input else None
    known = dict(_ALIASES) if method else {**_ALIASES, **_NUMPY_ALIASES}
    named = names | {"input"} if takes_input else names
    aliases = {a: d for a, d in known.items() if d in named and a not in names}
    # out= where torch takes it (torch.linalg's functions, which come without a signature
    # here, all take it)
    takes_out = not method and "out" not in names and ("out" in theirs or not overloads)
    renames, mixed = _renames(overloads, params, method)
    renames = {t: p for t, p in renames.items() if t not in names}
    refused = theirs - names - set(renames) - {"self", "out", input_name} - set(aliases)
    # the first positional parameter torch takes beyond ours
    n_positional = sum(p.kind in _POSITIONAL for p in params)
    beyond = next((o[n_positional][0] for o in overloads if len(o) > n_positional
                   and o[n_positional][1] == "positional"), None)
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        beyond = None
    # our keywords torch refuses (a method's `out`, torch.split's `split_size`, the `self` of
    # a torch.X whose forward names its input self: torch.exp(self=x)): refused too, checked
    # on every call with keywords
    every = {p for o in with_deprecated for p, _ in o} - {"self"}
    foreign = tuple(sorted(names - every)) if every else ()
    typed = name in TENSORS["Tensor" if method else "torch"]     # takes a tensor argument
    if not (aliases or takes_input or takes_out or renames or refused or beyond or foreign
            or typed):
        return fn
    owner = "Tensor" if method else "torch"
    spellings = (name, method, aliases, input_name, takes_out, renames, mixed)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs and foreign:
            for key in foreign:
                if key in kwargs:
                    raise _foreign(name, key, args, input_name)
        try:
            # the common positional call goes straight to fn, without passing on a dict
            return fn(*args, **kwargs) if kwargs else fn(*args)
        except ParserRefusal as exc:
            raise _refusal(name, method, args, kwargs, exc.param) from None
        except Exception as exc:
            # torch's parser refuses a non-tensor where it takes a tensor before the op runs;
            # here the op has failed on it (None has no _data), so the parser's error is given
            wrong = _wrong_type(name, method, args, kwargs) if typed else None
            if wrong is not None:
                raise wrong from None
            if not isinstance(exc, TypeError):
                raise
            unknown = kwargs.keys() - names
            if len(args) - method > n_positional and beyond is not None:
                raise _not_implemented(owner, name, beyond) from None
            if unknown & refused:
                raise _not_implemented(owner, name, min(unknown & refused)) from None
            if not unknown:
                raise           # not a keyword torch spells differently
            translated = _translate(args, dict(kwargs), spellings)
            if translated is None:
                raise           # both spellings given: torch names the alias, as Python did
        args, kwargs, dest = translated
        result = fn(*args, **kwargs)
        return result if dest is None else write_out(name, dest, result, args, kwargs)

    return call


@functools.lru_cache(maxsize=None)
def _typed_overloads(name, method):
    """torch's current overloads of `name` that take a tensor other than the method's self: for
    each, (fewest arguments, most arguments, [(parameter, its tensor kind or None)] in order,
    number of positional parameters), the kind being "", "+" or "?" (gradviz._torch_api)."""
    owner = "Tensor" if method else "torch"
    found = []
    for sig, tensors in zip(SIGNATURES[owner].get(name, ()), TENSORS[owner].get(name, ())):
        params = _parse(sig)
        # torch's parser hides its deprecated overloads, those naming self and taking alpha,
        # beta or value positionally (add(self, alpha, other)); where(condition, self, other)
        # and fill_(input, value) are not
        names = {p for p, kind in params if kind == "positional"}
        if "self" in names and names & _DEPRECATED:
            continue
        kinds = {t.rstrip("+?#"): t[-1] if t[-1] in "+?#" else "" for t in tensors}
        required = sum("=" not in part and not part.startswith("*")
                       for part in _split(sig[1:-1]) if part)
        most = float("inf") if any(kind == "varargs" for _, kind in params) else len(params)
        found.append((required, most, [(p, kinds.get(p)) for p, _ in params],
                      sum(kind == "positional" for _, kind in params)))
    return found


_DEPRECATED = frozenset(("alpha", "beta", "value"))


class ParserRefusal(TypeError):
    """Raised by an op for an argument no overload of torch's takes (max(x, dim=None)): the
    wrapper of with_keywords words torch's parser error from the arguments as given."""

    def __init__(self, param):
        super().__init__(f"argument '{param}' is refused")
        self.param = param


def _refusal(name, method, args, kwargs, param):
    """torch's parser error for `param`, which no overload takes as given: with one overload
    taking this many arguments, "argument 'dim' (position 1) must be int, not NoneType" (torch
    names the parameter's type; int for the dims refused so far); else the invalid combination."""
    from ._ops._common import _invalid_combination
    given = args[int(method):]
    n = len(given) + len(kwargs)
    plausible = [o for o in _typed_overloads(name, method) if o[0] <= n <= o[1]]
    params = [p for p, _ in plausible[0][2]] if len(plausible) == 1 else ()
    if param not in params:
        return _invalid_combination(name, given, kwargs)
    at = params.index(param)
    if param in kwargs:
        return argument_error(name, param, None, "int", kwargs[param])
    return argument_error(name, param, at + 1, "int", given[at])


def _wrong_type(name, method, args, kwargs):
    """torch's TypeError when an argument where torch takes a tensor is of another type, as its
    parser words it: with one overload taking this many arguments, that argument named
    (keywords without a position); with several, all refusing it, the invalid combination.
    None when no such argument is found."""
    from ._ops._common import _invalid_combination
    given = args[int(method):]
    n = len(given) + len(kwargs)
    plausible = [o for o in _typed_overloads(name, method) if o[0] <= n <= o[1]]
    wrong = [_first_wrong(name, o, given, kwargs) for o in plausible]
    if not wrong or not all(wrong) or all(w[3] is None for w in wrong):
        return None         # no tensor parameter refused it (randn(2, -1): the op's own error)
    if len(wrong) > 1:
        return _invalid_combination(name, given, kwargs)
    param, position, value, expected = wrong[0]
    return argument_error(name, param, position, expected, value)


def argument_error(name, param, position, expected, value):
    """torch's parser error for one argument: "relu(): argument 'input' (position 1) must be
    Tensor, not NoneType" (no position for an argument given by keyword)."""
    from ._ops._common import _type_name
    where = "" if position is None else f" (position {position})"
    return TypeError(f"{name}(): argument '{param}'{where} must be {expected}, not "
                     f"{_type_name(value)}")


def _first_wrong(name, overload, given, kwargs):
    """(parameter, position or None, value, "Tensor" or None for another parameter) of the first
    argument in the overload's order that its tensor or number parameter does not take (or
    beyond its positional parameters), or None."""
    from ._tensor import Tensor
    _, _, params, n_positional = overload
    if len(given) > n_positional:       # more positional arguments than it takes
        return params[-1][0], None, given[-1], None
    for i, (param, kind) in enumerate(params):
        if i < len(given) and i < n_positional:
            value, position = given[i], i + 1
        elif param in kwargs:
            value, position = kwargs[param], None
        else:
            continue
        # a number parameter also takes a tensor (torch reads a 0-d one): not judged here;
        # nor is out=, which some ops take as a tuple of tensors
        if kind is None or param == "out" or isinstance(value, Tensor) or (
                kind == "?" and value is None):
            continue
        if (kind == "+" or kind == "#") and isinstance(value, (int, float, complex, np.generic)):
            continue
        # the stubs merge a Tensor overload and a Number one into "+": a single signature only
        # for the ops _ONE_SIGNATURE lists (floor_divide has two: torch's invalid combination)
        one = kind in ("", "?") or (kind == "+" and name in _ONE_SIGNATURE)
        return param, position, value, "Tensor" if one else None
    return None


def _parameters(fn):
    """fn's parameters, read off its code object (inspect.signature, which also reads the
    defaults and annotations, took about half the import time of the exports' wrappers);
    None for a callable without code."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return None
    kind = inspect.Parameter
    names, n, k = code.co_varnames, code.co_argcount, code.co_kwonlyargcount
    params = [kind(v, kind.POSITIONAL_ONLY if i < code.co_posonlyargcount
                   else kind.POSITIONAL_OR_KEYWORD) for i, v in enumerate(names[:n])]
    rest = names[n + k:]
    if code.co_flags & inspect.CO_VARARGS:
        params.append(kind(rest[0], kind.VAR_POSITIONAL))
        rest = rest[1:]
    params += [kind(v, kind.KEYWORD_ONLY) for v in names[n:n + k]]
    if code.co_flags & inspect.CO_VARKEYWORDS:
        params.append(kind(rest[0], kind.VAR_KEYWORD))
    return params


def _not_implemented(owner, name, arg):
    return NotImplementedError(f"gradviz: {owner}.{name}({arg}=...) is not implemented by "
                               "gradviz's core; run with --backend torch to use PyTorch")


def _foreign(name, key, args, input_name):
    """torch's TypeError for a keyword it refuses: a torch.X given its input as `self=` and
    nothing positionally misses its input, as torch's parser says."""
    if key == "self" and not args:
        return TypeError(f'{name}() missing 1 required positional arguments: '
                         f'"{input_name or "input"}"')
    return TypeError(f"{name}() got an unexpected keyword argument '{key}'")


def _sizes(name, theirs, value, args, lead, mixed):
    """The tuple a size keyword gives for our *size (torch.zeros(size=(2, 3)),
    Tensor.view(size=(6,)), torch.reshape(x, shape=(6,))), refused with torch's TypeError when
    it is not a tuple of ints or sizes were also given positionally; the first `lead` args
    (the tensor of a method or of a torch.X taking one) are no sizes."""
    if theirs in mixed and (len(args) > lead or not isinstance(value, (tuple, list))):
        given = [type(a).__name__ for a in args[lead:]] + [f"{theirs}={type(value).__name__}"]
        got = ", ".join(given) if len(given) > 1 else given[0] + ", "
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:")
    if len(args) > lead:
        raise TypeError(f"{name}() got multiple values for argument '{theirs}'")
    if isinstance(value, (tuple, list)):
        # an empty size stays one argument, as torch.zeros(()) passes it: torch.zeros(size=())
        # is a 0-d tensor where torch.zeros() is refused
        return tuple(value) if len(value) else ((),)
    raise TypeError(f"{name}(): argument '{theirs}' must be tuple of ints, not "
                    f"{type(value).__name__}")


def _translate(args, kwargs, spellings):
    name, method, aliases, input_name, takes_out, renames, mixed = spellings
    for alias, dim in aliases.items():
        if alias in kwargs:
            if dim in kwargs:
                return None
            kwargs[dim] = kwargs.pop(alias)
    if input_name is not None and input_name in kwargs:
        args = (kwargs.pop(input_name),) + tuple(args)
    for theirs, mine in renames.items():
        if theirs in kwargs:
            value = kwargs.pop(theirs)
            if mine.kind is mine.VAR_POSITIONAL:
                lead = int(method or input_name is not None)
                args = tuple(args) + _sizes(name, theirs, value, args, lead, mixed)
            elif mine.name in kwargs:
                return None
            else:
                kwargs[mine.name] = value
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
    from ._dtype import _TORCH_SCALAR
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

