"""Index tensors as torch 2.13 reads them, compared with torch: uint8 tensors are (deprecated)
masks, not positions; int8, int16 and floating index tensors are refused; a one-element value
written through a lone uint8 mask is refused as masked_fill_ refuses it."""

import warnings

import pytest

try:
    from .test_core_torch_extra import check
except ImportError:
    from test_core_torch_extra import check

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402


def _x(t):
    return (t.arange(6.0) - 2).reshape(3, 2).requires_grad_()


def _idx(t, dtype, data=(1, 0, 1)):
    return t.tensor(data, dtype=getattr(t, dtype))


def _setitem(y, key, value):
    y[key] = value
    return y


def _backward(out, x):
    out.sum().backward()
    return [out, x]


# each case: (t, index dtype) -> tensors to compare (values, grads, graph, versions)
CASES = {
    "get": lambda t, d: _x(t)[_idx(t, d)],
    "get_grad": lambda t, d: (lambda x: _backward(x[_idx(t, d)] * 2, x))(_x(t)),
    "get_dim1": lambda t, d: _x(t)[:, _idx(t, d, (1, 0))],
    "get_tuple": lambda t, d: _x(t)[_idx(t, d), 0],
    "get_2d": lambda t, d: _x(t)[_idx(t, d, ((1, 0), (0, 1), (1, 1)))],
    "get_bad_shape": lambda t, d: _x(t)[_idx(t, d, (1, 0))],
    "get_too_many": lambda t, d: _x(t)[t.ones(3, 2, 1, dtype=getattr(t, d))],
    "get_0d": lambda t, d: _x(t)[_idx(t, d, 1)],
    "get_0d_zero": lambda t, d: _x(t)[_idx(t, d, 0)],
    "get_0d_tuple": lambda t, d: _x(t)[0, _idx(t, d, 1)],
    "set_scalar": lambda t, d: _setitem(_x(t).detach().clone(), _idx(t, d), 9.0),
    "set_0d": lambda t, d: _setitem(_x(t).detach().clone(), _idx(t, d), t.tensor(9.0)),
    "set_one_element": lambda t, d: _setitem(_x(t).detach().clone(), _idx(t, d), t.tensor([9.0])),
    "set_rows": lambda t, d: _setitem(_x(t) * 1, _idx(t, d), t.tensor([7.0, 8.0])),
    "set_tuple": lambda t, d: _setitem(_x(t).detach().clone(), (_idx(t, d), 0), 9.0),
    "set_ellipsis": lambda t, d: _setitem(_x(t).detach().clone(),
                                          (..., _idx(t, d, (1, 0))), 9.0),
    "set_0d_key": lambda t, d: _setitem(_x(t).detach().clone(), _idx(t, d, 1), 9.0),
    "set_true_and_mask": lambda t, d: _setitem(_x(t).detach().clone(), (True, _idx(t, d)), 5.0),
    "put_accumulate": lambda t, d: _x(t).detach().clone().index_put_(
        (_idx(t, d),), t.tensor([1.0, 2.0]), accumulate=True),
    "put": lambda t, d: _x(t).detach().clone().index_put_((_idx(t, d),), t.tensor([1.0, 2.0])),
    "put_scalar": lambda t, d: _x(t).detach().clone().index_put_((_idx(t, d),), t.tensor(1.0)),
    "put_scalar_accumulate": lambda t, d: _x(t).detach().clone().index_put_(
        (_idx(t, d),), t.tensor(1.0), accumulate=True),
    "put_two": lambda t, d: _x(t).detach().clone().index_put_(
        (_idx(t, d), _idx(t, d, (1, 0))), t.tensor(1.0)),
    "put_out_of_place": lambda t, d: _x(t).index_put((_idx(t, d),), t.tensor([1.0, 2.0])),
    "put_grad": lambda t, d: (lambda x: _backward(
        (x * 1).index_put_((_idx(t, d),), t.tensor([1.0, 2.0]), accumulate=True), x))(_x(t)),
    "put_0d_scalar": lambda t, d: _x(t).detach().clone().index_put_((_idx(t, d, 1),),
                                                                    t.tensor(1.0)),
}
DTYPES = ["uint8", "bool", "int8", "int16", "int32", "int64", "float32"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES)
def test_index_tensor_dtypes(case, dtype):
    if case == "put_0d_scalar" and dtype not in ("uint8", "bool"):
        pytest.skip("a 0-d integer index tensor in index_put_ is another case")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda t: CASES[case](t, dtype))


def _warnings(fn, t):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn(t)
        except (IndexError, RuntimeError):
            pass
    # torch's text ends with its C++ source's place: " (Triggered internally at ...)"
    return [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught
            if "non-tuple sequence" not in str(w.message)]


# torch warns again in the backward of a uint8 index (its saved indices are the uint8
# tensors); gradviz warns only where the index is read
@pytest.mark.parametrize("case", [c for c in CASES if not c.endswith("_grad")])
def test_uint8_deprecation_warning(case):
    fn = lambda t: CASES[case](t, "uint8")  # noqa: E731
    assert _warnings(fn, gradviz) == _warnings(fn, torch)


