"""The lines tutorials start with, against torch 2.13 (a CPU-only build): torch.cuda,
torch.backends, torch.device, .to(device)/.cpu() on tensors and modules (another device is
refused with torch's error, never ignored), and torch.autograd.gradgradcheck."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def both(fn):
    out = []
    for mod in (torch, gradviz):
        try:
            out.append(fn(mod))
        except Exception as exc:  # noqa: BLE001 - the error is the observable
            out.append((type(exc).__name__, str(exc)))
    return out


QUERIES = {
    "cuda.is_available": lambda m: m.cuda.is_available(),
    "cuda.device_count": lambda m: m.cuda.device_count(),
    "cuda.is_initialized": lambda m: m.cuda.is_initialized(),
    "cuda.manual_seed": lambda m: m.cuda.manual_seed(3),
    "cuda.manual_seed_all": lambda m: m.cuda.manual_seed_all(3),
    "cuda.empty_cache": lambda m: m.cuda.empty_cache(),
    "cuda.memory_allocated": lambda m: m.cuda.memory_allocated(),
    "cuda.current_device": lambda m: m.cuda.current_device(),
    "cuda.get_device_name": lambda m: m.cuda.get_device_name(0),
    "cuda.synchronize": lambda m: m.cuda.synchronize(),
    "mps.is_available": lambda m: m.backends.mps.is_available(),
    "mps.is_built": lambda m: m.backends.mps.is_built(),
    "cudnn": lambda m: (m.backends.cudnn.is_available(), m.backends.cudnn.enabled,
                        m.backends.cudnn.benchmark, m.backends.cudnn.deterministic,
                        m.backends.cudnn.version(), m.backends.cudnn.allow_tf32),
    "cuda.matmul.allow_tf32": lambda m: m.backends.cuda.matmul.allow_tf32,
    "device_choice": lambda m: repr(m.device("cuda" if m.cuda.is_available() else "cpu")),
    "mps_choice": lambda m: str(m.device("mps" if m.backends.mps.is_available() else "cpu")),
    "device_cuda": lambda m: (repr(m.device("cuda")), str(m.device("cuda:1")),
                              m.device("cuda:1").index, m.device("cuda", 2).index),
    "device_eq": lambda m: (m.device("cpu") == m.device("cpu"), m.ones(1).device == "cpu",
                            m.ones(1).device == m.device("cpu"), m.device("cpu:0") ==
                            m.device("cpu"), hash(m.device("cpu")) == hash(m.device("cpu"))),
    "device_int": lambda m: (repr(m.device(0)), str(m.device(1))),
    "create_on_int_device": lambda m: m.zeros(2, device=0),
    "device_bad": lambda m: m.device("gpu"),
    "device_bad_index": lambda m: m.device("cuda:x"),
    "device_negative": lambda m: m.device("cpu", -1),
    "device_two_indices": lambda m: m.device("cuda:0", 1),
    "tensor.device": lambda m: (repr(m.ones(2).device), m.ones(2).is_cuda),
}


@pytest.mark.parametrize("case", list(QUERIES))
def test_queries_answer_as_torch_on_a_cpu_only_build(case):
    ref, got = both(QUERIES[case])
    assert got == ref


def _moves(mod):
    x = mod.tensor([1.0, 2.0], requires_grad=True)
    dev = mod.device("cuda" if mod.cuda.is_available() else "cpu")
    y = x.to(dev)
    z = x.to("cpu", mod.float64)
    c = x.to("cpu", copy=True)
    i = x.to("cpu:0")
    return (y is x, x.cpu() is x, x.to(mod.device("cpu")) is x, str(x.to(dtype=mod.float64).dtype),
            str(z.dtype), type(z.grad_fn).__name__, c is x, type(c.grad_fn).__name__,
            i is x, x.to(mod.ones(1, dtype=mod.float64)).dtype == mod.float64,
            x.to("cpu", non_blocking=True) is x)


def test_tensor_to_cpu_and_dtype():
    ref, got = both(_moves)
    assert got == ref


MOVES = {
    "to_cuda": lambda m: m.ones(2).to("cuda"),
    "to_cuda_device": lambda m: m.ones(2).to(m.device("cuda:0")),
    "to_cuda_kw": lambda m: m.ones(2).to(device="cuda"),
    "tensor_cuda": lambda m: m.ones(2).cuda(),
    "to_mps": lambda m: m.ones(2).to("mps"),
    "to_xpu": lambda m: m.ones(2).to("xpu"),
    "to_gpu": lambda m: m.ones(2).to("gpu"),
    "create_on_cuda": lambda m: m.zeros(2, device="cuda"),
    "module_cuda": lambda m: m.nn.Linear(2, 2).to("cuda"),
    "module_cuda_method": lambda m: m.nn.Linear(2, 2).cuda(),
    "module_mps": lambda m: m.nn.Linear(2, 2).to(m.device("mps")),
    "module_int": lambda m: m.nn.Linear(2, 2).to(m.int64),
}


@pytest.mark.parametrize("case", list(MOVES))
def test_other_devices_are_refused_with_torchs_error(case):
    ref, got = both(MOVES[case])
    assert isinstance(ref, tuple) and ref[0] in ("AssertionError", "RuntimeError", "TypeError")
    assert got == ref


def test_creating_on_mps_is_refused():
    # torch's CPU build fails deeper here (no MPS kernel for the op): gradviz says it plainly.
    with pytest.raises(RuntimeError) as err:
        gradviz.randn(2, device=gradviz.device("mps"))
    assert str(err.value) == "PyTorch is not linked with support for mps devices"


def test_meta_device_is_refused_by_gradviz():
    with pytest.raises(RuntimeError, match="--backend torch"):
        gradviz.ones(2).to("meta")


def _module(mod):
    mod.manual_seed(0)
    net = mod.nn.Sequential(mod.nn.Linear(3, 2), mod.nn.Tanh())
    w = net[0].weight
    dev = mod.device("cuda" if mod.cuda.is_available() else "cpu")
    same = net.to(dev) is net and net.cpu() is net
    net.to(mod.float64)
    after = (net[0].weight is w, str(w.dtype), w.requires_grad, w.is_leaf)
    out = net(mod.ones(1, 3, dtype=mod.float64))
    net.float()
    return same, after, out.tolist(), str(net[0].bias.dtype)


def test_module_to_keeps_parameters_and_casts_dtype():
    ref, got = both(_module)
    assert got == ref


# ----- gradgradcheck ----------------------------------------------------------------------

def _x(mod):
    return mod.tensor([0.3, -0.7, 1.2], dtype=mod.float64, requires_grad=True)


GRADGRAD = {
    "sin_times_x": lambda m: m.autograd.gradgradcheck(lambda x: x.sin() * x, (_x(m),)),
    "tanh_sum": lambda m: m.autograd.gradgradcheck(lambda x: x.tanh().sum(), (_x(m),)),
    "two_inputs": lambda m: m.autograd.gradgradcheck(
        lambda a, b: (a * b.exp()).sum() + a.pow(3).sum(),
        (_x(m), m.tensor([0.1, 0.2, 0.4], dtype=m.float64, requires_grad=True))),
    "given_grad_outputs": lambda m: m.autograd.gradgradcheck(
        lambda x: x ** 2 * x.cos(), (_x(m),),
        (m.tensor([1.0, -2.0, 0.5], dtype=m.float64, requires_grad=True),)),
    "matmul": lambda m: m.autograd.gradgradcheck(
        lambda a: (a @ a.t()).sigmoid(),
        (m.tensor([[0.1, 0.5], [-0.3, 0.2]], dtype=m.float64, requires_grad=True),)),
}


@pytest.mark.parametrize("case", list(GRADGRAD))
def test_gradgradcheck_agrees_with_torch(case):
    ref, got = both(GRADGRAD[case])
    assert got == ref == True  # noqa: E712 - both must say True, not merely agree


def _wrong_double_backward(mod):
    class Square(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            # right first derivative for x > 0, written so its own derivative is wrong
            return g * 2 * x.detach().abs() * x.sign()

    x = mod.tensor([0.5, 1.5], dtype=mod.float64, requires_grad=True)
    first = mod.autograd.gradcheck(Square.apply, (x,))
    second = mod.autograd.gradgradcheck(Square.apply, (x,), raise_exception=False)
    return first, second


def test_gradgradcheck_catches_a_wrong_second_derivative_as_torch():
    ref, got = both(_wrong_double_backward)
    assert got == ref == (True, False)


def test_gradgradcheck_draws_grad_outputs_as_torch():
    def run(mod):
        mod.manual_seed(4)
        mod.autograd.gradgradcheck(lambda x: x.sin(), (_x(mod),))
        return mod.rand(3).tolist()
    ref, got = both(run)
    assert got == ref


@pytest.mark.parametrize("fn,arg", [("gradcheck", "check_forward_ad"),
                                    ("gradcheck", "fast_mode"),
                                    ("gradcheck", "check_batched_grad"),
                                    ("gradgradcheck", "check_fwd_over_rev"),
                                    ("gradgradcheck", "gen_non_contig_grad_outputs")])
def test_gradcheck_options_gradviz_does_not_run_are_refused(fn, arg):
    with pytest.raises(NotImplementedError) as err:
        getattr(gradviz.autograd, fn)(lambda x: x.sin(), (_x(gradviz),), **{arg: True})
    assert str(err.value) == (f"gradviz: torch.autograd.{fn}({arg}=True) is not implemented by "
                              "gradviz's core; run with --backend torch to use PyTorch")


def test_gradcheck_unknown_option_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        gradviz.autograd.gradcheck(lambda x: x.sin(), (_x(gradviz),), bogus=1)
