"""The ledger's SQL schema as a list of migrations. Frozen: never edit a released migration, add one.

Each migration runs inside one transaction with the others it is applied with; the store records each
in the ``migrations`` table and sets ``PRAGMA user_version``. A test checks that the columns of
``attempts`` after the last migration are exactly the fields of :data:`trialbook.ledger.FIELDS`, so a
new ledger field cannot be added without a migration.

Every table is append-only: its triggers abort any UPDATE or DELETE.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "statements"]

# Schema 1: runs and attempts (every field of the ledger, typed by CHECK constraints, so the
# file stays sound whatever writes to it).
_V1 = """
CREATE TABLE migrations (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY CHECK (typeof(run_id) = 'text' AND length(run_id) > 0),
    system TEXT,
    dataset_id TEXT,
    suite_path TEXT,
    k_budget INTEGER CHECK (k_budget IS NULL OR k_budget >= 1),
    timeout_s REAL CHECK (timeout_s IS NULL OR timeout_s > 0),
    temperature REAL,
    seeds TEXT,
    model_version TEXT,
    grader_version TEXT,
    harness_version TEXT,
    sandbox TEXT,
    started_at TEXT NOT NULL,
    rerun_reason TEXT,
    origin TEXT
);
CREATE TABLE attempts (
    id INTEGER PRIMARY KEY,
    "run_id" TEXT NOT NULL REFERENCES runs(run_id),
    "task_id" TEXT NOT NULL CHECK ("task_id" IS NULL OR (typeof("task_id") = 'text')),
    "attempt_index" INTEGER NOT NULL CHECK ("attempt_index" IS NULL OR (typeof("attempt_index") = 'integer' AND "attempt_index" >= 0)),
    "k_budget" INTEGER NOT NULL CHECK ("k_budget" IS NULL OR (typeof("k_budget") = 'integer' AND "k_budget" >= 1)),
    "timeout_s" REAL NOT NULL CHECK ("timeout_s" IS NULL OR (typeof("timeout_s") IN ('real', 'integer') AND "timeout_s" > 0)),
    "elapsed_s" REAL NOT NULL CHECK ("elapsed_s" IS NULL OR (typeof("elapsed_s") IN ('real', 'integer') AND "elapsed_s" >= 0)),
    "passed" INTEGER NOT NULL CHECK ("passed" IS NULL OR ("passed" IN (0, 1))),
    "timed_out" INTEGER NOT NULL CHECK ("timed_out" IS NULL OR ("timed_out" IN (0, 1))),
    "helper_calls" INTEGER NOT NULL CHECK ("helper_calls" IS NULL OR (typeof("helper_calls") = 'integer' AND "helper_calls" >= 0)),
    "oracle_leak" INTEGER NOT NULL CHECK ("oracle_leak" IS NULL OR ("oracle_leak" IN (0, 1))),
    "system" TEXT CHECK ("system" IS NULL OR (typeof("system") = 'text')),
    "dataset_id" TEXT CHECK ("dataset_id" IS NULL OR (typeof("dataset_id") = 'text')),
    "status" TEXT CHECK ("status" IS NULL OR (typeof("status") = 'text')),
    "score" REAL CHECK ("score" IS NULL OR (typeof("score") IN ('real', 'integer') AND "score" >= 0 AND "score" <= 1)),
    "error" TEXT CHECK ("error" IS NULL OR (typeof("error") = 'text')),
    "stratum" TEXT CHECK ("stratum" IS NULL OR (typeof("stratum") = 'text')),
    "weight" REAL CHECK ("weight" IS NULL OR (typeof("weight") IN ('real', 'integer') AND "weight" > 0)),
    "seed" INTEGER CHECK ("seed" IS NULL OR (typeof("seed") = 'integer')),
    "temperature" REAL CHECK ("temperature" IS NULL OR (typeof("temperature") IN ('real', 'integer') AND "temperature" >= 0)),
    "fixture_hash" TEXT CHECK ("fixture_hash" IS NULL OR (typeof("fixture_hash") = 'text')),
    "cache_hit" INTEGER CHECK ("cache_hit" IS NULL OR ("cache_hit" IN (0, 1))),
    "tokens_in" INTEGER CHECK ("tokens_in" IS NULL OR (typeof("tokens_in") = 'integer' AND "tokens_in" >= 0)),
    "tokens_out" INTEGER CHECK ("tokens_out" IS NULL OR (typeof("tokens_out") = 'integer' AND "tokens_out" >= 0)),
    "tool_calls" INTEGER CHECK ("tool_calls" IS NULL OR (typeof("tool_calls") = 'integer' AND "tool_calls" >= 0)),
    "cost" REAL CHECK ("cost" IS NULL OR (typeof("cost") IN ('real', 'integer') AND "cost" >= 0)),
    "model_version" TEXT CHECK ("model_version" IS NULL OR (typeof("model_version") = 'text')),
    "grader_version" TEXT CHECK ("grader_version" IS NULL OR (typeof("grader_version") = 'text')),
    "harness_version" TEXT CHECK ("harness_version" IS NULL OR (typeof("harness_version") = 'text')),
    "sandbox" TEXT CHECK ("sandbox" IS NULL OR (typeof("sandbox") = 'text')),
    "started_at" TEXT CHECK ("started_at" IS NULL OR (typeof("started_at") = 'text')),
    "finished_at" TEXT CHECK ("finished_at" IS NULL OR (typeof("finished_at") = 'text')),
    "transcript" TEXT CHECK ("transcript" IS NULL OR (typeof("transcript") = 'text')),
    "selected" INTEGER CHECK ("selected" IS NULL OR ("selected" IN (0, 1))),
    UNIQUE (run_id, task_id, attempt_index)
);

