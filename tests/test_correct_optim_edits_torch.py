"""The in-place edits an optimizer step makes, as the inspector records them, on gradviz and on
torch 2.13: each state tensor's and parameter's `_version` goes up once per in-place call, and
each edit is recorded under the name of its call. Adam's and RMSprop's
`square_avg.mul_(beta).addcmul_(grad, grad, value=1 - beta)` and SGD's
`buf.mul_(momentum).add_(grad)` are a mul_ then an addcmul_ (add_, addcdiv_); before, gradviz
recorded both edits under the second name."""

import pytest

torch = pytest.importorskip("torch")
from gradviz.inspect import run_file  # noqa: E402

FILE = """
import torch
w = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
opt = torch.optim.{cls}([w], {kwargs})
for i in range(2):
    opt.zero_grad()
    (w * w * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    opt.step()
st = opt.state[w]
(w * w).sum().backward()
opt.step()
"""

OPTIMIZERS = {
    "SGD_momentum": ("SGD", "lr=0.1, momentum=0.9", ["momentum_buffer"]),
    "SGD_nesterov": ("SGD", "lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1",
                     ["momentum_buffer"]),
    "Adam": ("Adam", "lr=0.1", ["step", "exp_avg", "exp_avg_sq"]),
    "AdamW": ("AdamW", "lr=0.1, weight_decay=0.1", ["step", "exp_avg", "exp_avg_sq"]),
    "RMSprop": ("RMSprop", "lr=0.1, momentum=0.9, centered=True",
                ["step", "square_avg", "momentum_buffer", "grad_avg"]),
    "Adagrad": ("Adagrad", "lr=0.1", ["step", "sum"]),
    "Adadelta": ("Adadelta", "lr=0.1", ["step", "square_avg", "acc_delta"]),
    # amsgrad's torch.maximum(..., out=max_exp_avg_sq) is an out= write ("maximum" before)
    "Adam_amsgrad": ("Adam", "lr=0.1, amsgrad=True",
                     ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]),
    "Adam_amsgrad_decay_maximize": ("Adam", "lr=0.1, amsgrad=True, weight_decay=0.1, "
                                    "maximize=True",
                                    ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]),
    "AdamW_amsgrad": ("AdamW", "lr=0.1, amsgrad=True",
                      ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]),
    "Adam_maximize_decay": ("Adam", "lr=0.1, maximize=True, weight_decay=0.1",
                            ["step", "exp_avg", "exp_avg_sq"]),
    "SGD_plain": ("SGD", "lr=0.1", []),
    "SGD_decay_maximize": ("SGD", "lr=0.1, weight_decay=0.1, maximize=True", []),
    "SGD_dampening": ("SGD", "lr=0.1, momentum=0.9, dampening=0.5", ["momentum_buffer"]),
    "RMSprop_plain": ("RMSprop", "lr=0.1", ["step", "square_avg"]),
    "RMSprop_centered_decay": ("RMSprop", "lr=0.1, centered=True, weight_decay=0.1",
                               ["step", "square_avg", "grad_avg"]),
    "RMSprop_momentum_maximize": ("RMSprop", "lr=0.1, momentum=0.9, maximize=True",
                                  ["step", "square_avg", "momentum_buffer"]),
    "Adagrad_decay_maximize": ("Adagrad", "lr=0.1, weight_decay=0.1, lr_decay=0.01, "
                               "maximize=True", ["step", "sum"]),
    "Adadelta_decay_maximize": ("Adadelta", "lr=0.1, weight_decay=0.1, maximize=True",
                                ["step", "square_avg", "acc_delta"]),
}


def _edits(tmp_path, name, backend):
    cls, kwargs, state = OPTIMIZERS[name]
    path = tmp_path / f"{name}.py"
    path.write_text(FILE.format(cls=cls, kwargs=kwargs))
    report = run_file(str(path), backend=backend).report()
    assert report["error"] is None
    edits = {t["name"]: (t["version"], [(e["op"], e["version"]) for e in t["history"]])
             for t in report["tensors"] if t["history"]}
    assert len(edits) == 1 + len(state), edits       # w and each state tensor
    return edits


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_an_optimizer_steps_edits_are_torchs(tmp_path, name):
    torch.set_num_threads(1)
    assert _edits(tmp_path, name, "gradviz") == _edits(tmp_path, name, "torch")
