"""The `torch.X` / `Tensor.X` audit: every function and method the export registry puts on
gradviz, against torch 2.13's own signatures (gradviz/_torch_api.json, which
tests/test_missing_names.py keeps equal to the installed torch's).

For each export and each parameter torch takes, gradviz either accepts it (under torch's
name, through gradviz._keywords when the forward spells it differently) or refuses it with
NotImplementedError naming the op and the argument; gradviz takes no keyword torch refuses,
no positional argument torch only takes by keyword, and has torch's defaults. The few
differences below are listed with their reasons: a new mismatch fails here.
"""

import ast
import inspect
import re
import warnings

import pytest

import gradviz
from gradviz import _registry
from gradviz._keywords import _split, torch_parameters
from gradviz._torch_api import SIGNATURES

# The NumPy spellings torch's argument parser takes on top of every signature.
NUMPY = {"axis", "keepdims", "x", "a", "x1", "x2"}
PROPERTIES = {"H", "T", "mH", "mT", "itemsize", "nbytes"}


def _exports():
    for owner, table in (("torch", _registry.TORCH), ("Tensor", _registry.TENSOR)):
        for name in sorted(table):
            if not name.startswith("__") and name not in PROPERTIES:
                yield owner, name


EXPORTS = list(_exports())


def _ours(owner, name):
    """gradviz's parameters of the export (the forward's, seen as torch.X or Tensor.X)."""
    fn = getattr(gradviz if owner == "torch" else gradviz.Tensor, name)
    params = list(inspect.signature(getattr(fn, "__wrapped__", fn)).parameters.values())
    if owner == "Tensor":
        return params[1:]
    if params and params[0].name == "self":
        params[0] = params[0].replace(name="input")
    return params


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # torch.cross's dim warning, ...
        yield


def _call(owner, name, **kwargs):
    if owner == "torch":
        return getattr(gradviz, name)(**kwargs)
    return getattr(gradviz.ones(2), name)(**kwargs)


def test_every_export_has_torchs_signature():
    missing = [f"{o}.{n}" for o, n in EXPORTS if n not in SIGNATURES[o]]
    assert missing == []


# ----- keywords torch takes -----------------------------------------------------------------

def _torch_keywords(owner, name):
    return sorted({p for o in torch_parameters(name, owner == "Tensor") for p, _ in o})


CASES = [(o, n, k) for o, n in EXPORTS for k in _torch_keywords(o, n)]


class _Probe:
    """A value no op takes: a call binding it fails inside the op, after the keywords."""


@pytest.mark.parametrize("owner,name,keyword", CASES, ids=[f"{o}.{n}-{k}" for o, n, k in CASES])
def test_every_keyword_torch_takes_is_taken_or_refused_clearly(owner, name, keyword):
    try:
        _call(owner, name, **{keyword: _Probe()})
    except NotImplementedError as exc:
        # refused by the keyword layer (or bound, and refused by the op for the probe)
        layer = re.match(rf"gradviz: {owner}\.{name}\((\w+)=\.\.\.\) is not implemented by "
                         "gradviz's core; run with --backend torch to use PyTorch$", str(exc))
        assert layer is None or layer.group(1) == keyword, str(exc)
    except TypeError as exc:
        # bound, then failed for the missing arguments or the probe's type: fine; never
        # Python's "unexpected keyword argument" (torch's parser would have taken it)
        assert "unexpected keyword" not in str(exc), str(exc)
    except Exception:               # noqa: BLE001 - the probe reached the op: it was bound
        pass


# ----- what gradviz takes that torch does not -----------------------------------------------

def _literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _torch_defaults(owner, name):
    """parameter -> the set of torch's defaults over the overloads naming it (None: required)."""
    found = {}
    for sig in SIGNATURES[owner][name]:
        for part in _split(sig[1:-1]):
            key, eq, default = part.partition("=")
            found.setdefault(key.lstrip("*"), set()).add(_literal(default) if eq else None)
    return found


def _takes(owner, name, keyword):
    """Whether the export binds `keyword` (the keyword layer refuses the ones torch refuses
    with Python's TypeError, before the forward binds them)."""
    try:
        _call(owner, name, **{keyword: _Probe()})
    except TypeError as exc:
        return f"unexpected keyword argument '{keyword}'" not in str(exc)
    except Exception:               # noqa: BLE001 - bound, then refused by the op
        pass
    return True


def _differences(owner, name):
    overloads = torch_parameters(name, owner == "Tensor")
    theirs = {p for o in overloads for p, _ in o}
    keyword_only = {p for p in theirs if all(k == "keyword" for o in overloads
                                                 for q, k in o if q == p)}
    defaults = _torch_defaults(owner, name)
    for p in _ours(owner, name):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name not in theirs:
            if _takes(owner, name, p.name):
                yield f"{p.name}= taken"
        elif p.name in keyword_only and p.kind is not p.KEYWORD_ONLY:
            yield f"{p.name} taken positionally"
        elif p.default is not p.empty and p.name in defaults:
            torchs = defaults[p.name] - {None}
            if torchs and p.default not in torchs:
                yield f"{p.name}={p.default!r} (torch: {'/'.join(map(repr, torchs))})"