CREATE TRIGGER attempts_no_update BEFORE UPDATE ON attempts
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: attempts rows are never updated'); END;
CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: attempts rows are never deleted'); END;

CREATE TRIGGER runs_no_update BEFORE UPDATE ON runs
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: runs rows are never updated'); END;
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: runs rows are never deleted'); END;
"""

# Schema 2: a run's life as append-only events (no status column to overwrite) and start markers,
# so an attempt cut off by a killed harness stays visible as a start without a row.
_V2 = """
CREATE TABLE run_events (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    event TEXT NOT NULL CHECK (event IN ('started', 'resumed', 'finished', 'interrupted')),
    at TEXT NOT NULL,
    detail TEXT
);
CREATE TABLE attempt_starts (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    task_id TEXT NOT NULL,
    attempt_index INTEGER NOT NULL,
    started_at TEXT NOT NULL
);
CREATE INDEX attempt_starts_key ON attempt_starts (run_id, task_id, attempt_index);
INSERT INTO run_events (run_id, event, at, detail)
    SELECT run_id, 'started', started_at, 'recorded by migration 2' FROM runs;

CREATE TRIGGER run_events_no_update BEFORE UPDATE ON run_events
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: run_events rows are never updated'); END;
CREATE TRIGGER run_events_no_delete BEFORE DELETE ON run_events
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: run_events rows are never deleted'); END;

CREATE TRIGGER attempt_starts_no_update BEFORE UPDATE ON attempt_starts
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: attempt_starts rows are never updated'); END;
CREATE TRIGGER attempt_starts_no_delete BEFORE DELETE ON attempt_starts
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: attempt_starts rows are never deleted'); END;
"""

# Schema 3: a read-only view of each run as its events describe it, for anyone reading with SQL.
_V3 = """
CREATE VIEW run_summary AS
SELECT
    r.run_id, r.system, r.dataset_id, r.k_budget, r.sandbox, r.started_at, r.rerun_reason,
    (SELECT e.event FROM run_events e WHERE e.run_id = r.run_id ORDER BY e.id DESC LIMIT 1) AS status,
    (SELECT e.at FROM run_events e WHERE e.run_id = r.run_id AND e.event = 'finished'
        ORDER BY e.id DESC LIMIT 1) AS finished_at,
    (SELECT count(*) FROM attempts a WHERE a.run_id = r.run_id) AS attempts,
    (SELECT count(*) FROM attempts a WHERE a.run_id = r.run_id AND a.passed) AS passed,
    (SELECT count(*) FROM attempt_starts s WHERE s.run_id = r.run_id) AS starts,
    (SELECT count(*) FROM attempt_starts s WHERE s.run_id = r.run_id AND NOT EXISTS (
        SELECT 1 FROM attempts a WHERE a.run_id = s.run_id AND a.task_id = s.task_id
        AND a.attempt_index = s.attempt_index)) AS unfinished_starts,
    (SELECT coalesce(sum(json_extract(e.detail, '$.cut_off')), 0) FROM run_events e
        WHERE e.run_id = r.run_id AND e.event = 'resumed') AS cut_off_rerun
