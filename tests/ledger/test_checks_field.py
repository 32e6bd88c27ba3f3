"""The ``checks`` field and the outcome kinds in the ledger: validated by the rules in every format,
kept by the store (schema 11, migrated from 8, the SQL path of a foreign .db included)."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import base_row
from tests.ledger.tally._foreign import bare_db, own_schema_db
from trialbook.cli import main
from trialbook.errors import LedgerError
from trialbook.ledger import CheckVerdict, checks_text, ledger_rows, read_checks, read_ledger
from trialbook.ledger.store import MIGRATIONS, SCHEMA_VERSION, LedgerStore, RunRecord
from trialbook.ledger.store._schema import statements

GOOD = checks_text({"b": CheckVerdict(False, "no source"), "a": CheckVerdict(True, None)})


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_checks_text_is_canonical_and_reads_back() -> None:
    # sorted keys, no spaces, reason null when none: the form every row of the harness records
    assert GOOD == ('{"a":{"passed":true,"reason":null},"b":{"passed":false,"reason":"no source"}}')
    assert read_checks(GOOD) == {
        "a": CheckVerdict(True, None),
        "b": CheckVerdict(False, "no source"),
    }


BAD_CHECKS = [
    ("[1, 2]", "must be a JSON object of named checks"),
    ("{not json", "not valid JSON"),
    ('{"": {"passed": true, "reason": null}}', "must not be empty"),
    ('{"x": true}', 'must be {"passed": bool'),
    ('{"x": {"passed": 1, "reason": null}}', "'passed' must be true or false"),
    ('{"x": {"passed": true, "reason": 3}}', "'reason' must be null or a string"),
    ('{"x": {"passed": true, "reason": "a\\u001b[31m"}}', "without control characters"),
    ('{"' + "n" * 65 + '": {"passed": true, "reason": null}}', "longer than 64"),
    (json.dumps({f"c{i}": {"passed": True, "reason": None} for i in range(65)}), "65 checks"),
]


@pytest.mark.parametrize(("text", "message"), BAD_CHECKS)
@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_a_malformed_checks_value_is_refused_naming_row_and_field(
    tmp_path: Path, text: str, message: str, suffix: str
) -> None:
    rows = [base_row("t", 0, passed=True, k=2), base_row("t", 1, passed=False, k=2, checks=text)]
    path = _jsonl(tmp_path / "l.jsonl", rows)
    if suffix == "csv":
        path = tmp_path / "l.csv"
        cols = list(rows[1])
        with path.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(cols)
            for r in rows:
                cells = [r.get(c, "") for c in cols]
                writer.writerow([str(v).lower() if isinstance(v, bool) else v for v in cells])
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    text_of = str(info.value)
    assert "field 'checks'" in text_of, text_of
    assert message in text_of, text_of
    assert f"l.{suffix}:{2 if suffix == 'jsonl' else 3}:" in text_of, text_of  # the second row
    result = CliRunner().invoke(main, ["score", str(path)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "pass@1" not in result.output


def test_passed_with_task_outcome_false_is_a_contradiction(tmp_path: Path) -> None:
    rows = [base_row("t", 0, passed=True, k=1, protection=True, task_outcome=False)]
    with pytest.raises(LedgerError, match="'passed' is true but 'task_outcome' is false"):
        read_ledger(_jsonl(tmp_path / "l.jsonl", rows))


def _store_at_8(db: Path) -> None:
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
    for i, passed in enumerate((1, 0)):
        conn.execute(
            "INSERT INTO attempts (run_id, task_id, attempt_index, k_budget, timeout_s, elapsed_s,"
            " passed, timed_out, helper_calls, oracle_leak, status, error) VALUES"
            " ('old', 't', ?, 2, 60, 1.5, ?, 0, 0, 0, ?, ?)",
            (i, passed, "passed" if passed else "failed", None if passed else "boom"),
        )
    conn.close()


def test_migration_11_adds_checks_and_outcomes_to_a_schema_8_store(tmp_path: Path) -> None:
    db = tmp_path / "v8.db"
    _store_at_8(db)
    before = list(ledger_rows(read_ledger(db)))
    with LedgerStore(db) as store:
        assert SCHEMA_VERSION >= 11
        assert [v for v, _, _ in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
        store.create_run(RunRecord(run_id="new", k_budget=2))
        store.append(
            [
                base_row("u", 0, passed=False, k=2, run_id="new", checks=GOOD),
                base_row(
                    "u",
                    1,
                    passed=False,
                    k=2,
                    run_id="new",
                    protection=True,
                    task_outcome=False,
                    stop_reason="refused the write",
                ),
            ]
        )
    after = list(ledger_rows(read_ledger(db)))
    old = [r for r in after if r["run_id"] == "old"]
    assert old == before  # the schema-8 rows unchanged, the new fields not recorded
    assert all(r["checks"] is None and r["task_outcome"] is None for r in old)
    new = {r["attempt_index"]: r for r in after if r["run_id"] == "new"}
    assert new[0]["checks"] == GOOD
    assert (new[1]["protection"], new[1]["task_outcome"], new[1]["stop_reason"]) == (
        True,
        False,
        "refused the write",
    )
    # the kept column blobs (schema 7) and the attempts table give the same rows
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM attempt_columns WHERE run_id = 'new'").fetchone()[0]
    assert (
        conn.execute(
            "SELECT checks FROM attempts WHERE run_id = 'new' AND attempt_index = 0"
        ).fetchone()[0]
        == GOOD
    )
    conn.close()


@pytest.mark.parametrize("make", [own_schema_db, bare_db])
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"passed": False, "checks": '{"x": 1}'}, "field 'checks'"),
        ({"passed": True, "task_outcome": False}, "'task_outcome' is false"),
    ],
)
def test_a_db_written_by_another_tool_is_refused_on_the_sql_path(
    tmp_path: Path, make: Any, bad: dict[str, Any], message: str
) -> None:
    """Rows inserted by plain sqlite3 (the store's own schema, or a bare table): score tallies
    them with SQL, and a row whose checks or task outcome break the rules is read the precise way
    and refused, naming the field."""
    rows = [base_row("a", 0, passed=True, k=1, checks=GOOD), base_row("b", 0, k=1, **bad)]
    db = make(tmp_path / "other.db", rows)
    result = CliRunner().invoke(main, ["score", str(db)])
    assert result.exit_code == 2, result.output
    assert message in result.output, result.output
    assert "Traceback" not in result.output
    assert "pass@1" not in result.output


def test_a_graders_check_with_a_key_beyond_passed_and_reason_is_left_out() -> None:
    # the grader contract (docs/harness.md) allows true, false or {"passed", "reason"}; the ledger's
    # own reader refuses any other key (read_checks), so the harness must not record one
    from trialbook.ledger import checks_from_grader

    kept, notes = checks_from_grader(
        {
            "ok": {"passed": True, "reason": None},
            "extra": {"passed": True, "reason": None, "score": 1},
        }
    )
    assert kept == {"ok": CheckVerdict(True, None)}
    assert notes == [
        'grader\'s check \'extra\': must be true, false or {"passed": bool, "reason": str}: '
        "left out"
    ]
    assert read_checks(checks_text(kept)) == kept
