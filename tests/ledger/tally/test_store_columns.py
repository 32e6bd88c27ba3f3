"""Schema 7: the store keeps the validated columns of each batch it writes, and score reads a run
from them; rows without theirs (older stores, other tools) are tallied by SQLite instead."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_row
from trialbook import report as render
from trialbook.analysis import ScoreOptions, score_file
from trialbook.ledger import LedgerStore, RunRecord, import_files, read_ledger
from trialbook.ledger.store import MIGRATIONS, SCHEMA_VERSION, StoreTallies
from trialbook.ledger.store._schema import statements


def _rows(run: str, tasks: int = 4, k: int = 3) -> list[dict[str, Any]]:
    return [
        base_row(
            f"t{t}", a, passed=(t * 7 + a) % 3 == 0, k=k, run_id=run, elapsed_s=0.1 * t + a / 3
        )
        for t in range(tasks)
        for a in range(k)
    ]


def _doc(path: Path, run: str | None = None) -> str:
    doc = render.score_to_dict(score_file(path, run=run, options=ScoreOptions(resamples=200)))
    doc.pop("source")
    return json.dumps(doc)


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _appended(db: Path, rows: list[dict[str, Any]], *, singly: int) -> Path:
    """Run 'r' of ``rows`` in a new store: the first ``singly`` appended one at a time, as the
    harness writes them, the rest in one batch."""
    with LedgerStore(db) as store:
        store.create_run(RunRecord(run_id="r", k_budget=rows[0]["k_budget"]))
        for row in rows[:singly]:
            store.append([row])
        if rows[singly:]:
            store.append(rows[singly:])
    return db


def test_migration_7_keeps_a_schema_6_store_whole_and_new_writes_keep_their_columns(
    tmp_path: Path,
) -> None:
    db = tmp_path / "v6.db"
    conn = sqlite3.connect(db, isolation_level=None)
    for number, _, sql in MIGRATIONS[:6]:
        for statement in statements(sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO migrations VALUES (?, 'x', '2026-01-01T00:00:00+00:00')", (number,)
        )
    conn.execute("PRAGMA user_version = 6")
    conn.close()
    old = _rows("old")
    with LedgerStore(db) as store:  # migrates through 7 (and on), then writes
        assert store.schema_version == SCHEMA_VERSION >= 7
        assert [v for v, _, _ in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
    conn = sqlite3.connect(db, isolation_level=None)  # rows written before schema 7: no columns
    conn.execute(
        "INSERT INTO runs (run_id, started_at) VALUES ('old', '2026-01-01T00:00:00+00:00')"
    )
    cols = list(old[0])
    conn.executemany(
        f"INSERT INTO attempts (run_id, {', '.join(cols)}) VALUES ('old', {', '.join('?' * len(cols))})",
        [[int(r[c]) if isinstance(r[c], bool) else r[c] for c in cols] for r in old],
    )
    conn.close()
    new = _rows("new")
    import_files(db, [read_ledger(_jsonl(tmp_path / "new.jsonl", new))])
    with StoreTallies(db) as tallies:
        assert tallies.rows("new").lines.tolist() == list(range(13, 25))
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT run_id, rows, last_id FROM attempt_columns").fetchall() == [
        ("new", 12, 24)
    ]
    conn.close()
    assert _doc(db, "old") == _doc(_jsonl(tmp_path / "old.jsonl", old))
    assert _doc(db, "new") == _doc(tmp_path / "new.jsonl")


def test_a_run_written_in_many_batches_reads_as_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _rows("r", tasks=5, k=4)
    db = _appended(tmp_path / "l.db", rows, singly=7)  # the harness writes one attempt at a time
    monkeypatch.setattr(StoreTallies, "_tally", lambda *_: pytest.fail("the SQL path was taken"))
    assert _doc(db) == _doc(_jsonl(tmp_path / "l.jsonl", rows))


def test_a_row_another_tool_added_sends_the_run_to_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _rows("r")
    db = tmp_path / "l.db"
    import_files(db, [read_ledger(_jsonl(tmp_path / "l.jsonl", rows[:-1]))])
    conn = sqlite3.connect(db)
    with conn:
        last = rows[-1]
        conn.execute(
            f"INSERT INTO attempts ({', '.join(last)}) VALUES ({', '.join('?' * len(last))})",
            [int(v) if isinstance(v, bool) else v for v in last.values()],
        )
    conn.close()
    taken = []
    original = StoreTallies._tally
    monkeypatch.setattr(StoreTallies, "_tally", lambda *a: taken.append(1) or original(*a))
    assert _doc(db) == _doc(_jsonl(tmp_path / "all.jsonl", rows))
    assert taken


def test_one_run_of_many_scores_as_a_store_of_that_run_alone(tmp_path: Path) -> None:
    runs = {f"r{i}": _rows(f"r{i}", tasks=3 + i) for i in range(4)}
    many, alone = tmp_path / "many.db", tmp_path / "alone.db"
    # the runs' rows interleaved, each run's in its order (a float mean depends on the order)
    mixed = [rows[j] for j in range(24) for rows in runs.values() if j < len(rows)]
    import_files(many, [read_ledger(_jsonl(tmp_path / "many.jsonl", mixed))])
    import_files(alone, [read_ledger(_jsonl(tmp_path / "alone.jsonl", runs["r2"]))])
    assert _doc(many, "r2") == _doc(alone)


def test_a_large_batch_is_kept_in_parts_and_read_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trialbook.ledger.store._columns as columns

    # SQLite refuses a blob over 1 GB: a large batch is kept in parts (here of 7 rows: 67 bytes
    # each, the id and the 10 recorded fields: 7 of 8 bytes, 3 flags of 1)
    monkeypatch.setattr(columns, "_PART", 7 * 67)
    rows = _rows("r", tasks=5, k=4) + _rows("s", tasks=3, k=2)
    db = tmp_path / "l.db"
    import_files(db, [read_ledger(_jsonl(tmp_path / "l.jsonl", rows))])
    conn = sqlite3.connect(db)
    kept = conn.execute("SELECT run_id, rows, last_id FROM attempt_columns ORDER BY id").fetchall()
    conn.close()
    assert kept == [("r", 7, 7), ("r", 7, 14), ("r", 6, 20), ("s", 6, 26)]
    monkeypatch.setattr(StoreTallies, "_tally", lambda *_: pytest.fail("the SQL path was taken"))
    for run in ("r", "s"):
        assert _doc(db, run) == _doc(tmp_path / "l.jsonl", run)


def test_a_run_kept_a_blob_per_attempt_is_read_from_its_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the harness writes each attempt on its own: 100 blobs of one row each cost more to read one
    # by one than the rows themselves (store/_scan.py, _FEW_BLOBS and _ROWS_PER_BLOB)
    import trialbook.ledger.store._scan as scan

    rows = _rows("r", tasks=25, k=4)
    db = _appended(tmp_path / "l.db", rows, singly=len(rows))
    monkeypatch.setattr(scan, "load_columns", lambda *_: pytest.fail("the blobs were read"))
    assert _doc(db) == _doc(_jsonl(tmp_path / "l.jsonl", rows))
