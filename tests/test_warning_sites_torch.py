"""Warnings gradviz raises name the user's file and line as their origin (warnings.warn's
stacklevel), so Python and `gradviz run` point at the user's code: also where torch's own
warning points inside torch (a module's forward, a loss class, the optimizer). Each case warns
as torch 2.13 does (same categories and first sentences), and where torch names this file,
at the same line."""

import json
import linecache
import os
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
import gradviz  # noqa: E402



def _sched(t, kind):
    w = t.nn.Parameter(t.ones(2))
    opt = t.optim.SGD([w], lr=0.1)
    if kind == "plateau":
        s = t.optim.lr_scheduler.ReduceLROnPlateau(opt)
        s.step(1.0, 3)
        return
    s = t.optim.lr_scheduler.StepLR(opt, 2)
    if kind == "get_lr":
        s.get_lr()
    elif kind == "order":
        s.step()
    elif kind == "epoch":
        opt.step()
        s.step(3)


def _module_hooks(t, kind):
    m = t.nn.Linear(2, 2)
    m.register_full_backward_hook(lambda *a: None)
    if kind == "no_input_grad":
        m(t.ones(1, 2)).sum().backward()
    else:
        class M(t.nn.Module):
            def forward(self, x):
                return [x]
        mm = M()
        mm.register_full_backward_hook(lambda *a: None)
        mm(t.ones(2, requires_grad=True))


CASES = {
    "optim_duplicate": lambda t: t.optim.SGD([t.nn.Parameter(t.ones(1))] * 2, lr=0.1),
    "sched_get_lr": lambda t: _sched(t, "get_lr"),
    "sched_order": lambda t: _sched(t, "order"),
    "sched_epoch": lambda t: _sched(t, "epoch"),
    "plateau_epoch": lambda t: _sched(t, "plateau"),
    "init_zero_element": lambda t: t.nn.init.kaiming_uniform_(t.empty(0, 3)),
    "init_trunc_normal": lambda t: t.nn.init.trunc_normal_(t.empty(3), mean=5.0),
    "init_deprecated": lambda t: t.nn.init.normal(t.empty(3)),
    "softmax_no_dim": lambda t: t.nn.functional.softmax(t.ones(2, 2)),
    "size_average": lambda t: t.nn.functional.mse_loss(t.ones(2), t.ones(2), size_average=True),
    "target_size": lambda t: t.nn.functional.mse_loss(t.ones(2, 1), t.ones(2)),
    "kl_div_mean": lambda t: t.nn.functional.kl_div(t.ones(2), t.ones(2)),
    "hook_no_input_grad": lambda t: _module_hooks(t, "no_input_grad"),
    "hook_output_list": lambda t: _module_hooks(t, "list"),
    "grad_variables": lambda t: t.autograd.backward(t.ones(1, requires_grad=True) * 2,
                                                    grad_variables=t.ones(1)),
    "only_inputs": lambda t: t.autograd.grad(t.ones(1, requires_grad=True).sum(),
                                             t.ones(1, requires_grad=True), only_inputs=False,
                                             allow_unused=True),
    "random_split_empty": lambda t: t.utils.data.random_split(range(3), [0.0, 1.0]),
    "nonleaf_grad": lambda t: (t.ones(1, requires_grad=True) * 2).grad,
    "meshgrid": lambda t: t.meshgrid(t.ones(2), t.ones(3)),
    "var_dof": lambda t: t.ones(1).var(),
    "where_uint8": lambda t: t.where(t.tensor([1, 0], dtype=t.uint8), t.ones(2), t.zeros(2)),
    "conv_same_even": lambda t: t.nn.functional.conv1d(t.ones(1, 1, 5), t.ones(1, 1, 2),
                                                       padding="same"),
    "cross_no_dim": lambda t: t.cross(t.ones(3, 3), t.ones(3, 3)),
}

CASES.update({
    "module_softmax": lambda t: t.nn.Softmax()(t.ones(2, 2)),
    "module_log_softmax": lambda t: t.nn.LogSoftmax()(t.ones(2, 2)),
    "module_target_size": lambda t: t.nn.MSELoss()(t.ones(2, 1), t.ones(2)),
    "module_l1_target_size": lambda t: t.nn.L1Loss()(t.ones(2, 1), t.ones(2)),
    "module_kl_div": lambda t: t.nn.KLDivLoss()(t.ones(2), t.ones(2)),
    "module_size_average": lambda t: t.nn.MSELoss(size_average=True),
    "transpose_3d": lambda t: t.ones(2, 2, 2).T,
    "std_dof": lambda t: t.ones(1).std(),
    "var_mean_dof": lambda t: t.var_mean(t.ones(1)),
    "tensor_cross": lambda t: t.ones(3, 3).cross(t.ones(3, 3)),
    "nll_size_average": lambda t: t.nn.functional.nll_loss(t.ones(2, 3), t.tensor([0, 1]),
                                                           size_average=False),
    "init_normal_zero": lambda t: t.nn.init.kaiming_normal_(t.empty(0, 3)),
    "init_deprecated_xavier": lambda t: t.nn.init.xavier_uniform(t.empty(3, 3)),
})


def _warnings(t, name):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        CASES[name](t)
    # (torch appends " (Triggered internally at ...)" to a warning its C++ code raises)
    return [(w.category.__name__, str(w.message).split(" (Triggered")[0].split(".")[0],
             w.filename, w.lineno) for w in seen]


# torch raises these once per process (TORCH_WARN_ONCE), and so does gradviz: any earlier test
# may have used them up, so both sides run in a fresh process
ONCE = {"cross_no_dim", "tensor_cross"}


def _in_fresh_process(backend, name):
    code = ("import importlib.util, json, sys\n"
            f"spec = importlib.util.spec_from_file_location('cases', {__file__!r})\n"
            "m = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(m)\n"
            f"print(json.dumps(m._warnings(m.{backend}, {name!r})))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return [tuple(w) for w in json.loads(done.stdout)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_warning_names_the_users_line(name):
    if name in ONCE:
        got, want = _in_fresh_process("gradviz", name), _in_fresh_process("torch", name)
    else:
        got, want = _warnings(gradviz, name), _warnings(torch, name)
    assert [w[:2] for w in got] == [w[:2] for w in want]
    here = os.path.abspath(__file__)
    for (_, _, filename, line), (_, _, torch_file, torch_line) in zip(got, want):
        assert os.path.abspath(filename) == here
        if os.path.abspath(torch_file) == here:
            assert line == torch_line
        else:
            assert "(" in linecache.getline(filename, line)     # a call of the file's


@pytest.mark.parametrize("name", sorted(ONCE))
def test_a_warn_once_warning_is_raised_once_per_process(name):
    _warnings(gradviz, name)
    assert _warnings(gradviz, name) == []
