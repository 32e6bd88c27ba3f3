"""Questions the store answers about one run's attempts (for ``trialbook run``, ``runs`` and the
tallies of ``score``)."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trialbook.ledger._provenance import Completion
from trialbook.ledger.store._records import RunStatus
from trialbook.ledger.store._sql import COUNTED, RETRY_BROKEN

__all__ = [
    "attempt_counts",
    "before_first_pass",
    "completions",
    "counted",
    "counted_clause",
    "failed_rows",
    "float_columns",
    "reruns",
    "run_pass_at_1",
    "run_tally",
    "score_sums",
]


def counted(
    conn: sqlite3.Connection, present: Collection[str], where: str, args: tuple[Any, ...]
) -> str | None:
    """``where`` narrowed to the rows that count: when some row of it has ``retry`` > 0, the rows
    a higher retry of their attempt superseded are left out (in SQL, as ``Ledger.superseded``
    does). None when a re-run follows no infra_error row of the retry before it (the retry rule of
    ``ledger._rules.check_attempt_keys``, checked here in SQL)."""
    if "retry" not in present:
        return where
    if conn.execute(
        f'SELECT 1 FROM attempts WHERE {where} AND "retry" > 0 LIMIT 1', args
    ).fetchone():
        if conn.execute(
            f"SELECT 1 FROM attempts WHERE {where} AND {RETRY_BROKEN} LIMIT 1", args
        ).fetchone():
            return None
        return f"{where} AND {COUNTED}"
    return where


def reruns(conn: sqlite3.Connection, where: str, args: tuple[Any, ...]) -> int:
    """How many of the rows ``where`` (narrowed by :func:`counted`) are re-runs (retry > 0)."""
    if COUNTED not in where:
        return 0
    (count,) = conn.execute(
        f'SELECT count(*) FROM attempts WHERE {where} AND "retry" > 0', args
    ).fetchone()
    return int(count)


def attempt_counts(conn: sqlite3.Connection, run_id: str) -> tuple[int, int, int]:
    """(attempts with a row, rows a re-run superseded, attempts re-run) of a run: one row counts
    per attempt (its highest retry), so the attempts are the distinct (task, attempt_index) of a
    run with a re-run (one GROUP BY over the unique index, no per-row subquery)."""
    (total,) = conn.execute("SELECT count(*) FROM attempts WHERE run_id = ?", (run_id,)).fetchone()
    if not counted_clause(conn, run_id):
        return int(total), 0, 0
    attempts, reruns = conn.execute(
        "SELECT count(*), coalesce(sum(m > 0), 0) FROM (SELECT max(coalesce(retry, 0)) AS m "
        "FROM attempts WHERE run_id = ? GROUP BY task_id, attempt_index)",
        (run_id,),
    ).fetchone()
    return int(attempts), int(total) - int(attempts), int(reruns)


def counted_clause(conn: sqlite3.Connection, run_id: str) -> str:
    """`` AND`` the rows that count, for a run with a re-run (a ``retry`` > 0 row, schema 9);
    nothing for a run without one (most runs: no per-row subquery) or an older store."""
    names = {r[1] for r in conn.execute("PRAGMA table_info(attempts)")}
    if "retry" not in names:
        return ""
    again = conn.execute(
        "SELECT 1 FROM attempts WHERE run_id = ? AND retry > 0 LIMIT 1", (run_id,)
    ).fetchone()
    return f" AND {COUNTED}" if again else ""


def run_tally(conn: sqlite3.Connection, run_id: str) -> tuple[int, int, int, int]:
    """(done, passed, timed out, infra errors) of the run's finished attempts (a re-run attempt
    by its highest retry)."""
    done, passed, timed_out, infra = conn.execute(
        "SELECT count(*), coalesce(sum(passed), 0), coalesce(sum(timed_out), 0), "
        "coalesce(sum(status = 'infra_error'), 0) FROM attempts WHERE run_id = ?"
        + counted_clause(conn, run_id),
        (run_id,),
    ).fetchone()
    return int(done), int(passed), int(timed_out), int(infra)


def run_pass_at_1(conn: sqlite3.Connection, run_id: str) -> float | None:
    """Mean over the run's tasks of each task's pass rate; a task with a leaked attempt is left
    out; None without a row."""
    (value,) = conn.execute(
        "SELECT avg(rate) FROM (SELECT avg(passed) AS rate FROM attempts WHERE run_id = ? "
        + counted_clause(conn, run_id)
        + " GROUP BY task_id HAVING max(coalesce(oracle_leak, 0)) = 0)",
        (run_id,),
    ).fetchone()
    return None if value is None else float(value)


def of_our_harness(conn: sqlite3.Connection, run_id: str) -> bool:
    """Whether the run is one of ``trialbook run`` (only those have a :class:`Completion`), told
    from its record alone (counting its attempts is a pass over its rows, for the re-runs)."""
    if "origin" not in {r[1] for r in conn.execute("PRAGMA table_info(runs)")}:
        return False
    row = conn.execute("SELECT origin FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    return row is not None and row[0] == "trialbook run"


def completions(runs: Sequence[RunStatus]) -> dict[str, Completion]:
    """How far each run of our own harness got, from its latest event and its record."""
    out: dict[str, Completion] = {}
    for run in runs:
        if run.record.origin != "trialbook run":
            continue
        status = run.status if run.status in ("finished", "interrupted") else "not finished"
        out[run.record.run_id] = Completion(status, run.attempts, run.record.planned)
    return out


def failed_rows(
    conn: sqlite3.Connection, present: Collection[str], where: str, args: tuple[Any, ...]
) -> dict[str, Any]:
    """The rows matching ``where`` that did not pass, by outcome and error text: RunTally's
    ``failed`` and ``failed_errors``, as the in-memory tally draws them (``ledger._tally``)."""
    infra = "\"status\" IS 'infra_error'" if "status" in present else "0"
    error = '"error"' if "error" in present else "NULL"
    outcomes = {"failed": 0, "timed_out": 0, "infra_error": 0}
    errors: dict[str, int] = {}
    for outcome, text, count in conn.execute(
        f"SELECT CASE WHEN {infra} THEN 'infra_error' WHEN \"timed_out\" THEN 'timed_out' "
        f"ELSE 'failed' END, {error}, count(*) FROM attempts WHERE {where} AND NOT \"passed\" "
        "GROUP BY 1, 2 ORDER BY min(id)",
        args,
    ):
        outcomes[str(outcome)] += int(count)
        if text is not None:  # groups in order of their first row: an error's first group first
            errors[str(text)] = errors.get(str(text), 0) + int(count)
    return {"failed": outcomes, "failed_errors": tuple(errors.items())}


def float_columns(
    conn: sqlite3.Connection, names: Sequence[str], where: str, args: tuple[Any, ...], rows: int
) -> list[NDArray[np.float64]]:
    """Float columns (each >= 0 once checked) of the rows in row order, NULL as NaN, read
    one number at a time into one array."""
    # SQLite has no NaN: NULL comes as -1.0, which no checked value of these (each >= 0) is
    picked = ", ".join(f"coalesce({name}, -1.0)" for name in names)
    cur = conn.execute(f"SELECT {picked} FROM attempts WHERE {where} ORDER BY id", args)
    flat = np.fromiter(
        itertools.chain.from_iterable(cur) if len(names) > 1 else (v for (v,) in cur),
        dtype=np.float64,
        count=rows * len(names),
    )
    flat[flat == -1.0] = np.nan
    return [np.ascontiguousarray(flat[j :: len(names)]) for j in range(len(names))]


def before_first_pass(
    conn: sqlite3.Connection, c: dict[str, NDArray[Any]], where: str, args: tuple[Any, ...]
) -> NDArray[np.int64]:
    """Per task, the attempts below its first passing attempt_index (-1: none passed). The
    attempt indices of a task are distinct, so where they run without a gap the count is a
    subtraction; a task with gaps is counted by a query of its own."""
    n = c["n"].astype(np.int64)
    out = np.full(n.size, -1, dtype=np.int64)
    for i, (task, lo, hi, fp) in enumerate(
        zip(
            c["task"].tolist(),
            c["lo"].tolist(),
            c["hi"].tolist(),
            c["first_pass"].tolist(),
            strict=True,
        )
    ):
        if fp is None:
            continue
        if hi - lo + 1 == n[i]:
            out[i] = fp - lo
        else:
            out[i] = conn.execute(
                f'SELECT count(*) FROM attempts WHERE {where} AND "task_id" = ? '
                'AND "attempt_index" < ?',
                (*args, task, fp),
            ).fetchone()[0]
    return out


def score_sums(
    conn: sqlite3.Connection, task_ids: tuple[str, ...], where: str, args: tuple[Any, ...]
) -> NDArray[np.float64]:
    """Per task, the sum of score in row order (as the in-memory tally adds them)."""
    position = {t: i for i, t in enumerate(task_ids)}
    rows = conn.execute(
        f'SELECT "task_id", "score" FROM attempts WHERE {where} ORDER BY id', args
    ).fetchall()
    pos = np.fromiter((position[t] for t, _ in rows), dtype=np.intp, count=len(rows))
    score = np.fromiter((s for _, s in rows), dtype=np.float64, count=len(rows))
    return np.asarray(np.bincount(pos, weights=score, minlength=len(task_ids)), np.float64)
