"""Write ledger rows into a ``.db`` the way another tool would: plain sqlite3, no trialbook checks."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trialbook.ledger import FIELDS, LedgerStore, RunRecord

COLUMNS = [f.name for f in FIELDS]


def _values(columns: Sequence[str], row: Mapping[str, Any], run: str | None) -> list[Any]:
    """The row's values in column order (a flag as 0/1, as SQLite stores it)."""
    merged = ({"run_id": run} if run is not None else {}) | dict(row)
    return [int(v) if isinstance(v, bool) else v for v in (merged.get(c) for c in columns)]


def own_schema_db(path: Path, rows: Sequence[Mapping[str, Any]], run: str = "bad") -> Path:
    """A store trialbook created (its schema, CHECKs and all), rows inserted by plain sqlite3.

    Raises sqlite3.IntegrityError for a row the schema itself refuses."""
    with LedgerStore(path) as store:
        for r in sorted({str(row.get("run_id", run)) for row in rows}):
            store.create_run(RunRecord(run_id=r))
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.executemany(
                f"INSERT INTO attempts ({', '.join(COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(COLUMNS))})",
                [_values(COLUMNS, row, run) for row in rows],
            )
    finally:
        conn.close()
    return path


def bare_db(path: Path, rows: Sequence[Mapping[str, Any]], run: str | None = "bad") -> Path:
    """A ``.db`` another tool created: a bare attempts table with the ledger's columns (no type,
    no CHECK, no NOT NULL, no unique index) plus any extra column a row names, marked as schema
    7 so that trialbook reads it. ``run=None`` keeps a row without run_id as NULL."""
    extra = sorted({k for row in rows for k in row} - set(COLUMNS))
    columns = COLUMNS + extra
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(
                "CREATE TABLE runs (run_id TEXT, system TEXT, dataset_id TEXT, started_at TEXT)"
            )
            conn.execute(f"CREATE TABLE attempts (id INTEGER PRIMARY KEY, {', '.join(columns)})")
            conn.executemany(
                f"INSERT INTO attempts ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' * len(columns))})",
                [_values(columns, row, run) for row in rows],
            )
            conn.execute("PRAGMA user_version = 7")
    finally:
        conn.close()
    return path
