"""Migration 14: a schema-13 store gains the run record's ``model`` (the gateway settings a resume
takes again) and ``agent_mounts`` (what of the host the container tier showed the agent). Its runs come through unchanged (no settings: not recorded); a new run's settings
round-trip, and the table itself refuses text that is not JSON there."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from trialbook.ledger import LedgerStore, RunRecord
from trialbook.ledger.store import MIGRATIONS, SCHEMA_VERSION
from trialbook.ledger.store._schema import statements


def _schema_13_store(db: Path) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    for number, _, sql in MIGRATIONS[:13]:
        for statement in statements(sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO migrations VALUES (?, 'x', '2026-01-01T00:00:00+00:00')", (number,)
        )
    conn.execute("PRAGMA user_version = 13")
    conn.execute(
        "INSERT INTO runs (run_id, k_budget, started_at) VALUES ('old', 1, '2026-01-01T00:00:00+00:00')"
    )
    conn.close()


def test_migration_14_adds_the_model_settings_to_a_schema_13_store(tmp_path: Path) -> None:
    db = tmp_path / "v13.db"
    _schema_13_store(db)
    settings = json.dumps({"upstream": "http://127.0.0.1:9", "key_env": "KEY"})
    with LedgerStore(db) as store:
        assert SCHEMA_VERSION >= 14
        assert [v for v, _, _ in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
        store.create_run(
            RunRecord(run_id="new", k_budget=1, model=settings, agent_mounts=("/opt/agent",))
        )
        runs = {s.record.run_id: s.record for s in store.runs()}
    assert (runs["old"].model, runs["old"].agent_mounts) == (None, ())  # not recorded
    assert runs["new"].model == settings
    assert runs["new"].agent_mounts == ("/opt/agent",)
    conn = sqlite3.connect(db)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO runs (run_id, k_budget, started_at, model) "
            "VALUES ('bad', 1, '2026-01-01T00:00:00+00:00', 'not json')"
        )
    conn.close()
