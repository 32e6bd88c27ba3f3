"""What an importer is: a reader of another harness's result files that yields ledger rows.

An importer turns the files a source harness wrote (Inspect AI logs, tau-bench results, ...) into
the rows of :mod:`trialbook.ledger` and one record of where they came from. It invents nothing: a
field the source did not record stays unrecorded (docs/methodology.md, "Unknown is not zero"), and
every rule of the ledger still applies to the rows it yields. Importers read files; they never
write a ledger (``trialbook import`` hands their rows to the store in one transaction).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from trialbook.ledger import SourceFile

__all__ = ["MAX_SOURCE_BYTES", "ImportOptions", "ImportedRun", "Importer", "SourceFile"]

MAX_SOURCE_BYTES = 64 * 1024**2
"""The most bytes a source file may hold (a JSON document is parsed whole: Python holds about 17
bytes per byte of it), or one member of an Inspect ``.eval`` may inflate to, or one tau2-bench
results folder may hold in all; ``import --max-source-mib`` raises it."""


@dataclass(frozen=True)
class ImportedRun:
    """One run read from a source: its rows and where they came from."""

    run_id: str
    """The run's id in the ledger (from the source, or given with the import)."""
    source: str
    """The importer's name, e.g. ``tau-bench``."""
    source_version: str | None
    """The source format's version where its files say it, else None."""
    files: tuple[SourceFile, ...]
    """Every file read for this run."""
    rows: Sequence[Mapping[str, object]]
    """One ledger row per attempt (validated by the ledger, not by the importer)."""
    notes: tuple[str, ...] = ()
    """What a reader of the scorecard must know about the source (e.g. dropped retries, how the
    publisher's own figure differs); kept in the run record and printed by every scorecard."""


@dataclass(frozen=True)
class ImportOptions:
    """Choices an import may need; each importer reads the ones it understands."""

    run_id: str | None = None
    """Run id to give the imported run (default: the source's own, else derived from the file)."""
    system: str | None = None
    """System name, where the source does not record one."""
    as_attempts: str | None = None
    """How several one-attempt run files of one source (Terminal-Bench) become the attempts of one
    run: ``files`` (attempt index from the order the files are given, the default) or ``runs``
    (from each run's recorded start)."""
    scorer: str | None = None
    """Which scorer's value decides ``passed`` when the source has several."""
    board: str | None = None
    """SWE-bench ``leaderboards.json``: the leaderboard to read (``Verified``, ``bash-only``, ...);
    None reads the file's only one, and a file of several asks for it."""
    reward: str | None = None
    """Harbor: which reward key decides ``passed`` when the verifier records several."""
    max_bytes: int = MAX_SOURCE_BYTES
    """The bound on what one source file holds, or one ``.eval`` member inflates to
    (:data:`MAX_SOURCE_BYTES`): a file past it is refused in one line before it is parsed."""
    protocol: str | None = None
    """The attempt protocol to record on every row (``independent``, ``repair``,
    ``human-selected``). None: a foreign source's runs are independent trials (each of the
    harnesses read runs its attempts so), and a ledger file's rows keep what they record."""


@runtime_checkable
class Importer(Protocol):
    """A source format. Registered by name in :mod:`trialbook.importers`."""

    name: str
    """Its name on the command line, e.g. ``inspect``."""

    def detect(self, path: Path) -> bool:
        """Whether ``path`` is unambiguously this source's (cheap: a peek, never a full parse)."""
        ...

    def read(self, paths: Sequence[Path], options: ImportOptions) -> Iterator[ImportedRun]:
        """The runs in ``paths``; malformed input raises LedgerError naming file, record, field."""
        ...
