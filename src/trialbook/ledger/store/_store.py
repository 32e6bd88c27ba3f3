"""The SQLite ledger store: embedded, transactional, append-only (docs/ledger.md, "The SQLite store").

One file holds many runs. Every table is append-only: triggers abort any UPDATE or DELETE, and this
module has no code path that issues one. A run's progress (started, resumed, finished, interrupted)
is a sequence of events, not a status column that gets overwritten; an attempt that was started but
never finished (the harness was killed) stays visible as a start marker without a row.

Concurrency: WAL journal, a busy timeout, and every write a short ``BEGIN IMMEDIATE`` transaction, so
several processes may append to one ledger and a reader never sees half of a transaction. The schema
carries a version (``PRAGMA user_version``); migrations run in one transaction and are recorded in the
``migrations`` table.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

import numpy as np

from trialbook.errors import LedgerError, Problem
from trialbook.ledger._paths import ledger_file_problem
from trialbook.ledger._provenance import Completion, Provenance
from trialbook.ledger._rows import ledger_from_rows, ledger_tuples
from trialbook.ledger._table import Ledger
from trialbook.ledger.store._columns import keep_columns
from trialbook.ledger.store._connection import BUSY_TIMEOUT_MS, connect, reading
from trialbook.ledger.store._keys import duplicates, unfollowed
from trialbook.ledger.store._own_schema import foreign_objects, refusal
from trialbook.ledger.store._queries import (
    attempt_counts,
    completions,
    counted_clause,
    run_pass_at_1,
    run_tally,
)
from trialbook.ledger.store._races import RaceLog
from trialbook.ledger.store._read import read_attempts
from trialbook.ledger.store._records import (
    RUN_EVENTS,
    RunRecord,
    RunStatus,
    now,
    record_from_rows,
    record_from_stored,
    run_values,
    stored_provenance,
)
from trialbook.ledger.store._schema import MIGRATIONS, SCHEMA_VERSION, statements
from trialbook.ledger.store._writer import COLUMNS, INSERT, Prepared

__all__ = ["BUSY_TIMEOUT_MS", "LedgerStore"]


class LedgerStore(RaceLog):
    """An open SQLite ledger. Use as a context manager; every write is its own short transaction."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        if problem := ledger_file_problem(self.path, may_be_absent=not readonly):
            raise LedgerError([Problem(0, problem, str(self.path))])
        self._runs_seen: set[str] = set()
        self._budgets: dict[str, int] = {}
        try:
            self._conn = connect(self.path, readonly)
            version = self._version()
            if version > SCHEMA_VERSION:
                raise LedgerError(
                    [
                        Problem(
                            0,
                            f"ledger schema {version} is newer than this trialbook knows "
                            f"({SCHEMA_VERSION}): upgrade trialbook",
                            str(self.path),
                        )
                    ]
                )
            if readonly:
                if version < 1:
                    raise LedgerError([Problem(0, "not a trialbook ledger", str(self.path))])
            else:
                if found := foreign_objects(self._conn, version):
                    self._conn.close()
                    raise LedgerError([Problem(0, refusal(found, version), str(self.path))])
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._migrate()
            self.readonly = readonly
        except sqlite3.DatabaseError as exc:
            raise LedgerError(
                [Problem(0, f"not a usable SQLite ledger: {exc}", str(self.path))]
            ) from None

    # ------------------------------------------------------------------ schema

    def _version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        if self._version() == SCHEMA_VERSION:
            return
        with self._write():
            version = self._version()  # re-read under the write lock: another process may have won
            for number, description, sql in MIGRATIONS:
                if number <= version:
                    continue
                for statement in statements(sql):
                    self._conn.execute(statement)
                self._conn.execute(
                    "INSERT INTO migrations (version, description, applied_at) VALUES (?, ?, ?)",
                    (number, description, now()),
                )
                self._conn.execute(f"PRAGMA user_version = {number}")

    @property
    def schema_version(self) -> int:
        """The schema version of the open file."""
        return self._version()

    def migrations(self) -> list[tuple[int, str, str]]:
        """Recorded migrations: (version, description, applied_at)."""
        return [
            (int(v), str(d), str(a))
            for v, d, a in self._conn.execute(
                "SELECT version, description, applied_at FROM migrations ORDER BY version"
            )
        ]

    # ------------------------------------------------------------------ writing

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short transaction that takes the write lock at once (no lock upgrade, no deadlock)."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                # what this transaction taught the caches (a run it created, its budget) is undone
                self._runs_seen.clear()
                self._budgets.clear()
                raise
            else:
                self._conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            # a full disk, an I/O error, a lock held past the busy timeout: nothing of this
            # transaction is written, and the command says so in one line
            raise LedgerError(
                [Problem(0, f"the ledger could not be written: {exc}", str(self.path))]
            ) from None

    def create_run(self, run: RunRecord) -> None:
        """Record a new run and its 'started' event. A run id that exists is an error: a deliberate
        re-run is a new run with a reason, never a reuse."""
        values = run_values(run)
        names = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        try:
            with self._write() as conn:
                conn.execute(f"INSERT INTO runs ({names}) VALUES ({marks})", list(values.values()))
                conn.execute(
                    "INSERT INTO run_events (run_id, event, at) VALUES (?, 'started', ?)",
                    (run.run_id, values["started_at"]),
                )
        except sqlite3.IntegrityError:
            raise LedgerError(
                [Problem(0, f"run {run.run_id!r} already exists in this ledger", str(self.path))]
            ) from None

    def record_event(
        self, run_id: str, event: str, detail: Mapping[str, object] | None = None
    ) -> None:
        """Append an event (resumed, finished, interrupted) to a run's history."""
        if event not in RUN_EVENTS:
            raise ValueError(f"unknown run event {event!r}")
        with self._write() as conn:
            conn.execute(
                "INSERT INTO run_events (run_id, event, at, detail) VALUES (?, ?, ?, ?)",
                (run_id, event, now(), None if detail is None else json.dumps(detail)),
            )

    def record_start(self, run_id: str, task_id: str, attempt_index: int, retry: int = 0) -> int:
        """Mark an attempt as started; returns the marker's id (unique per start)."""
        return self.write(run_id, (), [(task_id, attempt_index, retry)])[0]

    def append(self, rows: Sequence[Mapping[str, object]], source: str = "rows") -> int:
        """Validate and append attempts of existing runs in one transaction: all of them or none.

        The rows must obey every rule of a ledger file, and together with the rows already stored:
        no duplicate ``(run_id, task_id, attempt_index)`` and one ``k_budget`` per run. Raises
        :class:`LedgerError` naming the rows; nothing is written then.
        """
        incoming = ledger_from_rows(rows, source, appended=True)
        with self._write() as conn:
            return self._insert(conn, incoming, origin=None)

    def write(
        self,
        run_id: str,
        finished: Sequence[Prepared],
        starts: Sequence[tuple[str, int, int]],
    ) -> list[int]:
        """What the harness's driver writes at one moment, in one transaction: a finished attempt
        (already validated into a :class:`Ledger` by ``ledger_from_rows``, which the workers do in
        parallel; the driver passes one per call) and the start markers (task, attempt_index, retry)
        of attempts about to begin.
        The stored rows are checked as :meth:`append` checks them. Returns the markers' ids."""
        ids: list[int] = []
        with self._write() as conn:
            for item in finished:
                self._insert(conn, item.ledger, origin=None, params=item.params)
            stamp = now()
            for task_id, attempt_index, retry in starts:
                cur = conn.execute(
                    "INSERT INTO attempt_starts (run_id, task_id, attempt_index, started_at, retry) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (run_id, task_id, attempt_index, stamp, retry or None),
                )
                ids.append(int(cur.lastrowid or 0))
        return ids

    def import_ledgers(self, ledgers: Sequence[Ledger]) -> int:
        """Append validated ledgers (e.g. read from files) in one transaction, creating each run
        the store lacks from what its rows agree on. All files or none."""
        with self._write() as conn:
            count, problems = 0, list[Problem]()
            for ledger in ledgers:  # every file is checked, so one pass names every problem
                try:
                    count += self._insert(conn, ledger, origin=f"import {ledger.source}")
                except LedgerError as exc:
                    problems.extend(exc.details)
            if problems:
                raise LedgerError(problems)  # the transaction is rolled back: nothing is written
            return count

    def _insert(
        self,
        conn: sqlite3.Connection,
        incoming: Ledger,
        origin: str | None,
        params: list[tuple[object, ...]] | None = None,
    ) -> int:
        source = incoming.source
        problems = [
            Problem(int(incoming.lines[i]), "field 'run_id': required in a .db ledger", source)
            for i in np.flatnonzero(incoming.codes["run_id"] < 0).tolist()
        ]
        if problems:
            raise LedgerError(problems)
        for run in incoming.run_ids:
            if self._known(conn, run):
                continue
            if origin is None:
                problems.append(
                    Problem(0, f"run {run!r} is not in the ledger: create it first", source)
                )
                continue
            record = record_from_rows(incoming, run, origin)
            values = run_values(record)
            conn.execute(
                f"INSERT INTO runs ({', '.join(values)}) VALUES ({', '.join('?' for _ in values)})",
                list(values.values()),
            )
            conn.execute(
                "INSERT INTO run_events (run_id, event, at, detail) VALUES (?, 'started', ?, ?)",
                (run, values["started_at"], json.dumps({"origin": origin})),
            )
        if problems:
            raise LedgerError(problems)
        problems += self._budget_conflicts(conn, incoming, source)
        problems += unfollowed(conn, incoming, source)
        if problems:
            raise LedgerError(problems)
        conn.execute("SAVEPOINT rows")
        (before,) = conn.execute("SELECT coalesce(max(id), 0) FROM attempts").fetchone()
        try:
            conn.executemany(INSERT, ledger_tuples(incoming, COLUMNS) if params is None else params)
        except sqlite3.IntegrityError as exc:
            # The unique (run_id, task_id, attempt_index, retry) refused a row. Undo the rows of this batch
            # that went in before it, then name every row that collides with a stored one.
            conn.execute("ROLLBACK TO rows")
            problems = duplicates(conn, incoming, source)
            raise LedgerError(
                problems or [Problem(0, f"refused by the ledger: {exc}", source)]
            ) from None
        (after,) = conn.execute("SELECT max(id) FROM attempts").fetchone()
        keep_columns(conn, incoming, int(before) + 1, int(after))
        return len(incoming)

    def _known(self, conn: sqlite3.Connection, run: str) -> bool:
        """Whether the run exists (cached: runs are never deleted)."""
        if run in self._runs_seen:
            return True
        if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run,)).fetchone():
            self._runs_seen.add(run)
            return True
        return False

    def _run_budget(self, conn: sqlite3.Connection, run: str) -> int | None:
        """The run's k_budget: pinned in its record, else that of its first row (cached: k never
        changes within a run)."""
        if run in self._budgets:
            return self._budgets[run]
        row = conn.execute(
            "SELECT k_budget FROM runs WHERE run_id = ? AND k_budget IS NOT NULL "
            "UNION ALL SELECT k_budget FROM (SELECT k_budget FROM attempts WHERE run_id = ? LIMIT 1)",
            (run, run),
        ).fetchone()
        if row is None:
            return None
        self._budgets[run] = int(row[0])
        return self._budgets[run]

    def _budget_conflicts(
        self, conn: sqlite3.Connection, incoming: Ledger, source: str
    ) -> list[Problem]:
        problems: list[Problem] = []
        runs = incoming.codes["run_id"]
        budget = incoming.values["k_budget"]
        tasks = incoming.labels["task_id"]
        for code, run in enumerate(incoming.labels["run_id"]):
            k = self._run_budget(conn, run)
            if k is None:
                continue
            for i in np.flatnonzero((runs == code) & (budget != k)).tolist():
                problems.append(
                    Problem(
                        int(incoming.lines[i]),
                        f"task {tasks[incoming.codes['task_id'][i]]!r}: field 'k_budget': "
                        f"{int(budget[i])} differs from run {run!r}'s k_budget {k}",
                        source,
                    )
                )
        return problems

    # ------------------------------------------------------------------ reading

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection (for the store's own read queries, e.g. the tallies)."""
        return self._conn

    def runs(self, run_id: str | None = None) -> list[RunStatus]:
        """Every run (or the one ``run_id``) with its latest event and attempt counts, in order of
        creation."""
        with reading(self._conn, str(self.path)):
            return self._runs(run_id)

    def _runs(self, run_id: str | None) -> list[RunStatus]:
        out: list[RunStatus] = []
        # a store of an older schema, read without migrating, lacks the newer run columns
        present = {r[1] for r in self._conn.execute("PRAGMA table_info(runs)")}
        names = [f.name for f in fields(RunRecord) if f.name in present]
        where, args = ("WHERE run_id = ?", (run_id,)) if run_id is not None else ("", ())
        rows = self._conn.execute(
            f"SELECT {', '.join(names)} FROM runs {where} ORDER BY rowid", args
        ).fetchall()
        for row in rows:
            record = record_from_stored(dict(zip(names, row, strict=True)))
            last = self._conn.execute(
                "SELECT event, at FROM run_events WHERE run_id = ? ORDER BY id DESC LIMIT 1",
                (record.run_id,),
            ).fetchone()
            attempts, superseded, reruns = attempt_counts(self._conn, record.run_id)
            (starts,) = self._conn.execute(
                "SELECT count(*) FROM attempt_starts WHERE run_id = ?", (record.run_id,)
            ).fetchone()
            status = last[0] if last else "started"
            out.append(
                RunStatus(
                    record=record,
                    status=status,
                    finished_at=last[1] if last and status == "finished" else None,
                    attempts=attempts,
                    starts=int(starts),
                    reruns=reruns,
                    superseded=superseded,
                )
            )
        return out

    def completion(self) -> dict[str, Completion]:
        """How far each run of our own harness got (imported runs are not listed; none in a
        store older than schema 2, read without migrating: it has no run events)."""
        return completions(self.runs()) if self._version() >= 2 else {}

    def run(self, run_id: str) -> RunStatus | None:
        """One run, or None."""
        return next(iter(self.runs(run_id)), None)

    def provenance_of(self, run_id: str) -> Provenance | None:
        """Where an imported run came from (None: a run of our own, or not in the store)."""
        with reading(self._conn, str(self.path)):
            return stored_provenance(self._conn).get(run_id)

    def finished(self, run_id: str) -> set[tuple[str, int]]:
        """(task_id, attempt_index) of every attempt of the run that has a row (of any retry)."""
        return {
            (str(t), int(a))
            for t, a in self._conn.execute(
                "SELECT task_id, attempt_index FROM attempts WHERE run_id = ?", (run_id,)
            )
        }

    def tally(self, run_id: str) -> tuple[int, int, int, int]:
        """The run's finished attempts counted: (done, passed, timed out, infra errors)."""
        return run_tally(self._conn, run_id)

    def pass_at_1(self, run_id: str) -> float | None:
        """Mean over the run's tasks of each task's pass rate (equal weight; a task with an
        oracle leak is left out); None without a row."""
        with reading(self._conn, str(self.path)):
            return run_pass_at_1(self._conn, run_id)

    def lost(self, run_id: str, *, every_infra: bool = False) -> list[tuple[str, int, int]]:
        """(task_id, attempt_index, retry) of the attempts whose row that counts (highest retry)
        is an infra_error the harness marked ``lost`` (with ``every_infra``: any infra_error), in
        row order: what a resume runs again, each as that retry + 1."""
        if self._version() < 9:
            return []
        which = "" if every_infra else " AND lost IS 1"
        with reading(self._conn, str(self.path)):
            return self._lost(run_id, which)

    def _lost(self, run_id: str, which: str) -> list[tuple[str, int, int]]:
        return [
            (str(t), int(a), int(r))
            for t, a, r in self._conn.execute(
                "SELECT task_id, attempt_index, coalesce(retry, 0) FROM attempts WHERE run_id = ? "
                f"AND status IS 'infra_error'{which}{counted_clause(self._conn, run_id)} ORDER BY id",
                (run_id,),
            )
        ]

    def unfinished_starts(self, run_id: str) -> list[tuple[str, int]]:
        """Attempts started and never finished (no row of the retry started): the harness was
        cut off during them."""
        retry = " AND coalesce(a.retry, 0) = coalesce(s.retry, 0)" if self._version() >= 9 else ""
        return [
            (str(t), int(a))
            for t, a in self._conn.execute(
                "SELECT DISTINCT s.task_id, s.attempt_index FROM attempt_starts s "
                "LEFT JOIN attempts a ON a.run_id = s.run_id AND a.task_id = s.task_id "
                f"AND a.attempt_index = s.attempt_index{retry} WHERE s.run_id = ? AND a.id IS NULL",
                (run_id,),
            )
        ]

    def read(self, run_id: str | None = None) -> Ledger:
        """The attempts (of one run, or all) as a validated :class:`Ledger`; line = row id.

        The precise read: every stored value becomes a Python value first, so that each problem
        is named as a JSONL file of the same rows would name it (``store/_read``).
        """
        with reading(self._conn, str(self.path)):
            return read_attempts(
                self._conn, str(self.path), run_id, self.completion(), self._version()
            )

    def close(self) -> None:
        """Close the connection. A writer first folds the WAL journal into the main file, so that
        the .db file alone holds the committed rows (a copy of it without its -wal loses nothing)."""
        if not self.readonly:
            # PASSIVE never waits for other writers; what it cannot fold in now, theirs will
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        self._conn.close()

    def __enter__(self) -> LedgerStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
