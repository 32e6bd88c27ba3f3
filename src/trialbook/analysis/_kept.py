"""The attempts of a run that score, as score's row policy leaves them (``_score.kept_rows``)."""

from __future__ import annotations

from dataclasses import dataclass

from trialbook.ledger import Ledger, TaskTable

__all__ = ["Kept"]


@dataclass(frozen=True)
class Kept:
    """The attempts of one run that are scored, after the policy of this module's docstring."""

    rows: Ledger
    """The attempts scored."""
    groups: TaskTable
    """``rows`` grouped by task."""
    fault_rows: Ledger
    """The attempts of fault-case tasks (analysis._faults): their own table, not the headline."""
    notes: list[str]
    """What the reader should know about what was kept out."""
    quarantined: tuple[tuple[str, int], ...]
    """(task_id, attempt_index) of the leaked attempts."""
    infra_count: int
    """Attempts with status infra_error among the kept tasks."""
