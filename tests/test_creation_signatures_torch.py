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
    # tensor()'s dtype: its items' dtypes promoted as torch.promote_types does
    "t.tensor([t.tensor(1.0, dtype=t.float64), 2.0])", "t.tensor([np.int32(1), 2])",
    "t.tensor([np.float64(1.5)])", "t.tensor([np.float32(1.5), 2])", "t.tensor([True, 2])",
    "t.tensor([t.tensor(1, dtype=t.int32), 2])", "t.tensor([[1, 2], [3.5, 4]])", "t.tensor([])",
    "t.tensor([np.float16(1.0), 2])", "t.tensor([np.float16(1.0), 2.0])",
    "t.tensor(np.float64(1.5))", "t.as_tensor([np.int8(1), True])", "t.tensor(range(3))",
    "t.tensor([t.ones(1), t.ones(1)])", "t.tensor([np.array([1, 2], dtype=np.int32)])",
    "t.tensor([[t.tensor(1, dtype=t.int8)]])", "t.as_tensor([t.tensor(1.0, dtype=t.float64)])",
    # tensor()'s refusals: torch's errors
    "t.tensor(None)", "t.tensor([None])", "t.tensor('a')", "t.tensor([1, 'a'])", "t.tensor({})",
    "t.tensor([t.ones(2), t.ones(2)])", "t.tensor([[1, 2], [3]])", "t.tensor([[1], 2])",
    "t.tensor([np.array(1.5), 2])", "t.tensor(np.array(['a']))", "t.tensor([2 ** 63])",
    "t.tensor(np.array([1], dtype=np.float128))", "t.from_numpy(np.arange(3)[::-1])",
    "t.as_tensor(np.arange(3)[::-1])", "t.tensor(np.arange(3)[::-1])",
    # tensor(): values an integer dtype cannot hold (negative ints wrap into uint8, as torch)
    "t.tensor([300], dtype=t.uint8)", "t.tensor([-1, -255], dtype=t.uint8)",
    "t.tensor([-256], dtype=t.uint8)", "t.tensor([-1.5], dtype=t.uint8)",
    "t.tensor([128], dtype=t.int8)", "t.tensor([3e9], dtype=t.int32)",
    "t.tensor([float('nan')], dtype=t.int64)", "t.tensor([1e40, 2], dtype=t.float32)",
    "t.tensor([1.7, -1.7], dtype=t.int64)", "t.tensor([2, 0.5, 0], dtype=t.bool)",
    "t.tensor(np.array([300]), dtype=t.uint8)",
    # arange: integer dtypes take start and step truncated, torch's bounds checks
    "t.arange(0, 5, 1.5, dtype=t.int64)", "t.arange(-2.25, 7, dtype=t.int64)",
    "t.arange(0.5, 5, dtype=t.int64)", "t.arange(2.5, 0, -1, dtype=t.int64)",
    "t.arange(-2.7, 2, 1.9, dtype=t.int64)", "t.arange(-2.7, 2, 1.9, dtype=t.int16)",
    "t.arange(0, 5, 0.7, dtype=t.int32)", "t.arange(0, 1.3, 0.7, dtype=t.int64)",
    "t.arange(10, 0, -3, dtype=t.int8)", "t.arange(0, 5.5, out=t.empty(0, dtype=t.int32))",
    "t.arange(5, 0)", "t.arange(0, 5, -1)", "t.arange(5, step=2)", "t.arange(5.5, step=2)",
    "t.arange(end=5, step=2)", "t.arange(0, float('inf'))", "t.arange(0, float('nan'))",
    "t.arange(0, 5, dtype=t.bool)", "t.arange(5, 5)", "t.arange(-1, -5, -1.5)",
    "t.arange(start=5)", "t.arange(step=2)", "t.arange(start=5, step=2)",
    "t.arange(start=1, end=5, step=2)", "t.arange(start=1, end=4, out=o)",
    "t.arange(0, -3, -0.5, dtype=t.int64)", "t.arange(0, 10, 3.5, dtype=t.uint8)",
    "t.arange(0.5, 5, 0.3, dtype=t.int16)", "t.arange(t.tensor(1.5), 4)",
    "t.arange(0, 5, 1.5, out=t.empty(0, dtype=t.int64))",
    "t.arange(start=5, step=2, dtype=t.float32)", "t.arange(requires_grad=False, start=5)",
    # randint / randperm: bounds the dtype cannot hold refused, float bounds refused, float
    # dtypes' bounds moved to integers they hold (with torch's warning beyond 2**digits)
    "t.randint(0, 300, (4,), dtype=t.uint8)", "t.randint(-1, 10, (4,), dtype=t.uint8)",
    "t.randint(-129, 10, (4,), dtype=t.int8)", "t.randint(0, 2 ** 40, (4,), dtype=t.int32)",
    "t.randint(-2 ** 40, 0, (2,), dtype=t.int16)", "t.randint(0, 3, (4,), dtype=t.bool)",
    "t.randint(0, 2, (4,), dtype=t.bool)", "t.randint(0, 256, (4,), dtype=t.uint8)",
    "t.randint(0, 70000, (2,), dtype=t.float16)",
    "t.randint(0, 2 ** 12 + 5, (4,), dtype=t.float16)",
    "t.randint(0, 2 ** 28 - 1, (4,), dtype=t.float32)",
    "t.randint(-2 ** 25, 3, (4,), dtype=t.float32)",
    "t.randint(2.5, 9.7, (3,))", "t.randint(9.7, (3,))", "t.randint(1, 5.0, (3,))",
    "t.randint(True, (2,))", "t.randint(t.tensor(5), (3,))", "t.randint(t.tensor(5.5), (3,))",
    "t.randint(0, 2 ** 64, (3,))", "t.randint(-2 ** 63, 2 ** 63 - 1, (3,))",
    "t.randint_like(t.ones(3, dtype=t.uint8), 300)", "t.randint_like(t.ones(3), 9.7)",
    "t.randint_like(t.ones(3), 1, 9.7)", "t.randint_like(t.ones(3, dtype=t.uint8), -1, 9)",
    "t.empty(3, dtype=t.uint8).random_(0, 300)", "t.empty(3, dtype=t.float16).random_(0, 5000)",
    "t.randperm(300, dtype=t.uint8)", "t.randperm(256, dtype=t.uint8)",
    "t.randperm(129, dtype=t.int8)", "t.randperm(2050, dtype=t.float16)",
    "t.randperm(2049, dtype=t.float16)", "t.randperm(3, dtype=t.bool)",
    "t.randperm(0, dtype=t.bool)", "t.randperm(5.0)", "t.randperm(True)",
    "t.randperm(t.tensor(4))",
    # normal, rand and randn of a dtype that is not floating: torch's kernel errors
    "t.normal(0.0, 1.0, (3,), dtype=t.int64)", "t.normal(0.0, 1.0, (3,), dtype=t.bool)",
    "t.normal(0.0, 1.0, (0,), dtype=t.int64)", "t.randn(0, dtype=t.int64)",
    "t.rand(0, dtype=t.int64)", "t.empty(3, dtype=t.int64).normal_()",
    "t.empty(3, dtype=t.int64).uniform_()",
    # full and its kin: torch's checked conversion of the fill value
    "t.full((2,), 1e40, dtype=t.float32)", "t.full((2,), float('inf'), dtype=t.int64)",
    "t.full((2,), float('inf'), dtype=t.float32)", "t.full((2,), 300, dtype=t.uint8)",
    "t.full((2,), -1, dtype=t.uint8)", "t.full((2,), -1.5, dtype=t.uint8)",
    "t.full((2,), 2 ** 63)", "t.full((2,), 2 ** 64)", "t.full((2,), 1e6, dtype=t.float16)",
    "t.full((2,), float('nan'), dtype=t.int32)", "t.full((2,), 3.7, dtype=t.int32)",
    "t.full((2,), t.tensor(1e40, dtype=t.float64), dtype=t.float32)",
    "t.full((2,), 1 + 2j, dtype=t.float32)", "t.full((2,), 1 + 0j, dtype=t.float32)",
    "t.full((2,), 2 ** 63, dtype=t.float32)", "t.full_like(t.ones(2), 1e40)",
    "t.full_like(t.ones(2, dtype=t.int8), 300)", "t.full_like(t.ones(2, dtype=t.uint8), -1)",
    "t.ones(2).new_full((2,), 1e40)", "t.ones(2, dtype=t.int8).new_full((2,), 200)",
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
    env = {"t": t, "np": np, "g": gen, "x": t.ones(2, 3), "i": t.ones(2, 2, dtype=t.int64),
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
    (lambda: gradviz.arange(3, layout=None), "torch.arange(layout=...)"),
])
def test_an_argument_torch_takes_and_gradviz_lacks_is_refused_by_name(call, arg):
    with pytest.raises(NotImplementedError) as caught:
        call()
    assert str(caught.value) == (f"gradviz: {arg} is not implemented by gradviz's core; "
                                 "run with --backend torch to use PyTorch")


