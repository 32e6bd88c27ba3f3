"""Writing a ledger out as JSONL, CSV or Parquet (the interchange formats): every field of every row,
types kept, and "not recorded" written as null (an empty CSV cell), never as 0."""

from __future__ import annotations

import csv
import io
from typing import Any, BinaryIO, Literal

from trialbook.ledger._fields import FIELDS
from trialbook.ledger._read import ledger_rows
from trialbook.ledger._table import Ledger

__all__ = ["EXPORT_FORMATS", "write_ledger"]

ExportFormat = Literal["jsonl", "csv", "parquet"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("jsonl", "csv", "parquet")


def write_ledger(ledger: Ledger, fmt: ExportFormat, out: BinaryIO) -> int:
    """Write every row of ``ledger`` to ``out`` in ``fmt``; returns the number of rows."""
    if fmt == "jsonl":
        import orjson

        n = 0
        for row in ledger_rows(ledger):
            out.write(orjson.dumps(row) + b"\n")
            n += 1
        return n
    if fmt == "csv":
        text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow([f.name for f in FIELDS])
        n = 0
        for row in ledger_rows(ledger):
            writer.writerow([_cell(row[f.name]) for f in FIELDS])
            n += 1
        text.detach()
        return n
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        types = {
            "str": pa.string(),
            "time": pa.string(),
            "int": pa.int64(),
            "float": pa.float64(),
            "bool": pa.bool_(),
        }
        schema = pa.schema(
            [pa.field(f.name, types[f.kind], nullable=not f.required) for f in FIELDS]
        )
        rows = list(ledger_rows(ledger))
        table = pa.Table.from_pylist(rows, schema=schema)
        pq.write_table(table, out)
        return len(rows)
    raise ValueError(f"unknown export format {fmt!r}")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)
