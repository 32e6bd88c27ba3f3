"""A run's kept columns must be its rows' own (store/_digest.py): a `.db` whose run holds the blob of
another run with the same row ids (the red team's, which `score` read as 100% while `runs`,
`export` and SQL said 0%) is refused in one line; a store's own blobs still serve `score`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import base_row
from trialbook.cli import main
from trialbook.errors import LedgerError
from trialbook.ledger import LedgerStore, RunRecord, open_tallies
from trialbook.ledger.store._digest import columns_are_the_rows


def _store(path: Path, passed: bool, **extra: object) -> Path:
    rows = [
        base_row(f"t{t}", a, passed=passed, k=2, run_id="r", stratum="s", **extra)
        for t in range(5)
        for a in range(2)
    ]
    with LedgerStore(path) as store:
        store.create_run(RunRecord(run_id="r", k_budget=2))
        store.append(rows)
    return path


def _blob(path: Path) -> bytes:
    conn = sqlite3.connect(path)
    try:
        ((blob,),) = conn.execute("SELECT columns FROM attempt_columns").fetchall()
        return bytes(blob)
    finally:
        conn.close()


def _swapped(tmp_path: Path) -> Path:
    """The failing run's store, its blob replaced by the passing run's (same ids 1..10)."""
    failing = _store(tmp_path / "failing.db", passed=False, status="failed")
    passing = _store(tmp_path / "passing.db", passed=True, status="passed")
    conn = sqlite3.connect(failing)
    with conn:
        conn.execute("DROP TRIGGER attempt_columns_no_update")
        conn.execute("UPDATE attempt_columns SET columns = ?", (_blob(passing),))
    conn.close()
    return failing


def test_the_blob_of_another_run_with_the_same_ids_is_refused(tmp_path: Path) -> None:
    db = _swapped(tmp_path)
    out = CliRunner().invoke(main, ["score", str(db), "--format", "json"])
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output
    assert out.output.count("\n") == 1
    assert "run 'r': its kept columns (attempt_columns) do not hold its rows' values" in out.output
    # what the rows say, which export and SQL read
    exported = CliRunner().invoke(main, ["export", str(db), "--format", "jsonl"])
    assert exported.exit_code == 0, exported.output
    assert not any(json.loads(line)["passed"] for line in exported.output.splitlines())


def test_a_stores_own_blob_is_read_and_matches_its_rows(tmp_path: Path) -> None:
    db = _store(tmp_path / "l.db", passed=True, cost=0.25, elapsed_s=2.5, seed=-3)
    with open_tallies(db) as tallies:
        kept = tallies._loaded("r")
        assert kept is not None
        assert columns_are_the_rows(
            tallies.connection, kept, tallies._present, '"run_id" = ?', ("r",)
        )
    out = CliRunner().invoke(main, ["score", str(db), "--format", "json"])
    assert out.exit_code == 0, out.output


@pytest.mark.parametrize(
    ("column", "value"),
    [("passed", 0), ("attempt_index", 1), ("elapsed_s", 2.5000001), ("stratum", "x"),
     ("task_id", "t9"), ("cost", None)],
)  # fmt: skip
def test_one_value_changed_in_one_row_is_seen(tmp_path: Path, column: str, value: object) -> None:
    db = _store(tmp_path / "l.db", passed=True, cost=0.25, elapsed_s=2.5)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DROP TRIGGER attempts_no_update")
        conn.execute("DROP INDEX attempts_key")  # attempt_index 1 of t0 exists: let it repeat
        conn.execute(f"UPDATE attempts SET {column} = ? WHERE id = 1", (value,))
    conn.close()
    with open_tallies(db) as tallies, pytest.raises(LedgerError, match="kept columns"):
        tallies.tally("r")
