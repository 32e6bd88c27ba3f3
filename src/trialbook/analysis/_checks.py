"""Per-check pass rates: what each of the grader's named checks says about a run, and how a check
moved between two runs (docs/report.md, "Checks").

A check's rate is a mean over tasks, as pass@1 is: per task, the share of its attempts recording
the check that passed it; then the mean over the tasks where some attempt records it, with the
interval of the run's pass@1 (score's interval settings, tasks resampled). An attempt that does not
record a check (its grader printed no such name, or no checks at all) is left out of that check's
denominator, never counted as a pass or a fail; ``lacking`` says how many scored attempts that is.
The failure reasons are the ``reason`` texts of the attempts that failed the check, counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trialbook.analysis._estimate import MetricEstimate
from trialbook.ledger import CheckVerdict, Ledger, TaskTable, read_checks
from trialbook.stats import PairedDifference, paired_difference

__all__ = [
    "NO_REASON",
    "REASONS_KEPT",
    "CheckMove",
    "CheckRate",
    "CheckRates",
    "check_moves",
    "check_rates",
    "per_task_checks",
]

NO_REASON = "(no reason given)"
"""How a failure without a reason is counted among the reasons."""
REASONS_KEPT = 10
"""The most common failure reasons kept per check; the rest are summed in ``other_reasons``."""

CheckRates = Callable[[NDArray[np.float64], Sequence[str], float], dict[str, MetricEstimate]]
"""Means over tasks with score's intervals: per-task values (T, M), names, attempts behind them."""


@dataclass(frozen=True)
class CheckRate:
    """One named check of a run: its pass rate over tasks and why it failed."""

    name: str
    """The check's name, as the grader printed it."""
    rate: MetricEstimate
    """Mean over tasks of the per-task share of attempts that passed it, with its interval."""
    tasks: int
    """Tasks with an attempt recording the check (the mean's tasks)."""
    attempts: int
    """Attempts recording the check."""
    passed: int
    """Of those, attempts that passed it."""
    lacking: int
    """Scored attempts that do not record it (left out of its denominator)."""
    reasons: tuple[tuple[str, int], ...]
    """The most common failure reasons with their counts, most common first (at most
    :data:`REASONS_KEPT`)."""
    other_reasons: int
    """Failures whose reason is not among ``reasons``."""


@dataclass(frozen=True)
class CheckMove:
    """How one check moved from the baseline run to the candidate, over their shared tasks."""

    name: str
    """The check's name."""
    difference: PairedDifference
    """Candidate - baseline per-task pass share, paired over the tasks both record it on."""


def _parsed(rows: Ledger) -> list[dict[str, CheckVerdict] | None]:
    cache: dict[str, dict[str, CheckVerdict]] = {}
    out: list[dict[str, CheckVerdict] | None] = []
    for text in rows.column("checks").tolist():
        if text is None:
            out.append(None)
        else:
            if text not in cache:
                cache[text] = read_checks(text)  # the rules checked it when the ledger was read
            out.append(cache[text])
    return out


def per_task_checks(
    rows: Ledger, groups: TaskTable
) -> dict[str, tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """Check name -> (attempts recording it, attempts passing it) per task of ``groups``; names
    in order of first appearance."""
    tasks = len(groups.task_ids)
    out: dict[str, tuple[NDArray[np.int64], NDArray[np.int64]]] = {}
    for task, checks in zip(groups.task.tolist(), _parsed(rows), strict=True):
        for name, verdict in (checks or {}).items():
            if name not in out:
                out[name] = (np.zeros(tasks, dtype=np.int64), np.zeros(tasks, dtype=np.int64))
            out[name][0][task] += 1
            out[name][1][task] += verdict.passed
    return out


def check_rates(rows: Ledger, groups: TaskTable, rates: CheckRates) -> tuple[CheckRate, ...]:
    """The checks of one run's scored ``rows`` (grouped by ``groups``); empty when none records
    any."""
    if not rows.recorded("checks"):
        return ()
    counts = per_task_checks(rows, groups)
    reasons: dict[str, Counter[str]] = {name: Counter() for name in counts}
    for checks in _parsed(rows):
        for name, verdict in (checks or {}).items():
            if not verdict.passed:
                reasons[name][verdict.reason or NO_REASON] += 1
    out = []
    order = groups.in_row_order()  # tasks in order of first appearance, however coded: every
    # source of the same rows then sums the same vector in the same order (the SE to the last bit)
    for name, (n, c) in counts.items():
        n, c = n[order], c[order]
        seen = n > 0
        share = (c[seen] / n[seen]).reshape(-1, 1)
        estimate = rates(share, (name,), float(n.sum()))[name]
        ranked = sorted(reasons[name].items(), key=lambda kv: (-kv[1], kv[0]))
        kept = tuple(ranked[:REASONS_KEPT])
        out.append(
            CheckRate(
                name=name,
                rate=estimate,
                tasks=int(seen.sum()),
                attempts=int(n.sum()),
                passed=int(c.sum()),
                lacking=len(rows) - int(n.sum()),
                reasons=kept,
                other_reasons=sum(v for _, v in ranked[REASONS_KEPT:]),
            )
        )
    return tuple(out)


def check_moves(
    baseline: Ledger | None,
    candidate: Ledger | None,
    *,
    confidence: float,
    resamples: int,
    seed: int,
) -> tuple[tuple[CheckMove, ...], tuple[str, ...]]:
    """Per check both runs record, the paired difference of its per-task pass share over the tasks
    both record it on (tasks resampled, as compare's difference is); checks in the baseline's
    order, then the candidate's new ones; and the checks both record but on fewer than two shared
    tasks, left out (an interval over one task would be a point)."""
    if baseline is None or candidate is None:
        return (), ()
    if not (baseline.recorded("checks") and candidate.recorded("checks")):
        return (), ()
    base_groups, cand_groups = baseline.tasks(), candidate.tasks()
    base = per_task_checks(baseline, base_groups)
    cand = per_task_checks(candidate, cand_groups)
    where = {t: i for i, t in enumerate(cand_groups.task_ids)}
    out = []
    few: list[str] = []
    for name in [*base, *(n for n in cand if n not in base)]:
        if name not in base or name not in cand:
            continue
        (bn, bc), (cn, cc) = base[name], cand[name]
        pairs = [
            (i, where[t])
            for i, t in enumerate(base_groups.task_ids)
            if t in where and bn[i] > 0 and cn[where[t]] > 0
        ]
        if len(pairs) < 2:
            few.append(name)
            continue
        b = np.array([bc[i] / bn[i] for i, _ in pairs])
        c = np.array([cc[j] / cn[j] for _, j in pairs])
        diff = paired_difference(b, c, confidence=confidence, resamples=resamples, seed=seed)
        out.append(CheckMove(name=name, difference=diff))
    return tuple(out), tuple(few)
