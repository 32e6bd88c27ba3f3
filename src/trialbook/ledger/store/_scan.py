"""The store tallied by SQLite: one ``GROUP BY task_id`` per run, the rules checked in SQL.

Reading a run never builds a Python object per stored value. One query returns, per task, the counts
and integer sums a :class:`RunTally` holds, with what the rules need to see across rows (the least
and greatest value of each field that must not vary within a run or a task, a count of distinct
attempt indices where no unique index forbids repeats) and, per task, the number of rows that break
a row-level rule. The schema's CHECK constraints already hold every row of a trialbook store to its
field's type and range, so those are re-checked only in a table whose schema is not the store's own
(a ``.db`` another tool wrote); the rules no constraint holds (``attempt_index`` below ``k_budget``,
``timed_out`` with ``passed``, the status and its flags, finite numbers, timestamps, an empty task
id) are checked for every row, in the same query.

The SQL only ever *accepts*: when anything is in doubt (a rule broken, a field a source did not
record, a column the ledger does not know) the run is read the precise way (:meth:`LedgerStore.read`),
which names every problem exactly as a JSONL file of the same rows would be told. The per-attempt
floats whose sum depends on the order of addition (``elapsed_s``, ``cost``, ``score``) are then read
column-wise, one number at a time into an array, in row order.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trialbook.background import Background
from trialbook.errors import LedgerError, Problem, TrialbookError
from trialbook.ledger._fields import FIELDS
from trialbook.ledger._provenance import Completion
from trialbook.ledger._rules import check_rules
from trialbook.ledger._table import Ledger
from trialbook.ledger._tally import Known, RunTally, tally_ledger
from trialbook.ledger.store._columns import DamagedColumns, covered, load_columns
from trialbook.ledger.store._connection import read_method, reading
from trialbook.ledger.store._digest import vouch_for
from trialbook.ledger.store._queries import (
    before_first_pass,
    completions,
    counted,
    failed_rows,
    float_columns,
    of_our_harness,
    reruns,
    score_sums,
)
from trialbook.ledger.store._sql import (
    PACKED,
    RUN_CONSTANT,
    SUMS,
    TASK_CONSTANT,
    WIDTH,
    columns_in,
    literal,
    quoted,
    row_doubts,
    unique_key,
)
from trialbook.ledger.store._store import LedgerStore

__all__ = ["StoreTallies"]


# Reading a kept blob costs about 0.2 ms whatever its size, a row read from the table about 0.05 ms
# (10,000 attempts written one at a time, as the harness writes them: 2.3 s from their 10,000
# blobs, 1.0 s from the table): a run of more than a few blobs averaging under four rows each is
# read from the table. An import keeps a run in one blob.
_FEW_BLOBS = 64
_ROWS_PER_BLOB = 4


def _refuse(problems: list[Problem]) -> None:
    if problems:
        raise LedgerError(problems)


class _Doubt(Exception):
    """The SQL could not vouch for a run: it is read the precise way."""


class StoreTallies:
    """:class:`~trialbook.ledger.Tallies` of a SQLite ledger, opened read-only (never migrated).

    Only the runs asked for are read (``WHERE run_id = ?``, served by the store's unique index on
    run, task and attempt); a run is checked when it is tallied.
    """

    def __init__(self, path: str | Path) -> None:
        self.store = LedgerStore(path, readonly=True)
        self._path = str(self.store.path)
        try:
            with reading(self.store.connection, self._path):
                self._open()
        except BaseException:
            self.store.close()
            raise
        self._runs: tuple[str, ...] | None = None
        self._whole: Ledger | None = None

    def _open(self) -> None:
        conn = self._conn = self.store.connection
        version = self.store.schema_version
        columns = {r[1]: r for r in conn.execute("PRAGMA table_info(attempts)")}
        self._present = {f.name for f in FIELDS} & set(columns)
        self._unknown = sorted(set(columns) - self._present - {"id"})
        self._version = version
        self._unique = unique_key(conn)
        if conn.execute("SELECT 1 FROM attempts LIMIT 1").fetchone() is None:
            raise LedgerError([Problem(0, "the ledger holds no attempts", self._path)])
        # a row without its run: the whole file is read the precise way, which names it
        self._orphans = (
            conn.execute('SELECT 1 FROM attempts WHERE "run_id" IS NULL LIMIT 1').fetchone()
            is not None
        )

    @property
    def source(self) -> str:
        return self._path

    @property
    def connection(self) -> sqlite3.Connection:
        return self._conn

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> StoreTallies:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------------ runs

    @read_method
    def run_ids(self) -> tuple[str, ...]:
        if self._orphans:
            return self._precise_whole().run_ids
        if self._runs is None:
            lo = self._one('SELECT min("run_id") FROM attempts')
            hi = self._one('SELECT max("run_id") FROM attempts')
            if lo == hi:  # one run: two index probes instead of a pass over the index
                self._runs = (str(lo),)
            else:
                rows = self._all(
                    'SELECT "run_id" FROM attempts GROUP BY "run_id" ORDER BY min(id)', ()
                )
                self._runs = tuple(str(r[0]) for r in rows)
        return self._runs

    @read_method
    def has_run(self, run_id: str) -> bool:
        if self._orphans:
            return run_id in self._precise_whole().run_ids
        return self._one('SELECT 1 FROM attempts WHERE "run_id" = ? LIMIT 1', (run_id,)) is not None

    @read_method
    def rows(self, run_id: str) -> Ledger:
        if self._orphans:
            return self._precise_whole().run(run_id)
        kept = self._kept(run_id)
        return (kept if kept is not None else self._precise(run_id)).latest()

    def _kept(self, run_id: str) -> Ledger | None:
        """The run from the columns the store kept of its rows (checked by the table's rules, as
        a JSONL file of them is), or None when some row has none (then the table is read)."""
        ledger = self._loaded(run_id)
        if ledger is not None:
            _refuse(check_rules(ledger))
        return ledger

    def _loaded(self, run_id: str) -> Ledger | None:
        """:meth:`_kept` before the rules are checked."""
        if self._unknown or self.store.schema_version < 7 or not covered(self._conn, run_id):
            return None
        blobs, rows = self._conn.execute(
            "SELECT count(*), sum(rows) FROM attempt_columns WHERE run_id = ?", (run_id,)
        ).fetchone()
        if blobs > _FEW_BLOBS and blobs * _ROWS_PER_BLOB > rows:
            return None  # a blob per attempt or so (the harness writes them one by one): the table
        provenance = self.store.provenance_of(run_id)
        completion = self._completion(run_id)
        try:
            ledger = load_columns(
                self._conn,
                run_id,
                self._path,
                {} if provenance is None else {run_id: provenance},
                {} if completion is None else {run_id: completion},
            )
        except DamagedColumns:  # a copy that is not its rows: the rows themselves are read
            return None
        vouch_for(self._conn, ledger, self._present, run_id, self._path)
        return ledger

    # ------------------------------------------------------------------ tallies

    @read_method
    def tally(
        self, run_id: str, *, drop_status: str | None = None, set_aside: Collection[str] = ()
    ) -> RunTally:
        if self._orphans:
            return tally_ledger(
                self._precise_whole().run(run_id),
                run_id,
                drop_status=drop_status,
                set_aside=set_aside,
            )
        kept = self._loaded(run_id)
        if kept is not None:
            # the rules on a second thread while the rows are tallied: a broken rule is the
            # answer whatever the tally made of the rows (or raised)
            checking = Background(check_rules, kept)
            try:
                tally = tally_ledger(kept, run_id, drop_status=drop_status, set_aside=set_aside)
            except BaseException:
                _refuse(checking.result())
                raise
            _refuse(checking.result())
            return tally
        try:
            return self._tally(run_id, drop_status, set_aside)
        except (_Doubt, sqlite3.DatabaseError) as exc:
            if getattr(self._conn, "clock", None) and self._conn.clock.fired:  # type: ignore[attr-defined]
                raise exc from None  # stopped for taking too long: the precise read is longer
            return tally_ledger(
                self._precise(run_id), run_id, drop_status=drop_status, set_aside=set_aside
            )

    def _precise(self, run_id: str) -> Ledger:
        return self.store.read(run_id)  # its SQLite errors are one line (_connection.reading)

    def _precise_whole(self) -> Ledger:
        if self._whole is None:
            self._whole = self.store.read()
        return self._whole

    def _where(self, run_id: str) -> tuple[str, tuple[Any, ...]]:
        """The rows of the run that count (``_queries.counted``): no condition at all when the
        store holds that run only and none of its attempts was run again."""
        runs = self._runs
        where, args = ("1", ()) if runs == (run_id,) else ('"run_id" = ?', (run_id,))
        found = counted(self._conn, self._present, where, args)
        if found is None:
            raise _Doubt  # a re-run breaks the retry rule: the precise read names it
        return found, args

    def _tally(self, run_id: str, drop_status: str | None, set_aside: Collection[str]) -> RunTally:
        if drop_status not in (None, "infra_error"):
            raise _Doubt  # tally_ledger names the argument
        for name in self._unknown:  # a column the ledger does not know, holding a value
            where, args = self._where(run_id)
            if (
                self._one(
                    f"SELECT 1 FROM attempts WHERE {where} AND {quoted(name)} IS NOT NULL LIMIT 1",
                    args,
                )
                is not None
            ):
                raise _Doubt
        self.run_ids()  # knowing the runs lets a store of one run be read without a condition
        where, args = self._where(run_id)
        everything = self._per_task(where, args)
        leaked = everything["leak"] > 0
        # a task's stratum is the same on each of its rows (_per_task checks it)
        aside = np.array([s in set_aside for s in everything["stratum_lo"].tolist()], dtype=bool)
        aside &= ~leaked
        outside = ~leaked & ~aside
        kept_rows = int(everything["n"][outside].sum())
        status_rows = int(everything["infra"][outside].sum())
        if kept_rows == 0:
            raise TrialbookError(
                f"run {run_id!r}: no attempts left to score after quarantine and drops"
            )
        drop = drop_status is not None and status_rows > 0
        condition, cargs = where, args
        if drop:
            condition += " AND \"status\" IS NOT 'infra_error'"
        leaked_tasks = [everything["task"][i] for i in np.flatnonzero(leaked).tolist()]
        left_out = [everything["task"][i] for i in np.flatnonzero(~outside).tolist()]
        if left_out:
            condition += ' AND "task_id" NOT IN (SELECT value FROM json_each(?))'
            cargs = (*cargs, json.dumps(left_out))
        counted = self._per_task(condition, cargs) if drop else _select(everything, outside)
        if not counted or counted["task"].size == 0:
            raise TrialbookError(
                f"run {run_id!r}: no attempts left to score after quarantine and drops"
            )
        emptied: tuple[str, ...] = ()
        if drop:
            left = set(counted["task"].tolist())
            emptied = tuple(t for t in _select(everything, outside)["task"] if t not in left)
        # tasks in order of first appearance in the run (before any drop)
        first_seen = dict(
            zip(everything["task"].tolist(), everything["first_id"].tolist(), strict=True)
        )
        order = np.argsort([first_seen[t] for t in counted["task"].tolist()], kind="stable")
        c = {k: v[order] for k, v in counted.items()}
        task_ids = tuple(str(t) for t in c["task"].tolist())
        n = c["n"].astype(np.int64)
        rows = int(n.sum())
        before = before_first_pass(self._conn, c, condition, cargs)
        quarantined: tuple[tuple[str, int], ...] = ()
        if leaked_tasks:
            quarantined = tuple(
                sorted(
                    (str(t), int(a))
                    for t, a in self._all(
                        f'SELECT "task_id", "attempt_index" FROM attempts WHERE {where} '
                        'AND "oracle_leak" = 1',
                        args,
                    )
                )
            )
        strata_order = np.argsort(c["first_id"], kind="stable")
        strata = tuple(
            dict.fromkeys(str(s) for s in c["stratum_lo"][strata_order].tolist() if s is not None)
        )
        floats = ['"elapsed_s"']
        cost_rows = int(c["count_cost"].sum())
        if cost_rows:
            floats.append('"cost"')
        values = float_columns(self._conn, floats, condition, cargs, rows)
        elapsed = values[0]
        cost = values[1] if cost_rows else np.zeros(0)
        score_rows = int(c["count_score"].sum())
        score = score_sums(self._conn, task_ids, condition, cargs) if score_rows == rows else None

        def known(name: str) -> Known:
            return Known(int(c[f"sum_{name}"].sum()), int(c[f"count_{name}"].sum()))

        def constant(name: str) -> Any:
            return c[f"{name}_lo"][0] if c[f"count_{name}"][0] else None

        completion = self._completion(run_id)
        system, dataset = constant("system"), constant("dataset_id")
        protocol = constant("protocol")
        return RunTally(
            run_id=run_id,
            source=self._path,
            provenance=self._provenance(run_id),
            completion=completion,
            system=None if system is None else str(system),
            dataset_id=None if dataset is None else str(dataset),
            k_budget=int(c["k_lo"][0]),
            quarantined=quarantined,
            leaked_tasks=tuple(str(t) for t in sorted(leaked_tasks, key=first_seen.__getitem__)),
            status_rows=status_rows,
            kept_rows=kept_rows,
            emptied_tasks=emptied,
            task_ids=task_ids,
            attempts=n,
            passes=c["passes"].astype(np.int64),
            first_passed=(c["first2"].astype(np.int64) % 2) == 0,
            before_first_pass=before,
            timeouts=c["timeouts"].astype(np.int64),
            timeouts_recorded=n,
            infra_errors=c["infra"].astype(np.int64),
            stratum=tuple(None if s is None else str(s) for s in c["stratum_lo"].tolist()),
            weight=np.array(
                [np.nan if w is None else float(w) for w in c["weight_lo"].tolist()],
                dtype=np.float64,
            ),
            strata=strata,
            passes_after_timeout=int(c["after_timeout"].sum()),
            infra_rows=int(c["infra"].sum()),
            helper_calls=Known(int(c["helper"].sum()), rows),
            timed_out=Known(int(c["timeouts"].sum()), rows),
            cache_hit=known("cache_hit"),
            tool_calls=known("tool_calls"),
            tokens_in=known("tokens_in"),
            tokens_out=known("tokens_out"),
            elapsed_s=elapsed,
            cost=cost,
            score=score,
            score_rows=score_rows,
            protocol=None if protocol is None else str(protocol),
            selected_rows=self._count("selected", condition, cargs),
            checks_rows=self._count("checks", condition, cargs),
            reruns=reruns(self._conn, where, args),
            **failed_rows(self._conn, self._present, condition, cargs),
        )

    def _per_task(self, where: str, args: tuple[Any, ...]) -> dict[str, NDArray[Any]]:
        """One GROUP BY over the rows: the aggregates, checked; _Doubt when a rule may be broken."""
        present = self._present
        # the run's constants as on one of its rows: every other row must hold the same
        first = self._conn.execute(
            "SELECT "
            + ", ".join(quoted(n) if n in present else "NULL" for n in RUN_CONSTANT)
            + f" FROM attempts WHERE {where} LIMIT 1",
            args,
        ).fetchone()
        if first is None:
            return {}
        if not isinstance(first[0], int) or not 1 <= first[0] < 1 << WIDTH:
            raise _Doubt  # a budget of 4096 or more (or none) is read the precise way
        # the row rules the schema's constraints do not hold, and every row to its field's type and range too, even in a table of the store's own schema:
        # PRAGMA ignore_check_constraints lets any writer past its CHECKs
        doubts = [row_doubts(present, trusted=False)] + [
            f"{quoted(n)} IS NOT {literal(v)}"
            for n, v in zip(RUN_CONSTANT, first, strict=True)
            if n in present
        ]
        exprs: list[tuple[str, str]] = [
            ("task", '"task_id"'),
            ("n", "count(*)"),
            ("first_id", "min(id)"),
            ("first2", 'min(2 * "attempt_index" + 1 - "passed")'),
            ("first_pass", 'min(CASE WHEN "passed" THEN "attempt_index" END)'),
            ("hi", 'max("attempt_index")'),
        ]
        for key, parts in PACKED.items():
            packed = " + ".join(
                f"({expr} << {j * WIDTH})"
                for j, (name, expr) in enumerate(parts)
                if all(c in present for c in columns_in(expr))
            )
            exprs.append((key, f"sum({packed or '0'})"))
        for name in SUMS:
            exprs.append((f"sum_{name}", f"total({quoted(name)})" if name in present else "0"))
        for name in TASK_CONSTANT:
            for suffix, fn in (("lo", "min"), ("hi", "max")):
                exprs.append(
                    (f"{name}_{suffix}", f"{fn}({quoted(name)})" if name in present else "NULL")
                )
        exprs.append(("doubts", "sum(" + " OR ".join(doubts) + ")"))
        if not self._unique:
            exprs.append(("distinct", 'count(DISTINCT "attempt_index")'))
        sql = (
            f"SELECT {', '.join(e for _, e in exprs)} FROM attempts WHERE {where} "
            'GROUP BY "run_id", "task_id"'  # one run: the order of the unique index, no sort
        )
        rows = self._all(sql, args)
        cols = {
            k: np.array(v, dtype=object)
            for (k, _), v in zip(exprs, zip(*rows, strict=True), strict=True)
        }
        if int(cols["doubts"].sum()) or any(not str(t).strip() for t in cols["task"].tolist()):
            raise _Doubt
        n = cols["n"].astype(np.int64)
        if not self._unique and (cols["distinct"].astype(np.int64) != n).any():
            raise _Doubt  # a repeated attempt: the precise check names both rows
        mask = (1 << WIDTH) - 1
        for key, parts in PACKED.items():
            bits = cols.pop(key).astype(np.int64)
            for j, (name, _) in enumerate(parts):
                cols[name] = (bits >> (j * WIDTH)) & mask
        for name in SUMS:  # total() is a float: exact for whole numbers below 2**53
            total = cols[f"sum_{name}"].astype(np.float64)
            if (np.abs(total) >= 2.0**53).any():
                raise _Doubt
            cols[f"sum_{name}"] = total.astype(np.int64)
        cols["helper"] = cols.pop("sum_helper_calls")
        cols["lo"] = cols["first2"].astype(np.int64) // 2
        cols["k_lo"] = np.full(n.size, first[0], dtype=np.int64)
        for name, value in zip(RUN_CONSTANT[1:], first[1:], strict=True):
            cols[f"{name}_lo"] = np.full(n.size, value, dtype=object)
            cols[f"count_{name}"] = n if value is not None else np.zeros(n.size, dtype=np.int64)
        for name in TASK_CONSTANT:
            count = cols[f"count_{name}"]
            if ((count != 0) & (count != n)).any() or (
                cols[f"{name}_lo"] != cols[f"{name}_hi"]
            ).any():
                raise _Doubt  # recorded on some rows of a task only, or varying within it
        cols["n"] = n
        return cols

    def _completion(self, run_id: str) -> Completion | None:
        if self.store.schema_version < 2 or not of_our_harness(self._conn, run_id):
            return None  # an imported run has none: its attempts are not counted for it
        status = self.store.run(run_id)
        return None if status is None else completions([status]).get(run_id)

    def _provenance(self, run_id: str) -> Any:
        return self.store.provenance_of(run_id)

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        row = self._conn.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def _count(self, name: str, condition: str, args: tuple[Any, ...]) -> int:
        """Rows meeting ``condition`` that record the optional field ``name``."""
        if name not in self._present:
            return 0
        return int(self._one(f"SELECT count({quoted(name)}) FROM attempts WHERE {condition}", args))

    def _all(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, args).fetchall()


def _select(cols: dict[str, NDArray[Any]], mask: NDArray[np.bool_]) -> dict[str, NDArray[Any]]:
    return {k: v[mask] for k, v in cols.items()}
