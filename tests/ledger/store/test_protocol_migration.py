"""Migration 9: a schema-8 store gains the attempt protocol on its rows and run records. Its rows
come through unchanged (protocol not recorded), a scorecard of such a run says how it is read,
and new rows and runs record the protocol, held to the known words by the table itself."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import base_row
from trialbook.analysis import score_file
from trialbook.ledger import LedgerStore, RunRecord, ledger_rows, read_ledger
from trialbook.ledger.store import MIGRATIONS, SCHEMA_VERSION
from trialbook.ledger.store._schema import statements

COLUMNS = (
    "run_id, task_id, attempt_index, k_budget, timeout_s, elapsed_s, passed, timed_out, "
    "helper_calls, oracle_leak, status"
)


def _schema_8_store(db: Path) -> list[tuple[object, ...]]:
    """A store as schema 8 left it: one run, four attempts; the attempts as stored."""
    conn = sqlite3.connect(db, isolation_level=None)
    for number, _, sql in MIGRATIONS[:8]:
        for statement in statements(sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO migrations VALUES (?, 'x', '2026-01-01T00:00:00+00:00')", (number,)
        )
    conn.execute("PRAGMA user_version = 8")
    conn.execute(
        "INSERT INTO runs (run_id, k_budget, started_at) VALUES ('old', 2, '2026-01-01T00:00:00+00:00')"
    )
    for task, attempt, passed in (("a", 0, 1), ("a", 1, 0), ("b", 0, 0), ("b", 1, 0)):
        status = "passed" if passed else "failed"
        conn.execute(
            f"INSERT INTO attempts ({COLUMNS}) VALUES ('old', ?, ?, 2, 60.0, 1.5, ?, 0, 0, 0, ?)",
            (task, attempt, passed, status),
        )
    stored = conn.execute(f"SELECT id, {COLUMNS} FROM attempts ORDER BY id").fetchall()
    conn.close()
    return stored


def test_migration_9_keeps_a_schema_8_stores_rows_and_adds_the_protocol(tmp_path: Path) -> None:
    db = tmp_path / "v8.db"
    before = _schema_8_store(db)
    with LedgerStore(db) as store:
        assert SCHEMA_VERSION >= 10
        assert [v for v, _, _ in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
        (old,) = store.runs()
        assert old.record.protocol is None  # not recorded: nothing is made up
        store.create_run(RunRecord(run_id="new", k_budget=1, protocol="repair"))
        store.append([base_row("a", 0, passed=True, k=1, run_id="new", protocol="repair")])
    conn = sqlite3.connect(db)
    after = conn.execute(f"SELECT id, {COLUMNS} FROM attempts WHERE run_id = 'old' ORDER BY id")
    assert after.fetchall() == before
    assert conn.execute(
        "SELECT DISTINCT protocol FROM attempts WHERE run_id = 'old'"
    ).fetchall() == [(None,)]
    # the table holds the protocol to the known words, whatever writes to it
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        conn.execute("INSERT INTO runs (run_id, started_at, protocol) VALUES ('x', 'now', 'retry')")
    conn.close()
    with LedgerStore(db, readonly=True) as store:
        new = store.run("new")
    assert new is not None
    assert new.record.protocol == "repair"
    rows = {r["run_id"]: r["protocol"] for r in ledger_rows(read_ledger(db))}
    assert rows == {"old": None, "new": "repair"}
    old_score, new_score = score_file(db).runs
    assert any("protocol not recorded" in n for n in old_score.notes)
    assert "pass@1" in old_score.metrics  # read as independent, and said so
    assert list(new_score.metrics) == ["within@1"]
