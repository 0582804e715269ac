"""Finding a renderer, rendering to SVG/PNG/PDF, atomic writes and every error path.

Tests that lay a graph out need a renderer binary (graphviz-pure, a dependency, or Graphviz's
dot) and skip without one. The error paths use small fake renderers written as shell scripts.
"""

import doctest
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import gradviz.render
import gradviz.render.renderer as renderer_module
from gradviz.render import RenderError, build_dot, find_renderer, render
from gradviz.render.renderer import FALLBACK_MARK
from test_render_dot import rnn
from test_render_reports import HOSTILE, HOSTILE_TENSORS, chain, hostile, modified, seed, zwxb

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "docs"))
from browser import find_browser  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv("GRADVIZ_DOT", raising=False)


@pytest.fixture
def real_renderer(clean_env):
    found = find_renderer()
    if found is None:
        pytest.skip("no graphviz-pure or dot found")
    return found


def fake_renderer(tmp_path, name, script):
    path = tmp_path / "bin" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return path


def svg_nodes(path):
    """Parse an SVG file: [(texts, tooltip)] for each node group."""
    root = ET.parse(path).getroot()
    found = []
    for group in root.iter(SVG + "g"):
        if group.get("class") == "node":
            texts = [t.text or "" for t in group.iter(SVG + "text")]
            links = [a.get(XLINK_TITLE) for a in group.iter(SVG + "a")]
            found.append((texts, links[0] if links else None))
    return found


# ----- SVG through a real renderer -----

@pytest.mark.parametrize("view", ["backward", "forward"])
def test_svg_shows_every_named_tensor(real_renderer, tmp_path, view):
    r = zwxb()
    out = render(build_dot(r, view=view, show_saved=True), "svg", tmp_path / "g.svg")
    texts = [text for texts, _ in svg_nodes(out) for text in texts]
    wanted = ["w [2] float32", "b [2] float32", "y [2] float32", "z [2] float32"]
    if view == "forward":
        wanted.append("x [2] float32")  # the backward graph has None where x would be
    for label in wanted:
        assert label in texts
    cluster = [t.text for t in ET.parse(out).getroot().iter(SVG + "text")]
    assert "Legend" in cluster


def test_svg_tooltips_carry_the_details(real_renderer, tmp_path):
    out = render(build_dot(seed()), "svg", tmp_path / "g.svg")
    tips = {texts[0]: tip for texts, tip in svg_nodes(out)}
    assert tips["a [] float32"].splitlines() == [
        "a", "shape: []", "dtype: float32", "requires_grad: True", "is_leaf: True",
        "grad_fn: None", "version: 0", "value: 2", "grad: 12", "made at example.py:1",
    ]
    assert all(tip for _, tip in svg_nodes(out))


def test_svg_marks_a_modified_saved_tensor_in_red(real_renderer, tmp_path):
    out = render(build_dot(modified(), show_saved=True), "svg", tmp_path / "g.svg")
    root = ET.parse(out).getroot()
    edges = [g for g in root.iter(SVG + "g") if g.get("class") == "edge"]
    red = [g for g in edges if any(p.get("stroke") == "red" for p in g.iter(SVG + "path"))]
    assert len(red) == 1
    assert [t.text for t in red[0].iter(SVG + "text")] == ["saved v0, now v1"]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, [name for name, _ in attrs]))


@pytest.mark.parametrize("view", ["backward", "forward"])
def test_hostile_names_inject_nothing_in_svg_or_html(real_renderer, tmp_path, view):
    out = render(build_dot(hostile(), view=view, show_saved=True), "svg", tmp_path / "g.svg")
    nodes = svg_nodes(out)  # parses: the XML is well formed
    texts = [text for texts, _ in nodes for text in texts]
    dtypes = {t["name"]: t["dtype"] for t in hostile()["tensors"]}
    for name in HOSTILE_TENSORS.values():
        shown = "".join("\ufffd" if ch < " " else ch for ch in name.replace("\t", " "))
        # Entity-like dtypes (&lt; &amp; &foo; &#65;) show literally, never decoded.
        assert f"{shown} [2] {dtypes[name]}" in texts, name
    tips = "\n".join(tip for _, tip in nodes)
    for text in (HOSTILE[0], "made at <evil>&.py:1", "anomaly: ]]>", "anomaly: tab nl\ufffdend"):
        assert text in tips
    if view == "backward":
        assert "anomaly: </svg>" in texts and "value: [w[0], x:y]" in tips
        assert "<script>alert(1)</script> = 1" in texts
    # Only Graphviz's own elements: no script, no foreignObject, no event handlers.
    root = ET.parse(out).getroot()
    tags = {el.tag.replace(SVG, "") for el in root.iter()}
    assert tags <= {"svg", "g", "title", "polygon", "ellipse", "path", "text", "a", "polyline"}
    assert not [k for el in root.iter() for k in el.attrib if k.lower().startswith("on")]
    # Inline in an HTML page, the SVG still opens no tag but Graphviz's.
    parser = _Tags()
    parser.feed("<html><body>" + out.read_text(encoding="utf-8") + "</body></html>")
    assert {tag for tag, _ in parser.tags} <= tags | {"html", "body"}