def test_uint8_warning_text():
    got = _warnings(lambda t: t.arange(3.0)[_idx(t, "uint8")], gradviz)
    assert got == [(UserWarning, "indexing with dtype torch.uint8 is now deprecated, please use "
                                 "a dtype torch.bool instead.")]


@pytest.mark.parametrize("accumulate", [True, False])
@pytest.mark.parametrize("value", [(), (2,)])
@pytest.mark.parametrize("dtype", ["uint8", "bool"])
@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8")
def test_0d_mask_in_index_put_is_refused(dtype, value, accumulate):
    """torch fails an internal assert on a 0-d mask, except a one-element value written
    through it alone (masked_fill_); gradviz refuses."""
    if not accumulate and value == ():
        pytest.skip("the masked_fill_ case, compared with torch above")
    x = gradviz.zeros(3, 2)
    with pytest.raises(NotImplementedError, match="0-d bool or uint8 index tensor"):
        x.index_put_((_idx(gradviz, dtype, 1),), gradviz.ones(value), accumulate=accumulate)
    with pytest.raises(RuntimeError, match="INTERNAL ASSERT FAILED"):
        torch.zeros(3, 2).index_put_((_idx(torch, dtype, 1),), torch.ones(value),
                                  accumulate=accumulate)


# ----- values or indices that share self's memory -------------------------------------------

def _a(t):
    return t.arange(6.0)


def _put_into(x, key, value):
    x[key] = value
    return x


def _i(t):
    return t.tensor([0, 1, 2])


OVERLAP = {
    "put_accumulate_own_head": lambda t: (lambda x: x.index_put_((_i(t),), x[:3], True))(_a(t)),
    "put_own_head": lambda t: (lambda x: x.index_put_((_i(t),), x[:3]))(_a(t)),
    "put_own_tail": lambda t: (lambda x: x.index_put_((_i(t),), x[3:]))(_a(t)),
    "put_clone": lambda t: (lambda x: x.index_put_((_i(t),), x[:3].clone()))(_a(t)),
    "put_own_element": lambda t: (lambda x: x.index_put_((_i(t),), x[0]))(_a(t)),
    "put_own_strided": lambda t: (lambda x: x.index_put_((_i(t),), x[::2]))(_a(t)),
    "put_own_row_view": lambda t: (lambda x: x.index_put_((_i(t),), x.view(2, 3)[0]))(_a(t)),
    "put_out_of_place": lambda t: (lambda x: x.index_put((_i(t),), x[:3]))(_a(t)),
    "put_index_is_self": lambda t: (lambda x: x.index_put_((x[:3],), t.arange(3)))(
        t.arange(6)),
    "set_own_head": lambda t: (lambda x: _put_into(x, _i(t), x[:3]))(_a(t)),
    "set_own_tail": lambda t: (lambda x: _put_into(x, _i(t), x[3:]))(_a(t)),
    "set_shifted": lambda t: (lambda x: _put_into(x, _i(t) + 3, x[1:4]))(_a(t)),
    "set_own_element": lambda t: (lambda x: _put_into(x, _i(t), x[0]))(_a(t)),
    "set_index_is_self": lambda t: (lambda x: _put_into(x, x[:3], 7))(t.arange(6)),
    "set_mask_rows": lambda t: (lambda x: _put_into(x, x > 2, x[:3]))(_a(t)),
    "set_mask_own_element": lambda t: (lambda x: _put_into(x, x > 2, x[0]))(_a(t)),
    "set_row": lambda t: (lambda x: _put_into(x, t.tensor([0]), x[1]))(_a(t).reshape(2, 3)),
    "set_copy": lambda t: (lambda x: _put_into(x, _i(t), x[_i(t)]))(_a(t)),
    "expanded_accumulate": lambda t: t.zeros(1).expand(3).index_put_(
        (t.tensor([0]),), t.tensor(1.0), True),
    "expanded_out_of_place": lambda t: t.zeros(1).expand(3).index_put(
        (t.tensor([0]),), t.tensor(1.0)),
}


@pytest.mark.parametrize("case", OVERLAP)
def test_values_and_indices_overlapping_self(case):
    check(OVERLAP[case])


def test_expanded_accumulate_warns_as_torch():
    fn = OVERLAP["expanded_accumulate"]
    assert _warnings(fn, gradviz) == _warnings(fn, torch)
    assert _warnings(fn, gradviz)[0][1].startswith("Use of index_put_ on expanded tensors is "
                                                    "deprecated.")


EXPANDED_WRITES = {
    "put": lambda t: t.zeros(1).expand(3).index_put_((t.tensor([0]),), t.tensor(1.0)),
    "put_two": lambda t: t.zeros(1).expand(3).index_put_((t.tensor([0, 2]),),
                                                         t.tensor([1.0, 2.0])),
    "set": lambda t: _put_into(t.zeros(1).expand(3), t.tensor([0]), 1.0),
}


@pytest.mark.parametrize("case", EXPANDED_WRITES)
def test_expanded_write_by_index_writes_through_as_torch(case):
    """torch warns and writes through to the shared elements; so does gradviz (before, it
    refused with NotImplementedError)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert EXPANDED_WRITES[case](gradviz).tolist() == EXPANDED_WRITES[case](torch).tolist()
