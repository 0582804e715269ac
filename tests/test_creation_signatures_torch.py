"""The creation functions as torch's argument parser takes them, against torch 2.13: sizes as
ints, one tuple or `size=`, torch's other keywords (`end=`, `high=`, `n=`, `out=`, `generator=`,
`input=`), and torch's TypeError or RuntimeError for what torch refuses. Random draws are
compared after the same seed; `empty`'s values are undefined in torch, so only its shape,
dtype and strides are compared."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

UNDEFINED = ("empty", "new_empty", "empty_like", "empty_strided")

CASES = [
    # sizes
    "t.zeros(2, 3)", "t.zeros((2, 3))", "t.zeros([2, 3])", "t.zeros(t.Size([2]))",
    "t.zeros(size=(2, 3))", "t.zeros(size=[2])", "t.ones(size=(2,), dtype=t.float64)",
    "t.zeros(t.tensor(2))", "t.zeros(())", "t.empty(size=(2, 3))", "t.empty(2, 3).dtype",
    "t.zeros(size=2)", "t.zeros(2, size=(3,))", "t.zeros(2.0)", "t.zeros((2.0, 3))",
    "t.zeros(True)", "t.ones(-1)", "t.randn(2, -1)", "t.zeros(2, foo=1)",
    "t.zeros(2, pin_memory=False)", "t.zeros(2, requires_grad=True)",
    "t.full(size=(2,), fill_value=3)", "t.full((2,), True)", "t.full((2,), 1.5)",
    "t.full((-1,), 1.0)",
    # ranges
    "t.arange(5)", "t.arange(end=3)", "t.arange(1, end=4)", "t.arange(start=1, end=4)",
    "t.arange(1, 4, step=2)", "t.arange(0.5, 3)", "t.arange(0, 1, 0.25)", "t.arange()",
    "t.arange(end=3, step=2)", "t.arange(0, 3, 0)", "t.arange(5, dtype=t.float64)",
    "t.linspace(0, 1, steps=5)", "t.linspace(0, 1, 3, dtype=t.int64)", "t.linspace(0, 1, -1)",
    "t.logspace(0, 2, 3)", "t.logspace(0, 2, steps=3, base=2)", "t.logspace(0, 1, 4, 3.0)",
    "t.eye(2)", "t.eye(2, 3)", "t.eye(2, m=3)", "t.eye(n=2)", "t.eye(-1)",
    # *_like and Tensor.new_*
    "t.zeros_like(input=x)", "t.ones_like(x, dtype=t.int64)", "t.full_like(x, 7)",
    "t.empty_like(x)", "t.zeros_like(x, out=x)", "i.new_zeros(2)", "i.new_zeros(size=(2,))",
    "i.new_zeros((2, 3))", "i.new_ones(2, dtype=t.float32)", "i.new_full((2,), 1.5)",
    "i.new_full(size=(2,), fill_value=3)", "i.new_tensor([1.5])", "x.new_tensor([1, 2])",
    "i.new_empty(2, 3)", "i.new_zeros(size=2)", "x.new_ones(-1)",
    "t.empty_strided((2, 3), (1, 2)).stride()", "t.empty_strided(size=(2, 3), stride=(3, 1))",
    "t.empty_strided((2, 3), (1,))",
    # tensor, as_tensor
    "t.tensor(data=[1])", "t.tensor([1], t.float64)", "t.tensor([1.0], dtype=None, foo=1)",
    "t.as_tensor(data=[1, 2])", "t.as_tensor([1, 2], t.float64)",
    # random draws (seeded)
    "t.rand(2, 3)", "t.rand(size=(2,))", "t.randn(size=(2, 2), dtype=t.float64)",
    "t.rand(2, generator=g)", "t.rand(2, dtype=t.int64)", "t.randn(2, dtype=t.int64)",
    "t.rand(size=2)", "t.randint(3, (2,))", "t.randint(1, 5, (3,))", "t.randint(3, size=(2,))",
    "t.randint(high=3, size=(2,))", "t.randint(low=1, high=5, size=(3,))", "t.randint(3, 2)",
    "t.randint(size=(2,))", "t.randint(5, (2,), dtype=t.float64)", "t.randperm(4)",
    "t.randperm(n=4)", "t.randperm(4, generator=g)", "t.randperm(-1)",
    "t.rand_like(x)", "t.randn_like(x, generator=g)", "t.rand_like(i)", "t.randint_like(i, 5)",
    "t.randint_like(i, low=1, high=5)", "t.randint_like(i, 1, 5, generator=g)",
    "t.normal(2.0, 3.0, size=(2,))", "t.normal(0.0, 1.0, (2,), dtype=t.float64)",
    "t.normal(0.0, 1.0, (2,), generator=g)", "t.normal(0.0, 1.0, (-1,))", "t.normal(0.0, 1.0, 2)",
    "t.normal(0.0, 1.0, (3,), out=d)",
    # out=
    "t.zeros(2, out=o)", "t.ones(2, 2, out=o)", "t.zeros(2, dtype=t.float32, out=o)",
    "t.arange(5, out=o)", "t.arange(0.5, 3, out=o)", "t.eye(2, out=o)", "t.full((2,), 3.0, out=o)",
    "t.randperm(3, out=o)", "t.randint(3, (4,), out=o)", "t.rand(3, out=d)", "t.randn(2, 2, out=d)",
    "t.rand(2, out=o)", "t.linspace(0, 1, 3, out=o)", "t.logspace(0, 1, 3, out=d)",
    "t.zeros(2, out=t.ones(2, requires_grad=True))",
    # a torch.X's input is `input`, never `self`
    "t.exp(self=x)", "t.exp(x, self=x)", "t.sum(self=x)", "x.view(size=6)", "x.view(size=(6,))",
    "x.reshape(shape=6)", "x.reshape(shape=[3, 2])", "x.view(6, size=(6,))",
    # a torch.X's size keyword beside its input
    "t.reshape(x, shape=(6,))", "t.reshape(input=x, shape=(6,))", "t.permute(x, dims=(1, 0))",
    "t.reshape(x, shape=6)",
    # Python's types as dtypes: float is double, as in torch, whatever the default dtype
    "t.ones(2, dtype=float)", "t.zeros(2, dtype=float)", "t.arange(3, dtype=float)",
    "t.full((2,), 1, dtype=float)", "t.tensor([1], dtype=float)", "t.rand(2, dtype=float)",
    "t.linspace(0, 1, 3, dtype=float)", "t.eye(2, dtype=float)", "t.ones_like(x, dtype=float)",
    "i.new_zeros(2, dtype=float)", "x.sum(dtype=float)", "x.to(float)",
    "t.ones(2, dtype=int)", "t.ones(2, dtype=bool)", "x.to(int)",
]


def _observe(value, undefined=False):
    """What is compared: dtype, shape, requires_grad and (unless undefined) the values."""
    if isinstance(value, (torch.Tensor, gradviz.Tensor)):
        seen = {"dtype": str(value.dtype), "shape": tuple(value.shape),
                "requires_grad": value.requires_grad}
        if not undefined:
            seen["values"] = np.array(value.tolist(), dtype=float)
        return seen
    if isinstance(value, (torch.dtype, gradviz.dtype)):
        return str(value)
    return value


def _run(t, call):
    gen = t.Generator().manual_seed(7)
    env = {"t": t, "g": gen, "x": t.ones(2, 3), "i": t.ones(2, 2, dtype=t.int64),
           "o": t.ones(5, dtype=t.int64), "d": t.ones(1, dtype=t.float64)}
    t.manual_seed(0)
    try:
        value = eval(call, env)             # noqa: S307 - the cases above
    except Exception as exc:                # noqa: BLE001 - the error is what is compared
        return {"error": (type(exc).__name__, str(exc).splitlines()[0])}
    undefined = any(call.startswith(f"{p}.{n}(") for p in "tix" for n in UNDEFINED)
    seen = {"result": _observe(value, undefined)}
    for k in ("o", "d"):
        if f"out={k}" in call:
            seen["out"] = _observe(env[k])
            seen["is_out"] = value is env[k]
    return seen


def _assert_same(ours, theirs):
    if isinstance(ours, dict) and isinstance(theirs, dict) and ours.keys() == theirs.keys():
        for key in ours:
            _assert_same(ours[key], theirs[key])
    elif isinstance(ours, np.ndarray):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    else:
        assert ours == theirs


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("call", CASES)
def test_creation_call_as_torch(call):
    _assert_same(_run(gradviz, call), _run(torch, call))


@pytest.mark.parametrize("call,arg", [
    (lambda: gradviz.zeros(2, layout=None), "torch.zeros(layout=...)"),
    (lambda: gradviz.empty(2, memory_format=None), "torch.empty(memory_format=...)"),
    (lambda: gradviz.ones(2, pin_memory=True), "torch.ones(pin_memory=...)"),
    (lambda: gradviz.zeros_like(gradviz.ones(2), memory_format=None),
     "torch.zeros_like(memory_format=...)"),
    (lambda: gradviz.normal(0.0, 1.0, (2,), pin_memory=True), "torch.normal(pin_memory=...)"),
])
def test_an_argument_torch_takes_and_gradviz_lacks_is_refused_by_name(call, arg):
    with pytest.raises(NotImplementedError) as caught:
        call()
    assert str(caught.value) == (f"gradviz: {arg} is not implemented by gradviz's core; "
                                 "run with --backend torch to use PyTorch")


def test_complex_as_a_dtype_is_refused_clearly():
    with pytest.raises(TypeError, match="complex dtypes are not implemented by gradviz's core"):
        gradviz.ones(2, dtype=complex)
