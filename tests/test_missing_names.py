"""A name the core lacks says so: gradviz's core does not implement it when PyTorch has it
(with the --backend torch hint), and Python's own words when PyTorch lacks it too."""

import pathlib
import subprocess
import sys

import pytest

import gradviz

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("get, text", [
    (lambda: gradviz.stft, "gradviz's core does not implement torch.stft (PyTorch 2.13"),
    (lambda: gradviz.tensor(1.0).stft, "gradviz's core does not implement Tensor.stft"),
    (lambda: gradviz.no_such_op, "module 'torch' has no attribute 'no_such_op'"),
    (lambda: gradviz.linalg.eigh, "gradviz's core does not implement torch.linalg.eigh"),
    (lambda: gradviz.linalg.no_such_op, "module 'torch.linalg' has no attribute 'no_such_op'"),
    (lambda: gradviz.tensor(1.0).no_such_thing, "'Tensor' object has no attribute "
                                                "'no_such_thing'"),
])
def test_missing_attribute_messages(get, text):
    with pytest.raises(AttributeError) as info:
        get()
    assert str(info.value).startswith(text)
    if "does not implement" in text:
        assert "run with --backend torch" in str(info.value)


def test_close_names_are_suggested():
    with pytest.raises(AttributeError, match="Did you mean: 'sigmoid'"):
        gradviz.sigmod          # noqa: B018


def test_hasattr_and_getattr_defaults_still_work():
    assert not hasattr(gradviz, "no_such_thing")
    assert getattr(gradviz.tensor(1.0), "no_such_thing", 7) == 7
    assert hasattr(gradviz, "tensor")


def test_python_typos_read_like_torchs_own_message():
    torch = pytest.importorskip("torch")
    for mod in (torch, gradviz):
        with pytest.raises(AttributeError) as info:
            mod.lstsq_typo          # noqa: B018
        assert str(info.value).startswith("module 'torch' has no attribute 'lstsq_typo'")


def test_the_torch_name_list_is_fresh():
    pytest.importorskip("torch")
    fresh = subprocess.run([sys.executable, str(ROOT / "docs" / "update_torch_api.py"),
                            "--print"], capture_output=True, text=True, check=True).stdout
    assert (ROOT / "gradviz" / "_torch_api.json").read_text(encoding="utf-8") == fresh
