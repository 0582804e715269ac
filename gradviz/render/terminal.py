"""Text that is safe to print on a terminal: what the user's file named or printed never
controls it.

A tensor name, a path, an error message or the file's output may hold escape sequences, NUL,
carriage returns, bidirectional overrides or (from undecodable file names) lone surrogates.
Written raw they would clear the screen, retitle the window, hide text or make printing fail.
printable() shows each such character as its Python escape; program_output() keeps the
colours a file printed and drops the rest of the terminal's control language.
"""

import re

import rich.ansi  # noqa: F401 - Text.from_ansi imports it lazily, maybe while a user's rich.py
#                   shadows the package during a run: imported here, it is found already
from rich.text import Text

__all__ = ["printable", "program_output"]

# C0 and C1 controls, DEL, the bidirectional marks and overrides, lone surrogates, and the
# invisible characters (zero width space, word joiner, BOM) that made a tensor named "a\u200bb"
# show as "ab", a second "ab" in the table.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060"
                      "\u2066-\u2069\ufeff\ud800-\udfff]")

# Terminal escape sequences: CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), and
# two-character escapes. Group 1 holds an SGR sequence (colours and text styles).
_ESCAPE = re.compile(r"(\x1b\[[0-9;:]*m)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
                     r"|\x1b[@-Z\\-_]")


def _escaped(match):
    return ascii(match.group())[1:-1]


def printable(text, keep="\n"):
    """Return text with every control character other than those in keep shown as its
    Python escape (ESC as \\x1b, NUL as \\x00).

    >>> printable("a\\x1b[2Jb\\x00c")
    'a\\\\x1b[2Jb\\\\x00c'
    >>> printable("two\\nlines"), printable("two\\nlines", keep="")
    ('two\\nlines', 'two\\\\nlines')
    """
    text = str(text)
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: m.group() if m.group() in keep else _escaped(m), text)


def _overstrike(line):
    """What a terminal shows for a line with carriage returns: each part overwrites the start
    of what came before (a progress bar shows its last state)."""
    shown = ""
    for part in line.split("\r"):
        shown = part + shown[len(part):]
    return shown


def program_output(text):
    """Return the file's output as rich Text: colours and styles it printed (SGR sequences)
    kept, other escape sequences (cursor moves, clearing, window titles) dropped, carriage
    returns applied, other control characters shown escaped.

    >>> program_output("\\x1b[31mred\\x1b[0m \\x1b[2Jok\\x00").plain
    'red ok\\\\x00'
    >>> program_output("10%\\r50%\\r100%").plain
    '100%'
    """
    lines = [_overstrike(line) if "\r" in line else line for line in text.split("\n")]
    kept = _ESCAPE.sub(lambda m: m.group(1) or "", "\n".join(lines))
    # ESC now only starts an SGR sequence, which Text.from_ansi turns into styles.
    parts = re.split(r"(\x1b\[[0-9;:]*m)", kept)
    safe = "".join(p if i % 2 else printable(p, keep="\n\t") for i, p in enumerate(parts))
    return Text.from_ansi(safe)
