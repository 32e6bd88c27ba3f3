"""Text from a ledger, an import or an agent made safe to print: every character a terminal could
act on shown as a visible escape.

A run id, a system name, a task id, a stratum or an error text is written by whoever wrote the
ledger, and an agent plants its own text in a row's ``error`` (docs/harness.md). Printed raw, an
ESC sequence in it moves the cursor, clears the screen (CSI 2J), opens a link that shows other
text (OSC 8) or writes the user's clipboard (OSC 52), and a bidi override (U+202E) makes a line
read other than it is. :func:`printable` is the one function that stands between such text and a
terminal: the command line passes all it prints through it (``trialbook.cli._console``), and a
renderer that lays text out in columns calls it first, so that widths count what is printed.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = ["json_printable", "printable"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


@lru_cache(maxsize=4096)
def _unsafe(ch: str) -> bool:
    """A character to show as an escape: controls (C0, DEL, C1), format characters (bidi
    overrides and isolates, zero-width ones), line and paragraph separators, surrogates,
    private-use and unassigned code points. Spaces of every width are text."""
    return not ch.isprintable() and unicodedata.category(ch) != "Zs"


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` with every character a terminal could act on shown as a visible escape
    (``\\x1b``, ``\\u202e``); with ``lines``, newlines and tabs stay (a block of several lines,
    such as a page of markdown or HTML: a tab only moves the cursor right).

    Idempotent: what it returns holds nothing it would change.
    """
    if text.isprintable():  # the common case, at C speed
        return text
    kept = "\n\t" if lines else ""
    return "".join(_escape(ch) if _unsafe(ch) and ch not in kept else ch for ch in text)


def json_printable(text: str) -> str:
    """JSON text with the characters :func:`printable` escapes written as ``\\uXXXX`` escapes:
    the same JSON value, and nothing a terminal acts on when it is printed. Outside strings
    JSON holds only spaces and newlines, which stay; a JSON encoder already escapes C0 controls
    inside strings, not C1 controls or bidi overrides."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch == "\n" or not _unsafe(ch):
            out.append(ch)
            continue
        code = ord(ch)
        if code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:  # a UTF-16 surrogate pair, as JSON spells a code point past the BMP
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
    return "".join(out)
