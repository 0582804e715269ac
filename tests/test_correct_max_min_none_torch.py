"""torch.max / torch.min / Tensor.max / Tensor.min refuse an explicit dim=None, other=None and a
keepdim without a dim, as torch 2.13's parser does (no overload takes them); gradviz read them as
"no dim" and returned the whole-tensor result. Each spelling runs on both; the error's class and
first line are compared, and the accepted spellings give the same values."""

import pytest

import gradviz

torch = pytest.importorskip("torch")

CALLS = [
    "mod.max(x, None)", "mod.min(x, None)", "mod.max(x, dim=None)", "mod.min(x, dim=None)",
    "mod.max(x, None, True)", "mod.max(x, None, keepdim=True)",
    "mod.max(x, dim=None, keepdim=True)", "mod.max(x, keepdim=True)", "mod.min(x, keepdim=False)",
    "mod.max(x, other=None)", "x.max(None)", "x.min(None)", "x.max(dim=None)", "x.min(dim=None)",
    "x.max(None, True)", "x.min(None, False)", "x.max(dim=None, keepdim=True)",
    "x.max(None, keepdim=True)", "x.max(keepdim=True)", "x.min(other=None)",
    # accepted spellings, unchanged
    "mod.max(x)", "x.min()", "mod.max(x, 0)", "x.max(1, True)", "x.min(0, keepdim=False)",
    "mod.max(x, x)", "x.max(other=x)", "mod.min(x, dim=1)",
]


def _outcome(mod, call):
    x = mod.tensor([[1.0, 5.0], [7.0, 2.0]])
    try:
        result = eval(call, {"mod": mod, "x": x})     # noqa: S307 - the table's own text
    except Exception as exc:        # noqa: BLE001 - the class is compared
        return type(exc).__name__, str(exc).split("\n")[0]
    parts = result if isinstance(result, tuple) else (result,)
    return [p.tolist() for p in parts]


@pytest.mark.parametrize("call", CALLS)
def test_max_min_spelling_as_torch(call):
    assert _outcome(gradviz, call) == _outcome(torch, call)


def test_an_explicit_none_dim_is_refused():
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        gradviz.max(gradviz.ones(2), None)
