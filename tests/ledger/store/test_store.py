"""The SQLite ledger: round trips, append-only, migrations, concurrent writers, a killed writer."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, base_row, write_jsonl
from trialbook.cli import main
from trialbook.ledger import FIELDS, ledger_rows, read_ledger
from trialbook.ledger.store import SCHEMA_VERSION, LedgerStore, RunRecord

FIXTURES = Path(__file__).parent / "fixtures"


def full_row(task: str, attempt: int, **over: Any) -> dict[str, Any]:
    """A row with every field of the ledger recorded, each of its own kind."""
    row: dict[str, Any] = base_row(task, attempt, passed=True, k=3)
    row.update(
        run_id="r1",
        system="agent-x",
        dataset_id="sha256:abc",
        status="passed",
        score=0.75,
        error='none, but a comma, and a "quote"',
        stratum="repair",
        weight=2.5,
        seed=12345678901,
        temperature=0.7,
        fixture_hash="sha256:fff",
        cache_hit=True,
        tokens_in=1200,
        tokens_out=34,
        tool_calls=7,
        cost=0.1 + 0.2,  # a float that needs all 17 digits to round-trip
        model_version="m-2026-11",
        grader_version="g1",
        harness_version="trialbook 0.3",
        sandbox="bwrap",
        started_at="2026-11-30T10:00:00.000+00:00",
        finished_at="2026-11-30T10:00:01.500+00:00",
        transcript="transcripts/r1/a/0",
        selected=False,
        checks='{"sources exist":{"passed":true,"reason":null},"z":{"passed":false,"reason":"a, \\"b\\""}}',
        protection=True,
        task_outcome=True,
        stop_reason="done, said so",
    )
    row.update(over)
    return row


def sparse_row(task: str, attempt: int) -> dict[str, Any]:
    """Only the required fields and run_id: everything else unknown (must stay null, never 0)."""
    row = base_row(task, attempt, passed=False, k=3)
    row["run_id"] = "r2"
    return row


@pytest.fixture
def rows() -> list[dict[str, Any]]:
    return [full_row("a", 0), full_row("a", 1, passed=False, status="failed"), sparse_row("b", 0)]


def as_full(row: dict[str, Any]) -> dict[str, Any]:
    return {f.name: row.get(f.name) for f in FIELDS}


def typed(rows: list[dict[str, Any]]) -> list[list[tuple[str, type, Any]]]:
    return [[(k, type(v), v) for k, v in as_full(r).items()] for r in rows]


def test_every_field_round_trips_through_sqlite_jsonl_csv_and_parquet(
    tmp_path: Path, rows: list[dict[str, Any]]
) -> None:
    src = tmp_path / "in.jsonl"
    write_jsonl(src, rows)
    db = tmp_path / "l.db"
    runner = CliRunner()
    result = runner.invoke(main, ["import", "jsonl", str(src), "--ledger", str(db)])
    assert result.exit_code == 0, result.output
    expected = typed(rows)
    assert typed(list(ledger_rows(read_ledger(db)))) == expected
    for fmt in ("jsonl", "csv", "parquet"):
        out = tmp_path / f"out.{fmt}"
        result = runner.invoke(main, ["export", str(db), "--format", fmt, "-o", str(out)])
        assert result.exit_code == 0, result.output
        if fmt == "parquet":
            back = pq.read_table(out).to_pylist()
        else:
            back = list(ledger_rows(read_ledger(out)))
        assert typed(back) == expected, fmt
    # and back in again: CSV -> a second ledger -> identical rows
    db2 = tmp_path / "l2.db"
    result = runner.invoke(main, ["import", "csv", str(tmp_path / "out.csv"), "--ledger", str(db2)])
    assert result.exit_code == 0, result.output
    assert typed(list(ledger_rows(read_ledger(db2)))) == expected


def test_export_to_stdout_and_one_run(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    src = tmp_path / "in.jsonl"
    write_jsonl(src, [*rows, full_row("a", 0, run_id="r3")])
    result = CliRunner().invoke(main, ["export", str(src), "--run", "r3", "--format", "jsonl"])
    assert result.exit_code == 0
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert [r["run_id"] for r in lines] == ["r3"]
    assert lines[0]["cost"] == 0.1 + 0.2
    result = CliRunner().invoke(main, ["export", str(src), "--run", "nope", "--format", "csv"])
    assert result.exit_code == 2
    assert "--run 'nope' is not in" in result.output
    assert "(runs: " in result.output


def test_score_reads_db_as_it_reads_jsonl(tmp_path: Path) -> None:
    rows = [
        base_row(t, i, passed=(hash((t, i)) % 3 == 0), k=4, run_id="r")
        for t in ("a", "b", "c", "d")
        for i in range(4)
    ]
    src = tmp_path / "in.jsonl"
    write_jsonl(src, rows)
    db = tmp_path / "l.db"
    runner = CliRunner()
    assert runner.invoke(main, ["import", "jsonl", str(src), "--ledger", str(db)]).exit_code == 0
    from_db = json.loads(runner.invoke(main, ["score", str(db), "--format", "json"]).stdout)
    from_file = json.loads(runner.invoke(main, ["score", str(src), "--format", "json"]).stdout)
    assert from_db["runs"][0]["metrics"] == from_file["runs"][0]["metrics"]


def test_import_is_all_or_nothing(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    write_jsonl(good, rows)
    write_jsonl(bad, [full_row("z", 0, run_id="r9", passed="yes")])
    db = tmp_path / "l.db"
    result = CliRunner().invoke(main, ["import", "jsonl", str(good), str(bad), "--ledger", str(db)])
    assert result.exit_code == 2
    assert "bad.jsonl:1: task 'z': field 'passed': expected true or false" in result.output
    assert not db.exists()  # a refused import into a new ledger leaves no file behind

    # conflicts with stored rows refuse the whole batch, and the ledger keeps what it had
    assert (
        CliRunner().invoke(main, ["import", "jsonl", str(good), "--ledger", str(db)]).exit_code == 0
    )
    again = tmp_path / "again.jsonl"
    write_jsonl(again, [full_row("c", 0), full_row("a", 0)])
    result = CliRunner().invoke(main, ["import", "jsonl", str(again), "--ledger", str(db)])
    assert result.exit_code == 2
    assert (
        "again.jsonl:2: task 'a': attempt 0 of run 'r1' is already in the ledger" in result.output
    )
    assert len(read_ledger(db)) == len(rows)

    # only the colliding row is named, not the new rows inserted before it in the same batch
    assert "again.jsonl:1" not in result.output

    other_k = tmp_path / "k.jsonl"
    write_jsonl(other_k, [full_row("c", 0, k_budget=5)])
    result = CliRunner().invoke(main, ["import", "jsonl", str(other_k), "--ledger", str(db)])
    assert result.exit_code == 2
    assert "field 'k_budget': 5 differs from run 'r1'" in result.output


def test_import_run_id_option(tmp_path: Path) -> None:
    plain = tmp_path / "shard-1.jsonl"
    write_jsonl(plain, [base_row("a", 0, passed=True, k=2)])
    db = tmp_path / "l.db"
    runner = CliRunner()
    result = runner.invoke(main, ["import", "jsonl", str(plain), "--ledger", str(db)])
    assert result.exit_code == 0
    assert read_ledger(db).run_ids == ("shard-1",)
    named = tmp_path / "named.jsonl"
    write_jsonl(named, [base_row("a", 0, passed=True, k=2, run_id="x")])
    result = runner.invoke(
        main, ["import", "jsonl", str(named), "--ledger", str(db), "--run-id", "y"]
    )
    assert result.exit_code == 2
    assert "named.jsonl: its rows name run 'x'" in result.output
    result = runner.invoke(main, ["import", "csv", str(named), "--ledger", str(db)])
    assert result.exit_code == 2
    assert "expected a .csv file" in result.output
    result = runner.invoke(
        main, ["import", "jsonl", str(plain), "--ledger", str(tmp_path / "x.sqlite")]
    )
    assert result.exit_code == 2
    assert "--ledger: expected a .db file" in result.output


def test_imported_run_record_takes_what_rows_agree_on(
    tmp_path: Path, rows: list[dict[str, Any]]
) -> None:
    src = tmp_path / "in.jsonl"
    write_jsonl(src, rows)
    db = tmp_path / "l.db"
    CliRunner().invoke(main, ["import", "jsonl", str(src), "--ledger", str(db)])
    with LedgerStore(db) as store:
        run, sparse = store.runs()
    assert run.record.k_budget == 3
    assert run.record.dataset_id == "sha256:abc"
    assert run.record.system == "agent-x"
    assert run.record.origin == f"import {src}"
    assert run.attempts == 2
    assert run.status == "started"
    assert sparse.record.system is None
    assert sparse.record.dataset_id is None


def test_rows_are_append_only(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    db = tmp_path / "l.db"
    with LedgerStore(db) as store:
        store.create_run(RunRecord(run_id="r1", k_budget=3))
        store.create_run(RunRecord(run_id="r2", k_budget=3))
        store.append(rows)
        with pytest.raises(Exception, match="already exists"):
            store.create_run(RunRecord(run_id="r1"))
    conn = sqlite3.connect(db)
    for sql in (
        "UPDATE attempts SET passed = 0",
        "DELETE FROM attempts",
        "UPDATE runs SET system = 'x'",
        "DELETE FROM run_events",
    ):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(sql)
    conn.close()
    # and no code path could issue one
    for path in (ROOT / "src").rglob("*.py"):
        text = path.read_text()
        for word in (
            "UPDATE attempts",
            "DELETE FROM",
            "UPDATE runs",
            "INSERT OR REPLACE",
            "UPSERT",
        ):
            if path.name != "_schema.py":
                assert word not in text, f"{path} contains {word!r}"


def test_schema_columns_are_the_ledger_fields(tmp_path: Path) -> None:
    with LedgerStore(tmp_path / "l.db") as store:
        assert store.schema_version == SCHEMA_VERSION
        cols = [r[1] for r in store._conn.execute("PRAGMA table_info(attempts)")]
    assert sorted(cols) == sorted(["id", *(f.name for f in FIELDS)])
    mode = sqlite3.connect(tmp_path / "l.db").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_migrates_a_schema_1_ledger(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.executescript((FIXTURES / "ledger_v1.sql").read_text())
    conn.close()
    before = read_ledger(db)  # readers need no migration
    with LedgerStore(db) as store:
        assert store.schema_version == SCHEMA_VERSION
        versions = [v for v, _, _ in store.migrations()]
        assert versions == list(range(1, SCHEMA_VERSION + 1))
        (run,) = store.runs()
        assert run.record.run_id == "old-run"
        assert run.status == "started"
        store.record_start("old-run", "t3", 0)
        assert store.unfinished_starts("old-run") == [("t3", 0)]
    after = read_ledger(db)
    assert list(ledger_rows(after)) == list(ledger_rows(before))
    assert [r["cost"] for r in ledger_rows(after)] == [0.25, None, 0.0, None]
    with LedgerStore(db) as store:  # reopening applies nothing twice
        assert len(store.migrations()) == SCHEMA_VERSION


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    with LedgerStore(db):
        pass
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    result = CliRunner().invoke(main, ["score", str(db)])
    assert result.exit_code == 2
    assert f"ledger schema {SCHEMA_VERSION + 1} is newer" in result.output
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite at all")
    result = CliRunner().invoke(main, ["score", str(junk)])
    assert result.exit_code == 2
    assert "junk.db" in result.output
    assert "Traceback" not in result.output


def _writer(db: str, worker: int, count: int) -> None:
    with LedgerStore(db) as store:
        for i in range(count):
            store.append([base_row(f"w{worker}-t{i}", 0, passed=i % 2 == 0, k=1, run_id="shared")])


def test_four_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    with LedgerStore(db) as store:
        store.create_run(RunRecord(run_id="shared", k_budget=1))
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(db), w, 60)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    ledger = read_ledger(db)
    assert len(ledger) == 240
    assert len(set(ledger.text("task_id").tolist())) == 240
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from trialbook.ledger.store import LedgerStore
    from tests.conftest import base_row
    store = LedgerStore(sys.argv[1])
    conn = store._conn
    conn.execute("BEGIN IMMEDIATE")
    for i in range(5000):
        conn.execute(
            "INSERT INTO attempts (run_id, task_id, attempt_index, k_budget, timeout_s, elapsed_s,"
            " passed, timed_out, helper_calls, oracle_leak) VALUES ('r', ?, 0, 1, 1.0, 0.5, 1, 0, 0, 0)",
            (f"doomed-{i}",),
        )
    print("inside", flush=True)
    sys.stdin.read()  # wait to be killed with the transaction open
    """
)