def test_svg_draws_a_shared_leaf_once_per_use_with_a_dashed_outline(real_renderer, tmp_path):
    out = render(build_dot(chain(50, with_weight=True)), "svg", tmp_path / "g.svg")
    root = ET.parse(out).getroot()
    copies = {}
    for group in root.iter(SVG + "g"):
        texts = [t.text for t in group.iter(SVG + "text")]
        if group.get("class") == "node" and texts[-1].startswith("(shared:"):
            shapes = (SVG + "ellipse", SVG + "polygon")
            outline = next(el for el in group.iter() if el.tag in shapes)
            copies.setdefault(texts[0], []).append((texts[-1], outline.get("stroke-dasharray")))
    for first in ("AccumulateGrad", "w [3] float32"):
        assert [text for text, _ in copies[first]] == [
            f"(shared: {k} of 50 uses)" for k in range(1, 51)]
        assert all(dashes for _, dashes in copies[first])
    tips = {texts[-1]: tip for texts, tip in svg_nodes(out) if texts[0] == "w [3] float32"}
    assert tips["(shared: 7 of 50 uses)"].splitlines()[-1] == \
        "this copy: use 7 of 50, by MulBackward0 (m44)"


def test_a_weight_shared_by_100_steps_lays_out_quickly(real_renderer):
    # Drawn once, rnn(100)'s w and b took graphviz-pure over a minute (1,000 steps: over 16 GB);
    # drawn once per use, it takes 0.05 s.
    source = build_dot(rnn(100))
    assert source.count("(shared:") == 400
    proc = subprocess.run([real_renderer, "-Tsvg"], input=source.encode(), capture_output=True,
                          timeout=30, check=True)
    # 3 grad_fn nodes a step, 2 AccumulateGrad and 2 leaf copies a step, 4 legend entries
    assert proc.stdout.count(b'class="node"') == 3 * 100 + 4 * 100 + 4


def test_png(real_renderer, tmp_path):
    out = render(build_dot(zwxb()), "png", tmp_path / "g.png")
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_svg_displays_in_a_headless_browser(real_renderer, tmp_path):
    browser = find_browser()
    if browser is None:
        pytest.skip("no chromium")
    out = render(build_dot(hostile(), show_saved=True), "svg", tmp_path / "g.svg")
    # No network here: without these flags Chromium keeps trying to reach its services.
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom"]
    proc = subprocess.run([browser, *flags, out.as_uri()], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    # A broken SVG shows Chromium's XML error page instead of the drawing.
    assert "This page contains the following errors" not in proc.stdout
    assert "AccumulateGrad" in proc.stdout and "<svg" in proc.stdout


# ----- Finding a renderer -----

def test_search_order(tmp_path, monkeypatch, clean_env):
    venv = fake_renderer(tmp_path / "venv", "graphviz-pure", "exit 0")
    (tmp_path / "venv" / "bin" / "python").touch()
    pure = fake_renderer(tmp_path / "path", "graphviz-pure", "exit 0")
    dot = fake_renderer(tmp_path / "path", "dot", "exit 0")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    monkeypatch.setenv("PATH", str(pure.parent))
    assert find_renderer() == str(venv)  # beside the interpreter, even if not activated
    assert find_renderer(fmt="pdf") == str(dot)  # graphviz-pure has no PDF
    venv.unlink()
    assert find_renderer() == str(pure)
    pure.unlink()
    assert find_renderer() == str(dot)
    dot.unlink()
    assert find_renderer() is None


def test_explicit_renderer_then_environment(tmp_path, monkeypatch, clean_env):
    mine = fake_renderer(tmp_path, "mine", "exit 0")
    env = fake_renderer(tmp_path, "env", "exit 0")
    monkeypatch.setenv("GRADVIZ_DOT", str(env))
    assert find_renderer() == str(env)
    assert find_renderer(str(mine)) == str(mine)
    assert find_renderer(str(mine), fmt="pdf") == str(mine)


@pytest.mark.parametrize("where", ["argument", "environment"])
def test_a_missing_explicit_renderer_is_a_usage_error(tmp_path, monkeypatch, clean_env, where):
    missing = str(tmp_path / "nowhere" / "dot")
    if where == "environment":
        monkeypatch.setenv("GRADVIZ_DOT", missing)
    with pytest.raises(RenderError, match="renderer not found: .*nowhere/dot") as info:
        find_renderer(missing if where == "argument" else None)
    assert info.value.exit_code == 2


# ----- Writing the output -----

def test_output_comes_from_the_renderer(tmp_path, clean_env):
    fake = fake_renderer(tmp_path, "fake", 'cat >/dev/null; echo "<svg>$1</svg>"')
    out = render("digraph {}", "svg", tmp_path / "g.svg", renderer=str(fake))
    assert out.read_text() == "<svg>-Tsvg</svg>\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "g.svg"]


def test_a_failing_renderer_leaves_nothing_half_written(tmp_path, clean_env):
    script = 'echo "<svg partial"; echo "boom: bad input" >&2; exit 4'
    fake = fake_renderer(tmp_path, "fake", script)
    with pytest.raises(RenderError, match=r"(?s)failed \(exit 4\).*boom: bad input") as info:
        render("digraph {}", "svg", tmp_path / "g.svg", renderer=str(fake))
    assert info.value.exit_code == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]  # no output, no temp file
    # An existing file is kept as it was.
    (tmp_path / "g.svg").write_text("old")
    with pytest.raises(RenderError):
        render("digraph {}", "svg", tmp_path / "g.svg", renderer=str(fake))
    assert (tmp_path / "g.svg").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "g.svg"]


