"""gradviz report: the page as data (the embedded JSON is `run --json`'s document, escaping,
no network, size) and in a real headless Chromium driven over the DevTools pipe (loads cleanly,
a click shows the right values, the step control follows the engine's order, search, hostile
names stay text)."""

import json
import os
import re
import sys
import textwrap

import pytest
from click.testing import CliRunner

from gradviz.render.html import (OTHER_VIEW_LIMIT, build_page, embedded_json, inline_svg,
                                 script_json)
from gradviz.render.renderer import RenderError
from gradviz_cli.main import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "docs"))
sys.path.insert(0, ROOT)

import browser as headless  # noqa: E402
# 714 layers of h = tanh(h * w + b), own leaves per layer: the 4,998 nodes the benchmark draws.
from benchmarks.processes import GRAPH_5000_SOURCE as CHAIN_5000  # noqa: E402

MUL_CHAIN = os.path.join(ROOT, "examples", "mul_chain_backward.py")
HOOKS = os.path.join(ROOT, "examples", "hooks_marked.py")
EVIL = "</script><img src=x onerror=alert(1)>"

HOSTILE_SOURCE = textwrap.dedent('''\
    import gradviz as torch
    p = {"</script><img src=x onerror=alert(1)>": torch.tensor([1.0, 2.0], requires_grad=True),
         "{{PAGE}} <b>&amp;\\u2028": torch.tensor(3.0, requires_grad=True)}
    keys = list(p)
    y = (p[keys[0]] * p[keys[1]]).sum()
    print("</script><script>alert(2)</script>")
    y.backward()
    ''')



def invoke(*args):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


