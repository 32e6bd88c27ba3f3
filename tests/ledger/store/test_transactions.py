"""The store writes all or nothing: a refused write leaves no row, no run and no event behind;
and NaN or infinity never reaches it."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_row
from trialbook.errors import LedgerError
from trialbook.ledger import LedgerStore, RunRecord, import_files, ledger_from_rows, prepare


def _row(task: str, attempt: int, run: str, **extra: Any) -> dict[str, Any]:
    return base_row(task, attempt, passed=attempt == 0, k=3, run_id=run, **extra)


def _counts(db: Path) -> tuple[int, int, int]:
    conn = sqlite3.connect(db)
    try:
        return tuple(  # type: ignore[return-value]
            conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("attempts", "runs", "run_events")
        )
    finally:
        conn.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "l.db"
    with LedgerStore(path) as store:
        store.create_run(RunRecord(run_id="r0", k_budget=3))
        store.append([_row("a", 0, "r0")])
    return path


def test_a_failed_multi_file_import_leaves_nothing_of_the_earlier_files(db: Path) -> None:
    before = _counts(db)
    first = ledger_from_rows([_row("a", 0, "r5"), _row("b", 0, "r5")], "first.jsonl")
    other = ledger_from_rows([_row("c", 0, "r6")], "other.jsonl")
    collides = ledger_from_rows([_row("a", 0, "r5")], "second.jsonl")
    with pytest.raises(LedgerError) as err:
        import_files(db, [first, other, collides])
    assert "attempt 0 of run 'r5' is already in the ledger" in str(err.value)
    assert _counts(db) == before  # no rows, no run record, no 'started' event of r5 or r6
    with LedgerStore(db, readonly=True) as store:
        assert [r.record.run_id for r in store.runs()] == ["r0"]


def test_a_store_forgets_what_a_rolled_back_import_created(db: Path) -> None:
    first = ledger_from_rows([_row("a", 0, "r5")], "first.jsonl")
    collides = ledger_from_rows([_row("a", 0, "r5")], "second.jsonl")
    with LedgerStore(db) as store:
        with pytest.raises(LedgerError):
            store.import_ledgers([first, collides])
        with pytest.raises(LedgerError) as err:  # r5 was rolled back: it does not exist
            store.append([_row("b", 0, "r5")])
        assert "run 'r5' is not in the ledger: create it first" in str(err.value)


@pytest.mark.parametrize("value", [math.nan, math.inf])
@pytest.mark.parametrize("name", ["cost", "elapsed_s"])
def test_nan_and_infinity_are_refused_on_the_way_in(db: Path, name: str, value: float) -> None:
    before = _counts(db)
    with LedgerStore(db) as store:
        with pytest.raises(LedgerError, match=f"field '{name}': must be a finite number"):
            store.append([_row("b", 0, "r0"), _row("c", 0, "r0", **{name: value})])
        with pytest.raises(LedgerError, match=f"field '{name}': must be a finite number"):
            prepare([_row("c", 0, "r0", **{name: value})], "worker")  # the harness's path
    assert _counts(db) == before
