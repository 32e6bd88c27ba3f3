"""The companion figures printed beside every pass rate, and the cost of the score.

See docs/methodology.md, "Unknown is not zero" and "Budget replay, cost per success and selection".

Unknown is not zero: a figure whose inputs were not recorded is None ("not measured"), and a total
over attempts of which only some were priced is None too, with the partial sum and coverage kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError

__all__ = ["CostSummary", "EffortSummary", "Total", "cost_summary", "effort_summary"]


@dataclass(frozen=True)
class Total:
    """A sum over attempts of a field that may be unrecorded on some of them."""

    value: float | None
    """The sum when every attempt recorded the field; None ("not measured") otherwise."""
    known_attempts: int
    """How many attempts recorded it."""
    partial: float
    """The sum over the attempts that recorded it (a lower bound when some did not)."""


def _total(values: NDArray[np.float64]) -> Total:
    known = ~np.isnan(values)
    partial = float(values[known].sum())
    return Total(
        value=partial if known.all() else None, known_attempts=int(known.sum()), partial=partial
    )


def _rate(flags: NDArray[np.float64]) -> float | None:
    known = ~np.isnan(flags)
    return float(flags[known].mean()) if known.any() else None


@dataclass(frozen=True)
class EffortSummary:
    """What the pass rate cost in attempts, time and help."""

    attempts_per_task: float
    """Mean attempts recorded per task."""
    attempts_to_first_pass: float | None
    """Mean attempts a stop-at-first-pass policy would have used (n for a task that never passed);
    None when no task passed: with no first pass there are no attempts to it."""
    timeout_rate: float
    """Share of attempts stopped by the harness's wall-clock timeout."""
    infra_error_rate: float
    """Share of attempts with status infra_error (the harness failed, not the agent)."""
    helper_calls_per_attempt: float
    """Mean hidden-helper calls per attempt (search tools, critic models, pasted test output)."""
    cache_hit_rate: float | None
    """Share of attempts that hit a prompt cache, over those that recorded it; None if none did."""
    cache_known_attempts: int
    """How many attempts recorded cache_hit."""
    tool_calls_per_attempt: float | None
    """Mean tool calls per attempt, over those that recorded it; None if none did."""
    mean_elapsed_s: float
    """Mean wall-clock seconds per attempt."""
    median_elapsed_s: float
    """Median wall-clock seconds per attempt."""


def effort_summary(
    *,
    task_codes: ArrayLike,
    attempt_index: ArrayLike,
    passed: ArrayLike,
    timed_out: ArrayLike,
    infra_error: ArrayLike,
    helper_calls: ArrayLike,
    elapsed_s: ArrayLike,
    cache_hit: ArrayLike,
    tool_calls: ArrayLike,
) -> EffortSummary:
    """Companion figures from per-attempt arrays (NaN marks an unrecorded optional value)."""
    codes = np.asarray(task_codes, dtype=np.int64)
    order_idx = np.asarray(attempt_index, dtype=np.int64)
    ok = np.asarray(passed, dtype=bool)
    if codes.size == 0:
        raise ArgumentError("effort_summary needs at least one attempt")
    if codes.min() >= 0 and codes.max() < 4 * codes.size:  # small codes: number them in linear time
        present = np.bincount(codes) > 0
        task_of = codes if present.all() else (np.cumsum(present) - 1)[codes]
    else:
        task_of = np.unique(codes, return_inverse=True)[1]
    t = int(task_of.max()) + 1
    n = np.bincount(task_of, minlength=t)
    # a stop-at-first-pass policy uses the attempts before a task's first pass, plus that one
    big = np.iinfo(np.int64).max
    first = np.full(t, big, dtype=np.int64)
    np.minimum.at(first, task_of[ok], order_idx[ok])
    before = np.bincount(task_of, weights=order_idx < first[task_of], minlength=t)
    used = np.where(first < big, before + 1, n)
    tool = np.asarray(tool_calls, dtype=np.float64)
    tool_known = ~np.isnan(tool)
    cache = np.asarray(cache_hit, dtype=np.float64)
    elapsed = np.asarray(elapsed_s, dtype=np.float64)
    return EffortSummary(
        attempts_per_task=float(n.mean()),
        attempts_to_first_pass=float(used.mean()) if ok.any() else None,
        timeout_rate=float(np.asarray(timed_out, dtype=bool).mean()),
        infra_error_rate=float(np.asarray(infra_error, dtype=bool).mean()),
        helper_calls_per_attempt=float(np.asarray(helper_calls, dtype=np.float64).mean()),
        cache_hit_rate=_rate(cache),
        cache_known_attempts=int((~np.isnan(cache)).sum()),
        tool_calls_per_attempt=float(tool[tool_known].mean()) if tool_known.any() else None,
        mean_elapsed_s=float(elapsed.mean()),
        median_elapsed_s=float(np.median(elapsed)),
    )


@dataclass(frozen=True)
class CostSummary:
    """Money and tokens behind the score, and the cost of each solved task."""

    total_cost: Total
    """Sum of ``cost`` over all attempts, failed ones included."""
    tokens_in: Total
    """Sum of input tokens."""
    tokens_out: Total
    """Sum of output tokens."""
    successful_tasks: int
    """Tasks with at least one passing attempt."""
    cost_per_success: float | None
    """Cost per solved task: total_cost / successful_tasks (tasks with a pass, not passing attempts);
    None when cost is not fully measured or nothing succeeded. The name is kept for the JSON contract."""
    cost_per_success_note: str
    """Why cost_per_success is what it is, in words."""


def cost_summary(
    *, cost: ArrayLike, tokens_in: ArrayLike, tokens_out: ArrayLike, successful_tasks: int
) -> CostSummary:
    """Totals over all attempts (NaN = not recorded) and cost per solved task."""
    total = _total(np.asarray(cost, dtype=np.float64))
    if total.value is None:
        per, note = (
            None,
            (
                f"undefined: cost recorded for {total.known_attempts} attempts only"
                if total.known_attempts
                else "undefined: cost not measured"
            ),
        )
    elif successful_tasks == 0:
        per, note = None, "undefined: no task succeeded"
    else:
        per = total.value / successful_tasks
        note = "total cost of all attempts / tasks with at least one pass"
    return CostSummary(
        total_cost=total,
        tokens_in=_total(np.asarray(tokens_in, dtype=np.float64)),
        tokens_out=_total(np.asarray(tokens_out, dtype=np.float64)),
        successful_tasks=successful_tasks,
        cost_per_success=per,
        cost_per_success_note=note,
    )
