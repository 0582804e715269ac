"""torch.histc's refusal of a NaN range and indexing with a list taken as a tuple of indices,
on gradviz and on torch 2.13.

- A NaN that histc's min/max finds in the data prints as torch's "-nan" (x86's default NaN);
  a NaN given as min or max as "nan". Before, gradviz printed "[nan, nan]".
- x[[m]] (a list holding a tensor, a slice, a list, None or Ellipsis) is read as x[m] with
  torch's deprecation warning ("Using a non-tuple sequence for multidimensional indexing is
  deprecated ..."), reading and writing; a list of ints stays one index, without it. Before,
  gradviz gave no warning."""

import math
import warnings

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402

NAN = math.nan
HISTC = {
    "nan_in_data": lambda t: t.histc(t.tensor([1.0, NAN, 2.0]), bins=4),
    "all_nan": lambda t: t.histc(t.tensor([NAN, NAN]), bins=3),
    "nan_float64": lambda t: t.histc(t.tensor([NAN, 1.0], dtype=t.float64), bins=3),
    "nan_and_inf": lambda t: t.histc(t.tensor([NAN, math.inf]), bins=3),
    "nan_given_min": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=4, min=NAN, max=3),
    "nan_given_max": lambda t: t.histc(t.tensor([1.0, 2.0]), bins=4, min=0, max=NAN),
    "inf_in_data": lambda t: t.histc(t.tensor([1.0, math.inf]), bins=4),
    "nan_in_data_given_range": lambda t: t.histc(t.tensor([1.0, NAN, 2.0]), bins=4, min=0,
                                                 max=3),
}


def _histc(t, case):
    try:
        return HISTC[case](t).tolist()
    except RuntimeError as exc:
        return str(exc)


@pytest.mark.parametrize("case", list(HISTC))
def test_histc_of_a_nan_range_is_torchs(case):
    assert _histc(gradviz, case) == _histc(torch, case)


def _x(t):
    return t.arange(12.0).reshape(3, 4)


INDEX = {
    "mask": lambda t: _x(t)[[t.tensor([True, False, True])]],
    "index": lambda t: _x(t)[[t.tensor([0, 2])]],
    "two_indices": lambda t: _x(t)[[t.tensor([0, 2]), t.tensor([1, 3])]],
    "slice_and_index": lambda t: _x(t)[[slice(None), t.tensor([0, 2])]],
    "nested_list": lambda t: _x(t)[[[0, 1]]],
    "none": lambda t: _x(t)[[None]],
    "ellipsis": lambda t: _x(t)[[Ellipsis, 1]],
    "ints": lambda t: _x(t)[[0, 2]],
    "set_mask": lambda t: _set(_x(t), [t.tensor([True, False, True])]),
    "set_ints": lambda t: _set(_x(t), [0, 2]),
}


def _set(x, key):
    x[key] = -1.0
    return x


def _index(t, case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = INDEX[case](t)
    # torch's text ends with its C++ source's place: " (Triggered internally at ...)"
    return out.tolist(), [(w.category, str(w.message).split(" (Triggered internally")[0])
                          for w in caught]


@pytest.mark.parametrize("case", list(INDEX))
def test_a_list_index_is_read_and_warned_about_as_torch(case):
    assert _index(gradviz, case) == _index(torch, case)


def _expanded(t, shape=(3, 4)):
    base = t.zeros(1, 4)
    return base, base.expand(*shape)


def _put(t, accumulate):
    base, e = _expanded(t)
    e.index_put_((t.tensor([0, 1]),), t.arange(4.0), accumulate=accumulate)
    return base


def _put_rows_and_columns(t):
    base = t.zeros(4, 1)
    base.expand(4, 3).index_put_((t.tensor([0, 2, 2]), t.tensor([1, 2, 0])),
                                 t.tensor([1.0, 2.0, 3.0]))
    return base


def _set_mask(t):
    base = t.zeros(1)
    base.expand(3)[t.tensor([True, False, True])] = 2.0
    return base


def _set_index(t):
    base, e = _expanded(t)
    e[t.tensor([2, 0])] = t.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    return base


def _put_requires_grad(t):
    x = t.zeros(1, 4, requires_grad=True) * 1
    x.expand(3, 4).index_put_((t.tensor([0]),), t.ones(4))
    return x


EXPANDED = {
    "put": lambda t: _put(t, False),
    "put_accumulate": lambda t: _put(t, True),
    "put_rows_and_columns": _put_rows_and_columns,
    "set_mask": _set_mask,
    "set_index": _set_index,
}


def _expanded_write(t, case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        base = EXPANDED[case](t)
    return base.tolist(), [str(w.message).split(" (Triggered internally")[0] for w in caught]


@pytest.mark.parametrize("case", list(EXPANDED))
def test_index_put_into_an_expanded_tensor_warns_and_writes_through_as_torch(case):
    # before: NotImplementedError without accumulate, NumPy's "read-only" ValueError with it
    assert _expanded_write(gradviz, case) == _expanded_write(torch, case)


def test_index_put_into_an_expanded_tensor_that_requires_grad_is_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _put_requires_grad(torch)       # torch writes it (CopySlices over the expanded view)
        with pytest.raises(NotImplementedError, match="requires grad is not implemented"):
            _put_requires_grad(gradviz)
