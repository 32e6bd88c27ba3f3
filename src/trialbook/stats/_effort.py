"""The companion figures printed beside every pass rate, and the cost of the score.

See docs/methodology.md, "Unknown is not zero" and "Budget replay, cost per success and selection".

Unknown is not zero: a figure whose inputs were not recorded is None ("not measured"), and a total
over attempts of which only some were priced is None too, with the partial sum and coverage kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError

__all__ = [
    "CostSummary",
    "EffortSummary",
    "Total",
    "cost_from_totals",
    "cost_summary",
    "effort_from_counts",
    "effort_summary",
    "total_of",
]


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


def total_of(partial: float, known: int, attempts: int) -> Total:
    """The :class:`Total` of ``attempts`` attempts of which ``known`` recorded the field, their sum
    being ``partial`` (what :func:`cost_summary` computes from per-attempt values)."""
    if not 0 <= known <= attempts:
        raise ArgumentError(f"known must be in 0..{attempts}, got {known}", argument="known")
    return Total(
        value=partial if known == attempts else None, known_attempts=known, partial=partial
    )


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
    """Share of attempts with status infra_error (the harness failed, not the agent); where a
    score drops them from the pass rates' denominator, still their share of the run's attempts."""
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
    tool = np.asarray(tool_calls, dtype=np.float64)
    tool_known = ~np.isnan(tool)
    cache = np.asarray(cache_hit, dtype=np.float64)
    cache_known = ~np.isnan(cache)
    rows = codes.size
    return effort_from_counts(
        attempts=n,
        before_first_pass=np.where(first < big, before, -1).astype(np.int64),
        timed_out=(int(np.asarray(timed_out, dtype=bool).sum()), rows),
        infra_errors=int(np.asarray(infra_error, dtype=bool).sum()),
        helper_calls=(float(np.asarray(helper_calls, dtype=np.float64).sum()), rows),
        cache_hits=(float(cache[cache_known].sum()), int(cache_known.sum())),
        tool_calls=(float(tool[tool_known].sum()), int(tool_known.sum())),
        elapsed_s=np.asarray(elapsed_s, dtype=np.float64),
    )


def effort_from_counts(
    *,
    attempts: ArrayLike,
    before_first_pass: ArrayLike,
    timed_out: tuple[float, int],
    infra_errors: int,
    helper_calls: tuple[float, int],
    cache_hits: tuple[float, int],
    tool_calls: tuple[float, int],
    elapsed_s: ArrayLike,
) -> EffortSummary:
    """Companion figures from per-task counts and per-field (sum, attempts recording it) pairs.

    ``attempts``: n per task; ``before_first_pass``: per task, the attempts with a lower
    attempt_index than its first pass (-1: no pass); ``elapsed_s``: per attempt that records it
    (the mean and median need the values). A rate over no recording attempt is NaN for timeouts,
    helper calls and elapsed time (shown as "not recorded"), None for cache hits and tool calls.
    Counts are whole numbers, so their sums are exact and the order of the rows does not matter.
    """
    n = np.asarray(attempts, dtype=np.int64)
    before = np.asarray(before_first_pass, dtype=np.int64)
    if n.size == 0 or n.shape != before.shape:
        raise ArgumentError("attempts and before_first_pass need one value per task, >= 1 task")
    used = np.where(before >= 0, before + 1, n)
    elapsed = np.asarray(elapsed_s, dtype=np.float64)
    rows = int(n.sum())

    def mean(pair: tuple[float, int]) -> float:
        return pair[0] / pair[1] if pair[1] else math.nan

    return EffortSummary(
        attempts_per_task=float(n.mean()),
        attempts_to_first_pass=float(used.mean()) if (before >= 0).any() else None,
        timeout_rate=mean(timed_out),
        infra_error_rate=infra_errors / rows,
        helper_calls_per_attempt=mean(helper_calls),
        cache_hit_rate=cache_hits[0] / cache_hits[1] if cache_hits[1] else None,
        cache_known_attempts=int(cache_hits[1]),
        tool_calls_per_attempt=tool_calls[0] / tool_calls[1] if tool_calls[1] else None,
        mean_elapsed_s=float(elapsed.mean()) if elapsed.size else math.nan,
        median_elapsed_s=float(np.median(elapsed)) if elapsed.size else math.nan,
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
    return cost_from_totals(
        total_cost=_total(np.asarray(cost, dtype=np.float64)),
        tokens_in=_total(np.asarray(tokens_in, dtype=np.float64)),
        tokens_out=_total(np.asarray(tokens_out, dtype=np.float64)),
        successful_tasks=successful_tasks,
    )


def cost_from_totals(
    *, total_cost: Total, tokens_in: Total, tokens_out: Total, successful_tasks: int
) -> CostSummary:
    """The cost summary of totals already summed (see :func:`total_of`)."""
    total = total_cost
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
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        successful_tasks=successful_tasks,
        cost_per_success=per,
        cost_per_success_note=note,
    )