def test_no_renderer_writes_the_dot_file_and_exits_3(tmp_path, monkeypatch, clean_env):
    monkeypatch.setattr(renderer_module, "find_renderer", lambda renderer=None, fmt="svg": None)
    with pytest.raises(RenderError) as info:
        render("digraph { a -> b }", "svg", tmp_path / "graph.svg")
    assert info.value.exit_code == 3
    message = str(info.value)
    for way in ("pip install graphviz-pure", "apt-get install graphviz", "--renderer PATH",
                "GRADVIZ_DOT", str(tmp_path / "graph.dot")):
        assert way in message
    assert (tmp_path / "graph.dot").read_text() == FALLBACK_MARK + "\ndigraph { a -> b }"
    assert not (tmp_path / "graph.svg").exists()


def test_pdf_without_dot_says_so(tmp_path, monkeypatch, clean_env):
    # graphviz-pure beside the interpreter is found for SVG, but PDF needs dot on PATH.
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(RenderError, match="PDF output needs Graphviz's `dot`") as info:
        render("digraph {}", "pdf", tmp_path / "graph.pdf")
    assert info.value.exit_code == 3
    assert "apt-get install graphviz" in str(info.value)
    assert (tmp_path / "graph.dot").exists() and not (tmp_path / "graph.pdf").exists()


def test_pdf_from_graphviz_pure_explains_the_failure(real_renderer, tmp_path):
    if "graphviz-pure" not in os.path.basename(real_renderer):
        pytest.skip("graphviz-pure not found")
    with pytest.raises(RenderError, match="graphviz-pure has no PDF output") as info:
        render("digraph {}", "pdf", tmp_path / "g.pdf", renderer=real_renderer)
    assert 'Format: "pdf" not recognized' in str(info.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["svg", "dot"])
def test_an_unwritable_path_exits_2_naming_it(tmp_path, clean_env, fmt):
    fake = fake_renderer(tmp_path, "fake", "echo '<svg/>'")
    (tmp_path / "a-file").write_text("")
    for out in (tmp_path / "a-file" / f"g.{fmt}", tmp_path / "missing-dir" / f"g.{fmt}"):
        with pytest.raises(RenderError) as info:
            render("digraph {}", fmt, out, renderer=str(fake))
        assert info.value.exit_code == 2
        assert str(out) in str(info.value)


def test_a_directory_as_output_exits_2(tmp_path, clean_env):
    fake = fake_renderer(tmp_path, "fake", "echo '<svg/>'")
    (tmp_path / "out.svg").mkdir()
    with pytest.raises(RenderError, match="cannot write .*out.svg") as info:
        render("digraph {}", "svg", tmp_path / "out.svg", renderer=str(fake))
    assert info.value.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "out.svg"]


def test_dot_format_needs_no_renderer(tmp_path, monkeypatch, clean_env):
    monkeypatch.setattr(renderer_module, "find_renderer", lambda renderer=None, fmt="svg": None)
    source = build_dot(zwxb())
    assert render(source, "dot", tmp_path / "g.dot").read_text() == source


def test_unknown_format(tmp_path):
    with pytest.raises(RenderError, match="unknown format 'gif'") as info:
        render("digraph {}", "gif", tmp_path / "g.gif")
    assert info.value.exit_code == 2


def test_the_output_gets_ordinary_permissions(tmp_path, clean_env):
    fake = fake_renderer(tmp_path, "fake", "echo '<svg/>'")
    old = os.umask(0o022)
    try:
        out = render("digraph {}", "svg", tmp_path / "g.svg", renderer=str(fake))
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("module", [renderer_module, gradviz.render])
def test_docstring_examples_run(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
