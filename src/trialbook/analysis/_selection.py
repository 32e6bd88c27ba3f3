"""Selection: what the candidate pool held against what a selector delivered.

Seed 000: an evaluation can tell the right candidate by its hidden tests; a deployed system may have
no such selector. If it picks a wrong one of five candidates, a high pool pass@5 never becomes a
delivered success. So the report keeps three figures apart (docs/methodology.md, "Budget replay,
cost per success and selection"), each a share of the tasks whose rows mark the delivered candidate
(the ledger field ``selected``):

- **pool coverage**: some attempt of the task passed;
- **delivered success**: the attempt marked ``selected`` passed;
- **selector misses**: the pool held a pass and the selected attempt did not (a task where the
  selector marked nothing delivered nothing: a failure, and a miss when its pool held a pass).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trialbook.analysis._estimate import MetricEstimate
from trialbook.errors import LedgerError, Problem
from trialbook.ledger import Ledger, TaskTable

__all__ = ["Rates", "SelectionSummary", "selection_summary"]

Rates = Callable[[NDArray[np.float64], Sequence[str]], dict[str, MetricEstimate]]
"""Means over tasks with their intervals (score's interval settings), one per column and name."""


@dataclass(frozen=True)
class SelectionSummary:
    """Pool coverage, delivered success and selector misses over the tasks with a marked selection."""

    tasks: int
    """Tasks whose rows record ``selected`` (the denominators below)."""
    tasks_unmarked: int
    """Tasks scored whose rows record no ``selected`` at all (left out of this summary)."""
    pool_covered: int
    """Tasks with a pass among their attempts."""
    delivered: int
    """Tasks whose selected attempt passed."""
    misses: int
    """Tasks whose pool held a pass that the selector did not deliver."""
    nothing_selected: int
    """Tasks with ``selected`` recorded but no attempt marked true (delivered nothing)."""
    pool_coverage: MetricEstimate
    """pool_covered / tasks, with its interval over tasks."""
    delivered_success: MetricEstimate
    """delivered / tasks, with its interval over tasks."""
    miss_rate: MetricEstimate
    """misses / tasks, with its interval over tasks (pool coverage - delivered success)."""
    miss_task_ids: tuple[str, ...]
    """The tasks the selector missed."""

    @property
    def misses_of_covered(self) -> float | None:
        """Share of the pool-covered tasks the selector missed (None when none was covered)."""
        return self.misses / self.pool_covered if self.pool_covered else None


def selection_summary(rows: Ledger, groups: TaskTable, rates: Rates) -> SelectionSummary | None:
    """The selection view of scored ``rows`` (grouped by ``groups``); None when no row records
    ``selected``. Raises :class:`LedgerError` naming a task with more than one selected attempt."""
    if not rows.recorded("selected"):
        return None
    flag = rows.column("selected")
    known = ~np.isnan(flag)
    chosen = known & (flag == 1)
    marked_task = groups.count(known) > 0
    per_task = groups.count(chosen)
    several = np.flatnonzero(per_task > 1)
    if several.size:
        attempt = rows.column("attempt_index")
        problems = []
        for i in several.tolist():
            hit = np.flatnonzero(chosen & (groups.task == i))
            marked = ", ".join(str(int(a)) for a in np.sort(attempt[hit]))
            problems.append(
                Problem(
                    int(rows.lines[hit].max()),
                    f"task {groups.task_ids[i]!r}: field 'selected' marks {hit.size} attempts "
                    f"(attempt_index {marked}); a selector delivers one candidate per task",
                    rows.source,
                )
            )
        raise LedgerError(problems)
    pool = groups.passes > 0
    delivered = groups.count(chosen & rows.column("passed")) > 0
    miss = pool & ~delivered
    sel = marked_task
    values = np.column_stack([pool[sel], delivered[sel], miss[sel]]).astype(np.float64)
    est = rates(values, ["pool", "delivered", "miss"])
    return SelectionSummary(
        tasks=int(sel.sum()),
        tasks_unmarked=int((~sel).sum()),
        pool_covered=int(pool[sel].sum()),
        delivered=int(delivered[sel].sum()),
        misses=int(miss[sel].sum()),
        nothing_selected=int((sel & (per_task == 0)).sum()),
        pool_coverage=est["pool"],
        delivered_success=est["delivered"],
        miss_rate=est["miss"],
        miss_task_ids=tuple(groups.task_ids[i] for i in np.flatnonzero(sel & miss).tolist()),
    )
