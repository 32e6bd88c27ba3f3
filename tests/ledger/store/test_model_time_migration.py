"""Migration 15: a schema-14 store gains ``model_call_s``, the attempt's time in model calls as
the model gateway measured it. Its rows come through unchanged (the field not recorded); new rows
record it, held to a number >= 0 by the table itself, and every interchange format carries it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Literal

import pytest

from tests.conftest import base_row
from trialbook.errors import LedgerError
from trialbook.ledger import (
    LedgerStore,
    RunRecord,
    ledger_from_rows,
    ledger_rows,
    read_ledger,
    write_ledger_file,
)
from trialbook.ledger.store import MIGRATIONS, SCHEMA_VERSION
from trialbook.ledger.store._schema import statements

COLUMNS = (
    "run_id, task_id, attempt_index, k_budget, timeout_s, elapsed_s, passed, timed_out, "
    "helper_calls, oracle_leak, status, model_calls"
)


def _schema_14_store(db: Path) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    for number, _, sql in MIGRATIONS[:14]:
        for statement in statements(sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO migrations VALUES (?, 'x', '2026-01-01T00:00:00+00:00')", (number,)
        )
    conn.execute("PRAGMA user_version = 14")
    conn.execute(
        "INSERT INTO runs (run_id, k_budget, started_at) VALUES ('old', 1, '2026-01-01T00:00:00+00:00')"
    )
    conn.execute(
        f"INSERT INTO attempts ({COLUMNS}) VALUES ('old', 't', 0, 1, 60.0, 1.5, 1, 0, 0, 0, "
        "'passed', 2)"
    )
    conn.close()


def test_migration_15_adds_the_time_in_model_calls_to_a_schema_14_store(tmp_path: Path) -> None:
    db = tmp_path / "v14.db"
    _schema_14_store(db)
    before = list(ledger_rows(read_ledger(db)))
    with LedgerStore(db) as store:
        assert SCHEMA_VERSION >= 15
        assert [v for v, _, _ in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
        store.create_run(RunRecord(run_id="new", k_budget=1))
        store.append(
            [base_row("t", 0, passed=True, k=1, run_id="new", model_calls=2, model_call_s=3.25)]
        )
    after = {r["run_id"]: r for r in ledger_rows(read_ledger(db))}
    assert [after["old"]] == before
    assert after["old"]["model_call_s"] is None  # not recorded, never 0
    assert after["new"]["model_call_s"] == 3.25
    conn = sqlite3.connect(db)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE attempts SET model_call_s = -1 WHERE run_id = 'new'")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE attempts SET model_call_s = 'slow' WHERE run_id = 'new'")
    conn.close()


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_every_export_format_carries_it(
    tmp_path: Path, fmt: Literal["jsonl", "csv", "parquet"]
) -> None:
    rows = [
        base_row("t", 0, passed=True, k=2, model_calls=3, model_call_s=0.125),
        base_row("t", 1, passed=False, k=2),  # no gateway: not recorded
    ]
    path = tmp_path / f"ledger.{fmt}"
    write_ledger_file(ledger_from_rows(rows, "rows"), fmt, path)
    if fmt == "parquet":  # written for other tools, not read back by trialbook
        pq = pytest.importorskip("pyarrow.parquet")
        column = pq.read_table(path).column("model_call_s")
        assert str(column.type) == "double"
        assert column.to_pylist() == [0.125, None]
        return
    back = sorted(ledger_rows(read_ledger(path)), key=lambda r: r["attempt_index"])
    assert [r["model_call_s"] for r in back] == [0.125, None]


def test_a_negative_time_is_refused_naming_the_field() -> None:
    with pytest.raises(LedgerError, match="model_call_s"):
        ledger_from_rows([base_row("t", 0, passed=True, k=1, model_call_s=-0.5)], "rows")
