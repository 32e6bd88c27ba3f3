"""Every bad-input case of `trialbook score` (tests/cli/test_score_cli.py) refused from a ``.db``
that another tool wrote with plain sqlite3, with the message the JSONL file of the same rows gets.

Two kinds of file: a store trialbook created, whose schema refuses some rows at the INSERT already
(SQLite's CHECK, NOT NULL and UNIQUE constraints), and a bare table another tool created, which
holds anything, so every rule is the reader's to check.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.cli.test_score_cli import BAD_CASES, RATE
from tests.conftest import base_row
from tests.ledger.tally._foreign import bare_db, own_schema_db
from trialbook.cli import main

# cases whose rows a .db cannot hold as such (a JSON text, not a row of values)
NOT_ROWS = {
    "NaN": "SQLite stores a NaN as NULL: that is the 'missing required field' case",
    "whole number beyond 64 bits": "an SQLite INTEGER is 64 bits: sqlite3 cannot bind 10**20",
    "invalid UTF-8": "a JSON decoding error; a .db holds text SQLite reads (see the test below)",
    "unparsable line": "a JSON syntax error",
    "-Infinity nested in a check": "a JSONL number literal; a .db holds checks as a JSON text "
    "whose every value must be {passed, reason}, no number at all",
    "NaN in a line that is not an object": "a JSONL line's text; a .db holds rows, not lines",
}
# the same rows, as a .db holds them (the JSONL case is about the text of a number)
AS_ROWS: dict[str, tuple[list[dict[str, Any]], str]] = {
    "number too large for a double": (
        [base_row("t1", 0, passed=True, elapsed_s=math.inf)],
        "bad.db:1: task 't1': field 'elapsed_s': must be a finite number, got inf",
    ),
    "Infinity literal": (
        [base_row("t1", 0, passed=True, elapsed_s=math.inf)],
        "bad.db:1: task 't1': field 'elapsed_s': must be a finite number, got inf",
    ),
    "empty ledger": ([], "bad.db: the ledger holds no attempts"),
}
CASES = [c for c in BAD_CASES if c not in NOT_ROWS]
SCHEMA_REFUSES = {
    "missing required field": "CHECK constraint failed",
    "wrong type": "CHECK constraint failed",
    "negative number": "CHECK constraint failed",
    "duplicate attempt": "UNIQUE constraint failed",
    "re-run twice as the same retry": "UNIQUE constraint failed",
}


def _case(case: str) -> tuple[list[dict[str, Any]], str, str | None]:
    if case in AS_ROWS:
        rows, message = AS_ROWS[case]
    else:
        rows, message = BAD_CASES[case]
        message = message.replace("bad.jsonl", "bad.db")
    assert isinstance(rows, list)
    run = None if case == "mixed run ids" else "bad"
    return rows, message, run


def _refused(path: Path, message: str) -> None:
    result = CliRunner().invoke(main, ["score", str(path)], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not RATE.search(result.output), "a rate was printed from a ledger that failed validation"
    assert "Traceback" not in result.output


@pytest.mark.parametrize("case", CASES)
def test_a_bare_table_is_refused_as_its_jsonl_is(tmp_path: Path, case: str) -> None:
    rows, message, run = _case(case)
    _refused(bare_db(tmp_path / "bad.db", rows, run=run), message)


@pytest.mark.parametrize("case", CASES)
def test_a_store_written_with_plain_sqlite_is_refused_at_insert_or_when_read(
    tmp_path: Path, case: str
) -> None:
    rows, message, run = _case(case)
    if case == "unknown field":  # the store's table has no such column to write
        conn = sqlite3.connect(own_schema_db(tmp_path / "bad.db", [], run="bad"))
        with pytest.raises(sqlite3.OperationalError, match="no column named cots"):
            conn.execute("INSERT INTO attempts (run_id, cots) VALUES ('bad', 1.0)")
        conn.close()
        return
    if case == "mixed run ids":
        with pytest.raises(sqlite3.IntegrityError, match="NOT NULL"):
            own_schema_db(tmp_path / "bad.db", [{**r, "run_id": r.get("run_id")} for r in rows])
        return
    if case in SCHEMA_REFUSES:  # the store's schema itself refuses the row at the INSERT
        with pytest.raises(sqlite3.IntegrityError, match=SCHEMA_REFUSES[case]):
            own_schema_db(tmp_path / "bad.db", rows, run=run or "bad")
        return
    _refused(own_schema_db(tmp_path / "bad.db", rows, run=run or "bad"), message)


def test_a_pass_after_timeout_and_a_type_error_are_both_named_from_a_bare_table(
    tmp_path: Path,
) -> None:
    rows = [
        base_row("t1", 0, passed="yes"),
        base_row("t2", 0, passed=True, timed_out=True),
    ]
    path = bare_db(tmp_path / "bad.db", rows)
    _refused(path, "bad.db:1: task 't1': field 'passed': expected true or false, got \"yes\"")
    _refused(path, "bad.db:2: task 't2': contradiction: 'timed_out' and 'passed' are both true")


def test_text_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    path = bare_db(tmp_path / "bad.db", [base_row("t1", 0, passed=True)])
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("INSERT INTO attempts (run_id, task_id) VALUES ('bad', CAST(x'ff' AS TEXT))")
    conn.close()
    result = CliRunner().invoke(main, ["score", str(path)], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "UTF-8" in result.output
