"""What the store records about a run (its pinned settings, its events) besides its attempts."""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

import numpy as np

from trialbook.ledger._provenance import Provenance, SourceFile
from trialbook.ledger._table import Ledger

__all__ = [
    "RUN_EVENTS",
    "BadRecord",
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
    model: str | None = None
    """The run's model gateway settings, a JSON object the harness writes and reads (upstream,
    the key's variable name, prices path and digest, budgets; docs/gateway.md, "In a run"); None:
    no gateway, or a run stored before schema 14."""
    agent_mounts: tuple[str, ...] = ()
    """The container tier: the host paths its agent's container was shown read-only, because its
    command names them (the agent's own files: docs/harness.md, "The container tier"); empty in
    the other tiers and in a run stored before schema 14."""

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
    values["agent_mounts"] = json.dumps(list(run.agent_mounts)) if run.agent_mounts else None
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


class BadRecord(ValueError):
    """A row of the runs table that does not hold what the store writes there (a ``.db`` another
    hand wrote: its runs table has few CHECKs). The message names the run and the column."""


_INTS = frozenset({"k_budget", "planned"})
_FLOATS = frozenset({"timeout_s", "temperature"})
_JSON = frozenset(
    {"seeds", "source_files", "source_notes", "graders", "pass_env", "tasks", "agent_mounts"}
)


def _shown(value: object) -> str:
    if isinstance(value, bytes):
        return f"a blob of {len(value)} bytes"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _checked(run: str, name: str, value: object) -> object:
    """The stored value of a runs column, held to what the store writes there."""
    if value is None:
        return None
    if name in _INTS:
        ok, expected = type(value) is int, "a whole number"
    elif name in _FLOATS:
        ok, expected = type(value) in (int, float), "a number"
    else:
        ok, expected = isinstance(value, str), "text"
    if not ok:
        raise BadRecord(
            f"run {run!r}: column {name!r} of the runs table: expected {expected}, got "
            f"{_shown(value)}"
        )
    if name not in _JSON:
        return value
    try:
        decoded = json.loads(str(value))
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's stack
        decoded = None
    items = decoded if isinstance(decoded, list) else None
    if name == "seeds":
        good = items is not None and all(type(v) is int for v in items)
    elif name == "source_files":
        good = items is not None and all(
            isinstance(v, dict)
            and isinstance(v.get("path"), str)
            and isinstance(v.get("sha256"), str)
            for v in items
        )
    else:
        good = items is not None and all(isinstance(v, str) for v in items)
    if not good:
        raise BadRecord(
            f"run {run!r}: column {name!r} of the runs table: expected the JSON list the store "
            f"writes there, got {_shown(value)}"
        )
    return items


def record_from_stored(data: dict[str, object]) -> RunRecord:
    """A run record from a row of the runs table (JSON columns decoded; columns an older schema
    lacks are absent from ``data`` and take their defaults). A value the store would not have
    written there is :class:`BadRecord`, naming the run and the column."""
    run = data.get("run_id")
    if not isinstance(run, str) or not run:
        raise BadRecord(f"column 'run_id' of the runs table: expected text, got {_shown(run)}")
    data = {name: _checked(run, name, value) for name, value in data.items()}
    if data.get("started_at") is None:
        data.pop("started_at", None)
    seeds = _items(data.pop("seeds", None))
    files = _items(data.pop("source_files", None))
    notes = _items(data.pop("source_notes", None))
    tasks = _items(data.pop("tasks", None))
    graders = _items(data.pop("graders", None))
    pass_env = _items(data.pop("pass_env", None))
    mounts = _items(data.pop("agent_mounts", None))
    return RunRecord(
        **data,  # type: ignore[arg-type]
        graders=tuple(graders or ()),
        pass_env=tuple(pass_env or ()),
        agent_mounts=tuple(mounts or ()),
        tasks=None if tasks is None else tuple(tasks),
        seeds=None if seeds is None else tuple(seeds),
        source_files=tuple(SourceFile(str(f["path"]), str(f["sha256"])) for f in files or ()),
        source_notes=tuple(notes or ()),
    )


def _items(value: object) -> list[Any] | None:
    """A JSON column as :func:`_checked` decoded it (a list, or None: not recorded)."""
    return value if isinstance(value, list) else None


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
