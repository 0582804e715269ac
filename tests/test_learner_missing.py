"""What a learner's file meets when it leaves the core's surface: nn.X and F.X that PyTorch has
say that gradviz's core does not implement them (with the --backend torch hint), as torch.X
and Tensor.X do, and a traceback carries one "Did you mean", not two."""

import subprocess
import sys

import pytest

import gradviz
import gradviz.nn.functional as F


@pytest.mark.parametrize("get, text", [
    (lambda: gradviz.nn.Dropout3d, "gradviz's core does not implement torch.nn.Dropout3d "
                                   "(PyTorch 2.13"),
    (lambda: F.dropout3d, "gradviz's core does not implement torch.nn.functional.dropout3d"),
    (lambda: gradviz.nn.no_such_layer, "module 'torch.nn' has no attribute 'no_such_layer'"),
    (lambda: F.no_such_op, "module 'torch.nn.functional' has no attribute 'no_such_op'"),
])
def test_nn_and_functional_names_say_what_the_core_lacks(get, text):
    with pytest.raises(AttributeError) as info:
        get()
    assert str(info.value).startswith(text)
    if "does not implement" in text:
        assert "run with --backend torch" in str(info.value)


def test_close_names_are_the_public_ones():
    with pytest.raises(AttributeError, match=r"Did you mean: 'Dropout2d', 'Dropout1d', "
                                             r"'Dropout'\?$"):
        gradviz.nn.Dropout3d         # noqa: B018  (not the submodule gradviz.nn.dropout)
    with pytest.raises(AttributeError, match=r"Did you mean: 'conv2d', 'conv1d'\?$"):
        F.conv3d                     # noqa: B018
    with pytest.raises(AttributeError, match=r"Did you mean: 'addmv', 'add_'\?$"):
        gradviz.ones(2).addmv_       # noqa: B018  (the close names the core has, not stubs)


def test_defaults_and_hasattr_still_work():
    assert getattr(F, "no_such_op", 3) == 3
    assert not hasattr(gradviz.nn, "Transformer")
    assert all(hasattr(gradviz.nn, n) for n in gradviz.nn.__all__)
    assert all(hasattr(F, n) for n in F.__all__)


@pytest.mark.parametrize("line", ["torch.sinc_", "torch.nn.Dropout3d", "torch.ones(1).addmv_"])
def test_a_traceback_suggests_once(line):
    """Python appends its own "Did you mean" to an AttributeError naming the attribute; the
    message already has gradviz's suggestions, so the traceback's last line has one."""
    code = f"import gradviz as torch\n{line}\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stderr
    last = out.strip().splitlines()[-1]
    assert last.startswith("AttributeError: gradviz's core does not implement")
    assert last.count("Did you mean") == 1
