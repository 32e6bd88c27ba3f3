"""The registry of ledger formats: ``read_ledger`` and ``write_ledger`` choose from it.

A format is chosen by file suffix for reading and by name for writing; adding a format is adding
one module that defines a :class:`Format` and listing it in :data:`FORMATS`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Literal

from trialbook.errors import ArgumentError, LedgerError, Problem
from trialbook.ledger._paths import ledger_file_problem
from trialbook.ledger._table import Ledger
from trialbook.ledger._tally import Tallies, TallyOfLedger
from trialbook.ledger.formats._csv import CSV
from trialbook.ledger.formats._db import DB
from trialbook.ledger.formats._format import Format
from trialbook.ledger.formats._jsonl import JSONL
from trialbook.ledger.formats._parquet import PARQUET
from trialbook.ledger.formats._stream import StreamTallies

__all__ = [
    "EXPORT_FORMATS",
    "FORMATS",
    "ExportFormat",
    "format_named",
    "format_of",
    "open_tallies",
    "read_ledger",
    "write_ledger",
    "write_ledger_file",
]

FORMATS: tuple[Format, ...] = (DB, JSONL, CSV, PARQUET)
"""Every known format, readable ones first in the order their suffixes are listed in messages."""

ExportFormat = Literal["jsonl", "csv", "parquet"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("jsonl", "csv", "parquet")
"""The formats ``write_ledger`` writes (the interchange formats)."""


def format_of(path: str | Path) -> Format | None:
    """The format a file's suffix names (case-insensitive), or None for an unknown suffix."""
    suffix = Path(path).suffix.lower()
    return next((f for f in FORMATS if suffix in f.suffixes), None)


def format_named(name: str) -> Format | None:
    """The format called ``name``, or None."""
    return next((f for f in FORMATS if f.name == name), None)


def read_ledger(path: str | Path, *, default_run: str | None = None) -> Ledger:
    """Read and validate a ledger (``.db``, ``.jsonl`` or ``.csv``; the format is chosen by suffix).

    Raises :class:`LedgerError` listing every problem (line, task, field) when any row breaks a rule;
    nothing from an invalid ledger is returned. A file without ``run_id`` is one run, named after the
    file's stem (or ``default_run``). A ``.db`` file is the SQLite store; it is opened read-only and
    never migrated here. A suffix no format reads is refused, naming the suffixes that are read.
    """
    p = Path(path)
    fmt = format_of(p)
    if fmt is None or fmt.read is None:
        known = [s for f in FORMATS if f.read is not None for s in f.suffixes]
        listed = ", ".join(known[:-1]) + " or " + known[-1] if len(known) > 1 else known[0]
        raise LedgerError(
            [Problem(0, f"unsupported ledger type {p.suffix!r}: use {listed}", str(p))]
        )
    if problem := ledger_file_problem(p):
        raise LedgerError([Problem(0, problem, str(p))])
    return fmt.read(p, default_run or p.stem)


def open_tallies(path: str | Path, *, default_run: str | None = None) -> Tallies:
    """A ledger file to be tallied run by run (:class:`~trialbook.ledger.Tallies`; close it after).

    A ``.db`` is tallied by SQLite (``GROUP BY`` queries, only the runs asked for, each checked as
    it is read); a ``.jsonl`` or ``.csv`` file is read in chunks and folded into tallies as it is
    read (``_stream``: memory by tasks, not attempts), or read whole, as :func:`read_ledger` reads
    it, when the chunked read declines it (an invalid file: every problem named).
    """
    p = Path(path)
    if p.suffix.lower() == ".db" and not ledger_file_problem(p):
        from trialbook.ledger.store import StoreTallies  # the store is only loaded for .db files

        return StoreTallies(p)
    fmt = format_of(p)
    if fmt in (JSONL, CSV) and not ledger_file_problem(p):
        return StreamTallies(p, default_run or p.stem, _read_whole)
    return TallyOfLedger(read_ledger(p, default_run=default_run))


def _read_whole(path: Path, default_run: str) -> Ledger:
    return read_ledger(path, default_run=default_run)


def write_ledger(ledger: Ledger, fmt: ExportFormat, out: BinaryIO) -> int:
    """Write every row of ``ledger`` to ``out`` in ``fmt`` (jsonl, csv or parquet): every field,
    types kept, "not recorded" written as null (an empty CSV cell), never as 0. Returns the number
    of rows."""
    chosen = format_named(fmt)
    if chosen is None or chosen.write is None:
        raise ArgumentError(
            f"unknown export format {fmt!r} (known: {', '.join(EXPORT_FORMATS)})", argument="fmt"
        )
    return chosen.write(ledger, out)


def write_ledger_file(ledger: Ledger, fmt: ExportFormat, path: str | Path) -> int:
    """Write ``ledger`` to the file ``path`` whole or not at all: into a temporary file beside it,
    renamed over ``path`` only once every row is written. Returns the number of rows."""
    target = Path(path)
    if not target.parent.is_dir():
        raise ArgumentError(f"output: no such folder {str(target.parent)!r}", argument="output")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as fh:
            count = write_ledger(ledger, fmt, fh)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count
