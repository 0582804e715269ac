"""Regenerate the terminal output and the images shown in README.md.

README.md marks each generated block with the command that makes it:

    <!-- gradviz run examples/mul_chain_backward.py --backward e -->
    ```text
    ...output, rewritten by this script...
    ```
    <!-- end -->

and each image with the command that draws it (`<!-- image: gradviz graph ... --svg
docs/images/x.svg -->`). Commands run in-process at a fixed width of 100 columns without
colour, so the output is the same on every machine. `--check` only reports blocks that are
out of date (exit 1), which is what the test suite runs.

    python docs/update_readme.py          # rewrite README.md and docs/images/
    python docs/update_readme.py --check  # exit 1 if README.md is stale
"""

import os
import re
import shlex
import sys

from click.testing import CliRunner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
BLOCK = re.compile(r"(<!-- (gradviz [^\n]*?) -->\n```text\n)(.*?)(```\n<!-- end -->)", re.S)
IMAGE = re.compile(r"<!-- image: (gradviz [^\n]*?) -->")


def run(command):
    """The output of a gradviz command line, as a user at a 100-column terminal sees it."""
    from gradviz_cli.main import cli
    args = shlex.split(command)[1:]
    env = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        result = CliRunner(env=env).invoke(cli, args, catch_exceptions=False)
    finally:
        os.chdir(old)
    text = result.stdout + (result.stderr if result.stderr else "")
    lines = [line.rstrip() for line in text.rstrip().splitlines()]
    shown = "$ " + command + "\n" + "\n".join(lines) + "\n"
    if result.exit_code:
        shown += f"(exit code {result.exit_code})\n"
    return shown


def render(text):
    """README text with every generated block replaced by fresh output."""
    return BLOCK.sub(lambda m: m.group(1) + run(m.group(2)) + m.group(4), text)


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
    with open(README, "w", encoding="utf-8") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
