"""Questions the store answers about one run's attempts (for ``trialbook run`` and ``runs``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from trialbook.ledger._provenance import Completion
from trialbook.ledger.store._records import RunStatus

__all__ = ["completions", "run_pass_at_1", "run_tally"]


def run_tally(conn: sqlite3.Connection, run_id: str) -> tuple[int, int, int, int]:
    """(done, passed, timed out, infra errors) of the run's finished attempts."""
    done, passed, timed_out, infra = conn.execute(
        "SELECT count(*), coalesce(sum(passed), 0), coalesce(sum(timed_out), 0), "
        "coalesce(sum(status = 'infra_error'), 0) FROM attempts WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    return int(done), int(passed), int(timed_out), int(infra)


def run_pass_at_1(conn: sqlite3.Connection, run_id: str) -> float | None:
    """Mean over the run's tasks of each task's pass rate; a task with a leaked attempt is left
    out; None without a row."""
    (value,) = conn.execute(
        "SELECT avg(rate) FROM (SELECT avg(passed) AS rate FROM attempts WHERE run_id = ? "
        "GROUP BY task_id HAVING max(coalesce(oracle_leak, 0)) = 0)",
        (run_id,),
    ).fetchone()
    return None if value is None else float(value)


def completions(runs: Sequence[RunStatus]) -> dict[str, Completion]:
    """How far each run of our own harness got, from its latest event and its record."""
    out: dict[str, Completion] = {}
    for run in runs:
        if run.record.origin != "trialbook run":
            continue
        status = run.status if run.status in ("finished", "interrupted") else "not finished"
        out[run.record.run_id] = Completion(status, run.attempts, run.record.planned)
    return out
