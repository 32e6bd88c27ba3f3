"""Budget replay of each run: coverage and cost per per-task budget (``trialbook budget``).

The rows replayed are the rows score would score (``kept_rows``: quarantine, fault cases and
infrastructure errors handled by the one set of rules), so a budget curve and a scorecard of the
same run always speak of the same attempts. The arithmetic is :func:`trialbook.stats.budget_curve`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trialbook.analysis._score import ScoreOptions, kept_rows
from trialbook.errors import ArgumentError
from trialbook.ledger import Ledger, read_ledger
from trialbook.stats import budget_curve

__all__ = ["BudgetReport", "BudgetRow", "RunBudget", "budget_file", "budget_replay"]


@dataclass(frozen=True)
class BudgetRow:
    """One per-task budget b: what spending it buys and costs."""

    budget: int
    """b: attempts allowed per task (the first b in attempt_index order)."""
    coverage: float
    """Share of tasks with a pass within their first b attempts."""
    cost: float | None
    """Total cost of every task's first b attempts; None when one of them has no recorded cost
    (unknown is not zero)."""
    cost_stop_at_first_success: float | None
    """Total cost when each task stops at its first pass within b; None when an attempt spent has
    no recorded cost."""
    covered: int = 0
    """Tasks with a pass within b (coverage x tasks)."""
    attempts: int = 0
    """Attempts spent with the fixed budget."""
    attempts_stop_at_first_success: int = 0
    """Attempts spent stopping at the first pass."""


@dataclass(frozen=True)
class RunBudget:
    """The budget replay of one run."""

    run_id: str
    """The run."""
    system: str | None
    """The system under test, if recorded."""
    tasks: int
    """Tasks replayed."""
    k: int
    """The largest budget replayed: the smallest number of scored attempts of any task."""
    rows: tuple[BudgetRow, ...]
    """Budgets 1..k."""
    cost_known_attempts: int = 0
    """Attempts of the run with a recorded cost."""
    attempts: int = 0
    """Attempts of the run replayed."""
    notes: tuple[str, ...] = ()
    """What was kept out (quarantine, fault cases, dropped infrastructure errors), as in score."""


@dataclass(frozen=True)
class BudgetReport:
    """Everything ``trialbook budget`` prints."""

    source: str
    """The ledger replayed."""
    runs: tuple[RunBudget, ...]
    """One replay per run."""


def _replay(ledger: Ledger, run_id: str, options: ScoreOptions) -> RunBudget:
    kept = kept_rows(ledger, run_id, options)
    rows, groups = kept.rows, kept.groups
    cost = rows.column("cost")
    k = int(groups.attempts.min())
    curve = budget_curve(
        task=groups.task,
        attempt_index=rows.column("attempt_index"),
        passed=rows.column("passed"),
        cost=cost,
        k=k,
    )
    notes = list(kept.notes)
    if int(groups.attempts.max()) > k:
        notes.append(
            f"budgets stop at {k}, the fewest scored attempts of any task "
            f"({int((groups.attempts > k).sum())} task(s) have more; a larger budget was never "
            "observed for every task)"
        )
    protocol = rows.first("protocol")
    if protocol == "repair":
        notes.append(
            "a repair run: budget b is b rounds of repair, in order; coverage is success within "
            "b rounds"
        )
    elif protocol == "human-selected":
        notes.append(
            "a human-selected run: coverage is the pool's (some attempt of the first b passed), "
            "not what was delivered: the picked attempt's success is score's figure"
        )
    known = int((~np.isnan(cost)).sum())
    if known < len(rows):
        notes.append(
            "cost not measured"
            if known == 0
            else f"cost recorded on {known} of {len(rows)} "
            "attempts: a budget that spends an unpriced attempt has no cost (unknown is not zero)"
        )
    system = rows.first("system")
    return RunBudget(
        run_id=run_id,
        system=system if isinstance(system, str) else None,
        tasks=curve.tasks,
        k=k,
        rows=tuple(
            BudgetRow(
                budget=b,
                coverage=curve.coverage[i],
                cost=curve.cost[i],
                cost_stop_at_first_success=curve.cost_stop_at_first_success[i],
                covered=curve.covered[i],
                attempts=curve.attempts[i],
                attempts_stop_at_first_success=curve.attempts_stop_at_first_success[i],
            )
            for i, b in enumerate(curve.budgets)
        ),
        cost_known_attempts=known,
        attempts=len(rows),
        notes=tuple(notes),
    )


def budget_replay(
    ledger: Ledger, *, run: str | None = None, options: ScoreOptions | None = None
) -> BudgetReport:
    """Replay budgets 1..k for every run of a validated ledger (or only ``run``).

    ``options`` carries score's row policy (``drop_infra_errors``); its interval settings are
    unused (a replay in recorded order is a count, not an estimate).
    """
    options = options or ScoreOptions()
    run_ids = ledger.run_ids
    if run is not None:
        if run not in run_ids:
            known = ", ".join(repr(r) for r in run_ids[:10])
            raise ArgumentError(
                f"run {run!r} is not in {ledger.source} (runs: {known})", argument="run"
            )
        run_ids = (run,)
    runs = tuple(_replay(ledger.run(rid), rid, options) for rid in run_ids)
    return BudgetReport(source=ledger.source, runs=runs)


def budget_file(
    path: str | Path, *, run: str | None = None, options: ScoreOptions | None = None
) -> BudgetReport:
    """Read, validate and replay a ledger file: what ``trialbook budget`` does."""
    return budget_replay(read_ledger(path), run=run, options=options)
