"""Hostile `.db` files read by `score`, `runs`, `export` and `compare`: a recursive view named
`attempts` is stopped by the query clock, a column name holding `"` stays one quoted name, and a runs
row the store would not have written (text for a number, a blob for a time, JSON that is not, or is
nested deeper than Python's stack) is one line naming the run and the column. Each is exit 2 with one
line, never a traceback or a hang."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import base_row
from trialbook.cli import main
from trialbook.ledger import LedgerStore, RunRecord
from trialbook.ledger.store import _connection as _store

pytestmark = pytest.mark.timeout(120)

_ROW = (
    "id, run_id, task_id, attempt_index, k_budget, timeout_s, elapsed_s, passed, timed_out, "
    "helper_calls, oracle_leak"
)


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _one_line_exit_2(out: Result) -> str:
    assert out.exit_code == 2, out.output
    assert isinstance(out.exception, SystemExit), out.exception
    assert "Traceback" not in out.output
    assert out.output.count("\n") == 1, out.output
    return out.output


def _recursive_view(path: Path) -> Path:
    """A store of ours whose attempts table another hand replaced by a view with no end."""
    with LedgerStore(path) as store:
        store.create_run(RunRecord(run_id="r", origin="trialbook run"))
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TABLE attempts")
        conn.execute(
            "CREATE VIEW attempts AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
            "FROM n) SELECT x AS id, 'r' AS run_id, 't' || x AS task_id, 0 AS attempt_index, "
            "1 AS k_budget, 1.0 AS timeout_s, 1.0 AS elapsed_s, 1 AS passed, 0 AS timed_out, "
            "0 AS helper_calls, 0 AS oracle_leak, NULL AS retry FROM n"
        )
    conn.close()
    return path


@pytest.mark.parametrize("command", ["score", "runs", "export", "compare"])
def test_a_recursive_view_named_attempts_is_stopped_by_the_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setenv(_store.QUERY_SECONDS_ENV, "0.5")
    db = str(_recursive_view(tmp_path / "view.db"))
    args = {"compare": (db, db), "export": (db, "--format", "jsonl")}.get(command, (db,))
    text = _one_line_exit_2(_cli(command, *args))
    assert "a query ran past 0.5 s and was stopped" in text
    assert _store.QUERY_SECONDS_ENV in text


def test_the_clock_bound_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "l.db"
    with LedgerStore(db) as store:
        store.create_run(RunRecord(run_id="r"))
    monkeypatch.setenv(_store.QUERY_SECONDS_ENV, "soon")
    text = _one_line_exit_2(_cli("runs", str(db)))
    assert "TRIALBOOK_QUERY_SECONDS: expected seconds > 0, got 'soon'" in text


_QUOTE = 'x", (SELECT count(*) FROM sqlite_master) AS "y'


def _quoted_column(path: Path, value: object) -> Path:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE runs (run_id TEXT, system TEXT, started_at TEXT)")
        name = _QUOTE.replace('"', '""')
        conn.execute(f'CREATE TABLE attempts ({_ROW}, "{name}")')
        conn.execute(
            "INSERT INTO attempts VALUES (1, 'r', 't', 0, 1, 1.0, 1.0, 1, 0, 0, 0, ?)", (value,)
        )
        conn.execute("PRAGMA user_version = 7")
    conn.close()
    return path


def test_a_column_name_with_a_quote_is_one_name_never_spliced_into_our_sql(
    tmp_path: Path,
) -> None:
    held = str(_quoted_column(tmp_path / "held.db", 5))
    for args in (("score", held), ("export", held, "--format", "jsonl")):
        text = _one_line_exit_2(_cli(*args))
        assert f"unknown field {_QUOTE!r}" in text
    empty = str(_quoted_column(tmp_path / "empty.db", None))
    out = _cli("score", empty, "--format", "json")
    assert out.exit_code == 0, out.output
    assert '"pass@1"' in out.output


def _run_with(path: Path, column: str, value: object) -> Path:
    with LedgerStore(path) as store:
        store.create_run(RunRecord(run_id="r", k_budget=1, origin="trialbook run"))
        store.append([base_row("t", 0, passed=True, k=1, run_id="r")])
    conn = sqlite3.connect(path)
    with conn:
        # the runs table is append-only: the hostile file is made by rebuilding it as another
        # hand would, its CHECKs bypassed
        conn.execute("PRAGMA ignore_check_constraints = ON")
        conn.execute("DROP TRIGGER runs_no_update")
        conn.execute(f"UPDATE runs SET {column} = ?", (value,))
    conn.close()
    return path


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        ("tasks", "not json", "column 'tasks' of the runs table: expected the JSON list"),
        ("tasks", "[" * 100_000 + "]" * 100_000, "column 'tasks' of the runs table"),
        ("seeds", '["a"]', "column 'seeds' of the runs table"),
        ("planned", "lots", "column 'planned' of the runs table: expected a whole number"),
        ("started_at", b"\x00\x01", "column 'started_at' of the runs table: expected text"),
        ("k_budget", 1.5, "column 'k_budget' of the runs table: expected a whole number"),
        ("source_files", '[{"path": 1}]', "column 'source_files' of the runs table"),
    ],
)
@pytest.mark.parametrize("command", ["runs", "score"])
def test_a_runs_row_the_store_would_not_have_written_is_one_line(
    tmp_path: Path, column: str, value: object, said: str, command: str
) -> None:
    db = _run_with(tmp_path / "l.db", column, value)
    text = _one_line_exit_2(_cli(command, str(db)))
    assert f"run 'r': {said}" in text


def _bypassed(path: Path, column: str, value: object) -> Path:
    """A store of ours into which another hand wrote a row past the CHECKs of its table."""
    with LedgerStore(path) as store:
        store.create_run(RunRecord(run_id="r"))
    row = base_row("t", 0, passed=True, k=1, run_id="r", cost=0.5) | {column: value}
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        conn.execute(
            f"INSERT INTO attempts ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            [int(v) if isinstance(v, bool) else v for v in row.values()],
        )
    conn.close()
    return path


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        ("elapsed_s", b"\x01\x02", "field 'elapsed_s': expected a number, got b'\\x01\\x02'"),
        # read as a flag, a blob would have been a pass
        ("passed", b"\x01", "field 'passed': expected true or false, got b'\\x01'"),
        ("cost", b"\x00", "field 'cost': expected a number"),
        ("task_id", b"t", "field 'task_id': expected a string"),
        ("elapsed_s", -1.0, "field 'elapsed_s'"),
    ],
)
@pytest.mark.parametrize("command", ["score", "export", "report", "compare"])
def test_a_value_stored_past_the_checks_is_one_line_in_every_command(
    tmp_path: Path, column: str, value: object, said: str, command: str
) -> None:
    db = str(_bypassed(tmp_path / "l.db", column, value))
    args = {
        "export": (db, "--format", "jsonl"),
        "report": (db, "--output", str(tmp_path / "r.html")),
        "compare": (db, db),
    }.get(command, (db,))
    text = _one_line_exit_2(_cli(command, *args))
    assert said in text
    assert not (tmp_path / "r.html").exists()
