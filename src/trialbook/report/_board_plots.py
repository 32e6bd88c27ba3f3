"""The board's figures as SVG text: the cost-accuracy scatter and the rank intervals.

Drawn as :mod:`trialbook.report._plots` draws (its figure context, its Okabe-Ito colours, every
series told apart by marker as well as colour). Names come from ledgers: they are drawn printable,
and the figure context reads no mathematical text (``text.parse_math`` off), so a ``$`` or a
backslash in a name is drawn as written. No statistic is computed here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trialbook.report._board import shown
from trialbook.report._plots import BLUE, GREY, VERMILLION, _figure, _percent_axis

if TYPE_CHECKING:
    from trialbook.analysis import Board, BoardSystem

__all__ = ["LABELLED_UP_TO", "label", "ranks_svg", "scatter_svg"]

LABELLED_UP_TO = 12
"""Boards up to this many systems name every point of the scatter; larger ones name the frontier
and the leaders only (the table beside the figure names them all)."""

_MARKS = {
    "on": ("on the frontier", BLUE, "o"),
    "off": ("off the frontier", GREY, "s"),
    "dominated": ("dominated with confidence", VERMILLION, "X"),
}


def label(text: str) -> str:
    """A name as matplotlib text: printable; drawn as written (no mathtext in the figures)."""
    return shown(text)


def scatter_svg(board: Board, name: str) -> str:
    """Cost (x) against the metric (y), each point with both intervals; the frontier as a step
    line through its points. Systems without a cost are not drawn (the page lists them)."""
    placed = [s for s in board.systems if s.cost is not None]
    with _figure(name, 6.4, 4.0) as (fig, out):
        ax = fig.add_subplot()
        for key, (word, colour, marker) in _MARKS.items():
            group = [s for s in placed if s.frontier == key]
            if not group:
                continue
            xs = [_x(s) for s in group]
            ys = [s.metric.estimate for s in group]
            ax.errorbar(
                xs,
                ys,
                xerr=[
                    [
                        x - (s.cost_low if s.cost_low is not None else x)
                        for x, s in zip(xs, group, strict=True)
                    ],
                    [
                        (s.cost_high if s.cost_high is not None else x) - x
                        for x, s in zip(xs, group, strict=True)
                    ],
                ],
                yerr=[
                    [s.metric.estimate - s.metric.ci_low for s in group],
                    [s.metric.ci_high - s.metric.estimate for s in group],
                ],
                fmt=marker,
                color=colour,
                ecolor=colour,
                elinewidth=0.8,
                capsize=2,
                ms=6,
                label=f"{word} ({len(group)})",
            )
        front = sorted((s for s in placed if s.frontier == "on"), key=_x)
        if len(front) > 1:
            ax.step(
                [_x(s) for s in front],
                [s.metric.estimate for s in front],
                where="post",
                color=BLUE,
                lw=1,
                ls="--",
            )
        every = len(placed) <= LABELLED_UP_TO
        for s in placed:
            if every or s.frontier == "on" or s.leader:
                ax.annotate(
                    label(s.run_id),
                    (_x(s), s.metric.estimate),
                    xytext=(4, 4),
                    textcoords="offset points",
                    fontsize=7,
                )
        costs = [_x(s) for s in placed]
        if costs and min(costs) > 0 and max(costs) / min(costs) > 20:
            ax.set_xscale("log")
        ax.set_xlabel(
            f"cost per {'task' if board.cost_basis == 'per-task' else 'success'} "
            "(task-bootstrap interval)"
        )
        ax.set_ylabel(f"{board.metric} (score's interval)")
        _percent_axis(ax)
        if placed:
            ax.legend(loc="lower right", fontsize=8)
        else:
            ax.text(0.5, 0.5, "cost not measured", ha="center", transform=ax.transAxes)
    return out[0]


def _x(s: BoardSystem) -> float:
    assert s.cost is not None
    return s.cost


def ranks_svg(board: Board, name: str) -> str:
    """Each system's rank interval as a bar from rank_low to rank_high, its rank as a point; the
    leaders (intervals that contain 1) in blue."""
    systems = list(board.systems)
    n = len(systems)
    with _figure(name, 6.4, 0.9 + 0.24 * n) as (fig, out):
        ax = fig.add_subplot()
        ys = list(range(n))[::-1]
        for y, s in zip(ys, systems, strict=True):
            colour, marker = (BLUE, "o") if s.leader else (GREY, "s")
            # a bar over every rank the interval holds (one rank: one bar's width, still seen)
            ax.barh(
                y, s.rank_high - s.rank_low + 0.8, left=s.rank_low - 0.4, height=0.55, color=colour
            )
            ax.plot([s.rank], [y], marker=marker, color="#1a1a1a", ms=4, ls="none")
        ax.set_yticks(ys, [label(s.run_id) for s in systems], fontsize=7 if n > 20 else 9)
        ax.set_xlim(0.5, n + 0.5)
        ax.set_xticks(range(1, n + 1) if n <= 20 else range(1, n + 1, max(1, n // 10)))
        ax.set_xlabel(
            f"rank (interval: jointly {board.confidence:.0%}; blue: could rank 1, the leaders)"
        )
        ax.grid(axis="y", visible=False)
    return out[0]
