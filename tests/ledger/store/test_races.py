"""Schema 8: a race recorded as one sequential comparison of two runs, append-only."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from trialbook.errors import LedgerError
from trialbook.ledger.store import MIGRATIONS, SCHEMA_VERSION, LedgerStore, RaceRecord, RunRecord
from trialbook.ledger.store._schema import statements

RACE = RaceRecord(
    race_id="r1",
    baseline_run="r1-baseline",
    candidate_run="r1-candidate",
    baseline_agent="./base.sh",
    candidate_agent="./cand.sh --fast",
    method="betting-population",
    alpha=0.05,
    order_seed=3,
    task_order=("b", "a", "c"),
    stopping_rule="stop when ...",
    dataset_id="sha256:x",
    suite_path="/s",
    min_effect=0.05,
    max_tasks=2,
)


def _store_at(db: Path, version: int) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    for number, _, sql in MIGRATIONS[:version]:
        for statement in statements(sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO migrations VALUES (?, 'x', '2026-01-01T00:00:00+00:00')", (number,)
        )
    conn.execute(f"PRAGMA user_version = {version}")
    conn.execute(
        "INSERT INTO runs (run_id, k_budget, started_at) VALUES ('old', 1, '2026-01-01T00:00:00+00:00')"
    )
    conn.close()


def test_migration_8_adds_races_to_a_schema_6_store(tmp_path: Path) -> None:
    db = tmp_path / "v6.db"
    _store_at(db, 6)
    with LedgerStore(db, readonly=True) as store:
        assert store.races() == []  # an older store, read without migrating, has none
    with LedgerStore(db) as store:
        assert SCHEMA_VERSION >= 8
        assert [v for v, _, _ in store.migrations()] == list(range(1, SCHEMA_VERSION + 1))
        assert [r.record.run_id for r in store.runs()] == ["old"]  # the runs are kept
        store.create_race(RACE)
        store.record_race_event("r1", "stopped", {"decision": "improvement", "tasks_used": 2})
    with LedgerStore(db, readonly=True) as store:  # read back from the file
        status = store.race("r1")
        assert status is not None
        assert status.record == RaceRecord(
            **{**RACE.__dict__, "started_at": status.record.started_at}
        )
        assert status.status == "stopped"
        assert status.stopped is not None
        assert status.stopped["decision"] == "improvement"
        assert store.race_of("r1-baseline", "r1-candidate") == status
        assert store.race_of("r1-candidate", "r1-baseline") is None  # the order is the race's


def test_races_are_append_only_and_unique(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    with LedgerStore(db) as store:
        store.create_run(RunRecord(run_id="x", k_budget=1))
        store.create_race(RACE)
        with pytest.raises(LedgerError, match="cannot be recorded"):
            store.create_race(RACE)
        with pytest.raises(ValueError, match="unknown race event"):
            store.record_race_event("r1", "finished")
    conn = sqlite3.connect(db)
    for sql in ("UPDATE races SET alpha = 0.1", "DELETE FROM race_events"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(sql)
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        conn.execute(
            "INSERT INTO races (race_id, baseline_run, candidate_run, baseline_agent, "
            "candidate_agent, method, alpha, order_seed, task_order, stopping_rule, started_at) "
            "VALUES ('r2', 'a', 'b', 'x', 'y', 'm', 1.5, 0, '[]', '', '')"
        )
