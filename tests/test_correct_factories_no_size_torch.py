"""Factories called without a size, as torch 2.13 answers them: torch.zeros() is refused
(torch.zeros(()) and torch.zeros(size=()) are the 0-d tensor), with torch's TypeError word for
word, for zeros, ones, empty, full, rand and randn, called bare, with keywords only, or with
an empty size positionally or by name."""

import pytest

import gradviz

torch = pytest.importorskip("torch")

CALLS = [
    "zeros()", "ones()", "empty()", "rand()", "randn()", "full()",
    "zeros(dtype=m.float32)", "ones(requires_grad=True)", "empty(dtype=m.int64)",
    "zeros(device='cpu')", "rand(dtype=m.float64)", "randn(requires_grad=True)",
    "rand(generator=m.Generator())", "empty(out=m.ones(2))", "full(fill_value=2)",
    "full(dtype=m.float32)", "full((2,))", "full(size=(2,))", "full([2, 3])",
    "zeros(())", "ones(size=())", "empty(size=[])", "zeros([])", "rand(size=())",
    "randn(())", "full((), 2)", "full(size=(), fill_value=2.0)", "ones(size=(2,))",
    "zeros(0)", "ones(size=(0, 2))", "ones(1).view(size=())", "zeros(2).view(size=())",
    "ones(1).reshape(shape=())", "full([], True)",
]


def _observe(m, call):
    try:
        r = eval("m." + call, {"m": m})
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return ("error", type(exc).__name__, str(exc).split("\n")[0])
    return ("tensor", tuple(r.shape), str(r.dtype).split(".")[-1], r.requires_grad)


@pytest.mark.parametrize("call", CALLS)
def test_factory_without_size_as_torch(call):
    assert _observe(gradviz, call) == _observe(torch, call)
