"""The README's terminal output is real: regenerating it changes nothing."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "docs"))

import update_readme  # noqa: E402


def test_readme_output_blocks_are_up_to_date():
    with open(update_readme.README, encoding="utf-8") as f:
        text = f.read()
    blocks = update_readme.BLOCK.findall(text)
    assert len(blocks) >= 5
    fresh = update_readme.render(text)
    if fresh != text:
        pytest.fail("README.md output is stale: run `python docs/update_readme.py`")


def test_readme_images_exist():
    with open(update_readme.README, encoding="utf-8") as f:
        text = f.read()
    for command in update_readme.IMAGE.findall(text):
        path = command.split("--svg ")[1].split()[0]
        assert os.path.exists(os.path.join(ROOT, path)), path


def test_setup_commands_are_the_two_documented_lines():
    with open(update_readme.README, encoding="utf-8") as f:
        text = f.read()
    assert ("python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/gradviz run "
            "examples/") in text
    assert ("python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && "
            ".venv/bin/python -m pytest -q") in text


def _images():
    with open(update_readme.README, encoding="utf-8") as f:
        return update_readme.IMAGE.findall(f.read())


@pytest.mark.parametrize("command", _images())
def test_readme_images_are_up_to_date(command):
    if "--backend torch" in command:
        pytest.importorskip("torch")
    from gradviz.render.renderer import find_renderer
    if find_renderer(fmt="svg") is None:
        pytest.skip("no Graphviz renderer")
    if not update_readme.image_is_fresh(command):
        pytest.fail(f"{command.split('--svg ')[1]} is stale: run `python docs/update_readme.py`")


def test_torch_pictures_are_compared_up_to_float32_noise():
    def svg(width, mean, name="Linear", low="0.1158"):
        return (f'<svg width="{width}pt"><g><title>n1</title><text x="{width / 2}">{name}</text>'
                f'<text>grad: min=&#45;{low} mean={mean} (80 values)</text></g></svg>')
    committed = svg(1240, "2.91e&#45;11")
    assert update_readme.same_drawing(committed, svg(1242, "&#45;1.513e&#45;10"))
    assert update_readme.same_drawing(svg(1240, "3e&#45;11"), svg(1242, "&#45;2e&#45;10"))
    assert not update_readme.same_drawing(svg(1240, "3e&#45;11"), svg(1240, "3e&#45;01"))
    assert not update_readme.same_drawing(committed, svg(1240, "2.91e&#45;11", low="0.1258"))
    assert not update_readme.same_drawing(committed, svg(1240, "2.91e&#45;11", name="Conv1d"))
    assert not update_readme.same_drawing(committed, svg(1240, "0.5"))
