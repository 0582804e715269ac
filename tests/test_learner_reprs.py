"""What tutorials print about their objects' types, against torch 2.13: `type(x)` of a tensor
and a parameter (PyTorch's Tensors tutorial and d2l.ai's ndarray section print them), and a
Generator's repr (makemore prints `g`)."""

import re

import pytest

from test_learner_surface import _same


def _type_names(torch):
    lazy = torch.nn.LazyLinear(2)
    return (repr(type(torch.empty(3, 4))), str(type(torch.nn.Parameter(torch.ones(1)))),
            repr(type(lazy.weight)), repr(type(torch.nn.Linear(1, 1).bias)),
            repr((type(torch.ones(1).numpy()), type(torch.from_numpy(torch.ones(1).numpy())))),
            torch.Tensor.__name__, torch.Tensor.__qualname__)


def _generator_repr(torch):
    # the address differs run to run; the class path is torch's
    return re.sub(r"0x[0-9a-f]+", "0x", repr(torch.Generator().manual_seed(2147483647)))


@pytest.mark.parametrize("snippet", [_type_names, _generator_repr])
def test_type_reprs_match_torch(snippet):
    _same(snippet)


def _pickled_types(torch):
    import pickle
    p = torch.nn.Parameter(torch.ones(2))
    back = pickle.loads(pickle.dumps(p))
    return (repr(type(back)), back.requires_grad, back.is_leaf,
            pickle.loads(pickle.dumps(torch.Tensor)) is torch.Tensor,
            pickle.loads(pickle.dumps(torch.nn.Parameter)) is torch.nn.Parameter,
            pickle.loads(pickle.dumps(torch.FloatTensor)) is torch.FloatTensor)


def test_pickle_keeps_the_class_as_torch():
    # the class path is only the repr: pickle finds gradviz's classes, never torch's
    assert _same(_pickled_types)[1][-3:] == [True, True, True]


def test_a_tensor_still_pickles_and_copies():
    import copy
    import pickle

    import gradviz
    t = gradviz.tensor([1.0, 2.0], requires_grad=True)
    for back in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert back.tolist() == [1.0, 2.0] and back.requires_grad


def _lazy_copies(torch):
    import copy
    import pickle
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.LazyLinear(3))
    copied = copy.deepcopy(model)
    before = repr(type(copied[0].weight))
    out = copied(torch.ones(1, 2))
    back = pickle.loads(pickle.dumps(torch.nn.LazyLinear(3)))
    return before, out.shape, repr(type(back.weight)), back.weight.requires_grad


def _type_of_tensor_class(torch):
    return (str(torch.ones(2, dtype=torch.int64).type(torch.Tensor).dtype),
            str(torch.ones(2, dtype=torch.float64).type("torch.Tensor").dtype))


@pytest.mark.parametrize("snippet", [_lazy_copies, _type_of_tensor_class])
def test_copies_and_type_conversions_as_torch(snippet):
    _same(snippet)


def _custom_function_node(torch):
    # Learning PyTorch with Examples prints nodes of its LegendrePolynomial3; torch makes the
    # node class in torch/autograd/function.py, so its default repr names that module
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    x = torch.tensor([0.5, -1.0], requires_grad=True)
    y = 2 * LegendrePolynomial3.apply(x)
    node = y.grad_fn.next_functions[0][0]
    y.sum().backward()
    return [re.sub(r"0x[0-9a-f]+", "0x", repr(node)), repr(type(node)),
            re.sub(r"0x[0-9a-f]+", "0x", str(node)), node.name(),
            type(node).__name__, repr(LegendrePolynomial3.apply(x)),
            re.sub(r"0x[0-9a-f]+", "0x", repr(y.grad_fn.next_functions)), x.grad.tolist()]


def test_custom_function_node_repr_matches_torch():
    seen = _same(_custom_function_node)
    assert seen[1][0] == "<torch.autograd.function.LegendrePolynomial3Backward object at 0x>"
