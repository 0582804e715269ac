"""Differences from torch 2.13 that were quiet or read like the user's bug, each compared with
torch: the backward of scatter/gather on 0-d tensors, the dtype of grad_outputs, and the
keyword spellings torch refuses."""

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _error(fn):
    try:
        fn()
    except Exception as exc:        # noqa: BLE001 - the error is what is compared
        return type(exc).__name__, str(exc).splitlines()[0]
    return None


# ----- scatter and gather on 0-d tensors ----------------------------------------------------

def _zero_dim(t, op, create_graph):
    x = t.tensor(2.0, dtype=t.float64, requires_grad=True)
    s = t.tensor(5.0, dtype=t.float64, requires_grad=True)
    i = t.tensor(0)
    y = {"scatter": lambda: x.scatter(0, i, s), "scatter_value": lambda: x.scatter(0, i, 3.0),
         "scatter_add": lambda: x.scatter_add(0, i, s), "gather": lambda: x.gather(0, i) * s,
         "scatter_last_dim": lambda: x.scatter(-1, i, s)}[op]()
    grads = t.autograd.grad(y * 3, [x, s], allow_unused=True, create_graph=create_graph)
    return [None if g is None else g.item() for g in grads], y.grad_fn.name()


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("op", ["scatter", "scatter_value", "scatter_add", "gather",
                                "scatter_last_dim"])
def test_scatter_and_gather_of_a_zero_dim_tensor_differentiate_as_torch(op, create_graph):
    assert _zero_dim(gradviz, op, create_graph) == _zero_dim(torch, op, create_graph)


# ----- grad_outputs of another dtype: cast before the backward, as torch -------------------

def _names(fn):
    if fn is None:
        return None
    return [fn.name(), [_names(n) for n, _ in fn.next_functions]]


def _grad_of_other_dtype(t, out_dtype, grad_dtype, create_graph):
    x = t.tensor([1.0, 2.0], dtype=getattr(t, out_dtype), requires_grad=True)
    v = t.tensor([0.1, 0.3], dtype=getattr(t, grad_dtype), requires_grad=True)
    g, = t.autograd.grad(x * 3.0, x, v, create_graph=create_graph)
    seen = [str(g.dtype), g.tolist(), _names(g.grad_fn)]
    if create_graph:
        (g * g).sum().backward()
        seen += [str(v.grad.dtype), v.grad.tolist()]
    return seen


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("out_dtype,grad_dtype", [("float32", "float64"),
                                                  ("float64", "float32")])
def test_grad_outputs_of_another_dtype_are_cast_first_as_torch(out_dtype, grad_dtype,
                                                                create_graph):
    assert (_grad_of_other_dtype(gradviz, out_dtype, grad_dtype, create_graph)
            == _grad_of_other_dtype(torch, out_dtype, grad_dtype, create_graph))


def test_backward_with_a_gradient_of_another_dtype_gives_torchs_grad():
    def run(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        (x * 3.0).backward(t.tensor([0.1, 0.3], dtype=t.float64))
        return str(x.grad.dtype), x.grad.tolist()
    assert run(gradviz) == run(torch)


# ----- a second derivative through a view edited by an op saving its own result ------------

def _through_edited_view(t, op):
    x = t.tensor([[0.5, 1.0], [1.5, 0.3], [0.7, 0.9]], dtype=t.float64, requires_grad=True)
    y = x * 1
    v = y[:, 1]
    getattr(v, op)()
    g, = t.autograd.grad((y * y).sum(), x, create_graph=True)
    names = _names(g.grad_fn)
    g.sum().backward()
    return ([round(a, 12) for a in g.flatten().tolist()],
            [round(a, 12) for a in x.grad.flatten().tolist()], names)


@pytest.mark.parametrize("op", ["exp_", "tanh_", "sigmoid_", "sqrt_", "relu_", "rsqrt_"])
def test_second_derivative_through_a_view_edited_by_a_result_saving_op_is_torchs(op):
    assert _through_edited_view(gradviz, op) == _through_edited_view(torch, op)


# ----- torch.load: tensors over one storage share it ----------------------------------------

def _loaded_views(t):
    import io
    a = torch.arange(6.0).reshape(2, 3)
    buf = io.BytesIO()
    torch.save({"a": a, "row": a[1], "col": a[:, 1], "t": a.t()}, buf)
    buf.seek(0)
    d = t.load(buf)
    seen = [d["row"]._base is None, d["t"].stride(), d["t"].is_contiguous()]
    d["a"].mul_(10)
    d["col"].add_(1)
    return seen + [{k: v.tolist() for k, v in d.items()},
                   {k: v._version for k, v in d.items()},
                   d["row"].data_ptr() - d["a"].data_ptr()]


def test_tensors_loaded_over_one_storage_share_it_as_in_torch():
    assert _loaded_views(gradviz) == _loaded_views(torch)