FROM runs r;
"""

# Schema 4: a run may declare that its grader judged the workspace after a timeout.
_V4 = """
ALTER TABLE attempts ADD COLUMN "graded_after_timeout" INTEGER
    CHECK ("graded_after_timeout" IS NULL OR ("graded_after_timeout" IN (0, 1)));
"""


# Schema 5: imported runs. A source may not record some required fields (a timeout, an elapsed
# time): those columns become nullable, allowed NULL only where the row's not_recorded names them
# (SQLite cannot drop NOT NULL in place, so the table is rebuilt, ids kept, inside the migration's
# transaction; DROP TABLE fires no delete trigger). The runs table records each import's source,
# its version, the files read with their hashes, and the notes every scorecard of the run prints.
def _may_be_unrecorded(name: str) -> str:
    return (
        f"(\"{name}\" IS NOT NULL OR instr(',' || coalesce(\"not_recorded\", '') || ',', "
        f"',{name},') > 0)"
    )


_V5_COLUMNS = """
    id INTEGER PRIMARY KEY,
    "run_id" TEXT NOT NULL REFERENCES runs(run_id),
    "task_id" TEXT NOT NULL CHECK ("task_id" IS NULL OR (typeof("task_id") = 'text')),
    "attempt_index" INTEGER NOT NULL CHECK ("attempt_index" IS NULL OR (typeof("attempt_index") = 'integer' AND "attempt_index" >= 0)),
    "k_budget" INTEGER NOT NULL CHECK ("k_budget" IS NULL OR (typeof("k_budget") = 'integer' AND "k_budget" >= 1)),
    "timeout_s" REAL CHECK ("timeout_s" IS NULL OR (typeof("timeout_s") IN ('real', 'integer') AND "timeout_s" > 0)),
    "elapsed_s" REAL CHECK ("elapsed_s" IS NULL OR (typeof("elapsed_s") IN ('real', 'integer') AND "elapsed_s" >= 0)),
    "passed" INTEGER NOT NULL CHECK ("passed" IS NULL OR ("passed" IN (0, 1))),
    "timed_out" INTEGER CHECK ("timed_out" IS NULL OR ("timed_out" IN (0, 1))),
    "helper_calls" INTEGER CHECK ("helper_calls" IS NULL OR (typeof("helper_calls") = 'integer' AND "helper_calls" >= 0)),
    "oracle_leak" INTEGER CHECK ("oracle_leak" IS NULL OR ("oracle_leak" IN (0, 1))),
    "system" TEXT CHECK ("system" IS NULL OR (typeof("system") = 'text')),
    "dataset_id" TEXT CHECK ("dataset_id" IS NULL OR (typeof("dataset_id") = 'text')),
    "status" TEXT CHECK ("status" IS NULL OR (typeof("status") = 'text')),
    "score" REAL CHECK ("score" IS NULL OR (typeof("score") IN ('real', 'integer') AND "score" >= 0 AND "score" <= 1)),
    "error" TEXT CHECK ("error" IS NULL OR (typeof("error") = 'text')),
    "stratum" TEXT CHECK ("stratum" IS NULL OR (typeof("stratum") = 'text')),
    "weight" REAL CHECK ("weight" IS NULL OR (typeof("weight") IN ('real', 'integer') AND "weight" > 0)),
    "seed" INTEGER CHECK ("seed" IS NULL OR (typeof("seed") = 'integer')),
    "temperature" REAL CHECK ("temperature" IS NULL OR (typeof("temperature") IN ('real', 'integer') AND "temperature" >= 0)),
    "fixture_hash" TEXT CHECK ("fixture_hash" IS NULL OR (typeof("fixture_hash") = 'text')),
    "cache_hit" INTEGER CHECK ("cache_hit" IS NULL OR ("cache_hit" IN (0, 1))),
    "tokens_in" INTEGER CHECK ("tokens_in" IS NULL OR (typeof("tokens_in") = 'integer' AND "tokens_in" >= 0)),
    "tokens_out" INTEGER CHECK ("tokens_out" IS NULL OR (typeof("tokens_out") = 'integer' AND "tokens_out" >= 0)),
    "tool_calls" INTEGER CHECK ("tool_calls" IS NULL OR (typeof("tool_calls") = 'integer' AND "tool_calls" >= 0)),
    "cost" REAL CHECK ("cost" IS NULL OR (typeof("cost") IN ('real', 'integer') AND "cost" >= 0)),
    "model_version" TEXT CHECK ("model_version" IS NULL OR (typeof("model_version") = 'text')),
    "grader_version" TEXT CHECK ("grader_version" IS NULL OR (typeof("grader_version") = 'text')),
    "harness_version" TEXT CHECK ("harness_version" IS NULL OR (typeof("harness_version") = 'text')),
    "sandbox" TEXT CHECK ("sandbox" IS NULL OR (typeof("sandbox") = 'text')),
    "started_at" TEXT CHECK ("started_at" IS NULL OR (typeof("started_at") = 'text')),
    "finished_at" TEXT CHECK ("finished_at" IS NULL OR (typeof("finished_at") = 'text')),
    "transcript" TEXT CHECK ("transcript" IS NULL OR (typeof("transcript") = 'text')),
    "selected" INTEGER CHECK ("selected" IS NULL OR ("selected" IN (0, 1))),
    "graded_after_timeout" INTEGER CHECK ("graded_after_timeout" IS NULL OR ("graded_after_timeout" IN (0, 1))),
    "not_recorded" TEXT CHECK ("not_recorded" IS NULL OR (typeof("not_recorded") = 'text' AND length("not_recorded") > 0)),
