"""The one table style of the terminal views: a plain header rule, no frame, no word ever cut."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

__all__ = ["table"]


class _Titled(Table):
    """A table whose title is a line of its own above it: a table's own title wraps at the
    table's width, which can be far narrower than the terminal."""

    heading: str | None = None

    def __rich_console__(self, console: Any, options: Any) -> Any:
        if self.heading:
            yield Text(self.heading, style="bold")
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
