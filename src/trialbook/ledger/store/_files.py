"""A store as a file: read it whole (read-only), or import validated ledgers into it, all or nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from trialbook.errors import LedgerError, Problem
from trialbook.ledger._table import Ledger
from trialbook.ledger.store._store import LedgerStore

__all__ = ["import_files", "read_store"]


def read_store(path: Path, run_id: str | None = None) -> Ledger:
    """Read a ``.db`` ledger read-only (no migration, no lock held beyond the read)."""
    with LedgerStore(path, readonly=True) as store:
        try:
            return store.read(run_id)
        except sqlite3.DatabaseError as exc:
            raise LedgerError([Problem(0, f"cannot read the ledger: {exc}", str(path))]) from None


def import_files(path: Path, ledgers: Sequence[Ledger]) -> int:
    """Append validated ledgers to the store at ``path`` in one transaction.

    If the store did not exist and the import is refused, the new file is removed again: an import
    that fails writes nothing.
    """
    created = not path.exists()
    try:
        with LedgerStore(path) as store:
            return store.import_ledgers(ledgers)
    except BaseException:
        if created:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(str(path) + suffix).unlink(missing_ok=True)
        raise
