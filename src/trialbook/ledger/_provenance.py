"""Where an imported run came from: the source, its version, the files read and what to know.

A run that ``trialbook import`` (or ``score --source``) read from another harness's files carries one
:class:`Provenance`; the store keeps it in the run's record, and every scorecard of the run prints its
notes (what the source dropped, what it cannot know, how its publisher's figure differs).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Completion", "Provenance", "SourceFile"]


@dataclass(frozen=True)
class SourceFile:
    """One file an import read, for the run record."""

    path: str
    """The path as given."""
    sha256: str
    """Hex digest of its bytes, so a later reader can tell it is the same file."""


@dataclass(frozen=True)
class Provenance:
    """The source of an imported run."""

    source: str
    """The importer's name, e.g. ``tau-bench``."""
    source_version: str | None
    """The source format's or harness's version where its files say it, else None."""
    files: tuple[SourceFile, ...]
    """Every file read for the run, with its content hash."""
    notes: tuple[str, ...] = ()
    """What a reader of the scorecard must know (dropped retries, the publisher's own figure)."""


@dataclass(frozen=True)
class Completion:
    """How far a run of our own harness got: every report of an unfinished run says so."""

    status: str
    """``finished``, ``interrupted`` (stopped; resumable), or ``not finished`` (started or resumed
    and never ended: running now, or its harness was killed)."""
    attempts: int
    """Attempts with a row."""
    planned: int | None
    """Attempts the run set out to make; None when its record does not say (an older ledger)."""

    @property
    def complete(self) -> bool:
        """Finished with every planned attempt."""
        return self.status == "finished" and (self.planned is None or self.attempts >= self.planned)

    @property
    def label(self) -> str:
        """``INTERRUPTED: 12 of 24 attempts``; empty for a complete run."""
        if self.complete:
            return ""
        state = "incomplete" if self.status == "finished" else self.status
        of = f" of {self.planned}" if self.planned is not None else ""
        return f"{state.upper()}: {self.attempts}{of} attempts"
