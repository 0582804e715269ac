"""explain's advice for a function's local (`step[2].y`) is code the user can write where they
can write it (issue #13): `y.retain_grad()` inside step(), after the line that made it. The
test follows the advice to the letter and runs the result on torch 2.13."""

import re
import textwrap

import numpy as np
import pytest

from gradviz.inspect import run_file
from gradviz.inspect.explain import explain

EXAMPLE = "examples/def_main_script.py"
ADVICE = re.compile(r"write (?P<expr>\S+)\.retain_grad\(\) inside (?P<function>[\w.]+)\(\), "
                    r"after line (?P<line>\d+), before backward runs, to keep it")


def _not_leaf(result):
    (cause,) = [c for c in result["causes"] if c["kind"] == "not_leaf"]
    return cause["message"]


def test_a_function_local_gets_advice_it_can_follow():
    message = _not_leaf(explain(EXAMPLE, "step[2].y"))
    assert message == (
        "'step[2].y' is not a leaf (it was made by MulBackward0), so its .grad is not kept: "
        "write y.retain_grad() inside step(), after line 10, before backward runs, to keep it "
        "(gradviz shows the gradient that reached it)")


def test_a_method_local_names_the_method(tmp_path):
    path = tmp_path / "f.py"
    path.write_text(textwrap.dedent("""\
        import gradviz as torch


        class Model:
            def forward(self, x):
                h = x * 3
                return h.sum()


        def main():
            x = torch.ones(2, requires_grad=True)
            Model().forward(x).backward()


        main()
        """))
    message = _not_leaf(explain(str(path), "Model.forward.h"))
    assert "write h.retain_grad() inside Model.forward(), after line 6," in message


def test_a_module_level_name_keeps_the_plain_advice():
    message = _not_leaf(explain("examples/mul_chain_backward.py", "c", root="e"))
    assert "call c.retain_grad() before backward to keep it" in message


def test_following_the_advice_on_torch_keeps_the_gradient_explain_shows(tmp_path):
    pytest.importorskip("torch")
    result = explain(EXAMPLE, "step[2].y")
    advice = ADVICE.search(_not_leaf(result))
    assert advice is not None
    lines = open(EXAMPLE).read().splitlines()
    at = int(advice["line"])
    indent = re.match(r"\s*", lines[at - 1]).group(0)
    # The advice, as written, plus a list the test reads the kept tensor back from.
    lines.insert(at, f"{indent}{advice['expr']}.retain_grad(); KEPT.append({advice['expr']})")
    lines.insert(0, "KEPT = []")
    path = tmp_path / "followed.py"
    path.write_text("\n".join(lines) + "\n")
    kept = run_file(str(path), backend="torch").namespace["KEPT"]
    assert advice["function"] == "step" and len(kept) == 2
    # The second call's y now keeps its .grad, and it is what explain said reached it.
    assert np.allclose(kept[1].grad.numpy(), np.asarray(result["computed"]))