"""
_V5_OLD = (
    "id, run_id, task_id, attempt_index, k_budget, timeout_s, elapsed_s, passed, timed_out, "
    "helper_calls, oracle_leak, system, dataset_id, status, score, error, stratum, weight, seed, "
    "temperature, fixture_hash, cache_hit, tokens_in, tokens_out, tool_calls, cost, model_version, "
    "grader_version, harness_version, sandbox, started_at, finished_at, transcript, selected, "
    "graded_after_timeout"
)
_V5 = f"""
DROP VIEW run_summary;
CREATE TABLE attempts_v5 ({_V5_COLUMNS}
    CHECK ({" AND ".join(_may_be_unrecorded(n) for n in ("timeout_s", "elapsed_s", "timed_out", "helper_calls", "oracle_leak"))}),
    UNIQUE (run_id, task_id, attempt_index)
);
INSERT INTO attempts_v5 ({_V5_OLD}) SELECT {_V5_OLD} FROM attempts;
DROP TABLE attempts;
ALTER TABLE attempts_v5 RENAME TO attempts;
CREATE TRIGGER attempts_no_update BEFORE UPDATE ON attempts
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: attempts rows are never updated'); END;
CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: attempts rows are never deleted'); END;
{_V3}
ALTER TABLE runs ADD COLUMN source TEXT;
ALTER TABLE runs ADD COLUMN source_version TEXT;
ALTER TABLE runs ADD COLUMN source_files TEXT;
ALTER TABLE runs ADD COLUMN source_notes TEXT;
"""

# Schema 6: the provenance of a run of our own harness, pinned before its first attempt: the agent's
# command and a digest of its program file, the graders' commands, the pass-env names (never their
# values), the Python version and host, the attempts planned and the task selection (JSON lists).
_V6 = """
ALTER TABLE runs ADD COLUMN agent TEXT;
ALTER TABLE runs ADD COLUMN agent_digest TEXT;
ALTER TABLE runs ADD COLUMN graders TEXT;
ALTER TABLE runs ADD COLUMN pass_env TEXT;
ALTER TABLE runs ADD COLUMN python_version TEXT;
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN planned INTEGER CHECK (planned IS NULL OR planned >= 0);
ALTER TABLE runs ADD COLUMN tasks TEXT;
ALTER TABLE runs ADD COLUMN selection TEXT;
"""

# Schema 7: the validated columns of each batch of rows the store writes, run by run (one blob each:
# the arrays' bytes and the labels of text codes), so that a run is read back without a Python object
# per value; a run whose rows do not all have theirs is read from the attempts table.
_V7 = """
CREATE TABLE attempt_columns (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    rows INTEGER NOT NULL CHECK (rows > 0),
    last_id INTEGER NOT NULL,
    columns BLOB NOT NULL
);
CREATE INDEX attempt_columns_run ON attempt_columns (run_id, id);
CREATE TRIGGER attempt_columns_no_update BEFORE UPDATE ON attempt_columns
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: attempt_columns rows are never updated'); END;
CREATE TRIGGER attempt_columns_no_delete BEFORE DELETE ON attempt_columns
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: attempt_columns rows are never deleted'); END;
"""

# Schema 8: a race (``trialbook race``) records its two runs as one sequential comparison: its
# settings, pinned before the first pair (alpha, method, stopping rule, the seeded task order), and
# its life as append-only events; 'stopped' says when and why, with the decision and the interval.
# The run ids are not foreign keys: a race is recorded before its runs start (a crash in between
# leaves a race whose missing run a resume creates, with the agent command the race records).
_V8 = """
CREATE TABLE races (
    race_id TEXT PRIMARY KEY CHECK (typeof(race_id) = 'text' AND length(race_id) > 0),
    baseline_run TEXT NOT NULL,
    candidate_run TEXT NOT NULL CHECK (candidate_run <> baseline_run),
    baseline_agent TEXT NOT NULL,
    candidate_agent TEXT NOT NULL,
    dataset_id TEXT,
    suite_path TEXT,
    method TEXT NOT NULL,
    alpha REAL NOT NULL CHECK (alpha > 0 AND alpha < 1),
    min_effect REAL CHECK (min_effect IS NULL OR (min_effect > 0 AND min_effect < 1)),
    max_tasks INTEGER CHECK (max_tasks IS NULL OR max_tasks >= 1),
    order_seed INTEGER NOT NULL,
    task_order TEXT NOT NULL,
    stopping_rule TEXT NOT NULL,
    started_at TEXT NOT NULL
);
CREATE TABLE race_events (
    id INTEGER PRIMARY KEY,
    race_id TEXT NOT NULL REFERENCES races(race_id),
    event TEXT NOT NULL CHECK (event IN ('started', 'resumed', 'stopped', 'interrupted')),
    at TEXT NOT NULL,
    detail TEXT
);
CREATE TRIGGER races_no_update BEFORE UPDATE ON races
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: races rows are never updated'); END;
CREATE TRIGGER races_no_delete BEFORE DELETE ON races
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: races rows are never deleted'); END;
CREATE TRIGGER race_events_no_update BEFORE UPDATE ON race_events
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: race_events rows are never updated'); END;
CREATE TRIGGER race_events_no_delete BEFORE DELETE ON race_events
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: race_events rows are never deleted'); END;
"""

# Schema 9: an attempt the harness lost may be run again as a recorded new row: ``retry`` numbers
# the re-runs of one (run_id, task_id, attempt_index) and ``lost`` marks the infra_error rows the
# harness vouches it lost (a dead worker or node, a foreign cancel, no result in time). The unique
# key becomes (run_id, task_id, attempt_index, retry), NULL read as 0 (an index on an expression:
# SQLite's UNIQUE treats NULLs as distinct); SQLite cannot alter a constraint, so the table is
# rebuilt, ids kept, as schema 5 rebuilt it. Start markers record the retry they start; the
# run_summary view matches a start with the row of its retry and counts the re-runs (all rows
# stay in ``attempts``, the superseded ones too).
_V9_OLD = f"{_V5_OLD}, not_recorded"
_V9 = f"""
DROP VIEW run_summary;
CREATE TABLE attempts_v9 ({_V5_COLUMNS}
    "retry" INTEGER CHECK ("retry" IS NULL OR (typeof("retry") = 'integer' AND "retry" >= 0)),
    "lost" INTEGER CHECK ("lost" IS NULL OR ("lost" IN (0, 1))),
    CHECK ({" AND ".join(_may_be_unrecorded(n) for n in ("timeout_s", "elapsed_s", "timed_out", "helper_calls", "oracle_leak"))})
);
INSERT INTO attempts_v9 ({_V9_OLD}) SELECT {_V9_OLD} FROM attempts;
DROP TABLE attempts;
ALTER TABLE attempts_v9 RENAME TO attempts;
CREATE UNIQUE INDEX attempts_key ON attempts (run_id, task_id, attempt_index, coalesce(retry, 0));
CREATE TRIGGER attempts_no_update BEFORE UPDATE ON attempts
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: attempts rows are never updated'); END;
CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: attempts rows are never deleted'); END;
ALTER TABLE attempt_starts ADD COLUMN retry INTEGER CHECK (retry IS NULL OR retry >= 0);
CREATE VIEW run_summary AS
SELECT
    r.run_id, r.system, r.dataset_id, r.k_budget, r.sandbox, r.started_at, r.rerun_reason,
    (SELECT e.event FROM run_events e WHERE e.run_id = r.run_id ORDER BY e.id DESC LIMIT 1) AS status,
    (SELECT e.at FROM run_events e WHERE e.run_id = r.run_id AND e.event = 'finished'
        ORDER BY e.id DESC LIMIT 1) AS finished_at,
    (SELECT count(*) FROM attempts a WHERE a.run_id = r.run_id) AS attempts,
    (SELECT count(*) FROM attempts a WHERE a.run_id = r.run_id AND a.passed) AS passed,
    (SELECT count(*) FROM attempt_starts s WHERE s.run_id = r.run_id) AS starts,
    (SELECT count(*) FROM attempt_starts s WHERE s.run_id = r.run_id AND NOT EXISTS (
        SELECT 1 FROM attempts a WHERE a.run_id = s.run_id AND a.task_id = s.task_id
        AND a.attempt_index = s.attempt_index
        AND coalesce(a.retry, 0) = coalesce(s.retry, 0))) AS unfinished_starts,
    (SELECT coalesce(sum(json_extract(e.detail, '$.cut_off')), 0) FROM run_events e
        WHERE e.run_id = r.run_id AND e.event = 'resumed') AS cut_off_rerun,
    (SELECT count(*) FROM attempts a WHERE a.run_id = r.run_id AND a.retry > 0) AS reruns
