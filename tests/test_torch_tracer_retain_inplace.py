"""retain_grad after an in-place edit, on `--backend torch`: torch moves a retained tensor's
retain_grad to the node the edit made (to CopySlices for the base of an edited view), so the
report's hooks, user_hooks and steps must say what the core says, and the gradient the report
shows retained is the one torch puts in .grad."""

import pytest

torch = pytest.importorskip("torch")

from gradviz.inspect import run_file  # noqa: E402

CASES = {
    "edited": "x = torch.ones(2, requires_grad=True)\ny = x * 2\ny.retain_grad()\n"
              "y.mul_(3)\n(y * 5).sum().backward()\n",
    "edited_twice": "x = torch.ones(2, requires_grad=True)\ny = x * 2\ny.retain_grad()\n"
                    "y.mul_(3)\ny.add_(1)\n(y * y).sum().backward()\n",
    "edited_through_a_view": "x = torch.ones(4, requires_grad=True)\ny = x * 2\n"
                             "y.retain_grad()\nv = y[1:]\nv.mul_(3)\n"
                             "(y * 5).sum().backward()\n",
    "view_retained_and_edited": "x = torch.ones(4, requires_grad=True)\ny = x * 2\n"
                                "v = y[1:]\nv.retain_grad()\nv.mul_(3)\n"
                                "(v * 5).sum().backward()\n",
    "edited_without_grad": "x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                           "y.retain_grad()\nwith torch.no_grad():\n    y.mul_(3)\n"
                           "(y * 5).sum().backward()\n",
    "retained_after_the_edit": "x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                               "y.mul_(3)\ny.retain_grad()\n(y * 5).sum().backward()\n",
    "in_a_loop": "w = torch.ones(3, requires_grad=True)\nfor step in range(3):\n"
                 "    h = w * (step + 1)\n    h.retain_grad()\n    h.relu_()\n"
                 "    (h * h).sum().backward()\n",
}


def _view(doc):
    return ([(h["target"], h["node"], h["kind"], h["grad"]) for h in doc["hooks"]],
            [(h["kind"], h["node"], h["node_name"], h["target"], h["grad_in"])
             for h in doc["user_hooks"]],
            [[(s["node"], s["name"], s["hooks"]) for s in c["steps"]]
             for c in doc["backward_calls"]])


@pytest.mark.parametrize("name", sorted(CASES))
def test_retain_grad_follows_the_edit_as_on_the_core(tmp_path, name):
    torch.set_num_threads(1)
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\n\n" + CASES[name])
    docs = {b: run_file(str(path), backend=b).report() for b in ("gradviz", "torch")}
    assert docs["torch"]["error"] is None and docs["gradviz"]["error"] is None
    assert _view(docs["torch"]) == _view(docs["gradviz"])


def test_the_retained_gradient_is_the_one_torch_keeps(tmp_path):
    path = tmp_path / "edited.py"
    path.write_text("import torch\n\n" + CASES["edited"])
    hooks = run_file(str(path), backend="torch").report()["user_hooks"]
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * 5).sum().backward()
    assert [(h["kind"], h["target"], h["grad_in"]) for h in hooks] == \
        [("retain_grad", "y", y.grad.tolist())] == [("retain_grad", "y", [5.0, 5.0])]
