"""The SQLite store as a ledger file: ``read_ledger`` opens a ``.db`` read-only (never migrated)."""

from __future__ import annotations

from pathlib import Path

from trialbook.ledger._table import Ledger
from trialbook.ledger.formats._format import Format

__all__ = ["DB", "read_db"]


def read_db(path: Path, default_run: str) -> Ledger:
    """Every attempt of the store at ``path`` (a store names each row's run: ``default_run`` is
    not used)."""
    del default_run
    from trialbook.ledger.store import read_store  # the store is only loaded for .db files

    return read_store(path)


DB = Format("db", (".db",), read=read_db)
"""The SQLite ledger store (read here; written by ``LedgerStore``)."""
