"""What a ledger format is: its name, its file suffixes, and whether it reads and/or writes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from trialbook.ledger._table import Ledger

__all__ = ["Format", "Reader", "Writer"]

Reader = Callable[[Path, str], Ledger]
"""Read and validate the file at a path into a Ledger (the second argument names the run of a
file without ``run_id``); raises :class:`LedgerError` naming every problem."""
Writer = Callable[[Ledger, BinaryIO], int]
"""Write every row of a Ledger to a binary stream; returns the number of rows."""


@dataclass(frozen=True)
class Format:
    """One ledger file format, as the registry lists it."""

    name: str
    """What ``write_ledger`` and ``trialbook export --format`` call it."""
    suffixes: tuple[str, ...]
    """File suffixes (lower case, with the dot) that mean this format."""
    read: Reader | None = None
    """The reader, or None for a format trialbook only writes."""
    write: Writer | None = None
    """The writer, or None for a format trialbook only reads."""

    @property
    def can_read(self) -> bool:
        """Whether ``read_ledger`` reads files of this format."""
        return self.read is not None

    @property
    def can_write(self) -> bool:
        """Whether ``write_ledger`` writes this format."""
        return self.write is not None
