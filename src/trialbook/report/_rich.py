"""The one table style of the terminal views: a plain header rule, no frame, no word ever cut;
and :func:`printable_renderable`, which makes every text in a view printable before rich lays it
out."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Group
from rich.measure import Measurement
from rich.table import Table
from rich.text import Span, Text

from trialbook.report._printable import printable
from trialbook.report._wrap import break_points

__all__ = ["Phrases", "printable_renderable", "table"]


class Phrases:
    """A line of text (styles kept) that wraps between phrases at the console's width
    (:func:`trialbook.report._wrap.break_points`): after a ``,`` ``;`` ``:`` or ``·``, at another
    space only inside a phrase wider than the whole line; continuations indented two spaces."""

    def __init__(self, text: Text | str, style: str = "") -> None:
        self.text = text if isinstance(text, Text) else Text(text, style=style)

    def _lines(self, width: int) -> Text:
        plain = self.text.plain
        cuts = break_points(plain, width, measure=cell_len)
        if not cuts:
            return self.text
        pieces = self.text.divide(cuts)
        lead = " " * (len(plain) - len(plain.lstrip(" ")) + 2)
        out = Text(style=self.text.style, end=self.text.end, overflow="fold")
        for i, piece in enumerate(pieces):
            if i:  # a continuation: its leading spaces give way to the indent
                piece = piece[len(piece.plain) - len(piece.plain.lstrip(" ")) :]
                out.append("\n" + lead)
            piece.rstrip()
            out.append_text(piece)
        return out

    def __rich_console__(self, console: Any, options: Any) -> Any:
        yield self._lines(options.max_width)

    def __rich_measure__(self, console: Any, options: Any) -> Measurement:
        words = self.text.plain.split()
        return Measurement(max((cell_len(w) for w in words), default=0), cell_len(self.text.plain))


class _Titled(Table):
    """A table whose title is a line of its own above it: a table's own title wraps at the
    table's width, which can be far narrower than the terminal."""

    heading: str | None = None

    def __rich_console__(self, console: Any, options: Any) -> Any:
        if self.heading:
            yield Phrases(self.heading, style="bold")
        yield from super().__rich_console__(console, options)


def table(title: str | None = None) -> Table:
    """A table in the house style, with ``title`` as a bold line above it."""
    out = _Titled(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1),
        collapse_padding=True,
    )
    out.heading = title
    return out


def _text(text: Text, *, lines: bool) -> Text:
    """``text`` made printable, its styles kept on the characters they were on (an escape
    takes the style of the character it stands for)."""
    plain = text.plain
    if plain == printable(plain, lines=lines):
        return text
    starts = [0]
    pieces = []
    for ch in plain:
        piece = printable(ch, lines=lines)
        pieces.append(piece)
        starts.append(starts[-1] + len(piece))
    out = Text(
        "".join(pieces),
        style=text.style,
        justify=text.justify,
        overflow=text.overflow,
        no_wrap=text.no_wrap,
        end=text.end,
    )
    out.spans = [Span(starts[s.start], starts[s.end], s.style) for s in text.spans]
    return out


def _clean(item: Any, *, cell: bool) -> Any:
    if isinstance(item, str):
        return printable(item, lines=not cell)
    if isinstance(item, Text):
        return _text(item, lines=not cell)
    if isinstance(item, Phrases):
        item.text = _text(item.text, lines=False)
    elif isinstance(item, Group):
        item._render = [_clean(part, cell=False) for part in item.renderables]
    elif isinstance(item, Table):
        if isinstance(item, _Titled) and item.heading:
            item.heading = printable(item.heading)
        for attr in ("title", "caption"):
            value = getattr(item, attr)
            if value is not None:
                setattr(item, attr, _clean(value, cell=True))
        for column in item.columns:
            column.header = _clean(column.header, cell=True)
            column.footer = _clean(column.footer, cell=True)
            column._cells = [_clean(c, cell=True) for c in column._cells]
    else:
        raise TypeError(f"no printable form for a {type(item).__name__} (add it here)")
    return item


def printable_renderable(renderable: Any) -> Any:
    """``renderable`` with every string and ``Text`` in it made printable (in place, and
    returned): a table cell holds one field, so a newline in it is shown as ``\\n``; a line of
    its own keeps its newlines. Any other kind of renderable is refused, so that a new view
    cannot pass text to the terminal unchecked."""
    return _clean(renderable, cell=False)
