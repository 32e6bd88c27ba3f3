"""Schema 9: a lost attempt run again is a new row (``retry``), checked against the stored rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_row
from trialbook.errors import LedgerError
from trialbook.ledger import LedgerStore, RunRecord, read_ledger
from trialbook.ledger.store import MIGRATIONS, SCHEMA_VERSION
from trialbook.ledger.store._own_schema import own_schema
from trialbook.ledger.store._schema import statements


def _store_at(db: Path, version: int) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    for number, _, sql in MIGRATIONS[:version]:
        for statement in statements(sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO migrations VALUES (?, 'x', '2026-01-01T00:00:00+00:00')", (number,)
        )
    conn.execute(f"PRAGMA user_version = {version}")
    conn.close()


def _row(task: str, attempt: int, **extra: Any) -> dict[str, Any]:
    return base_row(task, attempt, passed=False, k=3, run_id="r", **extra)


INFRA = {"status": "infra_error", "error": "harness error: its node died", "lost": True}


def test_migration_9_keeps_the_rows_of_a_schema_8_store(tmp_path: Path) -> None:
    db = tmp_path / "v8.db"
    _store_at(db, 8)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "INSERT INTO runs (run_id, k_budget, started_at) VALUES ('r', 3, '2026-01-01T00:00:00+00:00')"
    )
    for i, (task, attempt, passed, status) in enumerate(
        [("a", 0, 1, "passed"), ("a", 1, 0, "infra_error"), ("b", 0, 0, "failed")]
    ):
        conn.execute(
            "INSERT INTO attempts (id, run_id, task_id, attempt_index, k_budget, timeout_s, "
            "elapsed_s, passed, timed_out, helper_calls, oracle_leak, status) "
            "VALUES (?, 'r', ?, ?, 3, 60, 1.5, ?, 0, 0, 0, ?)",
            (10 + i, task, attempt, passed, status),
        )
        conn.execute(
            "INSERT INTO attempt_starts (run_id, task_id, attempt_index, started_at) "
            "VALUES ('r', ?, ?, '2026-01-01T00:00:01+00:00')",
            (task, attempt),
        )
    before = conn.execute("SELECT * FROM attempts ORDER BY id").fetchall()
    conn.close()
    old = read_ledger(db)  # readers need no migration
    with LedgerStore(db) as store:
        assert [v for v, _, _ in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
        assert store.schema_version >= 9
        assert store.unfinished_starts("r") == []
        assert own_schema(store.connection, store.schema_version)
    conn = sqlite3.connect(db)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(attempts)")]
    after = conn.execute("SELECT * FROM attempts ORDER BY id").fetchall()
    conn.close()
    # every old column, ids included, as it was; the two new ones not recorded
    assert [r[: len(before[0])] for r in after] == before
    assert {c: [r[columns.index(c)] for r in after] for c in ("retry", "lost")} == {
        "retry": [None] * 3,
        "lost": [None] * 3,
    }
    new = read_ledger(db)
    assert new.values["attempt_index"].tolist() == old.values["attempt_index"].tolist()
    assert new.text("status").tolist() == old.text("status").tolist()
    # the migrated store takes a re-run of its infra_error row, and only one
    with LedgerStore(db) as store:
        store.append([_row("a", 1, retry=1, status="failed")])
        with pytest.raises(LedgerError, match="attempt 1 retry 1 of run 'r' is already"):
            store.append([_row("a", 1, retry=1, status="failed")])


def _store(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    db = tmp_path / "l.db"
    with LedgerStore(db) as store:
        store.create_run(RunRecord(run_id="r", k_budget=3))
        store.append(rows)
    return db


def test_the_store_takes_a_rerun_only_after_an_infra_error(tmp_path: Path) -> None:
    db = _store(tmp_path, [_row("a", 0, status="failed"), _row("a", 1, **INFRA)])
    with LedgerStore(db) as store:
        with pytest.raises(LedgerError) as refused:
            store.append([_row("a", 0, retry=1, status="failed")])
        assert (
            "run 'r', task 'a': attempt_index 0: field 'retry': 1 follows no infra_error row of "
            "retry 0 of the same attempt"
        ) in str(refused.value)
        with pytest.raises(
            LedgerError, match="field 'retry': 2 follows no infra_error row of retry 1"
        ):
            store.append([_row("a", 1, retry=2, status="failed")])  # retry 1 is missing
        assert store.lost("r") == [("a", 1, 0)]
        store.append([_row("a", 1, retry=1, **INFRA)])
        assert store.lost("r") == [("a", 1, 1)]  # lost again: the highest retry is what counts
        store.append([_row("a", 1, retry=2, status="failed")])
        assert store.lost("r") == []
        assert store.tally("r") == (2, 0, 0, 0)  # two attempts count; their infra rows do not
        (status,) = store.runs()
        assert (status.attempts, status.reruns, status.superseded) == (2, 1, 2)
    conn = sqlite3.connect(db)
    (reruns,) = conn.execute("SELECT reruns FROM run_summary").fetchone()
    conn.close()
    assert reruns == 2  # the view counts rows: two re-run rows of one attempt


def test_lost_names_only_what_the_harness_lost_unless_every_infra_error(tmp_path: Path) -> None:
    sandbox = {"status": "infra_error", "error": "harness error: the sandbox could not start"}
    db = _store(tmp_path, [_row("a", 0, **INFRA), _row("b", 0, **sandbox)])
    with LedgerStore(db) as store:
        assert store.lost("r") == [("a", 0, 0)]
        assert store.lost("r", every_infra=True) == [("a", 0, 0), ("b", 0, 0)]


def test_a_started_rerun_without_its_row_is_cut_off(tmp_path: Path) -> None:
    db = _store(tmp_path, [_row("a", 0, **INFRA)])
    with LedgerStore(db) as store:
        store.record_start("r", "a", 0)
        assert store.unfinished_starts("r") == []  # retry 0 has its row
        store.record_start("r", "a", 0, retry=1)
        assert store.unfinished_starts("r") == [("a", 0)]  # retry 1 has none


def test_the_sql_tally_holds_a_rerun_to_the_retry_just_before_it(tmp_path: Path) -> None:
    # written past the store's writer (plain sqlite3, as another tool would): retry 2 follows a
    # failure at retry 1, though retry 0 was an infra_error. Only retry r - 1 may be replaced
    # (store/_sql.py RETRY_BROKEN), so the SQL tally must not vouch for it: the precise read
    # names it, as it names the same rows in a JSONL file
    from tests.ledger.tally._foreign import own_schema_db
    from trialbook.analysis import score_file

    def attempt(retry: int, status: str) -> dict[str, Any]:
        return {
            **base_row("t", 0, passed=status == "passed", k=1),
            "run_id": "r",
            "status": status,
            "retry": retry or None,
        }

    rows = [attempt(0, "infra_error"), attempt(1, "failed"), attempt(2, "passed")]
    db = own_schema_db(tmp_path / "l.db", rows, run="r")
    said = "field 'retry': 2 follows no infra_error row of retry 1 of the same attempt"
    with pytest.raises(LedgerError, match=said):
        score_file(db)
    with pytest.raises(LedgerError, match=said):
        read_ledger(db)
