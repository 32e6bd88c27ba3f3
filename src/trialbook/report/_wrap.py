"""Lines that fit the terminal's width and break between phrases, never inside one.

A line of figures such as ``failed 22, timed out 1, infrastructure error 1`` or a headline
``pass@1 50.0% (35.8%–64.2%) · pass^4 16.7% (4.5%–46.1%) · 12 tasks × 4 attempts`` reads
wrong when wrapped at any space ("3 / timed out", an interval split from its figure). So a line
breaks first at a space after a separator (``,`` ``;`` ``:`` ``·``), and only a phrase longer
than the whole width breaks at its other spaces (a word is never cut), never beside a number (its
unit and label stay with it). Continuation lines are
indented by two spaces more than the line's own indent. No line ends in a space.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["break_points", "wrap"]

_SEPARATORS = frozenset(",;:·")
_BOUND = frozenset("0123456789%–")
# an interval stays whole: "-10.3 pp to +30.6 pp", "35.8% – 64.2%"
_INTERVAL = re.compile(r"[+-]?\d[\d.,]*(?:%| pp)? (?:–|to) [+-]?\d[\d.,]*(?:%| pp)?")


def _width(text: str) -> int:
    return len(text)


def break_points(
    plain: str, width: int, *, indent: int = 2, measure: Callable[[str], int] = _width
) -> list[int]:
    """Indices of the spaces of one line ``plain`` at which to break it so that each piece fits
    ``width`` (continuations indented by ``indent`` more than the line's own leading spaces),
    preferring spaces after a separator; ``measure`` gives a string's width in cells."""
    own = len(plain) - len(plain.lstrip(" "))
    if measure(plain) <= width:
        return []
    lead = own + indent
    # a number keeps the words beside it ("7.2 pp", "ICC 0.02", "35.8% – 64.2%")
    spaces = [
        i
        for i, ch in enumerate(plain)
        if ch == " "
        and i >= own
        and (
            plain[i - 1 : i] in _SEPARATORS
            or (plain[i - 1 : i] not in _BOUND and plain[i + 1 : i + 2] not in _BOUND)
        )
    ]
    inside = {i for m in _INTERVAL.finditer(plain) for i in range(m.start(), m.end())}
    spaces = [i for i in spaces if i not in inside]
    preferred = [i for i in spaces if i > 0 and plain[i - 1] in _SEPARATORS]
    breaks: list[int] = []
    start, limit = 0, width  # the current piece starts at ``start`` and may take ``limit`` cells
    while measure(plain[start:].rstrip()) > limit:

        def piece(i: int, start: int = start) -> int:
            return measure(plain[start:i].rstrip())

        phrase = [i for i in preferred if i > start and piece(i) <= limit]
        anywhere = [i for i in spaces if i > start and plain[start:i].strip()]
        word = [i for i in anywhere if piece(i) <= limit]
        # a phrase boundary, unless it leaves the line less than half full; else any space that
        # fits; else (a word wider than the line) the first space after it
        if phrase and (piece(phrase[-1]) * 2 >= limit or not word):
            fits = phrase
        elif word:
            fits = word
        elif anywhere:
            fits = anywhere[:1]
        else:
            break
        cut = fits[-1]
        breaks.append(cut)
        start, limit = cut + 1, width - lead
        while start < len(plain) and plain[start] == " ":
            start += 1
    return breaks


def wrap(text: str, width: int = 80, *, indent: int = 2) -> str:
    """Every line of ``text`` broken to fit ``width`` (:func:`break_points`), continuations
    indented ``indent`` more than the line (0 for a paragraph), none ending in a space; lines
    already short enough are kept as they are, but for trailing spaces."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip()
        cuts = break_points(line, width, indent=indent)
        if not cuts:
            out.append(line)
            continue
        lead = " " * (len(line) - len(line.lstrip(" ")) + indent)
        starts = [0, *(c + 1 for c in cuts)]
        ends = [*cuts, len(line)]
        for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
            piece = line[a:b].strip(" ") if i else line[a:b].rstrip()
            out.append(piece if i == 0 else lead + piece)
    return "\n".join(out)
