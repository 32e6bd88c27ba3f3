"""A ScoreReport for the terminal: each run led by its headline, real tables, words never broken.

Every table column that holds a number or a short label never wraps; free text wraps at spaces
(rich does that for Text), so at 80 columns no word is cut in two.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

import trialbook.report._checks_view as cv
import trialbook.report._views as v
from trialbook.analysis import RunScore, ScoreReport
from trialbook.report._rich import Phrases
from trialbook.report._rich import table as _table

__all__ = ["score_table"]


def _line(text: str, style: str = "") -> Phrases:
    """A line of free text, wrapped between phrases at the console's width."""
    return Phrases(Text(text, style=style))


def _headline(run: RunScore) -> Phrases:
    text = Text()
    text.append(run.run_id, style="bold")
    text.append(": ")
    for i, (label, value) in enumerate(v.headline_parts(run)):
        if i:
            text.append(" · ")
        text.append(f"{label} ", style="bold")
        text.append(value, style="bold green" if i == 0 else "bold")
    text.append(f" · {v.design(run)}")
    if v.unfinished(run):
        text.append(v.unfinished(run), style="bold yellow")
    return Phrases(text)


def _metrics(run: RunScore, every: bool) -> list[Any]:
    table = _table()
    table.add_column("metric", no_wrap=True)
    table.add_column("estimate", justify="right", no_wrap=True)
    table.add_column(f"{run.bootstrap.confidence:.0%} interval", justify="right", no_wrap=True)
    table.add_column("SE", justify="right", no_wrap=True)
    rows, hidden = v.metric_rows(run, "pooled attempt rate", every=every)
    for label, est, interval, se, rate in rows:
        table.add_row(Text(label, style="dim") if rate else label, est, interval, se)
    out: list[Any] = [table]
    line = v.hidden_line(hidden)
    if line:
        out.append(_line(line, style="dim"))
    ladder = v.shown_metrics(run)[1]
    if ladder:
        out.append(_line(ladder, style="dim"))
    out.append(_line(v.ci_line(run), style="dim"))
    return out


def _companions(run: RunScore) -> Table:
    comp = _table("effort and cost")
    comp.show_header = False
    comp.add_column(style="cyan", no_wrap=True)
    comp.add_column()
    for k, value in v.companions(run):
        comp.add_row(k, value)
    return comp


def _strata(run: RunScore) -> Table:
    names, rows = v.strata_view(run)
    st = _table("by stratum")
    st.add_column("stratum", no_wrap=True)
    st.add_column("tasks", justify="right", no_wrap=True)
    for name in names:
        st.add_column(name, justify="right", no_wrap=True)
    for name, tasks, cells in rows:
        st.add_row(name, tasks, *cells)
    return st


def _selection(run: RunScore) -> list[Any]:
    sel = run.selection
    assert sel is not None
    table = _table(f"selection: {sel.tasks} task(s) with a delivered candidate marked")
    table.add_column("figure")
    for head in ("tasks", "share", "interval"):
        table.add_column(head, justify="right", no_wrap=True)
    for row in v.selection_rows(run):
        table.add_row(*row)
    return [table, *(_line(line, style="dim") for line in v.selection_notes(run))]


def _filled(title: str, head: Sequence[str], rows: Iterable[Sequence[str]], text: int) -> Table:
    """A view table: its first column and column ``text`` (free text, the only one that wraps;
    ``text`` past the last column for none) left-aligned, the figures right-aligned."""
    table = _table(title)
    for i, name in enumerate(head):
        table.add_column(name, justify="left" if i in (0, text) else "right", no_wrap=i < text)
    for row in rows:
        table.add_row(*row)
    return table


def _faults(run: RunScore) -> Table:
    return _filled(v.fault_title(run), v.FAULT_HEAD, v.fault_rows(run), len(v.FAULT_HEAD))


def _outcomes(run: RunScore) -> Table:
    return _filled(cv.outcome_title(run), cv.OUTCOME_HEAD, cv.outcome_rows(run), 4)


def _checks(run: RunScore) -> list[Any]:
    """The named-checks table, its figures only, and each check's failure reasons as lines
    under it: a column of reasons beside five of figures is a ribbon a few words wide."""
    rows = cv.check_rows(run)
    head = cv.CHECK_HEAD[:-1]
    out: list[Any] = [_filled(cv.check_title(run), head, [r[: len(head)] for r in rows], 5)]
    # under the table there is room for each reason whole, a line each below its check
    failing = [c for c in run.checks if c.reasons or c.other_reasons]
    if failing:
        out.append(_line(f"{cv.CHECK_HEAD[-1]}:", style="dim"))
    for c in failing:
        out.append(_line(f"  {c.name}:"))
        shown = c.reasons[: cv.REASONS_SHOWN]
        out += [_line(f"    {text} ({count})") for text, count in shown]
        rest = sum(count for _, count in c.reasons[cv.REASONS_SHOWN :]) + c.other_reasons
        if rest:
            out.append(_line(f"    {rest} more", style="dim"))
    return out


def _failures(run: RunScore) -> list[Any]:
    line = v.failure_line(run)
    if line is None:
        return []
    out: list[Any] = [_line(line)]
    errors = v.error_rows(run)
    if errors:
        table = _table()
        table.add_column("error (failed attempts)")
        table.add_column("attempts", justify="right", no_wrap=True)
        for row in errors:
            table.add_row(*row)
        out.append(table)
    return out


def _tasks(run: RunScore) -> Table:
    table = _table(f"tasks ({run.tasks})")
    for i, head in enumerate(v.TASK_HEAD):
        table.add_column(head, justify="left" if i < 2 else "right", no_wrap=i > 1)
    for row in v.task_rows(run):
        style = "red" if row[2].startswith("0/") else None
        table.add_row(*row, style=style)
    return table


def score_table(report: ScoreReport, *, tasks: bool = False, every: bool = False) -> Group:
    """A rich renderable for the terminal: per run its headline first, then the tables.

    ``tasks`` adds the per-task table; ``every`` keeps the rows that repeat pass@1 (pass^1, and
    the pooled attempt rate where it equals pass@1), which are otherwise left out.
    """
    parts: list[Any] = []
    for run in report.runs:
        parts.append(_headline(run))
        who = v.identity(run)
        if who:
            parts.append(_line(who, style="dim"))
        parts.append(Text(""))
        parts += _metrics(run, every)
        parts += [Text(""), _companions(run)]
        if run.strata:
            parts += [Text(""), _strata(run)]
        if run.selection is not None:
            parts += [Text(""), *_selection(run)]
        if run.checks:
            parts += [Text(""), *_checks(run)]
        if run.faults is not None:
            parts += [Text(""), _faults(run)]
            if run.faults.has_outcomes:
                parts += [Text(""), _outcomes(run)]
        failures = _failures(run)
        if failures:
            parts += [Text(""), *failures]
        if tasks:
            parts += [Text(""), _tasks(run)]
        parts.append(Text(""))
        parts += [_line(line) for line in v.variance_lines(run) + v.unweighted_note(run)]
        parts += [_line(f"note: {n}", style="yellow") for n in run.notes]
        parts.append(Text(""))
    parts += [_line(line) for line in v.across_lines(report)]
    return Group(*parts)
