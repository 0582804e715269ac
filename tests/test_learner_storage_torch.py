"""Tensor.storage(), untyped_storage(), storage_offset() and data_ptr() as learners use them
(makemore's MLP lecture prints a.storage() to show that view() shares memory), compared with
torch 2.13: sizes, bytes, addresses shared by a view and its base, elements and printing."""

import warnings

import pytest

import gradviz
from gradviz import _storage

pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")

MAKERS = {
    "arange_int": lambda m: m.arange(18),
    "view": lambda m: m.arange(18).view(3, 6),
    "view_of_view": lambda m: m.arange(18).view(3, 6).view(2, 9),
    "transpose": lambda m: m.arange(12.0).reshape(3, 4).t(),
    "row_slice": lambda m: m.arange(12.0).reshape(3, 4)[1:],
    "column_slice": lambda m: m.arange(12.0).reshape(3, 4)[:, 1:3],
    "select": lambda m: m.arange(12.0).reshape(3, 4)[2],
    "float64": lambda m: m.tensor([0.1, -2.5, 3.0], dtype=m.float64),
    "float32": lambda m: m.tensor([0.1, -2.5, 3.0]),
    "bool": lambda m: m.tensor([True, False, True]),
    "int32": lambda m: m.tensor([1, -2], dtype=m.int32),
    "scalar": lambda m: m.tensor(3.5),
    "empty": lambda m: m.zeros(0),
    "ones_2d": lambda m: m.ones(2, 3),
    "flatten_view": lambda m: m.arange(6.0).reshape(2, 3).flatten(),
    "unsqueeze": lambda m: m.arange(4.0).unsqueeze(0),
    "leaf_requires_grad": lambda m: m.ones(3, requires_grad=True),
    "detach": lambda m: m.ones(3, requires_grad=True).detach(),
}


def _observe(m, name):
    base = m.arange(18)
    x = MAKERS[name](m)
    s, u = x.storage(), x.untyped_storage()
    return (s.size(), len(s), str(s.dtype), str(s.device), s.nbytes(), s.element_size(),
            u.nbytes(), len(u), x.storage_offset(), s.tolist(), str(s), repr(u),
            s.data_ptr() == x.data_ptr() - x.storage_offset() * x.element_size(),
            u.data_ptr() == s.data_ptr(), s.data_ptr() == base.storage().data_ptr())


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_storage_as_torch(name):
    torch = pytest.importorskip("torch")
    assert _observe(gradviz, name) == _observe(torch, name)


def test_storage_of_a_view_is_its_base_storage():
    torch = pytest.importorskip("torch")
    got, want = [], []
    for lib, out in ((torch, want), (gradviz, got)):
        a = lib.arange(18)
        v = a.view(3, 6)
        out.append((v.storage().size(), v.untyped_storage().nbytes(),
                    v.storage().data_ptr() == a.storage().data_ptr()))
    assert got == want


def test_an_edit_shows_in_the_storage_of_its_view():
    a = gradviz.zeros(4)
    s = a.view(2, 2).storage()
    a[1] = 5.0
    assert s.tolist() == [0.0, 5.0, 0.0, 0.0]


def test_storage_warns_once_as_torch(monkeypatch):
    monkeypatch.setattr(_storage, "_warned", [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradviz.arange(3).storage()
        gradviz.arange(3).storage().size()
    assert [str(w.message) for w in caught] == [_storage._TYPED_WARNING]
    assert caught[0].filename == __file__


def test_writing_into_a_storage_is_refused_with_the_hint():
    with pytest.raises(NotImplementedError, match="--backend torch"):
        gradviz.arange(3).storage()[0] = 1
