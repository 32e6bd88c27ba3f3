"""``list_runs``: the runs of a ledger, each with its status, attempts done of planned and pass@1."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trialbook.errors import ArgumentError
from trialbook.harness.sandbox import live_run_ids
from trialbook.ledger import LedgerStore, RunStatus

__all__ = ["RUN_STATES", "RunSummary", "list_runs"]

RUN_STATES = ("finished", "interrupted", "running", "imported")
"""``finished``; ``interrupted`` (stopped, or its harness was killed: resume it); ``running`` (a
live harness on this machine is running it now); ``imported`` (read from another harness's files)."""


@dataclass(frozen=True)
class RunSummary:
    """One run of a ledger, as ``trialbook runs`` lists it."""

    run_id: str
    system: str | None
    dataset_id: str | None
    status: str
    """One of :data:`RUN_STATES`."""
    done: int
    """Attempts with a row (an attempt run again once)."""
    planned: int | None
    """Attempts the run set out to make; None when its record does not say (an older ledger)."""
    started_at: str
    pass_at_1: float | None
    """Mean over tasks of each task's pass rate (equal weight; infrastructure errors count as
    failures, quarantined tasks are left out, as ``score`` does by default); None without rows."""
    selection: str | None
    """How the run's tasks were chosen (a subset, ``--task``, ``--limit``); None: all of them."""
    reruns: int = 0
    """Attempts run again after an infrastructure error (each counted once, by its highest retry)."""
    superseded: int = 0
    """Rows those re-runs superseded: kept in the ledger, counted in no figure."""
    lost: int = 0
    """Attempts whose row that counts is one the harness lost (``lost``): a resume runs them again."""
    protocol: str | None = None
    """How the run's attempts were made (independent, repair, human-selected); None: not
    recorded (a run stored before schema 10). ``pass_at_1`` is None unless it is independent."""

    @property
    def complete(self) -> bool:
        """Every planned attempt has its row (unknown counts as complete only when finished)."""
        return (
            self.done >= self.planned if self.planned is not None else self.status != "interrupted"
        )


def _status(run: RunStatus, live: set[str]) -> str:
    if (run.record.origin or "").startswith("import"):
        return "imported"
    if run.status in ("finished", "interrupted"):
        return run.status
    # started or resumed and never ended: running now, or its harness was killed
    return "running" if run.record.run_id in live else "interrupted"


def list_runs(ledger: Path) -> list[RunSummary]:
    """Every run of a SQLite ledger, in order of creation."""
    if ledger.suffix.lower() != ".db":
        raise ArgumentError(
            f"ledger must be a SQLite ledger (.db) to list its runs, got {str(ledger)!r}",
            argument="ledger",
        )
    if not ledger.is_file():
        raise ArgumentError(f"{ledger}: no such file", argument="ledger")
    live = live_run_ids()
    with LedgerStore(ledger, readonly=True) as store:
        out: list[RunSummary] = []
        for run in store.runs():
            record = run.record
            out.append(
                RunSummary(
                    run_id=record.run_id,
                    system=record.system,
                    dataset_id=record.dataset_id,
                    status=_status(run, live),
                    done=run.attempts,
                    planned=record.planned,
                    started_at=record.started_at,
                    # rounds of repair or a person's pick have no pass@1
                    pass_at_1=store.pass_at_1(record.run_id)
                    if record.protocol in (None, "independent")
                    else None,
                    selection=record.selection,
                    reruns=run.reruns,
                    superseded=run.superseded,
                    lost=len(store.lost(record.run_id)),
                    protocol=record.protocol,
                )
            )
    return out