FROM runs r;
"""

# Schema 10: the attempt protocol (independent trials, rounds of repair, or a person's pick), on
# every row (so that JSONL and CSV carry it too) and on the run record. Rows and runs stored
# before keep NULL there: not recorded, and every report of such a run says so.
_V10 = """
ALTER TABLE attempts ADD COLUMN "protocol" TEXT
    CHECK ("protocol" IS NULL OR ("protocol" IN ('independent', 'repair', 'human-selected')));
ALTER TABLE runs ADD COLUMN protocol TEXT
    CHECK (protocol IS NULL OR protocol IN ('independent', 'repair', 'human-selected'));
"""

# Schema 11: a grader's named checks (canonical JSON, validated by the ledger's rules, as every format
# is) and the outcome kinds of fault-injection and permission tasks: the protection outcome, the task
# outcome (false never passes) and the stop reason. Added columns are NULL in earlier rows: not
# recorded, as those rows never recorded them.
_V11 = """
ALTER TABLE attempts ADD COLUMN "checks" TEXT
    CHECK ("checks" IS NULL OR (typeof("checks") = 'text' AND json_valid("checks")));
ALTER TABLE attempts ADD COLUMN "protection" INTEGER
    CHECK ("protection" IS NULL OR ("protection" IN (0, 1)));
