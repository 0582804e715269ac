"""The spellings learner code uses, against torch 2.13: `input=`, NumPy's `axis=`/`keepdims=`,
`out=`, torch.sgn, lazy layers and torch.accelerator. Each snippet runs on both backends and
the observations (values, shapes, names, errors) must be equal."""

import sys

import numpy as np
import pytest

import gradviz
from diffcases import Err


def _obs(x):
    """Plain data of a result: tensors as (dtype, shape, values), the rest as is."""
    if hasattr(x, "detach"):
        # rounded (float32 sums may differ in the last bit), nan spelled out
        return (str(x.dtype), tuple(x.shape), str(np.round(x.detach().numpy(), 4).tolist()))
    if isinstance(x, (tuple, list)):
        return type(x).__name__, [_obs(v) for v in x]
    return x


def _run(torch, snippet, obs=_obs):
    try:
        return obs(snippet(torch))
    except Exception as exc:        # noqa: BLE001 - the error is the observation
        err = Err(exc)
        return ("error", err.base, err.first)


def _same(snippet, obs=_obs):
    """The observations of snippet on gradviz and on torch are equal (obs: a result as plain
    data)."""
    real = pytest.importorskip("torch")
    ours, theirs = _run(gradviz, snippet, obs), _run(real, snippet, obs)
    assert ours == theirs
    return ours


# ----- input=, axis=, keepdims= -------------------------------------------------------------

def _m(torch):
    return torch.arange(6.0).reshape(2, 3)


KEYWORDS = {
    "sum_input": lambda t: t.sum(input=_m(t)),
    "exp_input": lambda t: t.exp(input=_m(t)),
    "matmul_input_other": lambda t: t.matmul(input=_m(t), other=t.ones(3)),
    "sum_axis": lambda t: _m(t).sum(axis=0),
    "sum_axis_list": lambda t: _m(t).sum(axis=[0, 1]),
    "sum_keepdims": lambda t: _m(t).sum(axis=1, keepdims=True),
    "mean_axis_keepdims": lambda t: t.mean(_m(t), axis=1, keepdims=True),
    "cumsum_axis": lambda t: _m(t).cumsum(axis=0),
    "argmax_axis": lambda t: _m(t).argmax(axis=1),
    "max_axis": lambda t: tuple(_m(t).max(axis=1)),
    "std_axis": lambda t: _m(t).std(axis=0),
    "softmax_input_dim": lambda t: t.softmax(input=_m(t), dim=1),
    "axis_and_dim": lambda t: _m(t).sum(axis=0, dim=1),
    # NumPy's names for input and other, which torch's parser takes on torch.X
    "exp_x": lambda t: t.exp(x=_m(t)),
    "sum_a": lambda t: t.sum(a=_m(t), axis=0),
    "add_x1_x2": lambda t: t.add(x1=_m(t), x2=_m(t)),
    # torch.inverse / torch.det take `input`; torch.linalg.inv / det take `A`
    "inverse_input": lambda t: t.inverse(input=_m2(t)),
    "det_input": lambda t: t.det(input=_m2(t)),
    "linalg_inv_A": lambda t: t.linalg.inv(A=_m2(t)),
    "linalg_inv_out": lambda t: t.linalg.inv(_m2(t), out=t.empty(2, 2)),
    "linalg_inv_out_grad": lambda t: t.linalg.inv(_m2(t).requires_grad_(), out=t.empty(2, 2)),
    "linalg_det_A": lambda t: t.linalg.det(A=_m2(t)),
    "linalg_det_out_grad": lambda t: t.linalg.det(_m2(t).requires_grad_(), out=t.empty(())),
    "linalg_norm_input": lambda t: t.linalg.norm(input=_m2(t)),
    "linalg_norm_x": lambda t: t.linalg.norm(x=_m2(t), dim=1),
    "vector_norm_x": lambda t: t.linalg.vector_norm(x=_m2(t), ord=1),
    "vector_norm_input": lambda t: t.linalg.vector_norm(input=_m2(t)),
    "linalg_cross_x1_x2": lambda t: t.linalg.cross(x1=t.ones(3), x2=t.arange(3.0)),
    "linalg_cross_out": lambda t: t.linalg.cross(t.ones(3), t.arange(3.0), out=t.empty(3)),
    "adaptive_avg_pool2d_input": lambda t: t.nn.functional.adaptive_avg_pool2d(
        input=t.arange(32.0).reshape(1, 2, 4, 4), output_size=2),
    "inverse_grad_fn": lambda t: t.inverse(input=_m2(t).requires_grad_()).grad_fn.name(),
    # torch's names for parameters the forwards spell differently (gradviz._keywords)
    "view_size": lambda t: _m(t).view(size=(3, 2)),
    "reshape_shape": lambda t: _m(t).reshape(shape=(6,)),
    "permute_dims": lambda t: _m(t).permute(dims=(1, 0)),
    "split_tensor": lambda t: t.split(tensor=_m(t), split_size_or_sections=1),
    "copy_other": lambda t: t.zeros(2, 3).copy_(other=_m(t)),
    "tensordot_a_b": lambda t: t.tensordot(a=_m(t), b=_m(t).T, dims=1),
}


