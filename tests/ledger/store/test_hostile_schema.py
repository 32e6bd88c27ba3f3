"""A `.db` handed over by someone else: a ledger is written to only when its schema is exactly what
the migrations create (docs/ledger.md, "The SQLite store"). A BEFORE INSERT trigger that stores a
failed row as passed, a view, an index or a changed trigger is refused by name before any write."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import base_row, write_jsonl
from trialbook.cli import main
from trialbook.errors import LedgerError
from trialbook.ledger import LedgerStore, RunRecord

# The attack: a failed row is swapped for a passed copy of it, and the original dropped.
_FORGE = """
CREATE TRIGGER forge BEFORE INSERT ON attempts WHEN NEW.passed = 0 BEGIN
  INSERT INTO attempts (run_id, task_id, attempt_index, k_budget, timeout_s, elapsed_s, passed,
    timed_out, helper_calls, oracle_leak, status)
  VALUES (NEW.run_id, NEW.task_id, NEW.attempt_index, NEW.k_budget, NEW.timeout_s, NEW.elapsed_s,
    1, 0, NEW.helper_calls, NEW.oracle_leak, 'passed');
  SELECT RAISE(IGNORE);
END
"""


def _store(path: Path, *sql: str) -> Path:
    with LedgerStore(path) as store:
        store.create_run(RunRecord(run_id="r"))
    conn = sqlite3.connect(path)
    with conn:
        for statement in sql:
            conn.execute(statement)
    conn.close()
    return path


def _passes(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        return [int(p) for (p,) in conn.execute("SELECT passed FROM attempts ORDER BY id")]
    finally:
        conn.close()


def test_the_forging_trigger_is_real_and_an_import_into_its_ledger_is_refused(
    tmp_path: Path,
) -> None:
    # the trigger does what the red team saw, when something writes past it...
    forged = _store(tmp_path / "forged.db", _FORGE)
    conn = sqlite3.connect(forged)
    with conn:
        conn.execute(
            "INSERT INTO attempts (run_id, task_id, attempt_index, k_budget, timeout_s, "
            "elapsed_s, passed, timed_out, helper_calls, oracle_leak, status) "
            "VALUES ('r', 't', 0, 1, 60, 1, 0, 0, 0, 0, 'failed')"
        )
    conn.close()
    assert _passes(forged) == [1]
    # ...and trialbook never writes past it: one line naming it, exit 2, nothing written
    db = _store(tmp_path / "l.db", _FORGE)
    rows = write_jsonl(
        tmp_path / "rows.jsonl",
        [base_row("t", 0, passed=False, k=1, run_id="s", status="failed")],
    )
    out = CliRunner().invoke(main, ["import", "jsonl", str(rows), "--ledger", str(db)])
    assert out.exit_code == 2, out.output
    assert isinstance(out.exception, SystemExit)
    assert "Traceback" not in out.output
    assert out.output.count("\n") == 1, out.output
    assert "refused for writing" in out.output
    assert "trigger 'forge'" in out.output
    assert _passes(db) == []


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        (("CREATE VIEW passes AS SELECT * FROM attempts WHERE passed",), "view 'passes'"),
        (("CREATE INDEX by_task ON attempts (task_id)",), "index 'by_task'"),
        (("CREATE TABLE notes (x)",), "table 'notes'"),
        (("DROP TRIGGER attempts_no_delete",), "no trigger 'attempts_no_delete'"),
        (
            (
                "DROP TRIGGER attempts_no_update",
                "CREATE TRIGGER attempts_no_update BEFORE UPDATE ON attempts BEGIN SELECT 1; END",
            ),
            "trigger 'attempts_no_update' changed",
        ),
    ],
)
def test_any_schema_object_the_migrations_did_not_create_is_refused_by_name(
    tmp_path: Path, sql: tuple[str, ...], named: str
) -> None:
    db = _store(tmp_path / "l.db", *sql)
    with pytest.raises(LedgerError, match="refused for writing") as caught:
        LedgerStore(db)
    assert named in str(caught.value)
    # reading is not writing: a reader never runs a trigger, and its own checks hold the rest
    with LedgerStore(db, readonly=True) as store:
        assert [r.record.run_id for r in store.runs()] == ["r"]


def test_a_sqlite_file_that_is_no_ledger_is_not_migrated_into(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE attempts (x)")
        conn.execute("CREATE TRIGGER t BEFORE INSERT ON attempts BEGIN SELECT 1; END")
    conn.close()
    with pytest.raises(LedgerError, match="not a trialbook ledger: table 'attempts', trigger 't'"):
        LedgerStore(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
    conn.close()


def test_a_store_of_every_older_schema_still_opens_for_writing(tmp_path: Path) -> None:
    from trialbook.ledger.store._schema import MIGRATIONS, statements

    for upto in range(1, len(MIGRATIONS) + 1):
        path = tmp_path / f"v{upto}.db"
        conn = sqlite3.connect(path)
        for number, _, script in MIGRATIONS[:upto]:
            for statement in statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
        conn.commit()
        conn.close()
        with LedgerStore(path) as store:
            assert store.schema_version == MIGRATIONS[-1][0]
