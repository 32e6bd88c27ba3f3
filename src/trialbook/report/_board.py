"""Render a Board (JSON contract ``trialbook.board/1``, terminal, markdown). No statistics here.

Run ids, system names and notes come from ledgers, that is from whoever wrote them: every one is
shown through :func:`shown`, which is :func:`trialbook.report.printable` (an escape sequence
would restyle or move the terminal; it is shown as ``\\x1b``), and markdown passes it through
:func:`trialbook.report._mdtext.md_text`, so GitHub reads none of it as markup.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rich.console import Group
from rich.text import Text

from trialbook.analysis import Board, BoardSystem
from trialbook.report._json import json_safe
from trialbook.report._printable import printable
from trialbook.report._rich import Phrases
from trialbook.report._rich import table as titled_table
from trialbook.report._views import md_text, pct

__all__ = ["BOARD_SCHEMA", "board_markdown", "board_table", "board_to_dict", "shown"]

BOARD_SCHEMA = "trialbook.board/1"
FRONTIER_WORDS = {
    "on": "frontier",
    "off": "off",
    "dominated": "dominated",
    None: "no cost",
}
"""How each frontier mark reads in a table."""


def shown(text: str | None, missing: str = "not recorded") -> str:
    """Text from a ledger, safe for a terminal: :func:`trialbook.report.printable` (every
    character a terminal acts on shown as a visible escape, on one line)."""
    if text is None:
        return missing
    return printable(text)


def _system_dict(s: BoardSystem) -> dict[str, Any]:
    m = s.metric
    return {
        "run_id": s.run_id,
        "system": s.system,
        "source": s.source,
        "dataset_id": s.dataset_id,
        "tasks": s.tasks,
        "attempts": s.attempts,
        "estimate": m.estimate,
        "ci_low": m.ci_low,
        "ci_high": m.ci_high,
        "se": m.se,
        "cost": None
        if s.cost is None
        else {"estimate": s.cost, "ci_low": s.cost_low, "ci_high": s.cost_high},
        "cost_note": s.cost_note,
        "rank": s.rank,
        "rank_low": s.rank_low,
        "rank_high": s.rank_high,
        "leader": s.leader,
        "frontier": s.frontier,
        "dominated_by": list(s.dominated_by),
        "notes": list(s.notes),
    }


def board_to_dict(b: Board) -> dict[str, Any]:
    """The ``trialbook.board/1`` document."""
    doc = {
        "schema": BOARD_SCHEMA,
        "metric": b.metric,
        "cost_basis": b.cost_basis,
        "tasks": b.tasks,
        "alpha": b.alpha,
        "adjustment": b.adjustment,
        "leaders": [s.run_id for s in b.leaders],
        "systems": [_system_dict(s) for s in b.systems],
        "pairs": [
            {
                "a": p.a,
                "b": p.b,
                "difference": p.difference,
                "p_value": p.p_value,
                "p_value_mc_se": p.p_value_mc_se,
                "p_adjusted": p.p_adjusted,
                "decision": p.decision,
                "method": p.method,
                "mcnemar": None if p.mcnemar is None else asdict(p.mcnemar),
            }
            for p in b.pairs
        ],
        "ci": {
            "method": b.interval_method,
            "confidence": b.confidence,
            "resamples": b.resamples,
            "seed": b.seed,
            "test": b.test_method,
            "unit": "task",
        },
        "notes": list(b.notes),
    }
    cleaned: dict[str, Any] = json_safe(doc)
    return cleaned


def _rank(s: BoardSystem) -> str:
    return str(s.rank_low) if s.rank_low == s.rank_high else f"{s.rank_low}–{s.rank_high}"


def _metric(s: BoardSystem) -> str:
    m = s.metric
    return f"{pct(m.estimate)} ({pct(m.ci_low)[:-1]}–{pct(m.ci_high)})"


def money(x: float | None) -> str:
    """A cost in dollars: to the cent from $1, to four decimals below."""
    if x is None:
        return "n/a"
    return f"${x:,.2f}" if abs(x) >= 1 else f"${x:.4f}"


def _cost(s: BoardSystem) -> str:
    if s.cost is None:
        return s.cost_note or "not measured"
    if s.cost_low is None or s.cost_high is None:
        return money(s.cost)
    return f"{money(s.cost)} ({money(s.cost_low)}–{money(s.cost_high)})"


def _cost_head(b: Board) -> str:
    return "cost per task" if b.cost_basis == "per-task" else "cost per success"


def leaders_line(b: Board) -> str:
    """The leaders, in words."""
    names = [shown(s.run_id) for s in b.leaders]
    joint = f"{b.confidence:.0%}"
    if len(names) == 1:
        return (
            f"LEADER: {names[0]} is ahead of every other system on {b.metric} "
            f"(rank intervals hold jointly at {joint}; Holm-adjusted paired tests)"
        )
    return (
        f"LEADERS: {', '.join(names)} cannot be told apart at the top on {b.metric} "
        f"(each could rank 1; rank intervals hold jointly at {joint}; Holm-adjusted paired tests)"
    )


def _frontier_lines(b: Board) -> list[str]:
    on = [shown(s.run_id) for s in b.systems if s.frontier == "on"]
    dominated = [
        f"{shown(s.run_id)} (by {', '.join(shown(r) for r in s.dominated_by)})"
        for s in b.systems
        if s.frontier == "dominated"
    ]
    lines = []
    if on:
        lines.append(
            f"cost-accuracy frontier (point estimates; none dominated with confidence): "
            f"{', '.join(on)}"
        )
    if dominated:
        lines.append(
            "dominated with confidence (another is decided better and significantly cheaper): "
            + "; ".join(dominated)
        )
    off = [shown(s.run_id) for s in b.no_cost]
    if off and len(off) == len(b.systems):
        lines.append("cost not measured for any system: no cost-accuracy frontier")
    elif off:
        lines.append(f"off the cost axis (cost not known): {', '.join(off)}")
    return lines


def _run_notes(b: Board) -> list[tuple[str, str]]:
    """(run, note) for every note of one run, in the board's order."""
    return [(s.run_id, n) for s in b.systems for n in s.notes]