ALTER TABLE attempts ADD COLUMN "task_outcome" INTEGER
    CHECK ("task_outcome" IS NULL OR ("task_outcome" IN (0, 1)));
ALTER TABLE attempts ADD COLUMN "stop_reason" TEXT
    CHECK ("stop_reason" IS NULL OR (typeof("stop_reason") = 'text'));
"""

# Schema 12: the kept column blobs gain format 2 (``TBC2``, ledger/store/_columns.py): a column whose
# every value is the same is kept once. Older trialbooks read only format 1, so a store that may
# hold format 2 says so by its version; format 1 blobs stay as they are and read as before. The
# view names each blob's format, for a look with the sqlite3 shell.
_V12 = """
CREATE VIEW attempt_columns_format AS
SELECT id, run_id, rows, last_id, CAST(substr(columns, 1, 4) AS TEXT) AS format
FROM attempt_columns;
"""

# Schema 13: what the model gateway measures that had no field: the attempt's model calls and the
# part of its input tokens read from and written to the provider's prompt cache. NULL in the rows
# written before (and in rows of runs without a gateway): not recorded.
_V13 = """
ALTER TABLE attempts ADD COLUMN "model_calls" INTEGER
    CHECK ("model_calls" IS NULL OR (typeof("model_calls") = 'integer' AND "model_calls" >= 0));