def _m2(torch):
    return torch.tensor([[2.0, 1.0], [1.0, 3.0]])


@pytest.mark.parametrize("name", sorted(KEYWORDS))
def test_keyword_spellings_match_torch(name):
    _same(KEYWORDS[name])


def test_an_unknown_keyword_is_still_a_type_error():
    real = pytest.importorskip("torch")
    for torch in (gradviz, real):
        with pytest.raises(TypeError):
            _m(torch).sum(axes=0)


# Keywords torch refuses: a TypeError on both (Python's wording is not torch's parser's).
WRONG_KEYWORDS = {
    "x_and_input": lambda t: t.exp(_m(t), x=_m(t)),
    "inverse_A": lambda t: t.inverse(A=_m2(t)),
    "det_A": lambda t: t.det(A=_m2(t)),
    "linalg_inv_input": lambda t: t.linalg.inv(input=_m2(t)),
    "linalg_det_input": lambda t: t.linalg.det(input=_m2(t)),
    "linalg_norm_A": lambda t: t.linalg.norm(A=_m2(t)),
    # out= where torch has no out variant, a method's out=, names only gradviz's forward has
    "det_out": lambda t: t.det(_m2(t), out=t.empty(())),
    "einsum_out": lambda t: t.einsum("ij->j", _m(t), out=t.empty(3)),
    "method_out": lambda t: _m(t).amax(dim=0, out=t.empty(3)),
    "split_input": lambda t: t.split(input=_m(t), split_size_or_sections=1),
    "true_divide_rounding_mode": lambda t: t.true_divide(_m(t), 2.0, rounding_mode="floor"),
    "uniform_a_b": lambda t: t.empty(3).uniform_(a=0.0, b=1.0),
}


@pytest.mark.parametrize("name", sorted(WRONG_KEYWORDS))
def test_keywords_torch_refuses_are_type_errors(name):
    real = pytest.importorskip("torch")
    for torch in (gradviz, real):
        with pytest.raises(TypeError):
            WRONG_KEYWORDS[name](torch)


# ----- out= ---------------------------------------------------------------------------------

def _matmul_out(torch):
    t = torch.ones(4, 4)
    y = torch.zeros(4, 4)
    r = torch.matmul(t, t.T, out=y)
    return r is y, y, y._version


def _mul_out_resized(torch):
    y = torch.zeros(2)
    torch.mul(torch.ones(4, 4), 2.0, out=y)
    return y


def _out_requires_grad(torch):
    x = torch.ones(3, requires_grad=True)
    return torch.mul(x, x, out=torch.zeros(3))


def _out_int_from_float(torch):
    return torch.add(torch.ones(2), 1.5, out=torch.zeros(2, dtype=torch.long))


def _out_float_from_int(torch):
    y = torch.zeros(2)
    torch.add(torch.ones(2, dtype=torch.long), 1, out=y)
    return y


def _out_no_grad(torch):
    x = torch.ones(3, requires_grad=True)
    y = torch.zeros(3)
    with torch.no_grad():
        torch.exp(x, out=y)
    return y, y.requires_grad


def _sum_out_keepdims(torch):
    y = torch.zeros(2, 1)
    torch.sum(_m(torch), axis=1, keepdims=True, out=y)
    return y


OUT = {f.__name__: f for f in (_matmul_out, _mul_out_resized, _out_requires_grad,
                               _out_int_from_float, _out_float_from_int, _out_no_grad,
                               _sum_out_keepdims)}


@pytest.mark.parametrize("name", sorted(OUT))
def test_out_matches_torch(name):
    _same(OUT[name])


def test_out_with_grad_is_torchs_error():
    _same(_out_requires_grad)
    with pytest.raises(RuntimeError) as caught:
        _out_requires_grad(gradviz)
    assert str(caught.value) == ("mul(): functions with out=... arguments don't support "
                                 "automatic differentiation, but one of the arguments requires "
                                 "grad.")


def test_the_ordinary_call_is_the_forward_itself_through_one_wrapper():
    """torch.sum is wrapped once; its signature and docstring are the forward's."""
    import inspect
    from gradviz._ops import reductions
    assert gradviz.sum.__wrapped__ is reductions.sum
    assert inspect.signature(gradviz.sum) == inspect.signature(reductions.sum)


# ----- sgn, accelerator ---------------------------------------------------------------------

def _sgn(torch):
    x = torch.tensor([-2.0, 0.0, 3.0, float("nan")], requires_grad=True)
    y = torch.sgn(x) * x
    y.sum().backward()
    return y.grad_fn.next_functions[0][0].name(), y, x.grad


def _accelerator(torch):
    a = torch.accelerator
    dev = a.current_accelerator().type if a.is_available() else "cpu"
    return a.is_available(), a.device_count(), a.current_accelerator(), dev


def _accelerator_index(torch):
    return torch.accelerator.current_device_index()


