"""examples/README.md lists every example file, once, and only files that exist."""

import os
import re

try:
    from .example_files import EXAMPLES, example_files
except ImportError:
    from example_files import EXAMPLES, example_files


def _listed():
    with open(os.path.join(EXAMPLES, "README.md"), encoding="utf-8") as f:
        return re.findall(r"^\| `([^`]+\.py)` \|", f.read(), re.M)


def test_every_example_is_listed_once():
    listed = _listed()
    assert sorted(listed) == example_files()
    assert len(listed) == len(set(listed))
