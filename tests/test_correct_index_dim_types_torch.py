"""A dim that is not an int (a float, a bool, None, a str, a list, a float tensor) given to
gather, scatter, scatter_add, index_select, index_add, index_copy and index_fill, and their
in-place forms, is torch's TypeError as its argument parser words it ("index_copy(): argument
'dim' (position 1) must be int, not float"; the invalid combination of arguments where several
overloads take that many arguments), instead of NumPy's words or a quietly used dim (True read
as 1). An int-like (a NumPy int, a 0-dim integer tensor) is a dim, as in torch."""

import numpy as np
import pytest

import gradviz

torch = pytest.importorskip("torch")

DIMS = {"float": 1.0, "half": 1.5, "str": "a", "None": None, "True": True, "False": False,
        "list": [1], "tuple": (1,), "float_tensor": "tensor(1.0)", "int_tensor": "tensor(1)",
        "np_int": np.int64(1), "int": 1, "negative": -1}


def _calls(m, dim):
    x = m.arange(12.0).reshape(3, 4)
    i = m.tensor([0, 1])
    idx = m.zeros(3, 2, dtype=m.long)
    src = m.ones(3, 2)
    return {
        "index_copy": lambda: x.index_copy(dim, i, src),
        "index_copy_": lambda: x.clone().index_copy_(dim, i, src),
        "torch.index_copy": lambda: m.index_copy(x, dim, i, src),
        "index_add": lambda: x.index_add(dim, i, src),
        "index_add_": lambda: x.clone().index_add_(dim, i, src),
        "torch.index_add": lambda: m.index_add(x, dim, i, src),
        "index_add_alpha": lambda: x.index_add(dim, i, src, alpha=2),
        "index_select": lambda: x.index_select(dim, i),
        "torch.index_select": lambda: m.index_select(x, dim, i),
        "gather": lambda: x.gather(dim, idx),
        "torch.gather": lambda: m.gather(x, dim, idx),
        "gather_kw": lambda: m.gather(x, dim=dim, index=idx),
        "scatter": lambda: x.scatter(dim, idx, src),
        "scatter_value": lambda: x.scatter(dim, idx, 2.0),
        "scatter_": lambda: x.clone().scatter_(dim, idx, src),
        "torch.scatter": lambda: m.scatter(x, dim, idx, src),
        "scatter_add": lambda: x.scatter_add(dim, idx, src),
        "scatter_add_": lambda: x.clone().scatter_add_(dim, idx, src),
        "torch.scatter_add": lambda: m.scatter_add(x, dim, idx, src),
        "index_fill": lambda: x.index_fill(dim, i, 1.0),
        "index_fill_": lambda: x.clone().index_fill_(dim, i, 1.0),
    }


def _outcome(m, op, dim):
    if isinstance(dim, str) and dim.startswith("tensor("):
        dim = m.tensor(eval(dim[7:-1]))
    try:
        out = _calls(m, dim)[op]()
    except (TypeError, RuntimeError, IndexError) as e:
        text = str(e)
        # torch lists every overload after the first sentence; gradviz gives that sentence
        first = text.split("\n")[0] if "invalid combination" in text else text
        return type(e).__name__, first
    return "ok", out.tolist()


@pytest.mark.parametrize("dim", list(DIMS.values()), ids=list(DIMS))
@pytest.mark.parametrize("op", list(_calls(gradviz, 0)))
def test_dim_types_as_torch(op, dim):
    assert _outcome(gradviz, op, dim) == _outcome(torch, op, dim)


@pytest.mark.parametrize("op", ["index_copy", "index_select", "gather", "scatter", "index_fill"])
def test_a_bool_dim_is_never_read_as_an_int(op):
    with pytest.raises(TypeError, match="dim|invalid combination"):
        _calls(gradviz, True)[op]()