def make_page(tmp_path, file, *options, name="page.html"):
    out = tmp_path / name
    result = invoke("report", str(file), "-o", str(out), *options)
    assert result.exit_code in (0, 1), result.output
    return out.read_text(encoding="utf-8"), result


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The pages the tests read, each made once: mul chain, hooks, hostile names."""
    tmp = tmp_path_factory.mktemp("pages")
    hostile = tmp / "hostile.py"
    hostile.write_text(HOSTILE_SOURCE, encoding="utf-8")
    made = {}
    for key, file, options in (("mul", MUL_CHAIN, ["--backward", "e", "--show-saved"]),
                               ("hooks", HOOKS, []), ("hostile", hostile, ["--show-saved"])):
        made[key] = (tmp / f"{key}.html", *make_page(tmp, file, *options, name=f"{key}.html"))
    made["hostile_file"] = hostile
    return made


# ----- The page as data -----

def test_embedded_report_is_run_json(pages):
    path, page, result = pages["mul"]
    assert result.exit_code == 0
    run = invoke("run", MUL_CHAIN, "--json", "--hooks", "--step", "--retain-graph",
                 "--backward", "e")
    assert run.exit_code == 0
    embedded = embedded_json(page, "gv-report")
    assert embedded == script_json(run.stdout.rstrip("\n"))
    assert json.loads(embedded) == json.loads(run.stdout)


def test_stderr_names_the_file_written(pages):
    path, page, result = pages["mul"]
    # the line wraps where the temporary path's length puts it: compare the words
    assert " ".join(result.stderr.split()).endswith(
        f"wrote {path} (12 nodes, {len(page.encode()) // 1024} KiB, HTML)")


def test_the_page_carries_its_header_and_links(pages):
    path, page, result = pages["mul"]
    meta = json.loads(embedded_json(page, "gv-page"))
    assert meta["command"] == f"gradviz report {MUL_CHAIN} --output {path} --backward e " \
                              "--show-saved"
    assert meta["backend"] == "gradviz" and meta["version"]
    # Every drawn grad_fn node and leaf links to the report's data.
    refs = sorted(tuple(r) for r in meta["views"]["backward"]["refs"].values())
    assert refs == [("node", "n0"), ("node", "n1"), ("node", "n2"), ("node", "n3"),
                    ("node", "n4"), ("saved", "n0"), ("saved", "n0"), ("saved", "n1"),
                    ("saved", "n1"), ("tensor", "a"), ("tensor", "b"), ("tensor", "d")]
    assert meta["lines"][MUL_CHAIN]["34"] == "c = a * b"
    assert meta["views"]["forward"]["count"] > 0


def test_hostile_names_never_become_markup(pages):
    path, page, result = pages["hostile"]
    assert EVIL not in page and "<img" not in page and "<b>" not in page
    assert "<script>alert" not in page
    # The only script elements are the page's own: two JSON blobs and the code.
    assert len(re.findall(r"<script\b", page)) == 3
    report = json.loads(embedded_json(page, "gv-report"))
    assert f"p['{EVIL}']" in [t["name"] for t in report["tensors"]]
    assert report["stdout"] == "</script><script>alert(2)</script>\n"
    # A label that reads like a placeholder is not substituted.
    assert "{{PAGE}}" in page


def test_no_resource_is_loaded_from_anywhere(pages):
    for key in ("mul", "hooks"):
        page = pages[key][1]
        assert "http://" not in page and "https://" not in page
        assert not re.search(r"""\s(?:src|href|xlink:href)\s*=|url\(|@import""", page, re.I)


def test_svg_with_script_or_handler_is_refused():
    for bad in ('<svg><script>alert(1)</script></svg>', '<svg><g onclick="x()"></g></svg>',
                '<svg><a xlink:href="javascript:x()"></a></svg>',
                '<svg><foreignObject></foreignObject></svg>'):
        with pytest.raises(RenderError):
            inline_svg(bad, "b-")
    text = '<svg><text>a onerror=x &lt;img&gt;</text><a xlink:title="b onload=y"></a></svg>'
    assert inline_svg(text, "b-") == text


def test_the_file_being_run_is_never_overwritten(tmp_path):
    source = tmp_path / "f.py"
    source.write_text("import gradviz as torch\nx = torch.ones(2, requires_grad=True)\n")
    result = CliRunner().invoke(cli, ["report", str(source), "-o", str(source)])
    assert result.exit_code == 2
    assert "refusing to write" in result.stderr and "the file being run" in result.stderr
    assert source.read_text().startswith("import gradviz")


def test_a_file_that_raises_still_gets_its_page(tmp_path):
    source = tmp_path / "boom.py"
    source.write_text("import gradviz as torch\nx = torch.ones(2, requires_grad=True)\n"
                      "y = (x * 2).sum()\nraise ValueError('boom')\n")
    page, result = make_page(tmp_path, source)
    assert result.exit_code == 1
    assert json.loads(embedded_json(page, "gv-report"))["error"]["message"] == "boom"


def test_explain_and_gradcheck_run_on_the_files_backend(tmp_path):
    """On --backend torch the page's verdicts come from torch runs, equal to the core's."""
    pytest.importorskip("torch")
    relu = os.path.join(ROOT, "examples", "relu_zero_grad.py")
    pages = {}
    for backend in ("gradviz", "torch"):
        page, result = make_page(tmp_path, relu, "--backward", "loss", "--gradcheck",
                                 "--backend", backend, name=f"{backend}.html")
        assert result.exit_code == 0, result.output
        pages[backend] = json.loads(embedded_json(page, "gv-page"))
    for key in ("explain", "gradcheck"):
        assert pages["torch"][key], key
    assert pages["torch"]["explain"] == pages["gradviz"]["explain"]
    assert pages["torch"]["gradcheck"]["verdict"] == pages["gradviz"]["gradcheck"]["verdict"]


def test_a_zero_gradient_gets_explains_verdict(tmp_path, chromium_or_none):
    relu = os.path.join(ROOT, "examples", "relu_zero_grad.py")
    page, result = make_page(tmp_path, relu, "--backward", "loss")
    explained = json.loads(embedded_json(page, "gv-page"))["explain"]
    assert list(explained) == ["x"]                    # w.grad = 4.0 needs no explaining
    assert "partly_zero" in [c["kind"] for c in explained["x"]["causes"]]
    if chromium_or_none is None:
        return
    shown = open_page(chromium_or_none, tmp_path / "page.html")
    shown.evaluate("gradvizReport.select('tensor:x', false)")
    text = shown.evaluate("document.querySelector('#gv-panel .gv-verdict').innerText")
    assert text.startswith("Why .grad is [0, 0, 1.5, 1.5]:") and "ReluBackward0" in text


def test_no_renderer_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr("gradviz.render.renderer.find_renderer", lambda *a, **k: None)
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", MUL_CHAIN, "-o", str(out)])
    assert result.exit_code == 3
    assert "no Graphviz renderer found" in result.stderr and not out.exists()


def test_a_5000_node_chain_page_stays_small(tmp_path):
    source = tmp_path / "chain.py"
    source.write_text(CHAIN_5000)
    page, result = make_page(tmp_path, source)
    assert result.exit_code == 0
    assert len(page.encode()) < 10 * 1024 * 1024
    meta = json.loads(embedded_json(page, "gv-page"))
    assert meta["views"]["forward"] is None            # over OTHER_VIEW_LIMIT: one layout
    assert meta["views"]["backward"]["count"] == 4998 > OTHER_VIEW_LIMIT
    assert meta["notes"] == ["The forward view is not drawn: 5713 nodes (over 500) would "
                             "double the layout time; `gradviz graph --view forward` draws it."]
    assert page.count('class="node"') >= 4998


def test_build_page_without_drawing():
    report = {"file": "f.py", "backend": "gradviz", "tensors": [], "nodes": [], "roots": []}
    page = build_page(report, {"backward": None, "forward": None}, command="gradviz report f.py")
    assert 'id="view-backward"' not in page
    assert json.loads(embedded_json(page, "gv-report")) == report


def test_graph_help_mentions_report():
    assert "gradviz report" in invoke("graph", "--help").stdout


def test_assets_are_package_data():
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        data = tomllib.load(f)["tool"]["setuptools"]["package-data"]["gradviz.render"]
    assets = os.listdir(os.path.join(ROOT, "gradviz", "render", "assets"))
    assert sorted(assets) == ["report.css", "report.html", "report.js"]
    assert all(any(name.endswith(p.split("*")[-1]) for p in data) for name in assets)


# ----- In a real browser -----

@pytest.fixture(scope="module")
def chromium(chromium_or_none):
    if chromium_or_none is None:
        pytest.skip("no chromium")
    return chromium_or_none


@pytest.fixture(scope="module")
def chromium_or_none():
    if headless.find_browser() is None:
        yield None
        return
    with headless.Browser.start() as browser:
        yield browser


def open_page(chromium, path):
    page = chromium.open(path.as_uri())
    problems = page.events("Runtime.exceptionThrown", "Runtime.consoleAPICalled",
                           "Log.entryAdded")
    assert [p for p in problems if p["method"] != "Runtime.consoleAPICalled"
            or p["params"]["type"] in ("error", "warning", "assert")] == []
    requests = page.events("Network.requestWillBeSent")
    assert [r["params"]["request"]["url"] for r in requests] == [path.as_uri()]
    return page


def state(page):
    return page.evaluate("gradvizReport.state()")


def test_page_loads_without_errors_or_requests(chromium, pages):
    page = open_page(chromium, pages["mul"][0])
    assert state(page)["view"] == "backward"
    assert page.evaluate("document.querySelectorAll('#view-backward g.node[data-ref]').length") \
        == 12
    page.click("#gv-view-forward")
    assert state(page)["view"] == "forward"


def test_a_click_on_a_node_shows_its_values(chromium, pages):
    page = open_page(chromium, pages["mul"][0])
    page.click('#view-backward g.node[data-ref="node:n1"]')
    assert state(page)["selected"] == "node:n1"
    text = page.evaluate("document.getElementById('gv-panel').innerText")
    lines = text.splitlines()
    assert lines[0] == "MulBackward0 (n1)"
    assert "grad at node\t4" in lines and "inputs\ta, b" in lines
    assert "c = a * b" in lines                       # the source line that made it
    assert "_saved_self\ta\t[] float32\tv0\tv0" in lines
    page.click('#view-backward g.node[data-ref="tensor:a"]')
    text = page.evaluate("document.getElementById('gv-panel').innerText").splitlines()
    assert text[0] == "a" and ".grad" in text and text[text.index(".grad") + 1] == "12"


def test_steps_follow_the_engines_order(chromium, pages):
    path, html, _ = pages["mul"]
    report = json.loads(embedded_json(html, "gv-report"))
    order = [s["node"] for s in report["backward_calls"][-1]["steps"]]
    assert order == ["n0", "n4", "n1", "n2", "n3"]
    page = open_page(chromium, path)
    page.key("Home")
    seen = [state(page)["node"]]
    for _ in order:
        page.key("ArrowRight")
        seen.append(state(page)["node"])
    assert seen == order + [order[-1]]                  # the last step stays
    page.key("ArrowLeft")
    assert state(page)["node"] == order[-2]
    page.click("#gv-first")
    assert state(page)["step"] == 0
    # The running node lights up and the edges carry the gradient they pass.
    running = page.evaluate("Array.from(document.querySelectorAll('#view-backward "
                            ".gv-running')).map(g => g.getAttribute('data-ref'))")
    assert running == ["node:n0"]
    labels = page.evaluate("Array.from(document.querySelectorAll('text.gv-edge-label'))"
                           ".map(t => t.textContent)")
    assert labels == ["4", "6"]


def test_hooks_flash_and_show_in_their_step(chromium, pages):
    path, html, _ = pages["hooks"]
    report = json.loads(embedded_json(html, "gv-report"))
    steps = report["backward_calls"][-1]["steps"]
    hooked = next(i for i, s in enumerate(steps) if s["hooks"])
    page = open_page(chromium, path)
    page.evaluate(f"gradvizReport.go({hooked})")
    assert page.evaluate("document.querySelectorAll('.gv-hook-flash').length") >= 1
    text = page.evaluate("document.getElementById('gv-step').innerText")
    hook = report["user_hooks"][steps[hooked]["hooks"][0]]
    assert f"{hook['function']} got" in text and "changed the gradient" in text


def test_search_finds_a_node(chromium, pages):
    page = open_page(chromium, pages["mul"][0])
    page.click("#gv-search")
    page.type("c")
    assert state(page)["matches"][0] == "node:n1"      # the node that made c comes first
    page.key("Enter", text="\r")
    assert state(page)["selected"] == "node:n1"
    assert page.evaluate("document.getElementById('gv-search-count').textContent") == \
        "1 of 5 found"


def test_hostile_names_stay_text_in_the_browser(chromium, pages):
    page = open_page(chromium, pages["hostile"][0])
    name = f"p['{EVIL}']"
    page.evaluate(f"gradvizReport.select({json.dumps('tensor:' + name)}, true)")
    assert page.evaluate("document.getElementById('gv-panel').querySelector('h2').textContent") \
        == name
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert page.evaluate("document.querySelectorAll('script').length") == 3
    output = page.evaluate("document.querySelector('#gv-output pre').textContent")
    assert output == "</script><script>alert(2)</script>\n"


def test_readme_screenshots_exist_and_are_checked_by_digest():
    import update_readme
    with open(update_readme.README, encoding="utf-8") as f:
        text = f.read()
    shots = list(update_readme.SCREENSHOT.finditer(text))
    assert len(shots) >= 1
    for shot in shots:
        with open(os.path.join(ROOT, shot.group(2)), "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    # A change to the page's inputs changes the digest test_readme compares.
    command, actions = shots[0].group(1), shots[0].group(3)
    assert update_readme.page_digest(command, actions)[0] == shots[0].group(4)
    assert update_readme.page_digest(command, actions + " ")[0] != shots[0].group(4)


def test_docstring_examples_run():
    import doctest

    import gradviz.render.html
    result = doctest.testmod(gradviz.render.html)
    assert result.attempted >= 6 and result.failed == 0
