"""Regenerate the terminal output and the images shown in README.md.

README.md marks each generated block with the command that makes it:

    <!-- gradviz run examples/mul_chain_backward.py --backward e -->
    ```text
    ...output, rewritten by this script...
    ```
    <!-- end -->

each image with the command that draws it (`<!-- image: gradviz graph ... --svg
docs/images/x.svg -->`), and each screenshot of a `gradviz report` page with the command, the
PNG, what to show (the step to go to, the node to select) and a digest of those inputs:

    <!-- screenshot: gradviz report FILE ... | docs/images/report_x.png | go=2 select=node:n1 | digest 3f2a... -->

The digest is of the page's HTML and the actions, so `--check` (and the test suite) knows the
PNG is stale without a browser; rewriting takes the screenshot in headless Chromium
(docs/browser.py). Commands run in-process at a fixed width of 100 columns without
colour, so the output is the same on every machine. `--check` only reports blocks that are
out of date (exit 1), which is what the test suite runs.

    python docs/update_readme.py          # rewrite README.md and docs/images/
                                          # (the transformer's picture needs torch)
    python docs/update_readme.py --check  # exit 1 if README.md is stale
"""

import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))    # docs/browser.py

from click.testing import CliRunner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
BLOCK = re.compile(r"(<!-- (gradviz [^\n]*?) -->\n```text\n)(.*?)(```\n<!-- end -->)", re.S)
SURFACE = re.compile(r"(<!-- generated: core surface -->\n)(.*?)(<!-- end -->)", re.S)
IMAGE = re.compile(r"<!-- image: (gradviz [^\n]*?) -->")
SCREENSHOT = re.compile(r"<!-- screenshot: (gradviz report [^|\n]*?) \| (\S+\.png) \| "
                        r"(go=\d+ select=\S+) \| digest ([0-9a-f]*) -->")
# Where the page is written while its digest or screenshot is made (a fixed name: the command
# is part of the page).
PAGE = ".readme-report.html"


def run(command):
    """The output of a gradviz command line, as a user at a 100-column terminal sees it."""
    from gradviz_cli.main import cli
    args = shlex.split(command)[1:]
    env = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    old = os.getcwd()
    os.chdir(ROOT)
    threads = None
    if "--backend torch" in command:
        # one thread: a mean of float32 noise (1e-11) depends on how torch splits its sums
        import torch
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
    try:
        result = CliRunner(env=env).invoke(cli, args, catch_exceptions=False)
    finally:
        os.chdir(old)
        if threads is not None:
            torch.set_num_threads(threads)
    text = result.stdout + (result.stderr if result.stderr else "")
    lines = [line.rstrip() for line in text.rstrip().splitlines()]
    shown = "$ " + command + "\n" + "\n".join(lines) + "\n"
    if result.exit_code:
        shown += f"(exit code {result.exit_code})\n"
    return shown


def render(text):
    """README text with every generated block replaced by fresh output, and every
    screenshot's digest by that of its page now."""
    text = BLOCK.sub(lambda m: m.group(1) + run(m.group(2)) + m.group(4), text)
    text = SCREENSHOT.sub(lambda m: _screenshot_marker(m, page_digest(m.group(1), m.group(3))[0]),
                          text)
    return SURFACE.sub(lambda m: m.group(1) + core_surface() + m.group(3), text)


def _screenshot_marker(match, digest):
    return f"<!-- screenshot: {match.group(1)} | {match.group(2)} | {match.group(3)} | " \
           f"digest {digest} -->"


def page_digest(command, actions):
    """(digest, page path) of the page command writes (to PAGE, in the repository root)."""
    import hashlib
    run(f"{command} -o {PAGE}")
    path = os.path.join(ROOT, PAGE)
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    return hashlib.sha256(data + b"\n" + actions.encode()).hexdigest()[:16], data


def take_screenshot(command, png, actions):
    """Write the page of command, show it in headless Chromium as actions say, and save the
    viewport (1280x800) to png."""
    import tempfile

    from browser import Browser, find_browser
    if find_browser() is None:
        raise SystemExit("the README's screenshots need chromium (apt-get install chromium)")
    _, data = page_digest(command, actions)
    step, node = re.fullmatch(r"go=(\d+) select=(\S+)", actions).groups()
    with tempfile.TemporaryDirectory() as tmp:
        page_path = os.path.join(tmp, "report.html")
        with open(page_path, "wb") as f:
            f.write(data)
        with Browser.start() as browser:
            page = browser.open("file://" + page_path)
            page.evaluate(f"gradvizReport.go({int(step)}); gradvizReport.select({node!r}, false); "
                          "document.getElementById('gv-side').scrollTop = 0")
            image = page.screenshot()
    with open(os.path.join(ROOT, png), "wb") as f:
        f.write(image)


