"""Parquet ledgers: written (for export), not read. Every field typed, "not recorded" as null."""

from __future__ import annotations

from typing import BinaryIO

from trialbook.ledger._fields import FIELDS
from trialbook.ledger._rows import ledger_rows
from trialbook.ledger._table import Ledger
from trialbook.ledger.formats._arrow import arrow_type
from trialbook.ledger.formats._format import Format

__all__ = ["PARQUET", "write_parquet"]


def write_parquet(ledger: Ledger, out: BinaryIO) -> int:
    """Every row as one Parquet table; required fields are declared not nullable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(f.name, arrow_type(f), nullable=not f.required) for f in FIELDS])
    rows = list(ledger_rows(ledger))
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, out)
    return len(rows)


PARQUET = Format("parquet", (".parquet",), write=write_parquet)
"""Apache Parquet (written only)."""