def test_complex_as_a_dtype_is_refused_clearly():
    with pytest.raises(TypeError, match="complex dtypes are not implemented by gradviz's core"):
        gradviz.ones(2, dtype=complex)


def test_as_tensor_of_an_array_of_its_dtype_shares_memory_as_torch():
    def seen(t):
        a = np.zeros(3, np.float32)
        shared, copied = t.as_tensor(a, dtype=t.float32), t.as_tensor(a, dtype=t.float64)
        a[0] = 7
        return shared.tolist(), copied.tolist()
    assert seen(gradviz) == seen(torch) == ([7.0, 0.0, 0.0], [0.0, 0.0, 0.0])


def test_as_tensor_of_a_tensor_with_another_dtype_keeps_the_graph_as_torch():
    def seen(t):
        x = t.ones(2, requires_grad=True)
        y = t.as_tensor(x, dtype=t.float64)
        y.sum().backward()
        return y.dtype, y.requires_grad, type(y.grad_fn).__name__, x.grad.tolist()
    ours, theirs = seen(gradviz), seen(torch)
    assert (str(ours[0]),) + ours[1:] == (str(theirs[0]),) + theirs[1:]
    assert ours[2] == "ToCopyBackward0"


@pytest.mark.parametrize("data", [1 + 2j, [1, 2 + 1j], "full"])
def test_complex_data_is_refused_clearly(data):
    with pytest.raises(TypeError, match="complex tensors are not implemented by gradviz's core"):
        gradviz.full((2,), 1 + 2j) if data == "full" else gradviz.tensor(data)


@pytest.mark.parametrize("data", ["np.array([1, 2], dtype=np.uint16)", "np.uint32(3)",
                                  "[np.uint64(1), 2]", "np.array([1j], dtype=np.complex64)"])
def test_a_numpy_dtype_torch_has_and_gradviz_lacks_is_refused_clearly(data):
    for make in (gradviz.tensor, gradviz.as_tensor):
        with pytest.raises(TypeError, match="tensors are not implemented by gradviz's core"):
            make(eval(data))                # noqa: S307 - the cases above


def test_randint_beyond_what_a_float_dtype_holds_warns_as_torch():
    def warned(t):
        with pytest.warns(UserWarning) as caught:
            t.randint(-2 ** 25, 2 ** 25, (2,), dtype=t.float32)
        return [str(w.message).split(" (Triggered")[0] for w in caught]
    assert warned(gradviz) == warned(torch)
    assert len(warned(gradviz)) == 2
