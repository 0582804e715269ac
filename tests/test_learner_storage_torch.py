"""Calls the learner files met that the core still refuses (with the --backend torch hint)."""

import pytest

import gradviz


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
@pytest.mark.xfail(strict=True, raises=AttributeError,
                   reason="Tensor.storage() / untyped_storage() (makemore's MLP lecture prints "
                          "a.storage() to show that view() shares memory): not in the core")
def test_storage_of_a_view_is_its_base_storage():
    torch = pytest.importorskip("torch")
    got, want = [], []
    for lib, out in ((torch, want), (gradviz, got)):
        a = lib.arange(18)
        v = a.view(3, 6)
        out.append((v.storage().size(), v.untyped_storage().nbytes(),
                    v.storage().data_ptr() == a.storage().data_ptr()))
    assert got == want


def test_storage_is_refused_with_the_hint():
    with pytest.raises(AttributeError, match="--backend torch"):
        gradviz.arange(3).storage()
