"""What `--backend torch` reports when the file's backward fails, or does what the tracer must
not break: the failing node named as torch's anomaly mode names it, torch's own error text,
and files that run under torch running under the tracer too."""

import re
import textwrap
import warnings

import pytest

torch = pytest.importorskip("torch")

from gradviz.inspect import run_file  # noqa: E402


def _write(tmp_path, source):
    path = tmp_path / "f.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def _torch_error(source):
    """The message of the error source raises when run on torch."""
    try:
        exec(compile(textwrap.dedent(source), "<snippet>", "exec"), {})
    except Exception as exc:       # noqa: BLE001 - the error is what is compared
        return str(exc)
    raise AssertionError("the snippet did not raise")


def _torch_says(source):
    """(the nodes torch's anomaly mode names, the error's message) for source run on torch."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.set_detect_anomaly(True):
            message = _torch_error(source)
    named = [re.search(r"Error detected in (\w+)", str(w.message)) for w in caught]
    return [m.group(1) for m in named if m], message


# ----- The file's hooks that fail: the node blamed, the hook named -------------------------

FAILING_HOOKS = {
    "raises": "def hook(g):\n    raise ValueError('boom')\n",
    "lambda changes the size": "hook = lambda g: g[:1]\n",
    "function changes the size": "def hook(g):\n    return g[:1]\n",
    "partial changes the size": "import functools\n\n"
                                "hook = functools.partial(lambda n, g: g[:n], 1)\n",
}


@pytest.mark.parametrize("hook", sorted(FAILING_HOOKS))
def test_a_failing_tensor_hook_is_reported_as_torch_reports_it(tmp_path, hook):
    # y's tensor hooks fire when ExpBackward0 runs, before its pre-hooks: the node that ran
    # before (SinBackward0) is not the one that failed. torch names the hook by its __name__
    # ("hook '<lambda>' has changed the size of value"), '<unknown>' when it has none
    source = ("import torch\n\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
              "y = x.exp()\nz = y.sin()\n" + FAILING_HOOKS[hook] +
              "y.register_hook(hook)\nz.sum().backward()\n")
    named, message = _torch_says(source)
    assert named == ["ExpBackward0"]
    report = run_file(_write(tmp_path, source), backend="torch").report()
    assert [(a["name"], a["message"]) for a in report["anomalies"]] == \
        [("ExpBackward0", report["error"]["message"])]
    assert report["error"]["message"] == message
    # the core names no node for a hook's error (none, never another one), and a hook
    # without __name__ by its type
    core = run_file(_write(tmp_path, source)).report()
    assert [a["name"] for a in core["anomalies"]] in ([], ["ExpBackward0"])
    if not hook.startswith("partial"):
        assert core["error"]["message"] == message


# ----- torch's version error, word for word ------------------------------------------------

EDITED_VIEWS = {
    # the view's AsStrided node is gone after the second edit: torch names the saving node
    "edited twice": "v.exp_()\nv.mul_(2)\n",
    # the view keeps the grad_fn exp_ gave it: torch names that node
    "base edited": "v.exp_()\ny.add_(1)\n",
}


@pytest.mark.parametrize("edits", sorted(EDITED_VIEWS))
def test_a_version_error_on_an_edited_view_names_the_node_torch_names(tmp_path, edits):
    source = ("import torch\n\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
              "y = x.clone()\nv = y[1:]\n" + EDITED_VIEWS[edits] + "y.sum().backward()\n")
    expected = _torch_error(source)
    report = run_file(_write(tmp_path, source), backend="torch").report()
    assert report["error"]["message"] == expected


def test_a_version_error_on_an_output_edited_in_place_names_its_saving_node(tmp_path):
    # sigmoid_ saves its result, b itself: torch names SigmoidBackward0 (the saving node),
    # not b's grad_fn at backward time (AddBackward0)
    source = ("import torch\n\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
              "b = x.exp()\nb.sigmoid_()\nb.add_(1)\nb.sum().backward()\n")
    expected = _torch_error(source)
    assert "which is output 0 of Sigmoid," in expected
    report = run_file(_write(tmp_path, source), backend="torch").report()
    assert report["error"]["message"] == expected


# ----- Files that run on torch run under the tracer ----------------------------------------

def test_a_zero_tensor_gradient_is_read_as_zeros(tmp_path):
    # abs's double backward gives x a ZeroTensor gradient, which .numpy() refuses
    source = ("import torch\n\nx = torch.tensor([1.0, -2.0], requires_grad=True)\n"
              "y = x.abs()\ngx, = torch.autograd.grad(y.sum(), x, create_graph=True)\n"
              "gx.sum().backward()\n")
    path = _write(tmp_path, source)
    found = {}
    for backend in ("gradviz", "torch"):
        report = run_file(path, backend=backend).report()
        assert report["error"] is None
        found[backend] = ([(t["name"], t["grad"]) for t in report["tensors"]],
                          [(n["name"], n["grad"]) for n in report["nodes"]])
    assert found["torch"] == found["gradviz"]
    assert ("x", [0.0, 0.0]) in found["torch"][0]


@pytest.mark.parametrize("batched", ["is_grads_batched=True", "None, False, True, None, True"])
def test_a_batched_autograd_grad_runs_and_is_listed_without_its_gradients(tmp_path, batched):
    # is_grads_batched runs backward under vmap: its batched gradients are not recorded
    source = ("import torch\n\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
              f"y = x.exp()\ng, = torch.autograd.grad(y, x, torch.eye(2), {batched})\n"
              "print(g.round(decimals=4).tolist())\nz = (x * 3).sum()\nz.backward()\n")
    path = _write(tmp_path, source)
    report = run_file(path, backend="torch").report()
    core = run_file(path).report()
    assert report["error"] is None
    assert report["stdout"] == core["stdout"]
    calls = report["backward_calls"]
    assert [(c["kind"], c["line"], c["steps"]) for c in calls[:1]] == [("grad", 5, [])]
    # the next backward call is recorded as on the core
    assert calls[-1]["steps"] == core["backward_calls"][-1]["steps"]
