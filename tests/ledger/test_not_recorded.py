"""The "not recorded by the source" state of imported runs (docs/ledger.md, "Imported runs"): which
required fields may be left out, the contradictions refused, the round trips, and store schema 5."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_row, write_jsonl
from trialbook.errors import LedgerError
from trialbook.ledger import (
    LedgerStore,
    import_files,
    ledger_from_rows,
    ledger_rows,
    read_ledger,
    write_ledger,
)
from trialbook.ledger.store import MIGRATIONS, SCHEMA_VERSION
from trialbook.ledger.store._schema import statements


def imported(task: str, attempt: int, **extra: Any) -> dict[str, Any]:
    """A row as an importer writes it when the source records no timeout, time or helpers."""
    row = base_row(task, attempt, passed=attempt == 0, k=2, **extra)
    for name in ("timeout_s", "elapsed_s", "helper_calls", "oracle_leak"):
        row.pop(name)
    row["not_recorded"] = "timeout_s,elapsed_s,helper_calls,oracle_leak"
    return row


ROWS = [imported("a", 0), imported("a", 1), imported("b", 0), imported("b", 1)]


def test_named_fields_may_be_left_out_and_stay_null() -> None:
    ledger = ledger_from_rows(ROWS, "rows")
    assert ledger.not_recorded() == ("timeout_s", "elapsed_s", "helper_calls", "oracle_leak")
    assert ledger.unrecorded_mask("timeout_s").all()
    assert not ledger.unrecorded_mask("timed_out").any()
    assert not ledger.unrecorded_mask("passed").any()  # never recordable: always False
    row = next(ledger_rows(ledger))
    assert row["timeout_s"] is None
    assert row["helper_calls"] is None
    assert row["oracle_leak"] is None
    assert row["timed_out"] is False


def test_without_not_recorded_a_missing_field_is_still_missing() -> None:
    row = dict(ROWS[0])
    del row["not_recorded"]
    with pytest.raises(LedgerError, match="missing required fields 'timeout_s', 'elapsed_s'"):
        ledger_from_rows([row], "rows")


def test_a_value_for_a_named_field_is_a_contradiction(tmp_path: Path) -> None:
    row = {**ROWS[0], "helper_calls": 0}
    with pytest.raises(LedgerError, match="field 'helper_calls' has a value but 'not_recorded'"):
        ledger_from_rows([row], "rows")
    # the fast JSONL readers hand such a file to the precise one, which sees it too
    path = write_jsonl(tmp_path / "l.jsonl", [row, *ROWS[1:]])
    with pytest.raises(LedgerError, match=r"l.jsonl:1: .*'helper_calls' has a value"):
        read_ledger(path)


def test_only_the_recordable_fields_may_be_named() -> None:
    row = {**base_row("a", 0, passed=True, k=1), "not_recorded": "passed"}
    with pytest.raises(LedgerError, match="'passed' cannot be left unrecorded"):
        ledger_from_rows([row], "rows")
    missing = dict(row)
    del missing["passed"]
    with pytest.raises(LedgerError, match="missing required field 'passed'"):
        ledger_from_rows([missing], "rows")


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_round_trip_keeps_not_recorded(tmp_path: Path, fmt: str) -> None:
    ledger = ledger_from_rows(ROWS, "rows")
    out = io.BytesIO()
    write_ledger(ledger, fmt, out)  # type: ignore[arg-type]
    path = tmp_path / f"l.{fmt}"
    path.write_bytes(out.getvalue())
    back = read_ledger(path)
    assert list(ledger_rows(back)) == [{**r, "run_id": "l"} for r in ledger_rows(ledger)]


def test_store_keeps_nulls_only_where_not_recorded_names_them(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    import_files(db, [ledger_from_rows([{**r, "run_id": "r"} for r in ROWS], "rows")])
    back = read_ledger(db)
    assert [r["timeout_s"] for r in ledger_rows(back)] == [None] * 4
    assert back.not_recorded() == ("timeout_s", "elapsed_s", "helper_calls", "oracle_leak")
    conn = sqlite3.connect(db)
    # the table itself refuses a NULL that not_recorded does not name, whoever writes it
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        conn.execute(
            "INSERT INTO attempts (run_id, task_id, attempt_index, k_budget, timeout_s, elapsed_s,"
            " passed, timed_out, helper_calls, oracle_leak) VALUES ('r', 'c', 0, 2, NULL, 1, 0, 0,"
            " 0, 0)"
        )
    conn.close()


def test_migration_5_keeps_a_schema_4_store_whole(tmp_path: Path) -> None:
    db = tmp_path / "v4.db"
    conn = sqlite3.connect(db, isolation_level=None)
    for number, _, sql in MIGRATIONS[:4]:
        for statement in statements(sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO migrations VALUES (?, 'x', '2026-01-01T00:00:00+00:00')", (number,)
        )
    conn.execute("PRAGMA user_version = 4")
    conn.execute(
        "INSERT INTO runs (run_id, started_at) VALUES ('old', '2026-01-01T00:00:00+00:00')"
    )
    for i, row in enumerate(
        [base_row("a", 0, passed=True, k=2), base_row("a", 1, passed=False, k=2)]
    ):
        names = ["run_id", *row]
        conn.execute(
            f"INSERT INTO attempts (id, {', '.join(names)}) VALUES ({10 + i}, "
            + ", ".join("?" for _ in names)
            + ")",
            ["old", *row.values()],
        )
    conn.close()
    before = list(ledger_rows(read_ledger(db)))  # a reader needs no migration
    with LedgerStore(db) as store:
        assert store.schema_version == SCHEMA_VERSION
        ids = [r[0] for r in store._conn.execute("SELECT id FROM attempts ORDER BY id")]
        assert ids == [10, 11]  # row ids kept through the rebuild
        (summary,) = store._conn.execute("SELECT attempts, passed FROM run_summary").fetchall()
        assert summary == (2, 1)
        (run,) = store.runs()
        assert run.record.source is None
        for sql in ("UPDATE attempts SET passed = 0", "DELETE FROM attempts"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                store._conn.execute(sql)
    assert list(ledger_rows(read_ledger(db))) == before


def test_provenance_survives_the_store(tmp_path: Path) -> None:
    from dataclasses import replace

    from trialbook.ledger import Provenance, SourceFile

    ledger = ledger_from_rows([{**r, "run_id": "r"} for r in ROWS], "rows")
    source = Provenance("tau-bench", None, (SourceFile("x.json", "ab" * 32),), ("a note",))
    db = tmp_path / "l.db"
    import_files(db, [replace(ledger, provenance={"r": source})])
    assert read_ledger(db).source_of("r") == source
    with LedgerStore(db, readonly=True) as store:
        (run,) = store.runs()
    assert run.record.origin == "import rows"
    assert json.loads(
        sqlite3.connect(db).execute("SELECT source_files FROM runs").fetchone()[0]
    ) == [{"path": "x.json", "sha256": "ab" * 32}]
