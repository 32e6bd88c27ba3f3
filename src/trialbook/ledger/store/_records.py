"""What the store records about a run (its pinned settings, its events) besides its attempts."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from datetime import UTC, datetime

import numpy as np

from trialbook.ledger._table import Ledger

__all__ = ["RUN_EVENTS", "RunRecord", "RunStatus", "now", "record_from_rows", "run_values"]

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


@dataclass(frozen=True)
class RunStatus:
    """A run as its events describe it."""

    record: RunRecord
    status: str
    """The latest event: started, resumed, finished or interrupted."""
    finished_at: str | None
    attempts: int
    starts: int


def now() -> str:
    """The current time as ISO 8601 with a UTC offset (the ledger's time format)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def run_values(run: RunRecord) -> dict[str, object]:
    values = {f.name: getattr(run, f.name) for f in fields(RunRecord)}
    values["seeds"] = None if run.seeds is None else json.dumps(list(run.seeds))
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
        started_at=min(started) if started else now(),
        origin=origin,
    )
