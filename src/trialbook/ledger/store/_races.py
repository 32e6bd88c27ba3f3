"""A race in the store: two runs recorded as one sequential comparison (``trialbook race``).

A race's settings are pinned before its first task pair (:class:`RaceRecord`); its life is a
sequence of append-only events (started, resumed, interrupted, stopped). The 'stopped' event's
detail says when and why it stopped: the decision, the rule that fired, the task pairs used and
the interval at that look. Schema 7 holds both tables.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from trialbook.errors import LedgerError, Problem
from trialbook.ledger.store._records import now

__all__ = ["RACE_EVENTS", "RaceLog", "RaceRecord", "RaceStatus"]

RACE_EVENTS = ("started", "resumed", "stopped", "interrupted")


@dataclass(frozen=True)
class RaceRecord:
    """What is pinned about a race before its first task pair."""

    race_id: str
    baseline_run: str
    """The baseline's run id."""
    candidate_run: str
    """The candidate's run id."""
    baseline_agent: str
    """The baseline's command (its run records it too, once created)."""
    candidate_agent: str
    """The candidate's command."""
    method: str
    """The confidence sequence (``betting-population``, ``betting-suite``, ``discordant``)."""
    alpha: float
    """The error rate the sequence keeps at every look."""
    order_seed: int
    """The seed of the random task order."""
    task_order: tuple[str, ...]
    """The task ids in the order the race takes them."""
    stopping_rule: str
    """The rule, in words (which bounds stop the race)."""
    dataset_id: str | None = None
    suite_path: str | None = None
    min_effect: float | None = None
    """Stop with 'no meaningful difference' once every difference of this size is excluded."""
    max_tasks: int | None = None
    """Stop after this many task pairs at most."""
    started_at: str = ""


@dataclass(frozen=True)
class RaceStatus:
    """A race as its events describe it."""

    record: RaceRecord
    status: str
    """The latest event: started, resumed, interrupted or stopped."""
    stopped: Mapping[str, object] | None
    """The 'stopped' event's detail (decision, stopped_because, tasks_used, the interval, at)."""


class RaceLog:
    """The race methods of :class:`~trialbook.ledger.store.LedgerStore` (a mixin over its
    connection and its write transaction)."""

    if TYPE_CHECKING:
        _conn: sqlite3.Connection
        path: object

        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def create_race(self, race: RaceRecord) -> None:
        """Record a new race and its 'started' event; an existing race id is an error."""
        values = {f.name: getattr(race, f.name) for f in fields(RaceRecord)}
        values["task_order"] = json.dumps(list(race.task_order))
        values["started_at"] = race.started_at or now()
        names = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        try:
            with self._write() as conn:
                conn.execute(f"INSERT INTO races ({names}) VALUES ({marks})", list(values.values()))
                conn.execute(
                    "INSERT INTO race_events (race_id, event, at) VALUES (?, 'started', ?)",
                    (race.race_id, values["started_at"]),
                )
        except sqlite3.IntegrityError as exc:
            raise LedgerError(
                [Problem(0, f"race {race.race_id!r} cannot be recorded: {exc}", str(self.path))]
            ) from None

    def record_race_event(
        self, race_id: str, event: str, detail: Mapping[str, object] | None = None
    ) -> None:
        """Append an event (resumed, interrupted, stopped) to a race's history."""
        if event not in RACE_EVENTS:
            raise ValueError(f"unknown race event {event!r}")
        with self._write() as conn:
            conn.execute(
                "INSERT INTO race_events (race_id, event, at, detail) VALUES (?, ?, ?, ?)",
                (race_id, event, now(), None if detail is None else json.dumps(detail)),
            )

    def races(self) -> list[RaceStatus]:
        """Every race in the store, in order of creation (none before schema 8)."""
        if not self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'races'"
        ).fetchone():
            return []
        names = [f.name for f in fields(RaceRecord)]
        rows = self._conn.execute(f"SELECT {', '.join(names)} FROM races ORDER BY rowid")
        return [self._status(dict(zip(names, row, strict=True))) for row in rows.fetchall()]

    def race(self, race_id: str) -> RaceStatus | None:
        """One race, or None."""
        return next((r for r in self.races() if r.record.race_id == race_id), None)

    def race_of(self, baseline_run: str, candidate_run: str) -> RaceStatus | None:
        """The race that ran these two runs (in this order), or None."""
        return next(
            (
                r
                for r in self.races()
                if (r.record.baseline_run, r.record.candidate_run) == (baseline_run, candidate_run)
            ),
            None,
        )

    def _status(self, data: dict[str, object]) -> RaceStatus:
        data["task_order"] = tuple(json.loads(str(data["task_order"])))
        record = RaceRecord(**data)  # type: ignore[arg-type]
        events = list(self._events(record.race_id))
        status = events[-1][0] if events else "started"
        stopped = next((d for e, d in reversed(events) if e == "stopped"), None)
        return RaceStatus(record, status, stopped)

    def _events(self, race_id: str) -> Iterator[tuple[str, dict[str, object] | None]]:
        for event, at, detail in self._conn.execute(
            "SELECT event, at, detail FROM race_events WHERE race_id = ? ORDER BY id", (race_id,)
        ):
            decoded = None if detail is None else {**json.loads(str(detail)), "at": str(at)}
            yield str(event), decoded