def image_is_fresh(command):
    """Whether the image command draws is the one committed: the command is run again with its
    --svg path in a temporary folder, and the two files are compared byte for byte. A picture
    drawn on PyTorch is compared by its text instead (see same_drawing)."""
    import tempfile
    path = command.split("--svg ")[1].split()[0]
    with tempfile.TemporaryDirectory() as tmp:
        fresh = os.path.join(tmp, os.path.basename(path))
        run(command.replace(f"--svg {path}", f"--svg {fresh}"))
        with open(fresh, "rb") as f:
            drawn = f.read()
    try:
        with open(os.path.join(ROOT, path), "rb") as f:
            committed = f.read()
    except FileNotFoundError:
        return False
    if "--backend torch" in command:
        return same_drawing(committed.decode(), drawn.decode())
    return committed == drawn


# A label's text in an SVG, and a decimal number in it: a point or an exponent (3e-11) makes
# it one, an integer (a shape, a count) stays text; entities such as &#45; are kept whole.
_SVG_TEXT = re.compile(r"<(text|title)\b[^>]*>(.*?)</\1>", re.S)
_EXPONENT = r"e(?:&#45;|-|\+)?\d+"
_DECIMAL = re.compile(rf"(?:&#45;|-)?\d+(?:\.\d*(?:{_EXPONENT})?|{_EXPONENT})")


def same_drawing(a, b, rel=1e-3, abs_=1e-6):
    """Whether two SVGs show the same nodes, edges and labels, with every decimal number equal
    to within rel (relative) or abs_ (absolute). torch's float32 kernels differ by CPU (AVX2,
    AVX-512), so a gradient's mean of 1e-11 on one machine is -1e-10 on another, the label is a
    few points wider, and the layout moves: that is not a stale picture; a changed name, shape,
    edge or value is."""
    def parts(svg):
        texts = [t for _, t in _SVG_TEXT.findall(svg)]
        return ([_DECIMAL.sub("#", t) for t in texts],
                [float(n.replace("&#45;", "-")) for t in texts for n in _DECIMAL.findall(t)])
    (words_a, numbers_a), (words_b, numbers_b) = parts(a), parts(b)
    return words_a == words_b and all(
        abs(x - y) <= max(abs_, rel * max(abs(x), abs(y))) for x, y in zip(numbers_a, numbers_b))


def _public(names):
    return sorted(n for n in names if not n.startswith("_"))


def core_surface():
    """What the core implements, per namespace, read from the package itself (the export
    registry, the Tensor class, nn, nn.functional, optim, linalg, autograd), and how much of
    PyTorch 2.13's public names of each namespace that is."""
    import types

    import gradviz
    from gradviz import _torch_api
    from gradviz._missing import _Missing

    def callables(module):
        return _public(n for n in dir(module) if not isinstance(getattr(module, n, None),
                                                                 types.ModuleType))

    tensor = _public(n for n, v in vars(gradviz.Tensor).items() if not isinstance(v, _Missing))
    tensor += _public(n for n in dir(gradviz.Tensor) if n not in vars(gradviz.Tensor)
                      and not isinstance(getattr(gradviz.Tensor, n, None), _Missing)
                      and n in _torch_api.TENSOR)
    rows = [("`torch.X`", callables(gradviz), _torch_api.TORCH),
            ("`Tensor.X`", sorted(set(tensor)), _torch_api.TENSOR),
            ("`torch.nn.X`", callables(gradviz.nn), _torch_api.NN),
            ("`torch.nn.functional.X`", callables(gradviz.nn.functional),
             _torch_api.FUNCTIONAL),
            ("`torch.optim.X`", callables(gradviz.optim), _torch_api.OPTIM)]
    rows.append(("`torch.linalg.X`", callables(gradviz.linalg), _torch_api.LINALG))
    rows.append(("`torch.autograd.X`", callables(gradviz.autograd), None))
    # the submodules that list their exports
    from gradviz.autograd import functional, graph
    from gradviz.nn import init
    from gradviz.optim import lr_scheduler
    from gradviz.utils import data
    rows += [("`torch.autograd.functional.X`", sorted(functional.__all__),
              _torch_api.AUTOGRAD_FUNCTIONAL),
             ("`torch.autograd.graph.X`", sorted(graph.__all__), _torch_api.AUTOGRAD_GRAPH),
             ("`torch.nn.init.X`", sorted(init.__all__), None),
             ("`torch.optim.lr_scheduler.X`", sorted(lr_scheduler.__all__), None),
             ("`torch.utils.data.X`", sorted(data.__all__), None)]
    out = []
    for title, names, theirs in rows:
        mine = [n for n in names if theirs is None or n in theirs]
        share = "" if theirs is None else f" ({len(mine)} of PyTorch's {len(theirs)} public names)"
        out.append(f"**{title}**{share}: " + ", ".join(f"`{n}`" for n in mine) + "\n")
    return "\n".join(out)


def main(argv):
    with open(README, encoding="utf-8") as f:
        text = f.read()
    new = render(text)
    if "--check" in argv:
        if new != text:
            print("README.md is out of date: run python docs/update_readme.py")
            return 1
        return 0
    for command in IMAGE.findall(text):
        run(command)
    fresh = {m.group(2): m.group(4) for m in SCREENSHOT.finditer(new)}
    for m in SCREENSHOT.finditer(text):
        if m.group(4) != fresh[m.group(2)] or not os.path.exists(os.path.join(ROOT, m.group(2))):
            take_screenshot(m.group(1), m.group(2), m.group(3))
    with open(README, "w", encoding="utf-8") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
