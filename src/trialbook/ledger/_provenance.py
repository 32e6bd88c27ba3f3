"""Where an imported run came from: the source, its version, the files read and what to know.

A run that ``trialbook import`` (or ``score --source``) read from another harness's files carries one
:class:`Provenance`; the store keeps it in the run's record, and every scorecard of the run prints its
notes (what the source dropped, what it cannot know, how its publisher's figure differs).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Provenance", "SourceFile"]


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
