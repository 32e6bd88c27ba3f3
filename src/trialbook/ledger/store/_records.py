"""What the store records about a run (its pinned settings, its events) besides its attempts."""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass, fields
from datetime import UTC, datetime

import numpy as np

from trialbook.ledger._provenance import Provenance, SourceFile
from trialbook.ledger._table import Ledger

__all__ = [
    "RUN_EVENTS",
    "RunRecord",
    "RunStatus",
    "now",
    "record_from_rows",
    "record_from_stored",
    "run_values",
    "stored_provenance",
]

RUN_EVENTS = ("started", "resumed", "finished", "interrupted")


@dataclass(frozen=True)
class RunRecord:
    """What is pinned about a run before its first attempt, plus how it came to be."""

    run_id: str
    system: str | None = None
    dataset_id: str | None = None
    suite_path: str | None = None
    k_budget: int | None = None
    timeout_s: float | None = None
    temperature: float | None = None
    seeds: tuple[int, ...] | None = None
    model_version: str | None = None
    grader_version: str | None = None
    harness_version: str | None = None
    sandbox: str | None = None
    started_at: str = ""
    rerun_reason: str | None = None
    """Why this run repeats an earlier one (a deliberate re-run is a new run, never an overwrite)."""
    origin: str | None = None
    """``trialbook run``, or ``import FILE``."""
    source: str | None = None
    """An imported run's source (the importer's name, e.g. ``tau-bench``); None for our own."""
    source_version: str | None = None
    """The source's version where its files say it."""
    source_files: tuple[SourceFile, ...] = ()
    """The files the import read, with their content hashes (JSON in the store)."""
    source_notes: tuple[str, ...] = ()
    """What the source dropped or cannot know; printed by every scorecard of the run."""
    agent: str | None = None
    """The agent's command as run (``trialbook run``); a resume refuses another one."""
    agent_digest: str | None = None
    """``sha256:...`` of the agent's program file (the script the command names), when it has one."""
    graders: tuple[str, ...] = ()
    """The distinct grader commands of the tasks run."""
    pass_env: tuple[str, ...] = ()
    """Names of the caller's variables passed to the agent (never their values)."""
    python_version: str | None = None
    """The Python that ran the harness."""
    host: str | None = None
    """The machine the harness ran on."""
    planned: int | None = None
    """Attempts the run set out to make (its tasks times k); None when not recorded."""
    tasks: tuple[str, ...] | None = None
    """The ids of the tasks the run attempts (None: not recorded)."""
    selection: str | None = None
    """How the tasks were selected (``subset smoke``, ``--task 'repair-*'``, ``--limit 3``); None:
    the whole suite."""
    protocol: str | None = None
    """How the run's attempts were made: ``independent``, ``repair`` or ``human-selected``; None:
    not recorded (a run stored before schema 10)."""

    @property
    def provenance(self) -> Provenance | None:
        """The run's source as a :class:`Provenance`, or None for a run of our own."""
        if self.source is None:
            return None
        return Provenance(self.source, self.source_version, self.source_files, self.source_notes)


@dataclass(frozen=True)
class RunStatus:
    """A run as its events describe it."""

    record: RunRecord
    status: str
    """The latest event: started, resumed, finished or interrupted."""
    finished_at: str | None
    attempts: int
    """Attempts with a row that counts (a re-run attempt once, by its highest retry)."""
    starts: int
    reruns: int = 0
    """Attempts run again after an infrastructure error (their row that counts has retry > 0)."""
    superseded: int = 0
    """Rows a re-run superseded (kept in the ledger, counted in no figure)."""


def now() -> str:
    """The current time as ISO 8601 with a UTC offset (the ledger's time format)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def run_values(run: RunRecord) -> dict[str, object]:
    values = {f.name: getattr(run, f.name) for f in fields(RunRecord)}
    values["seeds"] = None if run.seeds is None else json.dumps(list(run.seeds))
    values["source_files"] = (
        json.dumps([{"path": f.path, "sha256": f.sha256} for f in run.source_files])
        if run.source_files
        else None
    )
    values["source_notes"] = json.dumps(list(run.source_notes)) if run.source_notes else None
    values["graders"] = json.dumps(list(run.graders)) if run.graders else None
    values["pass_env"] = json.dumps(list(run.pass_env)) if run.pass_env else None
    values["tasks"] = None if run.tasks is None else json.dumps(list(run.tasks))
    values["started_at"] = run.started_at or now()
    return values


def record_from_rows(ledger: Ledger, run: str, origin: str) -> RunRecord:
    """A run record for imported rows: each field the run's rows agree on, else unknown."""
    rows = ledger.subset(ledger.codes["run_id"] == ledger.labels["run_id"].index(run))

    def agreed_text(name: str) -> str | None:
        codes = np.unique(rows.codes[name])
        return rows.labels[name][int(codes[0])] if codes.size == 1 and codes[0] >= 0 else None

    def agreed_number(name: str) -> float | None:
        col = np.unique(rows.values[name])
        return float(col[0]) if col.size == 1 and not math.isnan(col[0]) else None

    k = agreed_number("k_budget")
    p = ledger.source_of(run)
    started = [s for s in rows.text("started_at").tolist() if s is not None]
    return RunRecord(
        run_id=run,
        system=agreed_text("system"),
        dataset_id=agreed_text("dataset_id"),
        k_budget=None if k is None else int(k),
        timeout_s=agreed_number("timeout_s"),
        temperature=agreed_number("temperature"),
        model_version=agreed_text("model_version"),
        grader_version=agreed_text("grader_version"),
        harness_version=agreed_text("harness_version"),
        sandbox=agreed_text("sandbox"),
        protocol=agreed_text("protocol"),
        started_at=min(started) if started else now(),
        origin=origin,
        source=None if p is None else p.source,
        source_version=None if p is None else p.source_version,
        source_files=() if p is None else p.files,
        source_notes=() if p is None else p.notes,
    )


def record_from_stored(data: dict[str, object]) -> RunRecord:
    """A run record from a row of the runs table (JSON columns decoded; columns an older schema
    lacks are absent from ``data`` and take their defaults)."""
    seeds = data.pop("seeds", None)
    files = data.pop("source_files", None)
    notes = data.pop("source_notes", None)
    lists = {name: _json_tuple(data.pop(name, None)) for name in ("graders", "pass_env")}
    tasks = data.pop("tasks", None)
    return RunRecord(
        **data,  # type: ignore[arg-type]
        **lists,  # type: ignore[arg-type]
        tasks=None if tasks is None else tuple(json.loads(str(tasks))),
        seeds=None if seeds is None else tuple(json.loads(str(seeds))),
        source_files=tuple(
            SourceFile(str(f["path"]), str(f["sha256"])) for f in json.loads(str(files))
        )
        if files
        else (),
        source_notes=tuple(json.loads(str(notes))) if notes else (),
    )


def _json_tuple(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in json.loads(str(value))) if value else ()


def stored_provenance(conn: sqlite3.Connection) -> dict[str, Provenance]:
    """The source of every imported run in the store (none in a store of a schema before 5)."""
    present = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    if "source" not in present:
        return {}
    names = ["run_id", "source", "source_version", "source_files", "source_notes"]
    out: dict[str, Provenance] = {}
    for row in conn.execute(
        f"SELECT {', '.join(names)} FROM runs WHERE source IS NOT NULL ORDER BY rowid"
    ):
        record = record_from_stored(dict(zip(names, row, strict=True)))
        if record.provenance is not None:
            out[record.run_id] = record.provenance
    return out