# Each difference from torch's signature that gradviz keeps, with its reason.
_POSITIONAL = ("torch requires it by keyword; gradviz also binds it by position, with the "
               "keyword's meaning (refusing it would cost a check on every call of a hot method)")
_NONE_DEFAULT = "None stands for torch's default, which the op applies"
ALLOWED = {
    **{f"{owner}.{name}: {param} taken positionally": _POSITIONAL
       for owner, names, param in (
           ("torch", ("add", "sub"), "alpha"),
           ("Tensor", ("add", "add_", "sub", "sub_"), "alpha"),
           ("torch", ("sum", "mean", "prod"), "dtype"),
           ("Tensor", ("sum", "mean", "prod"), "dtype"),
           ("torch", ("div", "divide"), "rounding_mode"), ("Tensor", ("div",), "rounding_mode"),
           ("torch", ("clone",), "memory_format"), ("Tensor", ("clone",), "memory_format"))
       for name in names},
    "Tensor.contiguous: memory_format=None (torch: 'torch.contiguous_format')": _NONE_DEFAULT,
    "Tensor.cuda: memory_format=None (torch: 'torch.preserve_format')": _NONE_DEFAULT,
    "torch.cdist: compute_mode=None (torch: 'use_mm_for_euclid_dist_if_necessary')":
        _NONE_DEFAULT,
    "torch.roll: dims=None (torch: ())": "None and () both roll the flattened tensor",
    "torch.arange: step=None (torch: 1)":
        "None means step was not given: arange(end=..., step=...) is refused, as torch does",
    "Tensor.roll: dims=None (torch: ())": "None and () both roll the flattened tensor",
    **{f"{owner}.{name}: unbiased=None (torch: True)":
       "None means unbiased was not given: the op then applies torch's default "
       "(correction=1, what unbiased=True means)"
       for owner, names in (("torch", ("std", "var", "std_mean", "var_mean")),
                            ("Tensor", ("std", "var")))
       for name in names},
    **{f"{owner}.{name}: keepdim=<not given> (torch: False)":
       "keepdim without a dim is refused, as torch's parser does (no overload takes it)"
       for owner in ("torch", "Tensor") for name in ("max", "min")},
}


def test_gradviz_takes_what_torch_takes_with_torchs_defaults():
    found = {f"{o}.{n}: {d}" for o, n in EXPORTS for d in _differences(o, n)}
    assert sorted(found - set(ALLOWED)) == []
    assert sorted(set(ALLOWED) - found) == []       # an allowance no longer needed goes


def test_the_audit_sees_a_difference(monkeypatch):
    """A keyword torch refuses, a keyword-only parameter taken by position and a default
    differing from torch's are each reported."""
    def fake(self, other, alpha=1, *, extra=None):
        """torch.add with alpha positional and a keyword torch lacks."""

    def fake_sum(self, dim=None, keepdim=True, *, dtype=None):
        """torch.sum with keepdim's default wrong."""
    monkeypatch.setattr(gradviz, "add", fake)
    monkeypatch.setattr(gradviz, "sum", fake_sum)
    assert set(_differences("torch", "add")) == {"alpha taken positionally", "extra= taken"}
    assert set(_differences("torch", "sum")) == {"keepdim=True (torch: False)"}


# ----- what neither takes, or gradviz lacks ------------------------------------------------
# (torch's spellings taken and refused are compared with torch in tests/test_learner_surface.py)

@pytest.mark.parametrize("call,message", [
    (lambda: gradviz.mm(gradviz.eye(2), gradviz.eye(2), out_dtype=gradviz.float64),
     "torch.mm(out_dtype=...)"),
    (lambda: gradviz.ones(2).div_(2.0, rounding_mode="floor"), "Tensor.div_(rounding_mode=...)"),
    (lambda: gradviz.normal(0.0, 1.0, (2,), layout=None), "torch.normal(layout=...)"),
    # torch's overloads name the second parameter sections, indices or tensor_indices_or_sections
    (lambda: gradviz.tensor_split(gradviz.ones(3), sections=3), "torch.tensor_split(sections=...)"),
    (lambda: gradviz.ones(2).view(gradviz.float16), None),
])
def test_what_torch_takes_and_gradviz_lacks_is_refused_by_name(call, message):
    with pytest.raises((NotImplementedError, TypeError, RuntimeError)) as caught:
        call()
    if message is not None:
        assert caught.type is NotImplementedError
        assert str(caught.value) == (f"gradviz: {message} is not implemented by gradviz's core; "
                                     "run with --backend torch to use PyTorch")
