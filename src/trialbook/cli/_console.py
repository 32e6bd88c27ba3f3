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

__all__ = ["console", "echo", "show"]


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
    """Print a rich view with every text in it made printable before it is laid out."""
    from trialbook.report import printable_renderable

    console(stderr=stderr).print(printable_renderable(renderable))
