"""The terminal every command prints to: colour where it is supported, none under NO_COLOR or
when the output is piped (rich detects the terminal; https://no-color.org is honoured in full,
not only for colours: no bold or dim either)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["console"]


def console(*, stderr: bool = False) -> Console:
    """A rich console for standard output (or error): no syntax highlighting of numbers (the
    renderers choose every style), no styles at all under ``NO_COLOR``."""
    from rich.console import Console

    plain = os.environ.get("NO_COLOR", "") != ""
    return Console(stderr=stderr, highlight=False, color_system=None if plain else "auto")
