"""What every HTML page shares: the page around the sections (its stylesheet inline: the page
fetches nothing), tables, figures with their numbers beside them, and the outcome classes of the grid
(colour, symbol and word: never colour alone)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import TYPE_CHECKING

from trialbook.report._css import CSS
from trialbook.report._plots import plots_available
from trialbook.report._views import pct

if TYPE_CHECKING:
    from trialbook.analysis import RunScore

__all__ = [
    "OUTCOMES",
    "figure",
    "interval",
    "page",
    "run_anchor",
    "table",
]

Rows = Sequence[Sequence[str]]

OUTCOMES = {
    "pass": ("pass", "✓", "pass"),
    "fail": ("fail", "✗", "fail"),
    "timeout": ("timeout", "◷", "timeout"),
    "infra_error": ("infra", "⚠", "infra error"),
}
"""Outcome -> (CSS class, symbol, word)."""


def table(
    head: Sequence[str],
    rows: Rows,
    caption: str = "",
    numeric_from: int = 1,
    numeric_to: int | None = None,
) -> str:
    """An HTML table; columns from ``numeric_from`` on (up to ``numeric_to``, else to the last) are
    right-aligned numbers, kept on one line; the others are text, which wraps."""
    end = len(head) if numeric_to is None else numeric_to
    cls = [' class="num"' if numeric_from <= i < end else "" for i in range(len(head))]
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{escape(caption)}</caption>")
    out.append(
        "<thead><tr>"
        + "".join(f"<th{c}>{escape(h)}</th>" for c, h in zip(cls, head, strict=True))
        + "</tr></thead><tbody>"
    )
    for row in rows:
        out.append(
            "<tr>"
            + "".join(f"<td{c}>{escape(v)}</td>" for c, v in zip(cls, row, strict=True))
            + "</tr>"
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def figure(name: str, draw: Callable[[], str], caption: str, table: str, wide: bool = False) -> str:
    """A figure and the table of its numbers, side by side (stacked when narrow or printed); a
    ``wide`` one (two panels) takes the row's width, its table below it."""
    if plots_available():
        svg = draw()
        plot = (
            f'<figure>{svg}<figcaption id="{name}-caption">{escape(caption)}</figcaption></figure>'
        )
    else:
        plot = (
            f'<p class="noplot" id="{name}-caption">{escape(caption)} (the plot needs matplotlib: '
            "<code>pip install 'trialbook[plots]'</code>; its numbers are in the table)</p>"
        )
    return (
        f'<div class="fig{" wide" if wide else ""}">{plot}<div class="numbers">{table}</div></div>'
    )


def interval(low: float, high: float) -> str:
    return f"{pct(low)} – {pct(high)}"


def run_anchor(run: RunScore) -> str:
    return "run-" + "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in run.run_id)


def page(title: str, nav: Sequence[tuple[str, str]], body: Sequence[str]) -> str:
    links = "".join(f'<li><a href="#{a}">{escape(t)}</a></li>' for a, t in nav)
    plots = (
        ""
        if plots_available()
        else (
            '<p class="note">matplotlib is not installed: tables stand where the plots would be '
            "(<code>pip install 'trialbook[plots]'</code> draws them).</p>"
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>\n"
        f"<header><h1>{escape(title)}</h1>{plots}<nav><ul>{links}</ul></nav></header>\n<main>\n"
        + "\n".join(body)
        + "\n</main><footer>Made by trialbook. Intervals resample tasks; see docs/report.md for what each figure shows.</footer></body></html>\n"
    )