ALTER TABLE attempts ADD COLUMN "cache_read_tokens" INTEGER
    CHECK ("cache_read_tokens" IS NULL OR (typeof("cache_read_tokens") = 'integer'
        AND "cache_read_tokens" >= 0));
ALTER TABLE attempts ADD COLUMN "cache_write_tokens" INTEGER
    CHECK ("cache_write_tokens" IS NULL OR (typeof("cache_write_tokens") = 'integer'
        AND "cache_write_tokens" >= 0));
"""

# Schema 14: the run's model gateway settings on its record (JSON: the upstream, the name of the
# key's variable, never the key, the price table's path and digest, the budgets), so that a resume
# reaches the model as the run did without being told again. NULL: no gateway, or not recorded.
# Also the container tier's read-only mounts of the agent's own files (JSON list of host paths).
_V14 = """
ALTER TABLE runs ADD COLUMN model TEXT
    CHECK (model IS NULL OR (typeof(model) = 'text' AND json_valid(model)));
ALTER TABLE runs ADD COLUMN agent_mounts TEXT
    CHECK (agent_mounts IS NULL OR (typeof(agent_mounts) = 'text' AND json_valid(agent_mounts)));
"""

# Schema 15: the attempt's time in model calls as the gateway measured it (wall-clock seconds,
# summed over calls). NULL in the rows written before and in rows of runs without a gateway.
_V15 = """
ALTER TABLE attempts ADD COLUMN "model_call_s" REAL
    CHECK ("model_call_s" IS NULL OR (typeof("model_call_s") IN ('real', 'integer')
        AND "model_call_s" >= 0));
"""

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "runs and attempts", _V1),
    (2, "run events and attempt start markers", _V2),
    (3, "run_summary view", _V3),
    (4, "graded_after_timeout", _V4),
    (5, "imported runs: not_recorded, and the source of each import", _V5),
    (6, "run provenance: agent, graders, pass-env names, host, planned attempts, selection", _V6),
    (7, "the validated columns of each batch of rows, for reading a run without a row loop", _V7),
    (8, "races: two runs as one sequential comparison, and its events", _V8),
    (9, "re-runs of lost attempts: retry and lost, unique on the attempt and its retry", _V9),
    (10, "attempt protocol: on every row and on the run record", _V10),
    (11, "checks, protection, task_outcome and stop_reason: graders that say why", _V11),
    (12, "kept column blobs of format 2: a column of one repeated value kept once", _V12),
    (
        13,
        "model_calls, cache_read_tokens and cache_write_tokens: the model gateway's figures",
        _V13,
    ),
    (14, "the run's model gateway settings and the agent's mounts on its record", _V14),
    (15, "model_call_s: the attempt's time in model calls, as the model gateway measured it", _V15),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


def statements(script: str) -> Iterable[str]:
    """Split a migration script into statements (triggers keep their inner semicolons)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer.strip()
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement in a migration: {buffer.strip()[:60]}")