def test_a_writer_killed_mid_transaction_leaves_a_sound_file(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    with LedgerStore(db) as store:
        store.create_run(RunRecord(run_id="r", k_budget=1))
        store.append([base_row("kept", 0, passed=True, k=1, run_id="r")])
    with subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"inside"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    time.sleep(0.05)
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert read_ledger(db).text("task_id").tolist() == ["kept"]
    with LedgerStore(db) as store:  # the lock died with the writer: the next one proceeds
        store.append([base_row("after", 0, passed=False, k=1, run_id="r")])
    assert read_ledger(db).text("task_id").tolist() == ["kept", "after"]


def test_export_to_a_missing_folder_is_refused(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    target = tmp_path / "nope" / "out.csv"
    result = CliRunner().invoke(main, ["export", str(src), "--format", "csv", "-o", str(target)])
    assert result.exit_code == 2
    assert f"-o: no such folder {str(target.parent)!r}" in result.output


def test_migration_6_adds_the_run_provenance_to_a_schema_5_store(tmp_path: Path) -> None:
    """A schema-5 ledger gains the provenance columns, its runs kept with them unknown, and new
    runs record them."""
    import sqlite3

    from trialbook.ledger.store import MIGRATIONS
    from trialbook.ledger.store._schema import statements

    db = tmp_path / "v5.db"
    conn = sqlite3.connect(db, isolation_level=None)
    for number, _, sql in MIGRATIONS[:5]:
        for statement in statements(sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO migrations VALUES (?, 'x', '2026-01-01T00:00:00+00:00')", (number,)
        )
    conn.execute("PRAGMA user_version = 5")
    conn.execute(
        "INSERT INTO runs (run_id, k_budget, started_at) VALUES ('old', 2, '2026-01-01T00:00:00+00:00')"
    )
    conn.close()
    with LedgerStore(db) as store:
        assert [v for v, _, _ in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
        assert SCHEMA_VERSION >= 6
        (old,) = store.runs()
        assert (old.record.agent, old.record.planned, old.record.tasks) == (None, None, None)
        assert old.record.graders == ()
        store.create_run(
            RunRecord(
                run_id="new",
                k_budget=1,
                agent="/p/agent.sh --fast",
                agent_digest="sha256:ab /p/agent.sh",
                graders=("pytest -q",),
                pass_env=("API_KEY",),
                python_version="3.12.1",
                host="box",
                planned=4,
                tasks=("a", "b"),
                selection="--limit 2",
            )
        )
    with LedgerStore(db) as store:  # read back from the file
        new = store.run("new")
    assert new is not None
    assert new.record.agent == "/p/agent.sh --fast"
    assert new.record.graders == ("pytest -q",)
    assert new.record.pass_env == ("API_KEY",)
    assert (new.record.planned, new.record.tasks, new.record.selection) == (
        4,
        ("a", "b"),
        "--limit 2",
    )
