"""``trialbook board --format html``: one self-contained page (as report/_html.py makes them) with
the leaders, the cost-accuracy scatter, the rank-interval chart and the pairwise matrix of the
Holm-adjusted decisions. Every figure has its numbers in a table beside it; nothing is fetched and
no script runs. No statistic is computed here."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from trialbook.report import _board_plots
from trialbook.report._board import FRONTIER_WORDS, leaders_line, money, shown
from trialbook.report._page import figure, page, table
from trialbook.report._plots import BLUE, VERMILLION
from trialbook.report._views import pct

if TYPE_CHECKING:
    from trialbook.analysis import Board, BoardSystem

__all__ = ["board_html"]

# a decision cell: symbol and word as well as colour (light Okabe-Ito backgrounds)
_CELLS = {
    "row": (f"background:{BLUE}22", "▲", "row better"),
    "column": (f"background:{VERMILLION}22", "▼", "column better"),
    "none": ("", "·", "not separated"),
}


def _interval(low: float | None, high: float | None, fmt: str = "pct") -> str:
    if low is None or high is None:
        return "n/a"
    if fmt == "money":
        return f"{money(low)} – {money(high)}"
    return f"{pct(low)} – {pct(high)}"


def _system_rows(b: Board) -> list[list[str]]:
    return [
        [
            str(s.rank_low) if s.rank_low == s.rank_high else f"{s.rank_low}–{s.rank_high}",
            shown(s.run_id) + (" (leader)" if s.leader else ""),
            shown(s.system),
            pct(s.metric.estimate),
            _interval(s.metric.ci_low, s.metric.ci_high),
            money(s.cost) if s.cost is not None else (s.cost_note or "not measured"),
            _interval(s.cost_low, s.cost_high, "money"),
            FRONTIER_WORDS[s.frontier]
            + (f" by {', '.join(shown(r) for r in s.dominated_by)}" if s.dominated_by else ""),
        ]
        for s in b.systems
    ]


def _matrix(b: Board) -> str:
    """Row system against column system: who is decided better, by the adjusted test."""
    ids = [s.run_id for s in b.systems]
    verdict: dict[tuple[str, str], str] = {}
    p_adj: dict[tuple[str, str], float] = {}
    for p in b.pairs:
        p_adj[(p.a, p.b)] = p_adj[(p.b, p.a)] = p.p_adjusted
        if p.decision == "a better":
            verdict[(p.a, p.b)], verdict[(p.b, p.a)] = "row", "column"
        elif p.decision == "b better":
            verdict[(p.a, p.b)], verdict[(p.b, p.a)] = "column", "row"
    head = "".join(f'<th title="{escape(shown(r))}">{i + 1}</th>' for i, r in enumerate(ids))
    out = [
        f"<p>Row against column: ▲ the row's system is decided better, ▼ the column's, "
        f"· not separated (Holm-adjusted p at or above {b.alpha:g}); each cell's title holds "
        "its adjusted p. Columns are numbered as the rows.</p>",
        '<table class="matrix">',
        f"<thead><tr><th>#</th><th>run</th>{head}</tr></thead><tbody>",
    ]
    for i, row in enumerate(ids):
        cells = []
        for col in ids:
            if col == row:
                cells.append('<td class="num">—</td>')
                continue
            style, symbol, word = _CELLS[verdict.get((row, col), "none")]
            title = f"{word}, adjusted p = {p_adj[(row, col)]:.4g}"
            cells.append(
                f'<td class="num" style="{style}" title="{escape(title)}">'
                f'{symbol}<span class="sr"> {escape(word)}</span></td>'
            )
        out.append(
            f'<tr><th class="num">{i + 1}</th><th>{escape(shown(row))}</th>{"".join(cells)}</tr>'
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def _pair_rows(b: Board) -> list[list[str]]:
    return [
        [
            shown(p.a),
            shown(p.b),
            f"{round(100 * p.difference, 1) + 0.0:+.1f} pp",
            f"{p.p_value:.4g}",
            f"{p.p_adjusted:.4g}",
            p.decision,
        ]
        for p in b.pairs
    ]


def _cost_list(systems: tuple[BoardSystem, ...]) -> str:
    return ", ".join(f"{shown(s.run_id)} ({s.cost_note or 'not measured'})" for s in systems)


def board_html(b: Board) -> str:
    """The board as one page: leaders, scatter, rank intervals, pairwise matrix, every pair."""
    parts = [f'<p class="headline">{escape(leaders_line(b))}</p>']
    parts += [f'<p class="note">note: {escape(shown(n))}</p>' for n in b.notes]
    cost_head = "cost per task" if b.cost_basis == "per-task" else "cost per success"
    systems = table(
        ["rank", "run", "system", b.metric, "interval", cost_head, "interval", "frontier"],
        _system_rows(b),
        f"{len(b.systems)} systems on {b.tasks} shared tasks; intervals at {b.confidence:.0%}",
        numeric_from=3,
    )
    parts.append('<section id="systems"><h2>Systems</h2>')
    parts.append(
        figure(
            "board-scatter",
            lambda: _board_plots.scatter_svg(b, "board-scatter"),
            f"Cost against {b.metric}: each point with its metric interval (score's) and its cost "
            "interval (task bootstrap); blue circles on the frontier (the dashed step), "
            "vermilion crosses dominated with confidence, grey squares neither.",
            systems,
        )
    )
    if b.no_cost:
        parts.append(
            f'<p class="note">off the cost axis (cost not known): {escape(_cost_list(b.no_cost))}</p>'
        )
    parts += [
        f'<p class="note">note on {escape(shown(s.run_id))}: {escape(shown(n))}</p>'
        for s in b.systems
        for n in s.notes
    ]
    parts.append("</section>")
    rank_rows = [
        [shown(s.run_id), str(s.rank), str(s.rank_low), str(s.rank_high)] for s in b.systems
    ]
    parts.append('<section id="ranks"><h2>Ranks with joint intervals</h2>')
    parts.append(
        figure(
            "board-ranks",
            lambda: _board_plots.ranks_svg(b, "board-ranks"),
            f"Rank intervals [1 + systems decided better, N - systems decided worse] that hold "
            f"jointly with probability at least {b.confidence:.0%} (Holm-adjusted paired tests); "
            "the point is the rank by estimate. Blue bars contain rank 1: the leaders.",
            table(["run", "rank", "low", "high"], rank_rows, numeric_from=1),
        )
    )
    parts.append("</section>")
    parts.append('<section id="pairs"><h2>Pairwise decisions</h2>')
    parts.append(_matrix(b))
    pairs = table(
        ["a", "b", "difference (a - b)", "p", "p (Holm)", "decision"],
        _pair_rows(b),
        f"{b.test_method}; Holm's step-down adjustment over {len(b.pairs)} pairs",
        numeric_from=2,
    )
    parts.append(
        f"<details{' open' if len(b.pairs) <= 45 else ''}><summary>all {len(b.pairs)} pairs"
        f"</summary>{pairs}</details>"
    )
    parts.append("</section>")
    nav = [("systems", "systems"), ("ranks", "ranks"), ("pairs", "pairwise decisions")]
    return page(f"trialbook board — {b.metric}", nav, parts)