def _how(b: Board) -> str:
    most = "" if all(p.method == b.test_method for p in b.pairs) else ", most pairs"
    return (
        f"{b.tasks} shared tasks; {len(b.pairs)} pair{'' if len(b.pairs) == 1 else 's'} by the "
        "paired test of compare "
        f"({b.test_method}{most}), Holm-adjusted at alpha {b.alpha:g}; metric interval: score's "
        f"({b.interval_method}); cost interval: task bootstrap, {b.resamples} resamples, "
        f"seed {b.seed}"
    )


def board_table(b: Board) -> Group:
    """A rich renderable for the terminal: the leaders first, then the table (80 columns)."""
    parts: list[Any] = [Phrases(leaders_line(b), style="bold")]
    parts += [Phrases(f"NOTE: {shown(n)}", style="yellow") for n in b.notes]
    costed = len(b.no_cost) < len(b.systems)  # no cost anywhere: no cost columns
    table = titled_table()
    table.add_column("rank", justify="right", no_wrap=True)
    table.add_column("run", overflow="fold")
    table.add_column(f"{b.metric} ({b.confidence:.0%})", justify="right", no_wrap=True)
    if costed:
        table.add_column(_cost_head(b), justify="right", overflow="fold")
        table.add_column("frontier", overflow="fold")
    for s in b.systems:
        cells: list[Any] = [_rank(s), Text(shown(s.run_id)), _metric(s)]
        if costed:
            cells += [Text(_cost(s)), FRONTIER_WORDS[s.frontier]]
        table.add_row(*cells, style="bold" if s.leader else None)
    parts += [Text(""), table, Text("")]
    parts += [Phrases(line) for line in _frontier_lines(b)]
    parts += [
        Phrases(f"note on {shown(rid)}: {shown(n)}", style="yellow") for rid, n in _run_notes(b)
    ]
    parts.append(Phrases(_how(b), style="dim"))
    return Group(*parts)


def board_markdown(b: Board) -> str:
    """Markdown for a pull-request comment: the leaders first, the table, the pairs folded."""
    out = [f"### {md_text(leaders_line(b))}", ""]
    out += [f"> **NOTE:** {md_text(shown(n))}" for n in b.notes]
    if b.notes:
        out.append("")
    out += [
        f"| rank | run | system | {md_text(b.metric)} ({b.confidence:.0%}) | "
        f"{_cost_head(b)} | frontier |",
        "|---:|---|---|---:|---:|---|",
    ]
    out += [
        "| "
        + " | ".join(
            [
                _rank(s),
                f"**{md_text(shown(s.run_id))}**" if s.leader else md_text(shown(s.run_id)),
                md_text(shown(s.system)),
                _metric(s),
                md_text(_cost(s)),
                FRONTIER_WORDS[s.frontier],
            ]
        )
        + " |"
        for s in b.systems
    ]
    out.append("")
    out += [f"- {md_text(line)}" for line in _frontier_lines(b)]
    out += [f"- **note on {md_text(shown(rid))}:** {md_text(shown(n))}" for rid, n in _run_notes(b)]
    pairs = [
        "| a | b | difference | p | p (Holm) | decision |",
        "|---|---|---:|---:|---:|---|",
    ]
    pairs += [
        f"| {md_text(shown(p.a))} | {md_text(shown(p.b))} | "
        f"{round(100 * p.difference, 1) + 0.0:+.1f} pp | {p.p_value:.4g} | "
        f"{p.p_adjusted:.4g} | {p.decision} |"
        for p in b.pairs
    ]
    out += ["", "<details>", f"<summary>All {len(b.pairs)} pairs</summary>", "", *pairs]
    out += ["", "</details>", "", f"_{md_text(_how(b))}_"]
    return "\n".join(out).rstrip() + "\n"
