"""Budget replay: coverage and cost for each per-task budget, replayed in recorded order.

Seed 000 ("put the score and the budget in one account"; docs/methodology.md, "Budget replay, cost
per success and selection"): give every task the same budget of b attempts, take its first b
attempts in ``attempt_index`` order, and count the tasks with a pass among them (coverage) and what
those attempts cost. A runner that stops at a task's first pass covers the same tasks and spends
only up to that pass. A replay in recorded order is one realisation; pass@b is its average over
every order of the attempts.

Unknown is not zero: a budget's cost is None when any attempt it spends has no recorded cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError

__all__ = ["BudgetCurve", "budget_curve"]


@dataclass(frozen=True)
class BudgetCurve:
    """Coverage and cost per budget b = 1..k (index b - 1 of each array)."""

    budgets: tuple[int, ...]
    """The budgets replayed, 1..k."""
    covered: tuple[int, ...]
    """Tasks with a pass within their first b attempts."""
    coverage: tuple[float, ...]
    """covered / tasks."""
    cost: tuple[float | None, ...]
    """Total cost of every task's first b attempts; None when one of them has no recorded cost."""
    cost_stop_at_first_success: tuple[float | None, ...]
    """Total cost when each task stops at its first pass within b (all b when none); None when an
    attempt spent has no recorded cost."""
    attempts: tuple[int, ...]
    """Attempts spent with the fixed budget b."""
    attempts_stop_at_first_success: tuple[int, ...]
    """Attempts spent stopping at the first pass."""
    tasks: int
    """Tasks replayed."""


def _sums(
    task: NDArray[np.intp], spent: NDArray[np.bool_], cost: NDArray[np.float64], t: int
) -> float | None:
    chosen = cost[spent]
    if np.isnan(chosen).any():
        return None
    return float(np.bincount(task[spent], weights=chosen, minlength=t).sum())


def budget_curve(
    *,
    task: ArrayLike,
    attempt_index: ArrayLike,
    passed: ArrayLike,
    cost: ArrayLike,
    k: int,
) -> BudgetCurve:
    """Replay budgets 1..k over per-attempt arrays.

    ``task`` numbers each attempt's task (0..T-1, every task present); ``attempt_index`` orders a
    task's attempts (unique within a task); ``cost`` is NaN where not recorded. Every task needs at
    least ``k`` attempts (a budget larger than a task's attempts was never observed for it).
    """
    codes = np.asarray(task, dtype=np.intp)
    order = np.asarray(attempt_index, dtype=np.int64)
    ok = np.asarray(passed, dtype=bool)
    money = np.asarray(cost, dtype=np.float64)
    size = codes.size
    if size == 0:
        raise ArgumentError("budget_curve needs at least one attempt", argument="task")
    if not (order.shape == ok.shape == money.shape == codes.shape and codes.ndim == 1):
        raise ArgumentError(
            "task, attempt_index, passed and cost must be 1-D arrays of one length",
            argument="task",
        )
    if codes.min() < 0:
        raise ArgumentError("task codes must be >= 0", argument="task")
    t = int(codes.max()) + 1
    n = np.bincount(codes, minlength=t)
    if (n == 0).any():
        raise ArgumentError("task codes must number the tasks 0..T-1 without gaps", argument="task")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ArgumentError(f"k must be a whole number >= 1, got {k!r}", argument="k")
    if k > int(n.min()):
        raise ArgumentError(
            f"k={k} exceeds the attempts of {int((n < k).sum())} task(s) (smallest n is "
            f"{int(n.min())})",
            argument="k",
        )
    # rank of each attempt within its task, in attempt_index order (0 = first)
    by = np.lexsort((order, codes))
    starts = np.concatenate(([0], np.cumsum(n)[:-1]))
    rank = np.empty(size, dtype=np.int64)
    rank[by] = np.arange(size) - np.repeat(starts, n)
    never = np.iinfo(np.int64).max
    first = np.full(t, never, dtype=np.int64)
    np.minimum.at(first, codes[ok], rank[ok])

    budgets = tuple(range(1, k + 1))
    covered, coverage, fixed, stop, used, used_stop = [], [], [], [], [], []
    for b in budgets:
        spent = rank < b
        stopped = rank < np.minimum(first, b - 1)[codes] + 1
        hit = int((first < b).sum())
        covered.append(hit)
        coverage.append(hit / t)
        fixed.append(_sums(codes, spent, money, t))
        stop.append(_sums(codes, stopped, money, t))
        used.append(int(spent.sum()))
        used_stop.append(int(stopped.sum()))
    return BudgetCurve(
        budgets=budgets,
        covered=tuple(covered),
        coverage=tuple(coverage),
        cost=tuple(fixed),
        cost_stop_at_first_success=tuple(stop),
        attempts=tuple(used),
        attempts_stop_at_first_success=tuple(used_stop),
        tasks=t,
    )
