"""Migration 13: a schema-12 store gains the model gateway's fields (model calls, cache read and
write tokens). Its rows come through unchanged (the new fields not recorded); new rows record
them, held to whole numbers >= 0 by the table itself."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import base_row
from trialbook.errors import LedgerError
from trialbook.ledger import LedgerStore, RunRecord, ledger_rows, read_ledger
from trialbook.ledger.store import MIGRATIONS, SCHEMA_VERSION
from trialbook.ledger.store._schema import statements

COLUMNS = (
    "run_id, task_id, attempt_index, k_budget, timeout_s, elapsed_s, passed, timed_out, "
    "helper_calls, oracle_leak, status, tokens_in"
)


def _schema_12_store(db: Path) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    for number, _, sql in MIGRATIONS[:12]:
        for statement in statements(sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO migrations VALUES (?, 'x', '2026-01-01T00:00:00+00:00')", (number,)
        )
    conn.execute("PRAGMA user_version = 12")
    conn.execute(
        "INSERT INTO runs (run_id, k_budget, started_at) VALUES ('old', 1, '2026-01-01T00:00:00+00:00')"
    )
    conn.execute(
        f"INSERT INTO attempts ({COLUMNS}) VALUES ('old', 't', 0, 1, 60.0, 1.5, 1, 0, 0, 0, "
        "'passed', 500)"
    )
    conn.close()


def test_migration_13_adds_the_gateways_fields_to_a_schema_12_store(tmp_path: Path) -> None:
    db = tmp_path / "v12.db"
    _schema_12_store(db)
    before = list(ledger_rows(read_ledger(db)))
    with LedgerStore(db) as store:
        assert SCHEMA_VERSION >= 13
        assert [v for v, _, _ in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
        store.create_run(RunRecord(run_id="new", k_budget=1))
        store.append(
            [
                base_row(
                    "t",
                    0,
                    passed=True,
                    k=1,
                    run_id="new",
                    tokens_in=397,
                    model_calls=3,
                    cache_read_tokens=90,
                    cache_write_tokens=7,
                )
            ]
        )
    after = {r["run_id"]: r for r in ledger_rows(read_ledger(db))}
    assert [after["old"]] == before
    assert after["old"]["model_calls"] is None  # not recorded, never 0
    new = after["new"]
    assert (new["model_calls"], new["cache_read_tokens"], new["cache_write_tokens"]) == (3, 90, 7)
    conn = sqlite3.connect(db)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE attempts SET cache_read_tokens = -1 WHERE run_id = 'new'")
    conn.close()


def test_a_negative_count_is_refused_naming_the_field() -> None:
    from trialbook.ledger import ledger_from_rows

    with pytest.raises(LedgerError, match="model_calls"):
        ledger_from_rows([base_row("t", 0, passed=True, k=1, model_calls=-1)], "rows")
