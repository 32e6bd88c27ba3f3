"""The terminal every command prints to: colour where it is supported, none under NO_COLOR or
when the output is piped (rich detects the terminal; https://no-color.org is honoured in full,
not only for colours: no bold or dim either).

Everything a command prints passes through here: :func:`echo` for text, :func:`show` for a
rich view. Both make it printable first (:func:`trialbook.report.printable`): a run id, a task
id or an error text comes from a ledger, an import or an agent, and must not reach the terminal
as the ESC sequences or bidi overrides it may hold. No markup or emoji code in such text is
interpreted either.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["console", "echo", "show", "width"]


def console(*, stderr: bool = False) -> Console:
    """A rich console for standard output (or error): no syntax highlighting of numbers (the
    renderers choose every style), no styles at all under ``NO_COLOR``, and no markup or emoji
    codes read from the text it prints."""
    from rich.console import Console

    plain = os.environ.get("NO_COLOR", "") != ""
    return Console(
        stderr=stderr,
        highlight=False,
        markup=False,
        emoji=False,
        color_system=None if plain else "auto",
    )


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Print ``text`` (one or more lines) made printable."""
    from trialbook.report import printable

    click.echo(printable(text, lines=True), err=err, nl=nl)


def show(renderable: Any, *, stderr: bool = False) -> None:
    """Print a rich view with every text in it made printable before it is laid out, and no
    line ending in blanks (rich pads a table's cells to the column's width)."""
    from rich.segment import Segment, Segments

    from trialbook.report import printable_renderable

    out = console(stderr=stderr)
    lines = out.render_lines(printable_renderable(renderable), pad=False, new_lines=False)
    segments: list[Segment] = []
    for line in lines:
        segments += _rstrip(line)
        segments.append(Segment.line())
    out.print(Segments(segments), end="")


def width() -> int:
    """The terminal's width in columns (``COLUMNS`` first; 80 when the output is not one)."""
    import shutil

    return shutil.get_terminal_size((80, 24)).columns


def _rstrip(line: list[Any]) -> list[Any]:
    """A rendered line without the blanks at its end (styles and control codes kept)."""
    from rich.segment import Segment

    kept = list(line)
    while kept:
        last = kept[-1]
        if last.control:
            break
        text = last.text.rstrip(" ")
        if text:
            kept[-1] = Segment(text, last.style, last.control)
            break
        kept.pop()
    return kept
