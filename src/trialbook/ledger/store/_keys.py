"""The store's checks of incoming rows against the rows it holds: the attempt key (run, task,
attempt_index, retry) and the retry rule (docs/ledger.md, "Rules"), as the in-memory rules
(``ledger._rules.check_attempt_keys``) check them within one file, with the same words."""

from __future__ import annotations

import sqlite3

import numpy as np

from trialbook.errors import Problem
from trialbook.ledger._rules import retry_of
from trialbook.ledger._table import Ledger

__all__ = ["duplicates", "unfollowed"]


def duplicates(conn: sqlite3.Connection, incoming: Ledger, source: str) -> list[Problem]:
    """The incoming rows already stored, one line each; a run whose every incoming row (more
    than one) is stored, the same run imported again, is one line naming it."""
    stored = _stored(conn, incoming, source)
    runs = incoming.text("run_id")
    per_run: dict[str, int] = {}
    for i in range(len(incoming)):
        per_run[runs[i]] = per_run.get(runs[i], 0) + 1
    again: dict[str, list[Problem]] = {}
    for i, problem in stored:
        again.setdefault(runs[i], []).append(problem)
    problems: list[Problem] = []
    for run, found in again.items():
        if len(found) == per_run[run] > 1:
            problems.append(
                Problem(
                    0,
                    f"run {run!r} is already in the ledger: all {len(found)} of its attempts "
                    "here were stored before (rows are never overwritten; give it another run id "
                    "to keep both)",
                    source,
                )
            )
        else:
            problems += found
    return problems


def _stored(conn: sqlite3.Connection, incoming: Ledger, source: str) -> list[tuple[int, Problem]]:
    problems: list[tuple[int, Problem]] = []
    runs, tasks = incoming.text("run_id"), incoming.text("task_id")
    index, retry = incoming.values["attempt_index"], retry_of(incoming)
    for i in range(len(incoming)):
        stored = conn.execute(
            "SELECT 1 FROM attempts WHERE run_id = ? AND task_id = ? AND attempt_index = ? "
            "AND coalesce(retry, 0) = ?",
            (runs[i], tasks[i], int(index[i]), int(retry[i])),
        ).fetchone()
        if stored:
            again = f" retry {int(retry[i])}" if retry[i] else ""
            problems.append(
                (
                    i,
                    Problem(
                        int(incoming.lines[i]),
                        f"task {tasks[i]!r}: attempt {int(index[i])}{again} of run {runs[i]!r} is "
                        "already in the ledger (rows are never overwritten)",
                        source,
                    ),
                )
            )
    return problems


def unfollowed(conn: sqlite3.Connection, incoming: Ledger, source: str) -> list[Problem]:
    """Re-runs (retry r > 0) whose retry r - 1 is an infra_error row neither among the incoming
    rows nor stored: the retry rule across the store (``ledger._rules.check_attempt_keys``, rule
    2, which a batch checked with ``appended`` leaves to this)."""
    retry = retry_of(incoming)
    later = np.flatnonzero(retry > 0)
    if not later.size:
        return []
    problems: list[Problem] = []
    runs, tasks = incoming.text("run_id"), incoming.text("task_id")
    index = incoming.values["attempt_index"]
    infra = incoming.has_status("infra_error")
    batch = {
        (runs[i], tasks[i], int(index[i]), int(retry[i])) for i in np.flatnonzero(infra).tolist()
    }
    for i in later.tolist():
        key = (runs[i], tasks[i], int(index[i]), int(retry[i]) - 1)
        if key in batch:
            continue
        stored = conn.execute(
            "SELECT 1 FROM attempts WHERE run_id = ? AND task_id = ? AND attempt_index = ? "
            "AND coalesce(retry, 0) = ? AND status IS 'infra_error'",
            key,
        ).fetchone()
        if not stored:
            problems.append(
                Problem(
                    int(incoming.lines[i]),
                    f"run {runs[i]!r}, task {tasks[i]!r}: attempt_index {key[2]}: field "
                    f"'retry': {key[3] + 1} follows no infra_error row of retry {key[3]} of "
                    "the same attempt (a re-run replaces only an infra_error)",
                    source,
                )
            )
    return problems
