"""Ledger file formats, one module each, and the registry ``read_ledger``/``write_ledger`` use.

``.jsonl`` (``_jsonl``: the C reader, the arrow reader, the precise reader), ``.csv`` (``_csv``),
``.parquet`` (``_parquet``, written only) and ``.db`` (``_db``: the SQLite store, read only here).
"""

from trialbook.ledger.formats._format import Format
from trialbook.ledger.formats._jsonl import NATIVE as NATIVE_JSONL
from trialbook.ledger.formats._registry import (
    EXPORT_FORMATS,
    FORMATS,
    ExportFormat,
    format_named,
    format_of,
    open_tallies,
    read_ledger,
    write_ledger,
    write_ledger_file,
)

__all__ = [
    "EXPORT_FORMATS",
    "FORMATS",
    "NATIVE_JSONL",
    "ExportFormat",
    "Format",
    "format_named",
    "format_of",
    "open_tallies",
    "read_ledger",
    "write_ledger",
    "write_ledger_file",
]