@pytest.mark.parametrize("snippet", [_sgn, _accelerator, _accelerator_index])
def test_sgn_and_accelerator_match_torch(snippet):
    _same(snippet)


# ----- Lazy layers --------------------------------------------------------------------------

def _lazy_linear(torch):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.ReLU(), torch.nn.LazyLinear(2))
    before = repr(net), [n for n, _ in net.named_parameters()]
    out = net(torch.randn(3, 5))
    params = [(n, p) for n, p in net.named_parameters()]
    return before, repr(net), type(net[0]).__name__, out, params, list(net.state_dict())


def _lazy_linear_no_bias(torch):
    torch.manual_seed(1)
    layer = torch.nn.LazyLinear(2, bias=False)
    first = repr(layer)
    layer(torch.ones(1, 3))
    return first, repr(layer), layer.weight, layer.bias


def _lazy_conv2d(torch):
    torch.manual_seed(2)
    net = torch.nn.Sequential(torch.nn.LazyConv2d(3, kernel_size=3, padding=1),
                              torch.nn.LazyConv2d(2, kernel_size=2, stride=2))
    out = net(torch.randn(2, 1, 4, 4))
    return repr(net), out, net[0].weight, net[1].bias, net[0].in_channels


def _lazy_conv2d_unbatched_groups(torch):
    torch.manual_seed(3)
    conv = torch.nn.LazyConv2d(4, 1, groups=2)
    return conv(torch.ones(3, 2, 2))


def _lazy_conv1d(torch):
    torch.manual_seed(4)
    conv = torch.nn.LazyConv1d(2, 2)
    return conv(torch.ones(1, 3, 5)), conv.weight


def _lazy_batchnorm2d(torch):
    torch.manual_seed(5)
    net = torch.nn.Sequential(torch.nn.LazyConv2d(3, 3), torch.nn.LazyBatchNorm2d(),
                              torch.nn.ReLU())
    before = repr(net), [n for n, _ in net.named_parameters()], list(net.state_dict())
    x = torch.randn(2, 2, 5, 5)
    out = net(x)
    net.eval()
    return (before, repr(net), type(net[1]).__name__, out, net(x), list(net.state_dict().items()),
            [(n, p) for n, p in net.named_parameters()])


def _lazy_batchnorm1d_options(torch):
    layers = [torch.nn.LazyBatchNorm1d(affine=False), torch.nn.LazyBatchNorm1d(bias=False),
              torch.nn.LazyBatchNorm1d(track_running_stats=False, momentum=None, eps=0.1),
              torch.nn.LazyBatchNorm1d(affine=False, track_running_stats=False)]
    x = torch.arange(24.0).reshape(4, 3, 2).sin()
    return [(layer(x), repr(layer), list(layer.state_dict().items())) for layer in layers]


def _lazy_batchnorm3d(torch):
    bn = torch.nn.LazyBatchNorm3d(momentum=0.5)
    x = torch.arange(48.0).reshape(2, 3, 2, 2, 2).cos()
    return bn(x), bn(x * 2), bn.running_mean, bn.running_var, bn.num_batches_tracked, repr(bn)


def _lazy_batchnorm_wrong_dims(torch):
    return torch.nn.LazyBatchNorm1d()(torch.ones(2, 3, 4, 5))


LAZY = {f.__name__: f for f in (_lazy_linear, _lazy_linear_no_bias, _lazy_conv2d,
                                _lazy_conv2d_unbatched_groups, _lazy_conv1d, _lazy_batchnorm2d,
                                _lazy_batchnorm1d_options, _lazy_batchnorm3d,
                                _lazy_batchnorm_wrong_dims)}


@pytest.mark.parametrize("name", sorted(LAZY))
def test_lazy_layers_match_torch(name):
    _same(LAZY[name])


def test_a_lazy_layer_becomes_the_eager_one():
    layer = gradviz.nn.LazyLinear(3)
    assert layer.has_uninitialized_params()
    layer(gradviz.ones(2, 4))
    assert type(layer) is gradviz.nn.Linear and layer.weight.shape == (3, 4)


_CALLS_WARNING_LINES = """
import sys, warnings
import {module} as t
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    line = sys._getframe().f_lineno + 1
    t.where(t.tensor([1, 0], dtype=t.uint8), t.ones(2), 2.5)
    t.ones(1).var()
print([(w.filename == __file__, w.lineno - line) for w in caught])
"""


@pytest.mark.parametrize("module", ["gradviz", "torch"])
def test_op_warnings_name_the_callers_line_as_torch_does(tmp_path, module):
    """An op's warning points at the line that called it, through the keyword wrapper too.
    Each backend runs in a fresh process: torch warns about a uint8 condition once per process,
    so an earlier test in the same process would use its warning up."""
    import subprocess
    if module == "torch":
        pytest.importorskip("torch")
    script = tmp_path / "calls.py"
    script.write_text(_CALLS_WARNING_LINES.format(module=module))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[(True, 0), (True, 1)]"
